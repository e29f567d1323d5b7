# Crashes without JSON: the error must quote stderr.
cat > /dev/null
echo 'partial output'
echo 'Traceback (most recent call last): ValueError: boom' >&2
exit 3
