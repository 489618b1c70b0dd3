#!/usr/bin/env python3
"""Compares two SGC_CUDA_DUMP files launch by launch (runtime/src/cuda/launch_trace.h).

usage: compare_launches.py OURS REF [--tol T] [--table FILE]

OURS and REF (optionally gzipped: *.gz) are dumps of the same model, prompt and fed tokens, typically
--device cuda (OURS) and --device cuda-emu (REF). Each record is one
workspace or KV-cache operand of one launch, after the launch. Records must
pair up (same call, phase, step, kernel, operand, dtype, size); float
operands (F32, BF16, F16) are compared as
    err = max|ours - ref| / (max - min of ref)     (range 0: max|ref|, or 1)
with NaN equal to NaN and any other non-finite difference an infinite err;
other dtypes must be equal. A launch is beyond tolerance when one of its
operands has err > T (default 2e-2). Because each side feeds its own
outputs forward, small differences (contracted multiply-adds, approximate
exp) accumulate; the first launch beyond tolerance is the kernel to look at.

Prints one line per check and 'N passed, M failed'; exits 1 on a failure.
With --table, writes one TSV row per distinct kernel: launches, operands
compared, of them bit-identical, the worst err and where.
Standard library only; numpy is used when present (faster).
"""
import argparse
import array
import gzip
import json
import math
import struct
import sys

try:
    import numpy as np
except ImportError:  # the emulator hosts may lack it
    np = None


class BadInput(Exception):
    pass


def records(path):
    """Yields (header dict, bytes) of each record of a dump."""
    try:
        f = gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")
    except OSError as e:
        raise BadInput(f"{path}: {e.strerror}")
    with f:
        index = 0
        while True:
            line = f.readline()
            if not line:
                return
            try:
                h = json.loads(line)
                n = int(h["bytes"])
            except (ValueError, KeyError, TypeError):
                raise BadInput(f"{path}: record {index} has no valid header")
            data = f.read(n)
            if len(data) != n:
                raise BadInput(f"{path}: record {index} is cut short")
            yield h, data
            index += 1


def floats(dtype, data):
    """A sequence of floats (numpy array or list), or None for non-float dtypes."""
    if np is not None:
        if dtype == "F32":
            return np.frombuffer(data, np.float32).astype(np.float64)
        if dtype == "F16":
            return np.frombuffer(data, np.float16).astype(np.float64)
        if dtype == "BF16":
            u = np.frombuffer(data, np.uint16).astype(np.uint32) << 16
            return u.view(np.float32).astype(np.float64)
        return None
    if dtype == "F32":
        a = array.array("f")
        a.frombytes(data)
        return list(a)
    if dtype == "F16":
        return [v[0] for v in struct.iter_unpack("<e", data)]
    if dtype == "BF16":
        a = array.array("H")
        a.frombytes(data)
        b = array.array("I", (x << 16 for x in a))
        return list(array.array("f", b.tobytes()))
    return None


def err_of(ours, ref):
    """max|d| / range(ref) as the module doc says."""
    if np is not None:
        a, b = ours, ref
        # Equal values agree, infinities included (an empty split's -inf
        # maximum on both sides), and so do two NaNs.
        same = (a == b) | (np.isnan(a) & np.isnan(b))
        fin = np.isfinite(b)
        with np.errstate(invalid="ignore"):
            d = np.abs(a - b)
        d[same] = 0.0
        if not np.all(np.isfinite(d)):
            return math.inf
        rb = b[fin]
        rng = float(rb.max() - rb.min()) if rb.size else 0.0
        if rng == 0.0:
            rng = float(np.abs(rb).max()) if rb.size else 0.0
        if rng == 0.0:
            rng = 1.0
        return float(d.max()) / rng if d.size else 0.0
    worst = 0.0
    lo, hi = math.inf, -math.inf
    for x, y in zip(ours, ref):
        if math.isfinite(y):
            lo, hi = min(lo, y), max(hi, y)
        if x == y or (math.isnan(x) and math.isnan(y)):
            continue
        dd = abs(x - y)
        if not math.isfinite(dd):
            return math.inf
        worst = max(worst, dd)
    rng = hi - lo if hi >= lo else 0.0
    if rng == 0.0:
        rng = max((abs(y) for y in ref if math.isfinite(y)), default=0.0) or 1.0
    return worst / rng


