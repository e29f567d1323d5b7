# Answers and exits, leaving a background process that holds stdout open.
cat > /dev/null
sh -c 'echo $$ > bg.pid.tmp && mv bg.pid.tmp bg.pid; exec sleep 600' &
echo '{"status":"success","result":"answered"}'
