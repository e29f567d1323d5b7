# Logs 20 MiB to stdout, then answers with a JSON error on the last line.
cat > /dev/null
yes 'progress line' | head -c 20971520
echo '{"status":"error","error":"quota exceeded after a long log"}'
