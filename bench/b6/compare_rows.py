"""B6's correctness at full size: sgc's logits rows against llama.cpp's on the
same GGUF, where llama.cpp is the only full-size reference.

usage: compare_rows.py SGC_DUMP LLAMA_ROWS PROMPT_LEN STEPS VOCAB

SGC_DUMP: sgc-run --dump-logits (prefill_logits [S,V], decode_logits [D,V],
generated_ids); LLAMA_ROWS: llama_logits.cc's rows for the same prompt fed
sgc's first STEPS-1 generated tokens (S + STEPS - 1 rows, f32). For the STEPS
rows that choose a token (the prompt's last, then each fed one): the largest
difference over the vocabulary as a share of llama.cpp's row range, and
greedy agreement: sgc's token is llama.cpp's argmax wherever llama.cpp's
top-2 margin exceeds twice that difference (QUANT.md 5.3, with llama.cpp as
the reference). Prints one line; exits 1 when a decisive step disagrees.
"""

import json
import struct
import sys

import numpy as np


def safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        dtype = {"F32": np.float32, "I32": np.int32}[e["dtype"]]
        a, b = e["data_offsets"]
        out[name] = np.memmap(path, dtype=dtype, mode="r", offset=8 + n + a,
                              shape=tuple(e["shape"]))
    return out


def main():
    dump, rows_path = sys.argv[1], sys.argv[2]
    prompt, steps, vocab = (int(x) for x in sys.argv[3:6])
    ours = safetensors(dump)
    mine = np.concatenate([ours["prefill_logits"][-1:], ours["decode_logits"][:steps - 1]])
    tokens = np.asarray(ours["generated_ids"][:steps])
    theirs = np.memmap(rows_path, dtype="<f4", mode="r").reshape(-1, vocab)[prompt - 1:]
    assert theirs.shape[0] == steps and mine.shape[0] == steps, (theirs.shape, mine.shape)
    worst, decisive, agree = 0.0, 0, 0
    for step in range(steps):
        a, b = mine[step].astype(np.float64), theirs[step].astype(np.float64)
        if not (np.isfinite(a).all() and np.isfinite(b).all()):
            print("step %d: a row is not finite" % step)
            sys.exit(1)
        diff = np.abs(a - b).max()
        worst = max(worst, diff / (b.max() - b.min()))
        top = np.sort(b)[-2:]
        if top[1] - top[0] > 2 * diff:
            decisive += 1
            agree += int(np.argmax(b)) == int(tokens[step])
    ok = decisive == agree
    print("rows: sgc vs llama.cpp at most %.3g of the row range; greedy: %d steps, %d decisive, "
          "sgc's token llama.cpp's at %d%s" % (worst, steps, decisive, agree,
                                                "" if ok else " (DISAGREE)"))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
