#!/usr/bin/env python3
"""The goldens of a batched run: Hugging Face transformers (eager) on
examples/tiny-gemma3, one sequence at a time, for prompts other than the
regular golden's.

    tools/gen-golden/gen-golden --batch [--check]

writes examples/tiny-gemma3/batch{1,2,3}.golden.safetensors, each in the
sampled-rows format of long.golden.safetensors (compare-logits.py --rows):
prompt_ids I32 [S], feed_ids I32 [N] (the reference's own greedy tokens,
decode_ids[0..N-1], each fed at positions S..S+N-1), positions I32 [S+N]
(every position), logits_f32 F32 [S+N, V] and logits_bf16 F32 [S+N, V] (the
same run in bfloat16, its own greedy tokens equal to the f32 run's: asserted).
The regular golden (golden.safetensors) is the batch's sequence 0. With
--check nothing is written: the files on disk must equal what would be.
"""
import json
import os
import sys

import numpy as np
import torch
from safetensors import safe_open

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_golden as G  # noqa: E402

MODEL = os.path.join(G.EXAMPLES, "tiny-gemma3")
# Prompt lengths: shorter and longer than the regular golden's 16, one past
# the window of 4 only by a little.
LENGTHS = {1: 7, 2: 23, 3: 5}
DECODE_STEPS = 16


def load(dtype):
    spec = G.TINY["gemma3"]
    with open(os.path.join(MODEL, "meta.json")) as f:
        meta = json.load(f)
    cfg_cls, model_cls = G.hf_classes("gemma3")
    cfg = cfg_cls(**meta["hf_config_kwargs"])
    cfg._attn_implementation = "eager"
    model = model_cls(cfg).to(torch.float32)
    prefix = G.sgc_prefix("gemma3")
    state = {}
    with safe_open(os.path.join(MODEL, "model.safetensors"), "pt") as f:
        for k in f.keys():
            state["model." + k[len(prefix):]] = f.get_tensor(k).to(torch.float32)
    missing, unexpected = model.load_state_dict(state, strict=False)
    assert not unexpected and all(k == "lm_head.weight" for k in missing), (missing, unexpected)
    model.tie_weights()
    return spec, model.to(dtype).eval()


@torch.no_grad()
def greedy(model, prompt, steps):
    """Prefill, then `steps` greedy decode steps with the HF KV cache; every
    position's logits (f32) and the tokens fed."""
    out = model(input_ids=torch.tensor([prompt]), use_cache=True)
    cache = out.past_key_values
    rows = [out.logits[0].float()]
    fed = []
    tok = int(out.logits[0, -1].float().argmax())
    for _ in range(steps):
        fed.append(tok)
        o = model(input_ids=torch.tensor([[tok]]), past_key_values=cache, use_cache=True)
        cache = o.past_key_values
        rows.append(o.logits[0].float())
        tok = int(o.logits[0, -1].float().argmax())
    return torch.cat(rows), fed


def main():
    check = "--check" in sys.argv[1:]
    torch.manual_seed(0)
    spec, m32 = load(torch.float32)
    _, m16 = load(torch.bfloat16)
    # Sequence 0 is the regular golden: the reference here must be its.
    golden = {}
    with safe_open(os.path.join(MODEL, "golden.safetensors"), "pt") as f:
        for k in ("input_ids", "prefill_logits_f32", "decode_logits_f32", "decode_ids_f32"):
            golden[k] = f.get_tensor(k)
    logits, fed = greedy(m32, golden["input_ids"].tolist(), DECODE_STEPS - 1)
    want = torch.cat([golden["prefill_logits_f32"], golden["decode_logits_f32"][:DECODE_STEPS - 1]])
    assert torch.equal(logits, want), "the reference differs from golden.safetensors"
    assert fed == golden["decode_ids_f32"].tolist()[:DECODE_STEPS - 1]
    stale = []
    for k, length in LENGTHS.items():
        rs = np.random.RandomState(7000 + k)
        prompt = [int(v) for v in rs.randint(3, spec["vocab"] - 3, size=length)]
        l32, f32 = greedy(m32, prompt, DECODE_STEPS)
        l16, f16 = greedy(m16, prompt, DECODE_STEPS)
        assert f32 == f16, f"prompt {k}: bf16 greedy tokens {f16} differ from f32 {f32}"
        assert all(t not in G.SPECIAL_IDS for t in f32), f"prompt {k}: a special id in {f32}"
        assert torch.isfinite(l32).all() and torch.isfinite(l16).all()
        n = len(prompt) + DECODE_STEPS
        g = {
            "prompt_ids": torch.tensor(prompt, dtype=torch.int32),
            "feed_ids": torch.tensor(f32, dtype=torch.int32),
            "positions": torch.arange(n, dtype=torch.int32),
            "logits_f32": l32.contiguous(),
            "logits_bf16": l16.contiguous(),
        }
        path = os.path.join(MODEL, f"batch{k}.golden.safetensors")
        if check:
            with safe_open(path, "pt") as f:
                if any(not torch.equal(f.get_tensor(t), v) for t, v in g.items()):
                    stale.append(path)
            continue
        G.write_safetensors(path, g, {"format": "pt", "what": "gen_batch.py: HF eager, "
                                      "f32 and bf16, greedy, every position"})
        G.read_back_equal(path, g)
        print(f"wrote {path}: prompt {length} tokens, greedy {f32}")
    if stale:
        sys.exit("stale: " + ", ".join(stale))


if __name__ == "__main__":
    main()
