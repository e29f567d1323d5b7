# Prints part of its value, then works past its timeout.
echo 'partial value'
exec sleep 600
