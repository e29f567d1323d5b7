# Pretty-prints its answer over many lines, with DS's _specialAction and
# payload and a messageForAI at the top level.
import json
import sys

json.load(sys.stdin)
print("log: drawing")
print(json.dumps({
    "status": "success",
    "result": {"canvas": {"width": 2, "height": 1}, "note": "nested {braces} inside a string"},
    "_specialAction": "create_canvas",
    "payload": {"id": "c1"},
    "messageForAI": "the canvas is ready",
}, indent=2))
