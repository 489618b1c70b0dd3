"""Hugging Face references for the server tests, read without numpy: the
sampled-rows goldens of tools/gen-golden --batch (prompt_ids, feed_ids: the
reference's own greedy tokens, logits_f32: every position's logits) and the
chat fixture (what transformers' apply_chat_template renders)."""
import array
import json
import math
import struct


def read_safetensors(path, names):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        base = 8 + n
        out = {}
        for name in names:
            t = header[name]
            code = {"I32": "i", "F32": "f"}[t["dtype"]]
            begin, end = t["data_offsets"]
            f.seek(base + begin)
            a = array.array(code)
            a.frombytes(f.read(end - begin))
            out[name] = (a, t["shape"])
        return out


def batch_golden(path):
    """prompt ids, HF's greedy ids, and a function giving the log-softmax
    row that predicts generated token i."""
    t = read_safetensors(path, ["prompt_ids", "feed_ids", "logits_f32"])
    prompt = list(t["prompt_ids"][0])
    greedy = list(t["feed_ids"][0])
    logits, shape = t["logits_f32"]
    vocab = shape[1]

    def log_softmax_row(i):
        row = logits[(len(prompt) - 1 + i) * vocab:(len(prompt) + i) * vocab]
        top = max(row)
        lse = top + math.log(sum(math.exp(x - top) for x in row))
        return [x - lse for x in row]

    return prompt, greedy, log_softmax_row


def chat_cases(fixture, family):
    """The text-only cases of |family| with a generation prompt (the text
    transformers renders, or its refusal in "error")."""
    with open(fixture) as f:
        fam = json.load(f)["families"][family]
    for case in fam["cases"]:
        if not case.get("add_generation_prompt"):
            continue
        if any(not isinstance(m["content"], str) for m in case["messages"]):
            continue
        yield case
