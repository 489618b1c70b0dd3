#!/usr/bin/env python3
"""sgc quantize against llama.cpp's converter + llama-quantize (issue
"Quantized weights, part 2", item 2), for one --type. Standard library only.

    check-quantize.py --bin DIR --hf DIR --work DIR --family F --type T
                      [--figures FILE] [--logits FILE]

--hf is test/Inputs/quantize/make-hf-checkpoint.py's folder of the
family's config (named "hf", as when the figures were made; gemma3 or
gemma4); --figures defaults to test/Inputs/quantize/
llama-quantize.json and --logits to llama-logits.safetensors there
(tools/gen-golden/gen_quantize.py: llama.cpp's files of the same checkpoint,
its logits on them and HF's). Checks, each a line, exit 1 on any failure:
  - the metadata: every key, type and value as llama.cpp's file has them;
  - every tensor's name, type and shape, in llama.cpp's order; the data of
    each Q8_0, Q4_0, F32 tensor byte-identical; of each Q4_K / Q6_K tensor
    identical or with a squared reconstruction error no larger than
    llama-quantize's (and the first Q4_K and Q6_K tensor's error is
    recomputed even when identical: it must reproduce the figure);
  - the file runs in sgc (sgc compile --compute-dtype=f32, the weight-only
    path; sgc-run fed llama.cpp's greedy tokens): every row within 1e-4 of
    its range of reference (a), HF f32 on the weights as the `gguf` package
    dequantizes the file (QUANT.md §5.1, ARCHITECTURE.md's f32 rule); and
    sgc's greedy token is llama.cpp's at every step where (a)'s top-2 margin
    exceeds twice both engines' errors (§5.3), at least a quarter of the
    steps. (sgc's default bf16 path on such files is held to llama.cpp by
    test/e2e's GGUF goldens.)
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
INPUTS = os.path.join(HERE, "..", "..", "Inputs", "quantize")
sys.path.insert(0, INPUTS)
sys.path.insert(0, os.path.join(HERE, "..", "..", "e2e"))

import gguf_file  # noqa: E402

cl = __import__("compare-logits")


class Checks:
    def __init__(self, label):
        self.label, self.failed = label, 0

    def __call__(self, ok, text):
        print("%s: %s%s" % (self.label, "" if ok else "FAIL: ", text))
        self.failed += not ok


def check_metadata(check, ours, want):
    want = [tuple(e) for e in want]
    if ours.metadata == want:
        check(True, "metadata: %d keys as llama.cpp's" % len(want))
        return
    theirs = {k: (t, d) for k, t, d in want}
    mine = {k: (t, d) for k, t, d in ours.metadata}
    for key in sorted(set(theirs) | set(mine)):
        if theirs.get(key) != mine.get(key):
            check(False, "metadata key %s: ours %s, llama.cpp's %s"
                  % (key, mine.get(key), theirs.get(key)))
    if set(theirs.items()) == set(mine.items()):
        check(False, "metadata keys in another order than llama.cpp's")


def check_tensors(check, ours, figures, source):
    want = figures["tensors"]
    names = [t.name for t in ours.tensors]
    if names != [w[0] for w in want]:
        check(False, "tensors: ours %d (%s...), llama.cpp's %d (%s...)"
              % (len(names), names[:3], len(want), [w[0] for w in want][:3]))
        return
    same, bad, recomputed = 0, 0, set()
    for t, (name, ttype, dims, sha) in zip(ours.tensors, want):
        if t.type != ttype or t.dims != dims:
            check(False, "%s: %s %s, llama.cpp's %s %s" % (name, t.type, t.dims, ttype, dims))
            bad += 1
            continue
        identical = hashlib.sha256(ours.data(t)).hexdigest() == sha
        same += identical
        if ttype not in ("Q4_K", "Q6_K"):
            if not identical:
                print("%s: %s (%s): data differs from llama-quantize's" % (check.label, name, ttype))
                bad += 1
            continue
        # A K-quant may differ; its error may not be larger. The first of
        # each type is recomputed even when identical: the figure must hold.
        if identical and ttype in recomputed:
            continue
        recomputed.add(ttype)
        got = squared_error(ours, t, source)
        bound = figures["squared_error"][name]
        ok = abs(got - bound) <= 1e-9 * bound if identical else got <= bound
        bad += not ok
        check(ok, "%s (%s, %s): squared error %.6g, llama-quantize's %.6g"
              % (name, ttype, "identical" if identical else "differs", got, bound))
    check(bad == 0, "tensors: %d as llama.cpp's (names, types, shapes, order), %d "
          "byte-identical to llama-quantize's" % (len(want), same))


def squared_error(f, t, source):
    """A K-quant tensor's squared distance from the checkpoint's values."""
    hf = {"token_embd.weight": "model.embed_tokens.weight"}.get(t.name)
    if hf is None:
        layer, rest = t.name.split(".", 2)[1:]
        hf = "model.layers.%s.%s" % (layer, LAYER_NAMES[rest])
    want = source[hf][:t.dims[0] * t.dims[1]]
    return sum((a - b) * (a - b) for a, b in zip(f.values(t), want))


LAYER_NAMES = {
    "attn_q.weight": "self_attn.q_proj.weight", "attn_k.weight": "self_attn.k_proj.weight",
    "attn_v.weight": "self_attn.v_proj.weight", "attn_output.weight": "self_attn.o_proj.weight",
    "ffn_gate.weight": "mlp.gate_proj.weight", "ffn_up.weight": "mlp.up_proj.weight",
    "ffn_down.weight": "mlp.down_proj.weight",
}


def row_error(row, ref):
    """max |row - ref| over the vocabulary, and as a share of ref's range."""
    diff = max(abs(a - b) for a, b in zip(row, ref))
    return diff, diff / (max(ref) - min(ref))


