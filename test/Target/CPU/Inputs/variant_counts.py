"""What the CPU-variant scripts beside this file share: the host's cpuinfo
flags and vendor, and per variant prefix (sgc_v0_ = the host's, sgc_v1_ =
x86-64-v3) how many of some instructions a model library's disassembly
(llvm-objdump -d) holds in the functions a filter keeps."""
import re

PREFIXES = ("sgc_v0_", "sgc_v1_")


def host_cpu(cpuinfo):
    """The first processor's flags (a list) and whether it is AMD."""
    flags, amd = [], False
    with open(cpuinfo) as f:
        for line in f:
            if line.startswith("flags") and not flags:
                flags = line.split(":", 1)[1].split()
            if line.startswith("vendor_id") and "AuthenticAMD" in line:
                amd = True
    return flags, amd


def count_per_variant(disassembly, instructions, keep=lambda name: True):
    """{prefix: {instruction: count}} over the functions `keep` accepts."""
    counts = {p: {i: 0 for i in instructions} for p in PREFIXES}
    current = None
    label = re.compile(r"^[0-9a-f]+ <([^>]+)>:$")
    with open(disassembly) as f:
        for line in f:
            m = label.match(line.strip())
            if m:
                name = m.group(1)
                current = next((p for p in PREFIXES
                                if name.startswith(p) and keep(name)), None)
                continue
            if current:
                words = line.split()
                for instruction in instructions:
                    if instruction in words:
                        counts[current][instruction] += 1
    return counts
