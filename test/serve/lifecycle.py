"""What a server does around the requests (standard library only):

  loading   /health answers 503 "Loading model" until the model is in,
            then 200; generation waits with 503 too.
  cancel    a client that leaves a stream, or a plain request, frees its
            sequence at the next step: running drops to 0 long before the
            answer would have ended, and the server serves on.
  queue     with every slot busy and --max-queue full, one more request
            gets 503 with Retry-After; the waiting one is served.
  drain     SIGTERM: /health 503, new requests 503, the running stream
            ends whole, exit 0.
  deadline  a stream still running when --drain-timeout passes ends with
            an error event (as the peers send one mid-stream), exit 0.

The steps are paced (SGC_SERVE_TEST_STEP_DELAY_MS) so that answers last
long enough to be interrupted.
"""
import json
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server import Server, arguments, check, raw_stream, sse_events  # noqa: E402

p = arguments()
p.add_argument("what", choices=["loading", "cancel", "queue", "drain", "deadline"])
a = p.parse_args()
CHAT = "/v1/chat/completions"


def long_chat(n, stream):
    return {"messages": [{"role": "user", "content": "Tell me everything"}],
            "max_tokens": n, "temperature": 0, "ignore_eos": True, "stream": stream}


def wait_for(cond, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return True
        time.sleep(0.02)
    return False


if a.what == "loading":
    srv = Server(a.serve, a.model, a.weights, a.log,
                 env={"SGC_SERVE_TEST_LOAD_DELAY_MS": "1500"})
    s, b, _ = srv.get("/health")
    check(s == 503 and b["error"]["message"] == "Loading model",
          "loading: /health 503 %s" % b)
    s, b, h = srv.post(CHAT, long_chat(2, False))
    check(s == 503 and h.get("Retry-After") == "1", "loading: a request gets 503 with Retry-After")
    srv.wait_ready()
    check(srv.get("/health") == (200, {"status": "ok"}, srv.get("/health")[2]),
          "loaded: /health 200 {\"status\": \"ok\"}")
    check(srv.stop() == 0, "SIGTERM: exit 0")

elif a.what == "cancel":
    srv = Server(a.serve, a.model, a.weights, a.log, ["--parallel", "2"],
                 env={"SGC_SERVE_TEST_STEP_DELAY_MS": "20"})
    srv.wait_ready()
    before = srv.metric("sgc:generation_tokens_total")
    sock, f, status = raw_stream(srv.port, CHAT, long_chat(400, True))
    events = sse_events(f)
    first = [next(events) for _ in range(3)]
    check(status == 200 and all(e.startswith("{") for e in first), "cancel: a stream started")
    f.close()  # the file holds the socket open too
    sock.close()
    freed = wait_for(lambda: srv.metric("sgc:num_requests_running") == 0, 2.0)
    made = srv.metric("sgc:generation_tokens_total") - before
    check(freed and made < 100, "cancel: the stream's slot is free, %d of 400 tokens made" % made)

    # A plain request whose client gives up.
    before = srv.metric("sgc:generation_tokens_total")
    c = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    body = json.dumps(long_chat(400, False)).encode()
    c.sendall(b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n" % (CHAT.encode(), len(body)) + body)
    check(wait_for(lambda: srv.metric("sgc:num_requests_running") == 1, 5.0),
          "cancel: a plain request runs")
    time.sleep(0.3)
    c.close()
    freed = wait_for(lambda: srv.metric("sgc:num_requests_running") == 0, 2.0)
    made = srv.metric("sgc:generation_tokens_total") - before
    check(freed and made < 100, "cancel: the plain request's slot is free, %d of 400 tokens made" % made)
    s, b, _ = srv.post(CHAT, long_chat(3, False))
    check(s == 200 and b["usage"]["completion_tokens"] == 3, "cancel: still serving")
    check("client went away" in "".join(srv.lines), "cancel: the log says the client went away")
    check(srv.stop() == 0, "SIGTERM: exit 0")

elif a.what == "queue":
    srv = Server(a.serve, a.model, a.weights, a.log,
                 ["--parallel", "1", "--max-queue", "1"],
                 env={"SGC_SERVE_TEST_STEP_DELAY_MS": "20"})
    srv.wait_ready()
    results = {}

    def run(name, n):
        results[name] = srv.post(CHAT, long_chat(n, False))

    t1 = threading.Thread(target=run, args=("running", 40))
    t1.start()
    check(wait_for(lambda: srv.metric("sgc:num_requests_running") == 1, 5.0), "queue: one runs")
    t2 = threading.Thread(target=run, args=("waiting", 5))
    t2.start()
    check(wait_for(lambda: srv.metric("sgc:num_requests_waiting") == 1, 5.0),
          "queue: one waits (sgc:num_requests_waiting 1)")
    s, b, h = srv.post(CHAT, long_chat(5, False))
    check(s == 503 and h.get("Retry-After") == "1" and "--max-queue" in b["error"]["message"],
          "queue: the next gets 503 with Retry-After: %s" % b["error"]["message"])
    t1.join(60)
    t2.join(60)
    check(results["running"][0] == 200 and results["running"][1]["usage"]["completion_tokens"] == 40
          and results["waiting"][0] == 200 and results["waiting"][1]["usage"]["completion_tokens"] == 5,
          "queue: the running and the waiting request are served whole")
    check(srv.stop() == 0, "SIGTERM: exit 0")

elif a.what == "drain":
    srv = Server(a.serve, a.model, a.weights, a.log, ["--parallel", "2"],
                 env={"SGC_SERVE_TEST_STEP_DELAY_MS": "20"})
    srv.wait_ready()
    sock, f, status = raw_stream(srv.port, CHAT, dict(long_chat(60, True),
                                                      stream_options={"include_usage": True}))
    events = sse_events(f)
    next(events)
    srv.proc.send_signal(15)
    check(wait_for(lambda: srv.get("/health")[0] == 503, 2.0), "drain: /health 503")
    s, b, _ = srv.post(CHAT, long_chat(2, False))
    check(s == 503 and "shutting down" in b["error"]["message"], "drain: a new request gets 503")
    rest = list(events)
    usage = [json.loads(e)["usage"] for e in rest if e.startswith("{") and json.loads(e).get("choices") == []]
    check(rest[-1] == "[DONE]" and usage and usage[0]["completion_tokens"] == 60,
          "drain: the running stream ends whole (60 tokens, [DONE])")
    code = srv.proc.wait(30)
    check(code == 0 and "stopped" in "".join(srv.lines), "drain: exit 0")

elif a.what == "deadline":
    srv = Server(a.serve, a.model, a.weights, a.log, ["--drain-timeout", "1"],
                 env={"SGC_SERVE_TEST_STEP_DELAY_MS": "20"})
    srv.wait_ready()
    sock, f, status = raw_stream(srv.port, CHAT, long_chat(400, True))
    events = sse_events(f)
    next(events)
    t0 = time.time()
    srv.proc.send_signal(15)
    rest = list(events)
    last = json.loads(rest[-1]) if rest and rest[-1].startswith("{") else {}
    check("[DONE]" not in rest and last.get("error", {}).get("message") == "the server is shutting down"
          and last["error"].get("code") == 503,
          "deadline: the stream ends with an error event: %s" % (rest[-1] if rest else None))
    code = srv.proc.wait(30)
    check(code == 0 and time.time() - t0 < 10, "deadline: exit 0 after %.1f s" % (time.time() - t0))
