# Most manifests say "python"; this one must run where only python3 exists.
import json
import sys

args = json.load(sys.stdin)
print(json.dumps({"status": "success", "result": {"major": sys.version_info[0], "args": args}}))
