"""The B1/B2 peer: HF transformers on torch CPU, timed like sgc_decode.c.

usage: python hf_peer.py HF_DIR bf16|f32 THREADS PROMPT DECODE [PREFILL PREFILL_REPS]

Loads HF_DIR (Gemma3ForCausalLM, written by gen-golden --b1) in the given
dtype with eager attention, torch.set_num_threads(THREADS) (and one interop
thread), and under torch.inference_mode:
  1. warm-up: the PROMPT-token prompt, then 8 greedy decode steps;
  2. decode: a fresh KV cache, the same prompt, then DECODE greedy decode
     steps, each timed (forward of one token with the cache + argmax);
  3. prefill (PREFILL > 0): PREFILL_REPS forwards of a PREFILL-token prompt
     with a fresh cache, logits of the last position only, each timed.
The prompt ids are those of sgc_decode.c. Prints the same key=value lines
(other_load: CPUs other processes kept busy during the timed decode).
"""

import os
import statistics
import sys
import time

if len(sys.argv) < 6:
    sys.exit(__doc__)
hf_dir, dtype_name, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
prompt_len, decode = int(sys.argv[4]), int(sys.argv[5])
prefill_len = int(sys.argv[6]) if len(sys.argv) > 6 else 0
prefill_reps = int(sys.argv[7]) if len(sys.argv) > 7 else 1
os.environ["OMP_NUM_THREADS"] = str(threads)

import torch  # noqa: E402
import transformers  # noqa: E402

torch.set_num_threads(threads)
torch.set_num_interop_threads(1)
dtype = {"bf16": torch.bfloat16, "f32": torch.float32}[dtype_name]
model = transformers.AutoModelForCausalLM.from_pretrained(
    hf_dir, dtype=dtype, attn_implementation="eager")
model.eval()


def load_sample():
    """(wall s, own CPU s, busy ticks, total ticks): see ../other_load.h."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:11]]
    t = os.times()
    return time.monotonic(), t.user + t.system, sum(v) - v[3] - v[4], sum(v)


def other_load(a, b):
    """Average CPUs other processes kept busy between samples a and b."""
    wall, total = b[0] - a[0], b[3] - a[3]
    if wall <= 0 or total <= 0:
        return 0.0
    busy = (b[2] - a[2]) / total * os.cpu_count()
    return max(0.0, busy - (b[1] - a[1]) / wall)


def make_prompt(n):
    # sgc_decode.c's ids: the modulus shrinks only for vocabularies < 100100.
    span = min(100000, model.config.vocab_size - 100)
    return torch.tensor([[2 if i == 0 else 100 + (i * 7919) % span
                          for i in range(n)]], dtype=torch.long)


def generate(prompt, steps):
    """Greedy: prefill, then `steps` decode steps; returns (ids, step times)."""
    out = model(input_ids=prompt, use_cache=True, logits_to_keep=1)
    cache = out.cache
    tok = out.logits[:, -1, :].argmax(dim=-1, keepdim=True)
    ids, times = [int(tok)], []
    for _ in range(steps):
        t0 = time.perf_counter()
        out = model(input_ids=tok, cache=cache, use_cache=True)
        cache = out.cache
        tok = out.logits[:, -1, :].argmax(dim=-1, keepdim=True)
        ids.append(int(tok))
        times.append(time.perf_counter() - t0)
    return ids, times


with torch.inference_mode():
    prompt = make_prompt(prompt_len)
    generate(prompt, 8)
    l0 = load_sample()
    ids, times = generate(prompt, decode)
    l1 = load_sample()
    print(f"threads={torch.get_num_threads()}")
    print(f"variant=torch {torch.__version__} transformers {transformers.__version__} {dtype_name}")
    print(f"weight_bytes={sum(p.numel() * p.element_size() for p in model.parameters())}")
    print(f"decode_steps={decode}")
    print(f"decode_ms_mean={1e3 * sum(times) / len(times):.3f}")
    print(f"decode_ms_median={1e3 * statistics.median(times):.3f}")
    print("generated=" + ",".join(str(i) for i in ids[:16]))
    print(f"other_load={other_load(l0, l1):.2f}")
    if prefill_len > 0:
        long_prompt = make_prompt(prefill_len)
        t = []
        for _ in range(prefill_reps):
            t0 = time.perf_counter()
            out = model(input_ids=long_prompt, use_cache=True, logits_to_keep=1)
            t.append(time.perf_counter() - t0)
        print(f"prefill_tokens={prefill_len}")
        print(f"prefill_s_median={statistics.median(t):.4f}")
        print(f"prefill_argmax={int(out.logits[0, -1].argmax())}")
