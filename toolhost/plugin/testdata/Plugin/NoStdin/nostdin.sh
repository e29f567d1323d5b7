# Never reads its arguments.
echo '{"status":"success","result":"ignored stdin"}'
