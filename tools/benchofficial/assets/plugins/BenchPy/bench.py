import json
import sys

args = json.loads(sys.stdin.read() or "{}")
print(json.dumps({"status": "success", "result": "pong", "args": len(args)}))
