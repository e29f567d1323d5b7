# Prints its value; stdin must be /dev/null (reading it ends at once).
cat
echo "static value for $PROJECT_BASE_PATH"
