"""Counts vdpbf16ps per CPU variant in a model library's disassembly.

  dot-per-variant.py DISASSEMBLY CPUINFO

Prints, per variant prefix (sgc_v0_ = the host's, sgc_v1_ = x86-64-v3), how
many vdpbf16ps its functions hold and whether that agrees with the CPU: the
host variant has them exactly when CPUINFO lists avx512_bf16, the baseline
never.
"""
import sys

from variant_counts import count_per_variant, host_cpu

disassembly, cpuinfo = sys.argv[1], sys.argv[2]
flags, _ = host_cpu(cpuinfo)
host_bf16 = "avx512_bf16" in flags
counts = {p: c["vdpbf16ps"]
          for p, c in count_per_variant(disassembly, ["vdpbf16ps"]).items()}

v0 = counts["sgc_v0_"]
agrees = (v0 > 0) == host_bf16
print("sgc_v0_ vdpbf16ps: %s the host (avx512_bf16 %s, %d instructions)"
      % ("as" if agrees else "NOT as", "yes" if host_bf16 else "no", v0))
print("sgc_v1_ vdpbf16ps: %d" % counts["sgc_v1_"])
