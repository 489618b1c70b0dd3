"""Counts vpdpwssd, and the vpmaddwd it may be split into, in the Q4_0
kernels of each CPU variant of a model library's disassembly.

  vnni-per-variant.py DISASSEMBLY CPUINFO

Prints, per variant prefix (sgc_v0_ = the host's, sgc_v1_ = x86-64-v3),
whether its Q4_0 kernels hold vpdpwssd as the CPU says they should (the host
variant exactly when CPUINFO lists avx512_vnni, the baseline never) and how
many vpmaddwd they hold: LLVM splits vpdpwssd into vpmaddwd + vpaddd for
CPUs without its fast-dpwssd tuning, which the compiler turns on.
"""
import re
import sys

disassembly, cpuinfo = sys.argv[1], sys.argv[2]
with open(cpuinfo) as f:
    flags = next((line.split(":", 1)[1].split() for line in f
                  if line.startswith("flags")), [])
host_vnni = "avx512_vnni" in flags

counts = {p: {"vpdpwssd": 0, "vpmaddwd": 0} for p in ("sgc_v0_", "sgc_v1_")}
current = None
label = re.compile(r"^[0-9a-f]+ <([^>]+)>:$")
with open(disassembly) as f:
    for line in f:
        m = label.match(line.strip())
        if m:
            name = m.group(1)
            current = next((p for p in counts
                            if name.startswith(p) and "_q4_0_" in name), None)
            continue
        if current:
            words = line.split()
            for instruction in counts[current]:
                if instruction in words:
                    counts[current][instruction] += 1

v0 = counts["sgc_v0_"]
agrees = (v0["vpdpwssd"] > 0) == host_vnni
print("sgc_v0_ vpdpwssd: %s the host (avx512_vnni %s, %d instructions)"
      % ("as" if agrees else "NOT as", "yes" if host_vnni else "no",
         v0["vpdpwssd"]))
print("sgc_v0_ vpmaddwd: %d" % v0["vpmaddwd"])
print("sgc_v1_ vpdpwssd: %d" % counts["sgc_v1_"]["vpdpwssd"])
