#!/usr/bin/env python3
"""`chat-golden.py LOG GOLDEN NAME`: LOG is the stderr of `sgc-run --chat -v`; GOLDEN a
chat.golden.json (tools/gen-golden/gen_vision_chat.py: Hugging Face's conversations); NAME one of
its conversations. For each turn of the log, in order, compares with the golden's turn: the turn
text ("turn text:", the chat template's text with the image markers), the position and the ids
prefilled ("prefill: K tokens at position P", "prefill ids:"), the soft tokens of each image
("image N: K soft tokens from the tower") and the answer ("answer ids:"). Prints "OK turn K" or
"DIFF turn K: ..." per turn, then "SAME as Hugging Face" when every turn is OK. Standard library
only."""
import json
import re
import sys

log, golden, name = sys.argv[1:4]
with open(golden, encoding="utf-8") as f:
    conversations = {c["name"]: c for c in json.load(f)["conversations"]}
want = conversations[name]["turns"]

turns = []
with open(log, encoding="utf-8") as f:
    for line in f:
        line = line.rstrip("\n")
        # The REPL's prompt "> " shares stderr's lines with stdout's when both go to one file.
        line = re.sub(r"^(> )+", "", line)
        if line.startswith("turn text: "):
            turns.append({"text": json.loads(line[len("turn text: "):]), "images": []})
        elif m := re.match(r"image \d+: (\d+) soft tokens from the tower$", line):
            turns[-1]["images"].append(int(m.group(1)))
        elif m := re.match(r"prefill: (\d+) tokens at position (\d+)$", line):
            turns[-1]["count"], turns[-1]["position"] = int(m.group(1)), int(m.group(2))
        elif line.startswith("prefill ids:"):
            turns[-1]["prefill"] = [int(t) for t in line.split()[2:]]
        elif line.startswith("answer ids:"):
            turns[-1]["answer"] = [int(t) for t in line.split()[2:]]

ok = len(turns) == len(want)
if not ok:
    print("DIFF: %d turns in the log, %d in the golden" % (len(turns), len(want)))
for k, (ours, hf) in enumerate(zip(turns, want), 1):
    diffs = []
    if ours["text"] != hf["rendered"]:
        diffs.append("text %r, HF %r" % (ours["text"], hf["rendered"]))
    if ours.get("position") != hf["position"]:
        diffs.append("position %s, HF %d" % (ours.get("position"), hf["position"]))
    if ours.get("prefill") != hf["prefill_ids"] or ours.get("count") != len(hf["prefill_ids"]):
        diffs.append("prefill ids %s, HF %s" % (ours.get("prefill"), hf["prefill_ids"]))
    if ours["images"] != hf["image_soft_tokens"]:
        diffs.append("image soft tokens %s, HF %s" % (ours["images"], hf["image_soft_tokens"]))
    if ours.get("answer") != hf["answer_ids"]:
        diffs.append("answer %s, HF %s" % (ours.get("answer"), hf["answer_ids"]))
    if diffs:
        ok = False
        print("DIFF turn %d: %s" % (k, "; ".join(diffs)))
    else:
        print("OK turn %d: %d rows at position %d, answer %s" %
              (k, len(hf["prefill_ids"]), hf["position"], " ".join(map(str, hf["answer_ids"]))))
if ok:
    print("SAME as Hugging Face")
