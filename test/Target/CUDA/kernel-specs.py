#!/usr/bin/env python3
"""Prints the kernel specs `sgc compile --target=cuda:... --kernel-specs=FILE`
wrote (JSON: {"kernels": [{"name", "spec"}]}), one line per kernel: `NAME
key=value ...` for the spec's numbers, booleans (1 / 0), strings and integer
arrays (a,b,c); a `jobs` list of dictionaries as `jobs=N` and `jobI.key=value`
for each job's scalar entries (a float array as its length); a `steps` or
`prologue` list of strings as `steps=A;B`. Other lists and dictionaries are
left out. sgc-emu-sample reads these lines to know what each kernel
computes."""
import json
import sys


def scalar(value):
    """The text of a number, boolean or string; None for anything else. A
    float as MLIR prints it: six digits after the point in exponential
    form where that is exact, else all the digits it needs."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        short = "%.6e" % value
        return short if float(short) == value else repr(value)
    if isinstance(value, (int, str)):
        return str(value)
    return None


def is_ints(value):
    return isinstance(value, list) and all(
        isinstance(v, int) and not isinstance(v, bool) for v in value)


def fields(spec):
    out = []
    for key, value in spec.items():
        text = scalar(value)
        if text is not None:
            out.append(f"{key}={text}")
        elif is_ints(value) and value:
            out.append(f"{key}=" + ",".join(str(v) for v in value))
    return out


def job_fields(jobs):
    out = [f"jobs={len(jobs)}"]
    for i, job in enumerate(jobs):
        for key, value in job.items():
            text = scalar(value)
            if text is not None:
                out.append(f"job{i}.{key}={text}")
            elif isinstance(value, list):
                out.append(f"job{i}.{key}={len(value)}")
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: kernel-specs.py SPECS.json")
    with open(sys.argv[1]) as f:
        kernels = json.load(f)["kernels"]
    if not kernels:
        sys.exit(f"{sys.argv[1]}: no kernel with a spec")
    for k in kernels:
        spec = k["spec"]
        line = fields(spec)
        if isinstance(spec.get("jobs"), list):
            line += job_fields(spec["jobs"])
        for key in ("steps", "prologue"):
            if isinstance(spec.get(key), list):
                line.append(f"{key}=" + ";".join(spec[key]))
        print(k["name"], " ".join(line))


if __name__ == "__main__":
    main()
