"""Counts vpdpwssd, and the vpmaddwd it may be split into, in the Q4_0
kernels of each CPU variant of a model library's disassembly.

  vnni-per-variant.py DISASSEMBLY CPUINFO

Prints, per variant prefix (sgc_v0_ = the host's, sgc_v1_ = x86-64-v3),
whether its Q4_0 kernels hold vpdpwssd as the CPU says they should (the host
variant exactly when CPUINFO lists avx512_vnni, the baseline never) and how
many vpmaddwd they hold: LLVM splits vpdpwssd into vpmaddwd + vpaddd for
CPUs without its fast-dpwssd tuning, which the compiler turns on. Then
where the host variant's 4-bit rows prefetch their weights: prefetcht1 (L2)
on AMD Zen, none elsewhere (prefetcht0, L1).
"""
import sys

from variant_counts import count_per_variant, host_cpu

disassembly, cpuinfo = sys.argv[1], sys.argv[2]
flags, host_amd = host_cpu(cpuinfo)
host_vnni = "avx512_vnni" in flags
counts = count_per_variant(disassembly, ["vpdpwssd", "vpmaddwd", "prefetcht1"],
                           keep=lambda name: "_q4_0_" in name)

v0 = counts["sgc_v0_"]
agrees = (v0["vpdpwssd"] > 0) == host_vnni
print("sgc_v0_ vpdpwssd: %s the host (avx512_vnni %s, %d instructions)"
      % ("as" if agrees else "NOT as", "yes" if host_vnni else "no",
         v0["vpdpwssd"]))
print("sgc_v0_ vpmaddwd: %d" % v0["vpmaddwd"])
print("sgc_v1_ vpdpwssd: %d" % counts["sgc_v1_"]["vpdpwssd"])
l2 = v0["prefetcht1"] > 0
agrees = l2 == (host_vnni and host_amd)
print("sgc_v0_ 4-bit rows prefetch into %s: %s the host (%s, %d prefetcht1)"
      % ("L2" if l2 else "L1", "as" if agrees else "NOT as",
         "AMD" if host_amd else "not AMD", v0["prefetcht1"]))
