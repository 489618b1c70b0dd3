"""Checks the driver calls test/unit/fake_cuda.c logged while sgc-run ran a
compiled CUDA model with --device cuda: what the CUDA executor must do
(runtime/src/cuda/cuda_executor.cc) whatever the model. Prints one "ok:"
line per check that holds and "FAIL:" for each that does not.

usage: cuda-calls.py LOG PREFILL_CALLS DECODE_TOKENS
"""
import collections
import sys


def main():
    log, prefills, decodes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
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
    want = {k: v for k, v in needs.items() if v > 48 * 1024}
    check(optin == want,
          "the shared-memory opt-in is exactly the kernels over 48 KiB "
          "(%d of them)" % len(want))
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
          "one logits copy per call (%d)" % (prefills + decodes))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
