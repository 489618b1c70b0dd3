"""Images through sgc-serve with the openai client (a data: URI in an
image_url content part), on both tiny vision models compiled f32, against
Hugging Face's vision chat golden (gen-golden --vision-chat): the first turn
of "image first" (the image, then the text) gives the processor's prompt
ids (prompt_token_ids) and HF's greedy answer ids, whole and streamed.
Content parts keep their order (text before an image puts the block after
the text), and bad images get a 400 naming the part."""
import argparse
import base64
import json
import os
import struct
import sys
import zlib

import openai

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server import Server, check  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--serve", required=True)
p.add_argument("--model", required=True)
p.add_argument("--example", required=True)
p.add_argument("--log", required=True)
a = p.parse_args()

golden = json.load(open(os.path.join(a.example, "chat.golden.json")))
family = golden["model"]
turn = next(c for c in golden["conversations"] if c["name"] == "image first")["turns"][0]
with open(os.path.join(a.example, "image.png"), "rb") as f:
    png = f.read()


def data_uri(raw, kind="png"):
    return "data:image/%s;base64,%s" % (kind, base64.b64encode(raw).decode())


def png_of(width, height):
    """A gray PNG of width x height (stdlib only)."""
    def chunk(tag, data):
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))
    rows = b"".join(b"\0" + b"\x80" * (3 * width) for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


srv = Server(a.serve, a.model, a.example, a.log,
             ["--alias", "vlm", "--max-image-pixels", "4096", "--parallel", "2"])
srv.wait_ready()
client = openai.OpenAI(base_url=srv.url + "/v1", api_key="unused", max_retries=0)
image_part = {"type": "image_url", "image_url": {"url": data_uri(png)}}
messages = [{"role": "user", "content": [image_part, {"type": "text", "text": turn["user"]}]}]
n = len(turn["answer_ids"])
r = client.chat.completions.create(model="vlm", messages=messages, max_tokens=n,
                                   temperature=0, extra_body={"return_token_ids": True})
check(r.model_extra["prompt_token_ids"] == turn["prefill_ids"],
      "%s: the prompt ids are the processor's (%d rows, %s soft tokens)" %
      (family, len(turn["prefill_ids"]), turn["image_soft_tokens"]))
check(r.choices[0].token_ids == turn["answer_ids"],
      "%s: HF's greedy answer %s, ours %s" % (family, turn["answer_ids"], r.choices[0].token_ids))
stream = client.chat.completions.create(model="vlm", messages=messages, max_tokens=n,
                                        temperature=0, stream=True)
text = "".join(c.delta.content or "" for chunk in stream for c in chunk.choices)
check(text == r.choices[0].message.content, "%s: streamed, the same answer" % family)

# Order kept: the text first, then the image.
later = [{"role": "user", "content": [{"type": "text", "text": turn["user"]}, image_part]}]
r2 = client.chat.completions.create(model="vlm", messages=later, max_tokens=1, temperature=0,
                                    extra_body={"return_token_ids": True})
ids = r2.model_extra["prompt_token_ids"]
boi = golden["tokenizer"]["special_tokens"].get("<start_of_image>",
                                                 golden["tokenizer"]["special_tokens"].get("<|image>"))
check(sorted(ids) == sorted(turn["prefill_ids"]) and ids != turn["prefill_ids"]
      and ids.index(boi) > turn["prefill_ids"].index(boi),
      "%s: text then image: the same rows, the image block after the text" % family)

# Together: two image requests and a text one on two slots (one waits; a
# tower runs between the others' steps) answer as they do alone.
import threading  # noqa: E402
text_only = [{"role": "user", "content": "Hi"}]
jobs = [messages, later, text_only]


def ask(m):
    r = client.chat.completions.create(model="vlm", messages=m, max_tokens=n, temperature=0,
                                       extra_body={"return_token_ids": True, "ignore_eos": True})
    return r.choices[0].token_ids


alone = [ask(m) for m in jobs]
together = [None] * len(jobs)
threads = [threading.Thread(target=lambda i=i: together.__setitem__(i, ask(jobs[i])))
           for i in range(len(jobs))]
for t in threads:
    t.start()
for t in threads:
    t.join(120)
check(together == alone and alone[0] == turn["answer_ids"],
      "%s: two image requests and a text one together answer as alone" % family)

# Bad images: a 400 naming the part; still serving.
for name, url, says in [
        ("not base64", "data:image/png;base64,@@@@", "not valid base64"),
        ("not a data URI with base64", "data:image/png,abc", "';base64,'"),
        ("truncated PNG", data_uri(png[:60]), "messages[0].content[0]"),
        ("a GIF", data_uri(b"GIF89a" + b"\0" * 20, "gif"), "GIF"),
        ("empty", "data:image/png;base64,", "empty"),
        ("over --max-image-pixels", data_uri(png_of(80, 80)), "more than the limit of 4096")]:
    bad = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}]
    s, b, _ = srv.post("/v1/chat/completions", {"messages": bad, "max_tokens": 1})
    msg = b.get("error", {}).get("message", "") if isinstance(b, dict) else ""
    ok = s == 400 and says in msg and b["error"].get("param", "").startswith("messages[0].content[0]")
    s2, _, _ = srv.post("/v1/chat/completions", {"messages": messages, "max_tokens": 1})
    check(ok and s2 == 200, "%s: bad image (%s): 400 %s, still serving" % (family, name, msg))
check(srv.stop() == 0, "%s: SIGTERM: exit 0" % family)
