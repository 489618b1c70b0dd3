#!/usr/bin/env python3
"""The tables of scripts/device-check's G1-G4 steps, from what the steps wrote.

  device_tables.py ids N [--span S]
      the synthetic prompt: 2, then 100 + (i * 7919) % S (default 100000)
  device_tables.py decode --out TSV --model NAME --target TOK_S
                   [--bandwidth TSV] [--sgc JSON --sgc-log LOG] [--peer JSON]
      G1/G2: decode tok/s of sgc-run (its --json, and the weight bytes its
      --verbose log names) and of the torch peer (bench/gpu/hf_peer.py),
      each against its own weight bytes / the measured copy bandwidth
  device_tables.py prefill --out TSV [--bandwidth TSV]
                   --run NAME SGC_JSON SGC_LOG PEER_JSON [--run ...]
      G3: prefill tok/s and 2 x params x tokens FLOP/s (attention not
      counted) against the measured bf16 matmul
  device_tables.py gemv --out TSV [--bandwidth TSV] [--kernels-out TSV]
                   --profile NAME PROFILE [DECODE_JSON] [--profile ...]
      G4: from SGC_CUDA_PROFILE files, per distinct decode kernel (name and
      weight bytes) the median time of a launch (the first decode call, a
      warm-up, left out) and its weight bytes / time against the copy
      bandwidth; GEMVs (gemv*) below 90 % are flagged (embed* gathers rows
      of the table it is passed: no GB/s). A last row per model
      sums a decode step's kernels; with DECODE_JSON (the G1/G2 sgc-run
      --json) the graph's measured step time is set beside it.
      --kernels-out: the same profiles' prefill kernels, total time per
      call and share of the prefill.

Missing inputs (a step that failed or was cut short) give '-' cells, never
an error: the tables say what was measured. Standard library only.
"""
import argparse
import json
import re
import statistics
import sys


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def read_reference(path, probe):
    """The median of |probe| ('copy', 'bf16 matmul') in bandwidth.tsv, or None."""
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except (OSError, TypeError):
        return None
    for line in lines[1:]:
        cells = line.split("\t")
        if cells[0].startswith(probe) and len(cells) >= 4:
            try:
                return float(cells[3])
            except ValueError:
                return None
    return None


def sgc_weight_bytes(log):
    try:
        with open(log) as f:
            m = re.search(r"^weights: \d+ tensors, (\d+) bytes", f.read(), re.M)
    except (OSError, TypeError):
        return None
    return int(m.group(1)) if m else None


def fmt(v, digits=1):
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    return f"{v:.{digits}f}"


def ratio(a, b):
    return a / b if a and b else None


def write(path, header, rows):
    with open(path, "w") as f:
        f.write("\t".join(header) + "\n")
        for r in rows:
            f.write("\t".join(r) + "\n")
    with open(path) as f:
        sys.stdout.write(f.read())


def cmd_ids(a):
    print(",".join(str(2 if i == 0 else 100 + (i * 7919) % a.span) for i in range(a.n)))