def check_run(check, args, gguf, greedy, llama_rows, hf_rows):
    so = os.path.join(args.work, check.label + ".so")
    dump = os.path.join(args.work, check.label + ".logits")
    subprocess.run([os.path.join(args.bin, "sgc"), "compile", gguf, "--target=cpu",
                    "--compute-dtype=f32", "-o", so], check=True)
    tokens = greedy["tokens"]
    subprocess.run([os.path.join(args.bin, "sgc-run"), so, "--weights", gguf,
                    "--prompt-ids", ",".join(map(str, greedy["prompt"])),
                    "--feed-ids", ",".join(map(str, tokens[:-1])),
                    "--max-new-tokens", str(len(tokens)), "--dump-logits", dump],
                   check=True, stdout=subprocess.DEVNULL)
    ours = cl.read_safetensors(dump)
    rows = (cl.rows(cl.tensor(ours, "prefill_logits", "F32", 2, dump))[-1:] +
            cl.rows(cl.tensor(ours, "decode_logits", "F32", 2, dump)))
    if len(rows) < len(tokens) or len(llama_rows) != len(tokens) or len(hf_rows) != len(tokens):
        check(False, "rows: sgc %d, llama.cpp %d, HF %d, want %d"
              % (len(rows), len(llama_rows), len(hf_rows), len(tokens)))
        return
    decisive, agree = 0, 0
    ours_rel, llama_rel = [], []
    for step, (row, llama, ref, tok) in enumerate(zip(rows, llama_rows, hf_rows, tokens)):
        if cl.first_non_finite(row) is not None:
            check(False, "step %d: sgc's row is not finite" % step)
            return
        ours_abs, ours_r = row_error(row, ref)
        llama_abs, llama_r = row_error(llama, ref)
        ours_rel.append(ours_r)
        llama_rel.append(llama_r)
        # §5.3: where HF's top-2 margin outweighs both errors (twice: then no
        # error can swap the two), sgc's token is llama.cpp's.
        top = sorted(ref, reverse=True)
        if top[0] - top[1] > 2 * max(ours_abs, llama_abs):
            decisive += 1
            agree += cl.argmax(row) == tok
            if cl.argmax(row) != tok:
                print("%s: step %d: sgc's token %d, llama.cpp's %d"
                      % (check.label, step, cl.argmax(row), tok))
    check(max(ours_rel) <= 1e-4,
          "rows vs HF f32 on the file's weights: sgc (f32) at most %.2g of the row range "
          "(bound 1e-4; llama.cpp's own %.2g)" % (max(ours_rel), max(llama_rel)))
    check(decisive == agree and 4 * decisive >= len(tokens),
          "greedy: %d steps, %d where HF's margin outweighs both errors, sgc's token "
          "llama.cpp's at %d" % (len(tokens), decisive, agree))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--hf", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--type", required=True)
    ap.add_argument("--family", required=True, choices=("gemma3", "gemma4"))
    ap.add_argument("--figures", default=os.path.join(INPUTS, "llama-quantize.json"))
    ap.add_argument("--logits", default=os.path.join(INPUTS, "llama-logits.safetensors"))
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    label = "%s-%s" % (args.family, args.type)
    with open(args.figures) as f:
        figures = json.load(f)["files"][label]
    check = Checks(label)
    gguf = os.path.join(args.work, label + ".gguf")
    subprocess.run([os.path.join(args.bin, "sgc"), "quantize", args.hf, gguf,
                    "--type", args.type], check=True, stderr=subprocess.DEVNULL)
    ours = gguf_file.GgufFile(gguf)
    whole = hashlib.sha256(ours.raw).hexdigest() == figures["sha256"]
    print("%s: file: %d bytes, %sidentical to llama-quantize's" % (
        label, len(ours.raw), "" if whole else "not "))
    check_metadata(check, ours, figures["metadata"])
    source = gguf_file.bf16_checkpoint(os.path.join(args.hf, "model.safetensors"))
    check_tensors(check, ours, figures, source)
    refs = cl.read_safetensors(args.logits)
    check_run(check, args, gguf, figures["greedy"],
              cl.rows(cl.tensor(refs, label + ".llama", "F32", 2, args.logits)),
              cl.rows(cl.tensor(refs, label + ".hf_f32", "F32", 2, args.logits)))
    print("%s: %s" % (label, "failed %d" % check.failed if check.failed else "passed"))
    sys.exit(1 if check.failed else 0)


if __name__ == "__main__":
    main()
