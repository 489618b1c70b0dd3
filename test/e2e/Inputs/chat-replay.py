#!/usr/bin/env python3
"""`chat-replay.py LOG NAME.so WEIGHTS N`: LOG is the stderr of `sgc-run --chat -v` over two
turns of at most N new tokens each. The second turn reused the KV cache; this replays the whole
conversation the model saw (turn 1's prefill, its answer but the last token, which the cache does
not hold yet, turn 2's prefill) with one fresh `sgc-run --prompt-ids` and prints "SAME answer"
when that run generates what the chat's second turn generated. Standard library only."""
import subprocess
import sys

log, so, weights, n = sys.argv[1:5]
prefills, answers = [], []
with open(log, encoding="utf-8") as f:
    for line in f:
        if line.startswith("prefill ids:"):
            prefills.append(line.split()[2:])
        elif line.startswith("answer ids:"):
            answers.append(line.split()[2:])
if len(prefills) != 2 or len(answers) != 2:
    sys.exit("expected two turns in %s, found %d prefills and %d answers"
             % (log, len(prefills), len(answers)))
whole = prefills[0] + answers[0][:-1] + prefills[1]
r = subprocess.run(["sgc-run", so, "--weights", weights, "--max-new-tokens", n,
                    "--prompt-ids", ",".join(whole)], capture_output=True, text=True)
if r.returncode != 0:
    sys.exit("sgc-run failed: " + r.stderr)
fresh = r.stdout.split()
print("SAME answer" if fresh == answers[1] else
      "DIFFERENT answer: chat %s, fresh run %s" % (answers[1], fresh))