def cmd_decode(a):
    bw = read_reference(a.bandwidth, "copy")
    header = ["model", "engine", "decode_tok_s", "ms_per_token", "weight_GB",
              "ceiling_tok_s", "share_of_ceiling", "target_85pct_tok_s",
              "design_target_tok_s", "meets_target", "vs_torch", "note"]
    sgc = read_json(a.sgc) if a.sgc else None
    peer = read_json(a.peer) if a.peer else None
    peer_tok = peer.get("decode_tokens_per_s") if peer and not peer.get("error") else None
    rows = []

    def row(engine, tok, wbytes, note, own):
        ceiling = bw * 1e9 / wbytes if bw and wbytes else None
        t85 = 0.85 * ceiling if ceiling else None
        meets = "-"
        if own and tok:
            ok = tok >= a.target and (t85 is None or tok >= t85)
            meets = "yes" if ok else "no"
        rows.append([a.model, engine, fmt(tok), fmt(1e3 / tok if tok else None, 3),
                     fmt(wbytes / 1e9 if wbytes else None, 2), fmt(ceiling),
                     fmt(ratio(tok, ceiling), 3), fmt(t85), fmt(float(a.target)), meets,
                     fmt(ratio(tok, peer_tok) if own else None, 2), note])

    if a.sgc:
        tok = sgc.get("decode_tokens_per_s") if sgc else None
        note = "graph replay" if sgc else "no sgc-run result (see the step's log)"
        if sgc:
            note += f", {sgc.get('prompt_tokens')} + {sgc.get('generated_tokens')} tokens"
        row("sgc", tok or None, sgc_weight_bytes(a.sgc_log), note, True)
    if a.peer:
        if peer is None:
            note = "no peer result (see the step's log)"
        elif peer.get("error"):
            note = "peer failed: " + peer["error"][:200].replace("\t", " ").replace("\n", " ")
        else:
            note = (f"torch {peer.get('torch')} transformers {peer.get('transformers')} "
                    f"{peer.get('class')}, sdpa, static cache"
                    + (", torch.compile" if peer.get("torch_compile") else ", eager"))
        row("torch", peer_tok, peer.get("weight_bytes") if peer else None, note, False)
    write(a.out, header, rows)


def cmd_prefill(a):
    peak = read_reference(a.bandwidth, "bf16 matmul")
    header = ["model", "engine", "prompt_tokens", "prefill_tok_s", "prefill_s",
              "TFLOP_s", "share_of_matmul_peak", "vs_torch", "note"]
    rows = []
    for name, sgc_json, sgc_log, peer_json in a.run:
        sgc, peer = read_json(sgc_json), read_json(peer_json)
        peer_tok = peer.get("prefill_tokens_per_s") if peer and not peer.get("error") else None

        def add(engine, tokens, tok, wbytes, note, own):
            tflops = 2 * (wbytes / 2) * tok / 1e12 if tok and wbytes else None
            rows.append([name, engine, fmt(tokens, 0) if tokens else "-", fmt(tok),
                         fmt(tokens / tok if tokens and tok else None, 3), fmt(tflops),
                         fmt(ratio(tflops, peak), 3),
                         fmt(ratio(tok, peer_tok) if own else None, 2), note])

        tok = sgc.get("prefill_tokens_per_s") if sgc else None
        add("sgc", sgc.get("prompt_tokens") if sgc else None, tok or None,
            sgc_weight_bytes(sgc_log),
            "chunks of the model's max prefill chunk, first token included" if sgc
            else "no sgc-run result", True)
        if peer is None:
            add("torch", None, None, None, "no peer result", False)
        else:
            add("torch", peer.get("prefill_tokens"), peer_tok, peer.get("weight_bytes"),
                "one forward, no cache, last logits" if peer_tok
                else "peer failed: " + str(peer.get("error", "no prefill measured"))[:200], False)
    write(a.out, header, rows)


def read_profile(path):
    """The rows of an SGC_CUDA_PROFILE file as dicts (None if unreadable)."""
    try:
        with open(path) as f:
            lines = [l for l in f.read().splitlines() if l and not l.startswith("#")]
    except (OSError, TypeError):
        return None
    if not lines:
        return None
    keys = lines[0].split("\t")
    out = []
    for l in lines[1:]:
        cells = l.split("\t")
        if len(cells) != len(keys):
            continue  # a row cut short by a timeout
        r = dict(zip(keys, cells))
        for k in ("call", "step", "layer", "tokens", "weight_bytes"):
            r[k] = int(r[k])
        r["us"] = float(r["us"])
        out.append(r)
    return out


