#!/usr/bin/env python3
"""`check-prompt-ids.py FIXTURE MODEL NAME.so WEIGHTS`: runs `sgc-run --prompt ... --json` for
every case of MODEL in FIXTURE (test/Inputs/chat/prompt-ids.json, ids from Hugging Face's
tokenizer) and prints one line per case: "OK name" when sgc-run sent exactly those ids, else
"DIFF name: sgc [...] hf [...]". Then, for the first case, checks that the text run generates
what --prompt-ids generates from the same ids ("SAME continuation"). Standard library only."""
import json
import subprocess
import sys

fixture, model, so, weights = sys.argv[1:5]
with open(fixture, encoding="utf-8") as f:
    cases = json.load(f)["models"][model]


def run(args):
    r = subprocess.run(["sgc-run", so, "--weights", weights, "--max-new-tokens", "6"] + args,
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("sgc-run %s failed (%d): %s" % (args, r.returncode, r.stderr))
    return r.stdout


for c in cases:
    args = ["--prompt", c["prompt"], "--json"]
    if c["system"]:
        args += ["--system", c["system"]]
    if c["raw"]:
        args.append("--raw")
    rec = json.loads(run(args))
    if rec["prompt_ids"] == c["ids"]:
        print("OK " + c["name"])
    else:
        print("DIFF %s: sgc %s hf %s" % (c["name"], rec["prompt_ids"], c["ids"]))

first = cases[0]
text_ids = json.loads(run(["--prompt", first["prompt"], "--json"]))["ids"]
ids_out = run(["--prompt-ids", ",".join(str(i) for i in first["ids"])]).split()
print("SAME continuation" if [str(i) for i in text_ids] == ids_out else
      "DIFFERENT continuation: %s vs %s" % (text_ids, ids_out))
