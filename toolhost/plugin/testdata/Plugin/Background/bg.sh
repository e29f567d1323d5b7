# Answers and exits, leaving a background process that holds stdout open.
# The answer waits until that process has written its pid (a fake plugin
# polling a file), so it is there, holding stdout, when the run ends.
cat > /dev/null
sh -c 'echo $$ > bg.pid.tmp && mv bg.pid.tmp bg.pid; exec sleep 600' &
while [ ! -e bg.pid ]; do sleep 0.01; done
echo '{"status":"success","result":"answered"}'
