#!/usr/bin/env python3
"""The G1/G2/G3 peer: HF transformers on torch CUDA, random bf16 weights.

usage: hf_peer.py CONFIG_DIR --out FILE.json [--prompt 512] [--new 256]
                  [--prefill 4096] [--torch-compile] [--id-span 100000]
                  [--device cuda|cpu]

CONFIG_DIR holds an HF config.json (test/Inputs/hf-configs/gemma-3-12b-it,
gemma-4-31B-it: the seeds' sizes). The text model (Gemma3ForCausalLM /
Gemma4ForCausalLM, through AutoModelForCausalLM) is built directly on the
GPU in bf16 with sdpa attention, its parameters drawn N(0, 0.02) there (no
checkpoint, no host copy). Under torch.inference_mode:
  1. warm-up: generate 8 tokens after the prompt;
  2. decode: greedy generate of --new tokens after a --prompt-token prompt
     with a static cache (cache_implementation="static"; min_new_tokens =
     max_new_tokens, so no early stop). A logits processor records a CUDA
     event at every step: decode tok/s = (steps - 1) / time from the first
     step's event to the last, as sgc-run counts (first token to last);
     time to first token from an event before generate;
  3. prefill (--prefill N > 0): a forward of an N-token prompt without a
     cache, logits of the last position only, once to warm up and twice
     timed with CUDA events (the faster counts).
torch.compile only with --torch-compile (transformers' own compilation of
the static-cache forward is turned off otherwise). The prompt ids are
those of scripts/device-check: 2, then 100 + (i * 7919) % SPAN.
Writes one JSON object to --out (also on failure: {"error": ...}, exit 1).
--device cpu (a smoke test of the script on a host without a GPU, e.g. with
a tiny config) times with the host clock instead of CUDA events.
"""
import argparse
import json
import os
import signal
import sys
import time
import traceback


def prompt_ids(n, span):
    return [2 if i == 0 else 100 + (i * 7919) % span for i in range(n)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("config_dir")
    ap.add_argument("--out", required=True)
    ap.add_argument("--prompt", type=int, default=512)
    ap.add_argument("--new", type=int, default=256)
    ap.add_argument("--prefill", type=int, default=0)
    ap.add_argument("--torch-compile", action="store_true")
    ap.add_argument("--id-span", type=int, default=100000)
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    a = ap.parse_args()
    result = {"config": os.path.basename(os.path.normpath(a.config_dir)),
              "attention": "sdpa", "cache": "static",
              "torch_compile": a.torch_compile}

    def write():
        with open(a.out, "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")

    def on_term(signum, frame):  # the step's timeout: keep what was measured
        raise KeyboardInterrupt("terminated (the step's timeout)")

    signal.signal(signal.SIGTERM, on_term)
    try:
        run(a, result)
    except BaseException as e:  # also KeyboardInterrupt from a timeout's TERM
        result["error"] = f"{type(e).__name__}: {e}".strip()
        traceback.print_exc()
        write()
        return 1
    write()
    print(json.dumps(result))
    return 0


def run(a, result):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    t0 = time.monotonic()
    import torch
    import transformers
    from transformers import AutoConfig, AutoModelForCausalLM, LogitsProcessor
    from transformers import LogitsProcessorList

    transformers.logging.set_verbosity_error()
    result["torch"] = torch.__version__
    result["transformers"] = transformers.__version__
    cuda = a.device == "cuda"
    result["device"] = torch.cuda.get_device_name(0) if cuda else "cpu"
    dtype = torch.bfloat16

    def mark():
        """A point in the device's stream: a recorded CUDA event (the host
        clock on the CPU)."""
        if not cuda:
            return time.perf_counter()
        e = torch.cuda.Event(enable_timing=True)
        e.record()
        return e

    def seconds(a, b):
        if not cuda:
            return b - a
        b.synchronize()
        return a.elapsed_time(b) / 1e3

    def sync():
        if cuda:
            torch.cuda.synchronize()

    cfg = AutoConfig.from_pretrained(a.config_dir)
    text = cfg.get_text_config() if hasattr(cfg, "get_text_config") else cfg.text_config
    text.use_cache = True
    result["model_type"] = text.model_type

    def build():
        # transformers 4.56+ spells it dtype, older ones torch_dtype.
        for key in ("dtype", "torch_dtype"):
            try:
                return AutoModelForCausalLM.from_config(
                    text, attn_implementation="sdpa", **{key: dtype})
            except TypeError:
                continue
        raise RuntimeError("AutoModelForCausalLM.from_config takes no dtype")

    with torch.device(a.device):
        model = build()
    model = model.to(device=a.device, dtype=dtype).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, 0.02)
    sync()
    result["class"] = type(model).__name__
    result["weight_bytes"] = sum(p.numel() * p.element_size() for p in model.parameters())
    result["setup_s"] = round(time.monotonic() - t0, 2)

    gen = dict(do_sample=False, cache_implementation="static")
    gc = model.generation_config
    if hasattr(gc, "disable_compile"):
        gc.disable_compile = not a.torch_compile
    if a.torch_compile and not hasattr(gc, "disable_compile"):
        model.forward = torch.compile(model.forward, mode="reduce-overhead", fullgraph=True)
    gc.pad_token_id = gc.pad_token_id if gc.pad_token_id is not None else 0

    class StepEvents(LogitsProcessor):
        """A mark at every generation step (after its forward)."""

        def __init__(self):
            self.events = []

        def __call__(self, input_ids, scores):
            self.events.append(mark())
            return scores

    ids = torch.tensor([prompt_ids(a.prompt, a.id_span)], device=a.device)
    mask = torch.ones_like(ids)
    with torch.inference_mode():
        model.generate(ids, attention_mask=mask, max_new_tokens=8, min_new_tokens=8, **gen)
        sync()
        steps = StepEvents()
        start = mark()
        out = model.generate(ids, attention_mask=mask, max_new_tokens=a.new,
                             min_new_tokens=a.new,
                             logits_processor=LogitsProcessorList([steps]), **gen)
        sync()
    n = len(steps.events)
    result["prompt_tokens"] = a.prompt
    result["generated_tokens"] = int(out.shape[1] - ids.shape[1])
    result["time_to_first_token_s"] = seconds(start, steps.events[0])
    decode_s = seconds(steps.events[0], steps.events[-1])
    result["decode_tokens_per_s"] = (n - 1) / decode_s if n > 1 and decode_s > 0 else 0.0
    result["generated_head"] = out[0, ids.shape[1]:ids.shape[1] + 8].tolist()

    if a.prefill > 0:
        long_ids = torch.tensor([prompt_ids(a.prefill, a.id_span)], device=a.device)

        def forward():
            try:
                return model(input_ids=long_ids, use_cache=False, logits_to_keep=1)
            except TypeError:  # before logits_to_keep
                return model(input_ids=long_ids, use_cache=False, num_logits_to_keep=1)

        times = []
        with torch.inference_mode():
            forward()
            for _ in range(2):
                s = mark()
                forward()
                times.append(seconds(s, mark()))
        result["prefill_tokens"] = a.prefill
        result["prefill_s"] = min(times)
        result["prefill_tokens_per_s"] = a.prefill / min(times)
    result["total_s"] = round(time.monotonic() - t0, 2)


if __name__ == "__main__":
    sys.exit(main())
