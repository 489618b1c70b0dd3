"""A load test bounded by count: 64 clients x 20 requests (chat and
completions, whole and streamed), --parallel 16 --max-queue 64, under a
watchdog. Every response is complete (200, a finish_reason, as many token
ids as completion tokens; a stream ends with [DONE]), nothing is lost (the
server counts 1280 answers), and the server is healthy after and exits 0
on SIGTERM. The sanitizer build runs it too (no crash under ASan)."""
import json
import os
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server import Server, arguments, check  # noqa: E402

p = arguments()
p.add_argument("--clients", type=int, default=64)
p.add_argument("--requests", type=int, default=20)
p.add_argument("--watchdog", type=float, default=600)
a = p.parse_args()

srv = Server(a.serve, a.model, a.weights, a.log,
             ["--parallel", "16", "--max-queue", str(a.clients)])
srv.wait_ready()
problems = []
done = [0]
lock = threading.Lock()


def one(client, k):
    chat = (client + k) % 2 == 0
    stream = (client + k) % 3 == 0
    n = 1 + (client * 7 + k) % 6
    body = {"max_tokens": n, "temperature": 0.7, "seed": client * 100 + k,
            "stream": stream, "return_token_ids": True, "ignore_eos": True}
    if chat:
        body["messages"] = [{"role": "user", "content": "client %d request %d" % (client, k)}]
    else:
        body["prompt"] = "client %d request %d" % (client, k)
    path = "/v1/chat/completions" if chat else "/v1/completions"
    req = urllib.request.Request(srv.url + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=300) as r:
        raw = r.read().decode()
        if r.status != 200:
            return "status %d" % r.status
    if not stream:
        j = json.loads(raw)
        c = j["choices"][0]
        if c["finish_reason"] != "length" or len(c["token_ids"]) != n or \
                j["usage"]["completion_tokens"] != n:
            return "incomplete: %s" % raw[:200]
        return None
    events = [line[6:] for line in raw.split("\n") if line.startswith("data: ")]
    if not events or events[-1] != "[DONE]":
        return "stream without [DONE]"
    ids = sum((c.get("token_ids", []) for e in events[:-1]
               for c in json.loads(e)["choices"]), [])
    finish = [c["finish_reason"] for e in events[:-1] for c in json.loads(e)["choices"]
              if c["finish_reason"]]
    if len(ids) != n or finish != ["length"]:
        return "incomplete stream: %d ids, finish %s" % (len(ids), finish)
    return None


def client(i):
    for k in range(a.requests):
        try:
            why = one(i, k)
        except Exception as e:  # noqa: BLE001 - every failure is reported
            why = "%s: %s" % (type(e).__name__, e)
        with lock:
            done[0] += 1
            if why:
                problems.append("client %d request %d: %s" % (i, k, why))


t0 = time.time()
threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(a.clients)]
for t in threads:
    t.start()
for t in threads:
    t.join(max(0.0, a.watchdog - (time.time() - t0)))
total = a.clients * a.requests
check(all(not t.is_alive() for t in threads),
      "every client finished within the %d s watchdog (%.1f s)" % (a.watchdog, time.time() - t0))
check(not problems, "every response complete (%d problems%s)" %
      (len(problems), ": " + "; ".join(problems[:5]) if problems else ""))
answered = srv.metric('sgc:http_responses_total{status="200"}')
check(done[0] == total and answered >= total,
      "nothing lost: %d requests, %d answered 200" % (total, answered))
# A worker counts its request done just after the last bytes leave, so the
# last client can see its answer before the gauge drops: give it a moment (a
# request that never ends keeps it up and still fails the check).
deadline = time.time() + 10
while srv.metric("sgc:num_requests_running") != 0 and time.time() < deadline:
    time.sleep(0.05)
check(srv.get("/health")[0] == 200 and srv.metric("sgc:num_requests_running") == 0,
      "healthy after, nothing running")
check(srv.stop() == 0, "SIGTERM: exit 0")
