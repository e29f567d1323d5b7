"""DelayedEcho: an asynchronous VCP plugin.

Phase 1: read the arguments, print one JSON answer with a task id and the
{{VCP_ASYNC_RESULT::...}} placeholder, and close stdout. The host returns
that answer to the model at once and leaves this process running.
Phase 2: do the work, then POST the result to
$CALLBACK_BASE_URL/$PLUGIN_NAME_FOR_CALLBACK/<taskId>, which the node
forwards to the main server. Only the standard library is used.
"""
import json
import os
import sys
import time
import urllib.error
import urllib.request
import uuid


def post_callback(url, body, attempts=5):
    data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    # The callback URL is on loopback and carries a secret: never via a proxy.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    for attempt in range(attempts):
        if attempt:
            time.sleep(min(2 ** attempt, 30))
        req = urllib.request.Request(url, data=data, method="POST",
                                     headers={"Content-Type": "application/json"})
        try:
            with opener.open(req, timeout=30) as resp:
                print("callback accepted: %d" % resp.status, file=sys.stderr)
                return True
        except urllib.error.HTTPError as err:
            # 503: the node could not store it yet; anything else will not improve.
            print("callback refused: %d %s" % (err.code, err.read()[:200]), file=sys.stderr)
            if err.code != 503:
                return False
        except OSError as err:
            print("callback failed: %s" % err, file=sys.stderr)
    return False


def main():
    raw = sys.stdin.read()
    args = json.loads(raw) if raw.strip() else {}
    name = os.environ.get("PLUGIN_NAME_FOR_CALLBACK", "DelayedEcho")
    base = os.environ.get("CALLBACK_BASE_URL", "")
    text = str(args.get("text", ""))
    try:
        delay = float(args.get("delay", "2"))
    except ValueError:
        delay = -1
    limit = float(os.environ.get("DELAYED_ECHO_MAX_DELAY", "60"))
    if not base:
        answer = {"status": "error", "error": "CALLBACK_BASE_URL is not set: run me under a VCP host"}
    elif not 0 <= delay <= limit:
        answer = {"status": "error", "error": "delay must be a number of seconds from 0 to %g" % limit}
    else:
        answer = None
    if answer is not None:
        sys.stdout.write(json.dumps(answer))
        return

    task_id = uuid.uuid4().hex[:12]
    placeholder = "{{VCP_ASYNC_RESULT::%s::%s}}" % (name, task_id)
    sys.stdout.write(json.dumps({
        "status": "success",
        "result": "Task %s accepted; the echo arrives in about %g s. Repeat this placeholder "
                  "verbatim in your reply, the server will replace it with the result: %s"
                  % (task_id, delay, placeholder),
    }, ensure_ascii=False))
    sys.stdout.flush()
    sys.stdout.close()  # the host has its answer; nothing else goes to stdout

    time.sleep(delay)  # the "work"
    post_callback("%s/%s/%s" % (base.rstrip("/"), name, task_id), {
        "requestId": task_id,
        "status": "Succeed",
        "pluginName": name,
        "message": "DelayedEcho %s finished: %s" % (task_id, text),
        "data": {"text": text, "delaySeconds": delay},
    })


if __name__ == "__main__":
    main()
