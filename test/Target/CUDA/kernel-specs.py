#!/usr/bin/env python3
"""Prints the kernel specs of `sgc compile --target=cuda:... --compile-to=lower`
output, one line per gpu.func: `NAME key=value ...`, for the scalar and
integer-array entries of its sg.kernel_spec (nested entries are left out,
except a `jobs` list of dictionaries, printed as `jobs=N` and `jobI.key=value`
for each job's scalar entries, a unit entry as 1 and a float array as its
length, and a `steps` or `prologue` list of strings as `steps=A;B`). sgc-emu-sample reads these lines to know what each kernel computes."""
import re
import sys

FUNC = re.compile(r"gpu\.func @(\w+)\(.*sg\.kernel_spec = \{(.*)\}\s*(\{|$)")
# key = value : type, or key = array<i64: a, b>, or key = "text"
ENTRY = re.compile(r'(\w+) = (array<i64: ([-0-9, ]+)>|"([^"]*)"|'
                   r'(true|false)|([-+0-9.eE]+)(?: : \w+)?)')


def top_level(spec):
    """The spec text with nested [...] and {...} removed."""
    out, depth = [], 0
    for ch in spec:
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


# jobs = [{...}, {...}] (qknorm_rope_append: one dictionary per fused tensor)
JOBS = re.compile(r"jobs = \[(\{.*?\})\]")
JOB = re.compile(r"\{([^{}]*)\}")
FLOAT_ARRAY = re.compile(r"(\w+) = \[([^\]]*)\]")


def entries(text):
    """key=value strings of the scalar entries of one dictionary's text."""
    fields = []
    for e in ENTRY.finditer(text):
        key, arr, txt, boolean, num = e.group(1), e.group(3), \
            e.group(4), e.group(5), e.group(6)
        if arr is not None:
            value = ",".join(v.strip() for v in arr.split(","))
        elif txt is not None:
            value = txt
        elif boolean is not None:
            value = "1" if boolean == "true" else "0"
        else:
            value = num
        fields.append((key, value))
    return fields


def job_fields(spec):
    """jobs=N and jobI.key=value for a `jobs` list of dictionaries."""
    m = JOBS.search(spec)
    if not m:
        return []
    out = []
    jobs = JOB.findall(m.group(1))
    for i, job in enumerate(jobs):
        arrays = {a.group(1): a.group(2) for a in FLOAT_ARRAY.finditer(job)}
        scalars = FLOAT_ARRAY.sub("", job)
        for key, value in entries(scalars):
            out.append(f"job{i}.{key}={value}")
        # a unit entry (`copy`) has no value
        for unit in re.findall(r"(?:^|,)\s*(\w+)\s*(?=,|$)", scalars):
            out.append(f"job{i}.{unit}=1")
        for key, value in arrays.items():
            out.append(f"job{i}.{key}={len(value.split(','))}")
    return [f"jobs={len(jobs)}"] + out


# steps = ["rms_norm(eps=...,offset=1,w)", "add"] (row_chain: its ops in
# order; gemv_rows: `prologue`, the chain fused before the projection)
STEPS = re.compile(r'\b(steps|prologue) = \[((?:"[^"]*"(?:, )?)*)\]')


def step_fields(spec):
    """steps=A;B;C (prologue=A;B) for a `steps` (`prologue`) list of
    strings."""
    return [m.group(1) + "=" + ";".join(re.findall(r'"([^"]*)"', m.group(2)))
            for m in STEPS.finditer(spec)]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: kernel-specs.py LOWERED.mlir")
    found = 0
    for line in open(sys.argv[1]):
        m = FUNC.search(line)
        if not m:
            continue
        fields = [f"{k}={v}" for k, v in entries(top_level(m.group(2)))]
        fields += job_fields(m.group(2)) + step_fields(m.group(2))
        print(m.group(1), " ".join(fields))
        found += 1
    if not found:
        sys.exit(f"{sys.argv[1]}: no gpu.func with an sg.kernel_spec")


if __name__ == "__main__":
    main()
