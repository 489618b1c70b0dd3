"""Counts vdpbf16ps per CPU variant in a model library's disassembly.

  dot-per-variant.py DISASSEMBLY CPUINFO

Prints, per variant prefix (sgc_v0_ = the host's, sgc_v1_ = x86-64-v3), how
many vdpbf16ps its functions hold and whether that agrees with the CPU: the
host variant has them exactly when CPUINFO lists avx512_bf16, the baseline
never.
"""
import re
import sys

disassembly, cpuinfo = sys.argv[1], sys.argv[2]
with open(cpuinfo) as f:
    flags = next((line.split(":", 1)[1].split() for line in f
                  if line.startswith("flags")), [])
host_bf16 = "avx512_bf16" in flags

counts = {"sgc_v0_": 0, "sgc_v1_": 0}
current = None
label = re.compile(r"^[0-9a-f]+ <([^>]+)>:$")
with open(disassembly) as f:
    for line in f:
        m = label.match(line.strip())
        if m:
            name = m.group(1)
            current = next((p for p in counts if name.startswith(p)), None)
        elif current and "vdpbf16ps" in line:
            counts[current] += 1

v0 = counts["sgc_v0_"]
agrees = (v0 > 0) == host_bf16
print("sgc_v0_ vdpbf16ps: %s the host (avx512_bf16 %s, %d instructions)"
      % ("as" if agrees else "NOT as", "yes" if host_bf16 else "no", v0))
print("sgc_v1_ vdpbf16ps: %d" % counts["sgc_v1_"])
