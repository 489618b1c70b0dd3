#!/usr/bin/env python3
"""Checks a compiled model's manifest against what its system_graph.json
declares: for every graph object, the tensors and bytes of its
source_bindings (summed) equal the 'object ID tensors N bytes B' lines that
abi-dump prints. An object missing on either side fails.

usage: check-object-bytes.py GRAPH.json ABI_DUMP.txt
Prints one line per object and 'N passed, M failed'; exits 1 on a failure."""
import json
import sys


def main():
    graph_path, dump_path = sys.argv[1:3]
    with open(graph_path) as f:
        graph = json.load(f)
    declared = {}
    for obj in graph["objects"]:
        bindings = obj.get("source_bindings", [])
        declared[obj["id"]] = (sum(b["tensors"] for b in bindings),
                               sum(b["bytes"] for b in bindings))
    bound = {}
    with open(dump_path) as f:
        for line in f:
            words = line.split()
            if words[:1] == ["object"] and len(words) == 6:
                bound[words[1]] = (int(words[3]), int(words[5]))
    passed = failed = 0
    for name in sorted(set(declared) | set(bound)):
        want, got = declared.get(name), bound.get(name)
        ok = want is not None and want == got
        print(f"{'ok' if ok else 'FAIL'}: object {name}: declared {want}, "
              f"bound {got}")
        passed += ok
        failed += not ok
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
