"""Bad requests of every kind get a 4xx with OpenAI's error object naming
what is wrong, and the server keeps serving (checked after each)."""
import os
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server import Server, arguments, check  # noqa: E402

p = arguments()
a = p.parse_args()

srv = Server(a.serve, a.model, a.weights, a.log,
             ["--api-key", "sekrit", "--max-context", "64",
              "--max-body-bytes", "4096"])
srv.wait_ready()
KEY = {"Authorization": "Bearer sekrit"}
CHAT = "/v1/chat/completions"


def hi(**extra):
    body = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2}
    body.update(extra)
    return body


def still_serving():
    status, body, _ = srv.post(CHAT, hi(), headers=KEY)
    return status == 200 and body["choices"][0]["finish_reason"] in ("stop", "length")


def expect(name, status, body, want_status, param=None, says=None, code=None):
    e = body.get("error", {}) if isinstance(body, dict) else {}
    ok = status == want_status and isinstance(e.get("message"), str) and e["message"]
    if param is not None:
        ok = ok and e.get("param") == param
    if says is not None:
        ok = ok and says in e.get("message", "")
    if code is not None:
        ok = ok and e.get("code") == code
    check(ok and still_serving(),
          "%s: %d %s, still serving" % (name, status, e.get("message")))


# Keys: every endpoint but /health and /metrics.
s, b, _ = srv.post(CHAT, hi())
expect("no key", s, b, 401, code="invalid_api_key")
s, b, _ = srv.post(CHAT, hi(), headers={"Authorization": "Bearer wrong"})
expect("wrong key", s, b, 401)
s, b, _ = srv.get("/v1/models")
expect("models without a key", s, b, 401)
check(srv.get("/health")[0] == 200 and srv.get("/metrics")[0] == 200,
      "/health and /metrics need no key")

s, b, _ = srv.post(CHAT, b'{"messages": [', headers=KEY)
expect("malformed JSON", s, b, 400, says="not valid JSON")
s, b, _ = srv.post(CHAT, b'[1, 2]', headers=KEY)
expect("not an object", s, b, 400, says="JSON object")
s, b, _ = srv.post(CHAT, b'{"messages": "\xff\xfe"}', headers=KEY)
expect("invalid UTF-8", s, b, 400)
for field, value, param in [
        ("max_tokens", "ten", "max_tokens"), ("max_tokens", 0, "max_tokens"),
        ("temperature", 5, "temperature"), ("temperature", "hot", "temperature"),
        ("top_p", -1, "top_p"), ("stop", 5, "stop"), ("stream", "yes", "stream"),
        ("seed", 1.5, "seed"), ("n", 2, "n"), ("tools", [{"type": "function"}], "tools"),
        ("logit_bias", {"5": 1}, "logit_bias"), ("presence_penalty", 0.5, "presence_penalty"),
        ("response_format", {"type": "json_object"}, "response_format"),
        ("top_logprobs", 3, "top_logprobs")]:
    s, b, _ = srv.post(CHAT, hi(**{field: value}), headers=KEY)
    expect("%s = %r" % (field, value), s, b, 400, param=param)
s, b, _ = srv.post(CHAT, {"messages": "hi"}, headers=KEY)
expect("messages a string", s, b, 400, param="messages")
s, b, _ = srv.post(CHAT, {"messages": [{"role": "user", "content": 5}]}, headers=KEY)
expect("content a number", s, b, 400, param="messages[0].content")
s, b, _ = srv.post(CHAT, {"messages": [{"role": "wizard", "content": "x"}]}, headers=KEY)
expect("unknown role", s, b, 400, param="messages[0].role")
s, b, _ = srv.post("/v1/completions", {"prompt": 7}, headers=KEY)
expect("prompt a number", s, b, 400, param="prompt")
s, b, _ = srv.post("/v1/completions", {"prompt": [1, 99999999]}, headers=KEY)
expect("prompt id out of range", s, b, 400, param="prompt")

s, b, _ = srv.post(CHAT, hi(messages=[{"role": "user", "content": "word " * 80}]), headers=KEY)
expect("prompt longer than the context", s, b, 400, code="context_length_exceeded")
s, b, _ = srv.post(CHAT, hi(model="gpt-4o"), headers=KEY)
expect("unknown model", s, b, 404, code="model_not_found", says="gpt-4o")

image = {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}
s, b, _ = srv.post(CHAT, {"messages": [{"role": "user", "content": [image]}]}, headers=KEY)
expect("remote image", s, b, 400, param="messages[0].content[0].image_url.url")
image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
s, b, _ = srv.post(CHAT, {"messages": [{"role": "user", "content": [image]}]}, headers=KEY)
expect("an image for a model without a tower", s, b, 400, param="messages[0].content[0]",
       says="no vision tower")
bad = {"type": "video", "video": {}}
s, b, _ = srv.post(CHAT, {"messages": [{"role": "user", "content": [bad]}]}, headers=KEY)
expect("unknown content part", s, b, 400, param="messages[0].content[0].type")

s, b, _ = srv.post(CHAT, hi(messages=[{"role": "user", "content": "x" * 5000}]), headers=KEY)
expect("body over --max-body-bytes", s, b, 413, says="--max-body-bytes")
s, b, _ = srv.post("/v1/nothing", {}, headers=KEY)
expect("unknown path", s, b, 404, says="/v1/nothing")
s, b, _ = srv.get(CHAT, headers=KEY)
expect("wrong method", s, b, 405)
s, b, _ = srv.post("/detokenize", {"tokens": [1, -5]}, headers=KEY)
expect("detokenize a bad id", s, b, 400, param="tokens")
s, b, _ = srv.post("/tokenize", {"text": "x"}, headers=KEY)
expect("tokenize without content", s, b, 400, param="content")

# Not HTTP at all.
c = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
c.sendall(b"HELLO THERE\r\n\r\n")
reply = c.recv(4096).decode("latin-1")
c.close()
check(reply.startswith("HTTP/1.1 400") and still_serving(),
      "garbage instead of HTTP: 400, still serving")
check(srv.stop() == 0, "SIGTERM: exit 0")
