# Reports its error in JSON and exits 1: the JSON must win over the exit code.
cat > /dev/null
echo 'warning: about to fail' >&2
echo '{"status":"error","error":"quota exceeded for today"}'
exit 1
