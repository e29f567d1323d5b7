# Answers at once (after a log line, pretty-printed), then keeps working:
#   mode "stay"   (default): sleeps until killed;
#   mode "exit":  exits right after answering;
#   mode "worker": starts a worker in its process group with its output sent
#                  elsewhere, then exits (the worker must still be capped).
#                  The worker is started and its pid written before the
#                  answer, so a test knows it exists before the host arms
#                  the runtime cap (which it does on the answer);
#   mode "silent": never answers, sleeps until killed.
import json
import os
import subprocess
import sys
import time


def write_pid(name, pid):
    with open(name + ".tmp", "w") as f:
        f.write(str(pid))
    os.rename(name + ".tmp", name)


args = json.load(sys.stdin)
mode = args.get("mode", "stay")
write_pid("async.pid", os.getpid())
print("log: accepted task", flush=True)
if mode == "worker":
    w = subprocess.Popen(["sleep", "600"], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    write_pid("worker.pid", w.pid)
if mode == "silent":
    time.sleep(600)
answer = {
    "status": "success",
    "result": {
        "content": [{"type": "text", "text": "queued {{VCP_ASYNC_RESULT::AsyncTask::t1}}"}],
        "callback": os.environ.get("CALLBACK_BASE_URL", ""),
        "name": os.environ.get("PLUGIN_NAME_FOR_CALLBACK", ""),
    },
}
print(json.dumps(answer, indent=2), flush=True)
print("log: working", flush=True)
if mode == "exit":
    sys.exit(0)
if mode == "worker":
    sys.exit(0)
time.sleep(600)
