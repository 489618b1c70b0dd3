"""Fields a request leaves out take generation_config.json's sampling when
it asks to sample (as transformers applies it: sgc_generation_config_sampling,
shared with sgc-run), else OpenAI's defaults (temperature 1, every token).

A checkpoint directory (links to tiny-gemma3's files) with do_sample true
and top_k 1: a request without sampling fields, whatever its seed, answers
what a greedy request does. Without the file, the same seeded requests
sample at temperature 1 and do not all answer greedily."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server import Server, arguments, check  # noqa: E402

p = arguments("--work")
a = p.parse_args()
ckpt = os.path.join(a.work, "ckpt")
os.makedirs(ckpt, exist_ok=True)
for name in os.listdir(a.weights):
    if not os.path.exists(os.path.join(ckpt, name)):
        os.symlink(os.path.join(os.path.abspath(a.weights), name), os.path.join(ckpt, name))
BODY = {"prompt": "The quick brown fox", "max_tokens": 12, "ignore_eos": True,
        "return_token_ids": True}


def answers(weights, log):
    srv = Server(a.serve, a.model, weights, log)
    srv.wait_ready()
    greedy = srv.post("/v1/completions", dict(BODY, temperature=0))[1]["choices"][0]["token_ids"]
    seeded = [srv.post("/v1/completions", dict(BODY, seed=s))[1]["choices"][0]["token_ids"]
              for s in range(6)]
    check(srv.stop() == 0, "SIGTERM: exit 0")
    return greedy, seeded


greedy, seeded = answers(a.weights, a.log + ".plain")
check(any(s != greedy for s in seeded),
      "no generation_config.json: seeded requests sample (%d of 6 differ from greedy)"
      % sum(s != greedy for s in seeded))
with open(os.path.join(ckpt, "generation_config.json"), "w") as f:
    json.dump({"do_sample": True, "top_k": 1, "temperature": 0.7}, f)
greedy2, seeded2 = answers(ckpt, a.log + ".config")
check(greedy2 == greedy and all(s == greedy for s in seeded2),
      "do_sample with top_k 1: every seeded request answers greedily")
