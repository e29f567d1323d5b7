# Answers with the JSON object it was given on stdin.
args=$(cat)
printf '{"status":"success","result":{"args":%s}}\n' "$args"
