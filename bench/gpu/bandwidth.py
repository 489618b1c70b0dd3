#!/usr/bin/env python3
"""The GPU references of scripts/device-check, measured with torch.

usage: bandwidth.py OUT.tsv [--copy-bytes N] [--reps R]

  copy: device-to-device copy of N bytes (default 1 GiB, far past the L2),
        1 warm-up + R timed copies (default 20), each timed with CUDA
        events; a copy reads and writes N bytes, so GB/s = 2 N / time
        (the reference the GEMV and decode targets are measured against,
        CUDA.md section 5).
  bf16 matmul: 8192 x 8192 x 8192 (torch.matmul, cuBLAS), 2 warm-ups + R
        timed: TFLOP/s = 2 M N K / time (the reference of G3).

Writes a TSV with min / median / max per probe (each figure from one run,
bench/README.md), and prints it.
"""
import argparse
import statistics

import torch


def timed(fn, reps, warm):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        out.append(s.elapsed_time(e) / 1e3)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--copy-bytes", type=int, default=1 << 30)
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args()
    rows = []
    n = a.copy_bytes
    src = torch.empty(n, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    t = timed(lambda: dst.copy_(src), a.reps, 3)
    gbs = sorted(2 * n / x / 1e9 for x in t)
    rows.append(("copy read+write", n, gbs[0], statistics.median(gbs), gbs[-1], "GB/s"))
    del src, dst
    m = 8192
    x = torch.randn(m, m, dtype=torch.bfloat16, device="cuda")
    y = torch.randn(m, m, dtype=torch.bfloat16, device="cuda")
    t = timed(lambda: torch.matmul(x, y), a.reps, 2)
    tf = sorted(2 * m ** 3 / s / 1e12 for s in t)
    rows.append(("bf16 matmul 8192^3", m, tf[0], statistics.median(tf), tf[-1], "TFLOP/s"))
    with open(a.out, "w") as f:
        f.write("probe\tsize\tmin\tmedian\tmax\tunit\n")
        for r in rows:
            f.write(f"{r[0]}\t{r[1]}\t{r[2]:.1f}\t{r[3]:.1f}\t{r[4]:.1f}\t{r[5]}\n")
    print(open(a.out).read(), end="")


if __name__ == "__main__":
    main()