KEYS = ("call", "phase", "step", "layer", "kernel", "tokens", "operand",
        "kind", "dtype", "bytes")


def where(h):
    layer = f" (layer {h['layer']})" if h["layer"] >= 0 else ""
    return (f"call {h['call']} {h['phase']} step {h['step']}{layer} kernel "
            f"{h['kernel']} operand {h['operand']} ({h['kind']} {h['dtype']}, "
            f"{h['bytes']} B)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("ours")
    ap.add_argument("ref")
    ap.add_argument("--tol", type=float, default=2e-2)
    ap.add_argument("--table")
    a = ap.parse_args()
    checks = []  # (ok, text)
    kernels = {}  # name -> [launches set, operands, identical, worst, at]
    first_bad = None
    worst = (0.0, None)
    count = 0
    try:
        ours_it, ref_it = records(a.ours), records(a.ref)
        while True:
            o = next(ours_it, None)
            r = next(ref_it, None)
            if o is None and r is None:
                break
            if o is None or r is None:
                longer = a.ref if o is None else a.ours
                h = (r or o)[0]
                checks.append((False, f"the dumps differ in length: {longer} goes on "
                                      f"at {where(h)} (record {count})"))
                break
            (ho, do), (hr, dr) = o, r
            if any(ho.get(k) != hr.get(k) for k in KEYS):
                checks.append((False, f"record {count} differs in what it is: "
                                      f"{where(ho)} vs {where(hr)}"))
                break
            count += 1
            k = kernels.setdefault(ho["kernel"], [set(), 0, 0, 0.0, ""])
            k[0].add((ho["call"], ho["step"]))
            k[1] += 1
            if do == dr:
                k[2] += 1
                continue
            fo, fr = floats(ho["dtype"], do), floats(hr["dtype"], dr)
            e = math.inf if fo is None else err_of(fo, fr)
            if e > k[3] or not k[4]:
                k[3], k[4] = e, where(ho)
            if e > worst[0]:
                worst = (e, ho)
            if e > a.tol and first_bad is None:
                first_bad = (e, ho)
    except BadInput as e:
        print(f"FAIL: {e}")
        print("0 passed, 1 failed")
        return 1
    if count == 0 and not checks:
        checks.append((False, "no records (was SGC_CUDA_DUMP set on both runs?)"))
    launches = sum(len(v[0]) for v in kernels.values())
    identical = sum(v[2] for v in kernels.values())
    if count:
        checks.append((True, f"{launches} launches, {count} operands paired; "
                             f"{identical} bit-identical"))
    if first_bad is not None:
        checks.append((False, f"first launch beyond tolerance: {where(first_bad[1])}: "
                              f"max|d|/range {first_bad[0]:.3e} > {a.tol:.1e}"))
    elif count:
        msg = f"every operand within {a.tol:.1e}"
        if worst[1] is not None:
            msg += f" (worst {worst[0]:.3e} at {where(worst[1])})"
        checks.append((True, msg))
    if a.table:
        with open(a.table, "w") as f:
            f.write("kernel\tlaunches\toperands\tbit_identical\tworst_err\tworst_at\n")
            for name, (l, n, same, w, at) in kernels.items():
                f.write(f"{name}\t{len(l)}\t{n}\t{same}\t{w:.3e}\t{at or '-'}\n")
    failed = sum(1 for ok, _ in checks if not ok)
    for ok, text in checks:
        print(("ok: " if ok else "FAIL: ") + text)
    print(f"{len(checks) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
