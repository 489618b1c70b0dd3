#!/usr/bin/env python3
"""B7's client: C concurrent clients, each sending R streamed /v1/completions
requests one after another (a fixed prompt of token ids, max_tokens N,
ignore_eos, greedy), to any server speaking the OpenAI API. Prints one JSON
line: summed generated tok/s (tokens / wall time of the whole run), time to
first token p50/p99, inter-token latency p50/p99 (a chunk of k tokens counts
its gap k times, divided by k), request latency p50. Standard library only.

    load_client.py URL --concurrency C --requests R --prompt-len P --max-tokens N
"""
import argparse
import http.client
import json
import sys
import threading
import time
import urllib.parse

p = argparse.ArgumentParser()
p.add_argument("url")
p.add_argument("--concurrency", type=int, required=True)
p.add_argument("--requests", type=int, required=True)
p.add_argument("--prompt-len", type=int, default=32)
p.add_argument("--max-tokens", type=int, default=64)
p.add_argument("--model", default="")
a = p.parse_args()
u = urllib.parse.urlparse(a.url)


def one(client, k, out):
    # Distinct prompts (ids 100..), so no server can reuse another's cache.
    prompt = [2] + [100 + (client * 131 + k * 17 + i * 7) % 5000 for i in range(a.prompt_len - 1)]
    body = {"prompt": prompt, "max_tokens": a.max_tokens, "temperature": 0,
            "ignore_eos": True, "stream": True, "return_token_ids": True,
            "stream_options": {"include_usage": True}}
    if a.model:
        body["model"] = a.model
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
    t0 = time.perf_counter()
    c.request("POST", "/v1/completions", json.dumps(body),
              {"Content-Type": "application/json"})
    r = c.getresponse()
    if r.status != 200:
        raise RuntimeError("status %d: %s" % (r.status, r.read()[:200]))
    arrivals, tokens, usage = [], 0, None
    while True:
        line = r.readline()
        if not line:
            break
        line = line.strip()
        if not line.startswith(b"data: "):
            continue
        data = line[6:]
        if data == b"[DONE]":
            break
        j = json.loads(data)
        if j.get("usage"):
            usage = j["usage"]["completion_tokens"]
        for ch in j.get("choices", []):
            # sgc-serve says how many tokens a chunk holds; llama-server
            # sends one token per chunk.
            n = len(ch["token_ids"]) if "token_ids" in ch else (1 if ch.get("text") else 0)
            if n:
                arrivals.append((time.perf_counter(), n))
                tokens += n
    c.close()
    t1 = time.perf_counter()
    out.append({"ttft": arrivals[0][0] - t0 if arrivals else None,
                "arrivals": arrivals, "tokens": usage if usage is not None else tokens,
                "latency": t1 - t0})


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))] if v else float("nan")


results, errors = [], []


def client(i):
    for k in range(a.requests):
        try:
            one(i, k, results)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(str(e))


t0 = time.perf_counter()
threads = [threading.Thread(target=client, args=(i,)) for i in range(a.concurrency)]
for t in threads:
    t.start()
for t in threads:
    t.join()
wall = time.perf_counter() - t0
itl = []
for r in results:
    arr = r["arrivals"]
    for (ta, _), (tb, n) in zip(arr, arr[1:]):
        itl += [(tb - ta) / n] * n
total = sum(r["tokens"] for r in results)
print(json.dumps({
    "concurrency": a.concurrency, "requests": len(results), "errors": len(errors),
    "first_error": errors[0] if errors else None,
    "tokens": total, "wall_s": wall, "tok_s": total / wall,
    "ttft_p50_ms": 1e3 * pct([r["ttft"] for r in results if r["ttft"] is not None], 0.5),
    "itl_p50_ms": 1e3 * pct(itl, 0.5), "itl_p99_ms": 1e3 * pct(itl, 0.99),
    "latency_p50_s": pct([r["latency"] for r in results], 0.5)}))
sys.exit(1 if errors else 0)
