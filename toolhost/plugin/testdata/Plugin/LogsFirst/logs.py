# Prints log lines (some of them brace-looking, one a JSON object without a
# status) before its JSON answer, as careless plugins do.
import json
import sys

args = json.load(sys.stdin)
print("starting up {not json")
print('{"level": "info", "msg": "a JSON log line without a status"}')
print("progress: {50%}")
print(json.dumps({"status": "success", "result": "done: " + args.get("text", "")}))
print("bye")
