"""Checks the driver calls test/unit/fake_cuda.c logged while sgc-run ran a
compiled CUDA model with --device cuda: what the CUDA executor must do
(runtime/src/cuda/cuda_executor.cc) whatever the model. Prints one "ok:"
line per check that holds and "FAIL:" for each that does not.

usage: cuda-calls.py LOG PREFILL_CALLS DECODE_TOKENS argmax|logits

The last argument says what a decode call copies back: the 4 bytes of the
device's argmax (greedy decoding that nobody reads the logits of) or the
logits row.
"""
import collections
import sys


def main():
    log, prefills, decodes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    decode_copy = sys.argv[4]
    calls = []
    for line in open(log):
        words = line.split()
        args = dict(w.split("=", 1) for w in words[1:] if "=" in w)
        calls.append((words[0], args, "captured" in words))
    count = collections.Counter(name for name, _, _ in calls)
    failed = 0

    def check(ok, what):
        nonlocal failed
        print(("ok: " if ok else "FAIL: ") + what)
        failed += not ok

    check(count["cuModuleLoadData"] == 1, "the module is loaded once")
    resolved = [a["name"] for n, a, _ in calls if n == "cuModuleGetFunction"]
    launched = {a["name"] for n, a, _ in calls if n == "cuLaunchKernelEx"}
    check(len(resolved) == len(set(resolved)), "each kernel is resolved once")
    check(launched <= set(resolved), "only resolved kernels are launched")
    optin = {a["name"]: int(a["value"]) for n, a, _ in calls
             if n == "cuFuncSetAttribute"}
    needs = collections.defaultdict(int)
    for n, a, _ in calls:
        if n == "cuLaunchKernelEx":
            needs[a["name"]] = max(needs[a["name"]], int(a["smem"]))
    # Static + dynamic over 48 KiB needs the opt-in: every kernel launched
    # with dynamic shared memory opts in to its most.
    want = {k: v for k, v in needs.items() if v > 0}
    check(optin == want,
          "the shared-memory opt-in is exactly the kernels with dynamic "
          "shared memory, to their most (%d of them)" % len(want))
    # PDL: each kernel of a compiled model waits for its predecessor, so
    # every launch but the first after a copy (a call's) asks for it, the
    # captured decode launches too.
    first, wrong, launches = True, [], 0
    for n, a, _ in calls:
        if n in ("cuMemcpyHtoDAsync_v2", "cuStreamBeginCapture_v2"):
            first = True
        elif n == "cuLaunchKernelEx":
            launches += 1
            if a.get("pdl") != ("0" if first else "1"):
                wrong.append("%s pdl=%s" % (a["name"], a.get("pdl")))
            first = False
    check(not wrong, "every launch but a call's first asks for PDL (%d "
          "launches%s)" % (launches, ": " + ", ".join(wrong[:3]) if wrong else ""))
    check(count["cuStreamBeginCapture_v2"] == 1 and
          count["cuGraphInstantiateWithFlags"] == 1,
          "the decode phase is captured once")
    check(count["cuGraphLaunch"] == decodes,
          "the graph is launched once per decode token (%d)" % decodes)
    captured = sum(1 for n, _, c in calls if n == "cuLaunchKernelEx" and c)
    direct = sum(1 for n, _, c in calls if n == "cuLaunchKernelEx" and not c)
    check(captured > 0 and direct > 0,
          "decode launches are captured, prefill launches direct")
    check(count["cuMemcpyDtoHAsync_v2"] == prefills + decodes,
          "one copy back per call (%d)" % (prefills + decodes))
    # A copy after a graph launch is a decode call's, any other a prefill's.
    prefill_bytes, decode_bytes, after_graph = [], [], False
    for n, a, _ in calls:
        if n == "cuGraphLaunch":
            after_graph = True
        elif n == "cuMemcpyDtoHAsync_v2":
            (decode_bytes if after_graph else prefill_bytes).append(
                int(a["bytes"]))
            after_graph = False
    row = set(prefill_bytes)
    check(len(row) == 1 and min(row) > 4,
          "prefill copies one logits row (%s bytes)" % sorted(row))
    want = {4} if decode_copy == "argmax" else row
    check(len(decode_bytes) == decodes and set(decode_bytes) == want,
          "decode copies %s (%s bytes)" %
          ("only the argmax" if decode_copy == "argmax" else "the logits row",
           sorted(set(decode_bytes))))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