def cmd_gemv(a):
    bw = read_reference(a.bandwidth, "copy")
    header = ["model", "kernel", "launches_per_token", "weight_MB", "median_us", "GB_s",
              "share_of_copy", "target", "status"]
    rows, krows = [], []
    for spec in a.profile:
        name, path = spec[0], spec[1]
        decode_json = read_json(spec[2]) if len(spec) > 2 else None
        prof = read_profile(path)
        if not prof:
            rows.append([name, "(no profile)", "-", "-", "-", "-", "-", "-", "-"])
            continue
        decode = [r for r in prof if r["phase"] == "decode"]
        calls = sorted({r["call"] for r in decode})
        if len(calls) > 1:
            decode = [r for r in decode if r["call"] != calls[0]]
            calls = calls[1:]
        groups = {}
        for r in decode:
            groups.setdefault((r["kernel"], r["weight_bytes"]), []).append(r["us"])
        for (kernel, wbytes), us in sorted(groups.items(), key=lambda kv: -kv[0][1]):
            med = statistics.median(us)
            gbs = wbytes / (med * 1e-6) / 1e9 if med > 0 and wbytes else None
            gather = kernel.startswith("embed")
            if gather:  # reads one row of the table it is passed
                gbs = None
            share = ratio(gbs, bw)
            gemv = kernel.startswith("gemv")
            if gather:
                status = "gathers rows: not a GEMV"
            elif not gemv:
                status = "-"
            elif share is None:
                status = "no bandwidth"
            else:
                status = "ok" if share >= 0.9 else "BELOW 90%"
            rows.append([name, kernel, fmt(len(us) / max(len(calls), 1), 0),
                         fmt(wbytes / 1e6, 2), fmt(med, 2), fmt(gbs),
                         fmt(share, 3), ">= 0.90 of copy" if gemv else "-", status])
        step = [sum(r["us"] for r in decode if r["call"] == c) for c in calls]
        if step:
            med = statistics.median(step)
            note = f"kernels alone: {1e6 / med:.1f} tok/s"
            graph = decode_json.get("decode_tokens_per_s") if decode_json else None
            if graph:
                note += (f"; graph replay (G1/G2 run) {graph:.1f} tok/s, kernels "
                         f"{med / (1e6 / graph):.3f} of its step")
            rows.append([name, "(decode step, all kernels)", fmt(len(decode) / len(calls), 0),
                         "-", fmt(med, 2), "-", "-", "-", note])
        prefill = [r for r in prof if r["phase"] == "prefill"]
        pcalls = sorted({r["call"] for r in prefill})
        total = sum(r["us"] for r in prefill)
        pk = {}
        for r in prefill:
            pk.setdefault(r["kernel"], []).append(r["us"])
        for kernel, us in sorted(pk.items(), key=lambda kv: -sum(kv[1])):
            krows.append([name, kernel, str(len(us)), fmt(sum(us) / max(len(pcalls), 1), 1),
                          fmt(sum(us) / total if total else None, 3)])
    write(a.out, header, rows)
    if a.kernels_out:
        with open(a.kernels_out, "w") as f:
            f.write("model\tkernel\tlaunches\tus_per_call\tshare_of_prefill\n")
            for r in krows:
                f.write("\t".join(r) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("ids")
    p.add_argument("n", type=int)
    p.add_argument("--span", type=int, default=100000)
    p = sub.add_parser("decode")
    p.add_argument("--out", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--target", type=float, required=True)
    p.add_argument("--bandwidth")
    p.add_argument("--sgc")
    p.add_argument("--sgc-log")
    p.add_argument("--peer")
    p = sub.add_parser("prefill")
    p.add_argument("--out", required=True)
    p.add_argument("--bandwidth")
    p.add_argument("--run", nargs=4, action="append", default=[],
                   metavar=("NAME", "SGC_JSON", "SGC_LOG", "PEER_JSON"))
    p = sub.add_parser("gemv")
    p.add_argument("--out", required=True)
    p.add_argument("--bandwidth")
    p.add_argument("--kernels-out")
    p.add_argument("--profile", nargs="+", action="append", default=[],
                   metavar="NAME PROFILE [DECODE_JSON]")
    a = ap.parse_args()
    {"ids": cmd_ids, "decode": cmd_decode, "prefill": cmd_prefill, "gemv": cmd_gemv}[a.cmd](a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
