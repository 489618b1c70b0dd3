"""Sends Ctrl-C (SIGINT) to a running sgc-run and reports how it ended.

  interrupt.py [--after-tokens N | --after-stderr TEXT] [--delay S] [--twice]
               [--dump FILE] [--long-prompt N] -- COMMAND...

Starts COMMAND (an argument LONG_PROMPT becomes N ids "1,1,..."), waits
until it printed N tokens on stdout (or TEXT on stderr) and S seconds more,
sends SIGINT; with --twice, checks that it is still running half a
second later (the first Ctrl-C stops it gracefully, not at once), then sends
the second one. Prints what FileCheck checks: the exit status, whether the
printed tokens stayed whole, the last stderr line, and with --dump whether
FILE is a valid safetensors file whose rows match the printed tokens.
"""
import argparse
import json
import os
import selectors
import signal
import struct
import subprocess
import sys
import time


def check_dump(path, printed, n_prompt):
    if not os.path.exists(path):
        return "missing"
    data = open(path, "rb").read()
    if len(data) < 8:
        return "invalid: %d bytes" % len(data)
    (n,) = struct.unpack("<Q", data[:8])
    try:
        header = json.loads(data[8:8 + n])
    except ValueError as e:
        return "invalid: header: %s" % e
    body = len(data) - 8 - n
    end = 0
    for name, t in header.items():
        if name == "__metadata__":
            continue
        end = max(end, t["data_offsets"][1])
    if end != body:
        return "invalid: data region %d bytes, tensors need %d" % (body, end)
    shape = {k: v["shape"] for k, v in header.items() if k != "__metadata__"}
    decode, generated = shape["decode_logits"][0], shape["generated_ids"][0]
    if shape["prefill_logits"][0] != n_prompt:
        return "invalid: %d prefill rows" % shape["prefill_logits"][0]
    if generated != printed or decode != generated - 1:
        return "mismatch: %d printed, %d generated, %d decode rows" % (
            printed, generated, decode)
    return "ok: decode rows = generated ids - 1 = printed tokens - 1"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--after-tokens", type=int, default=0)
    ap.add_argument("--after-stderr", default=None)
    ap.add_argument("--delay", type=float, default=0.0)
    ap.add_argument("--twice", action="store_true")
    ap.add_argument("--long-prompt", type=int, default=0)
    ap.add_argument("--dump", default=None)
    ap.add_argument("--prompt-len", type=int, default=3)
    ap.add_argument("command", nargs="+")
    a = ap.parse_args()
    long_prompt = ",".join(["1"] * a.long_prompt)
    a.command = [long_prompt if c == "LONG_PROMPT" else c for c in a.command]

    # As from a terminal: lit's workers ignore SIGINT, and an ignored
    # SIGINT stays ignored in sgc-run.
    p = subprocess.Popen(a.command, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE,
                         preexec_fn=lambda: signal.signal(signal.SIGINT,
                                                          signal.SIG_DFL))
    sel = selectors.DefaultSelector()
    sel.register(p.stdout, selectors.EVENT_READ, "out")
    sel.register(p.stderr, selectors.EVENT_READ, "err")
    out, err = b"", b""
    deadline = time.monotonic() + 120

    def pump(timeout):
        nonlocal out, err
        for key, _ in sel.select(timeout):
            chunk = os.read(key.fileobj.fileno(), 65536)
            if not chunk:
                sel.unregister(key.fileobj)
            elif key.data == "out":
                out += chunk
            else:
                err += chunk

    def ready():
        if a.after_stderr is not None:
            return a.after_stderr.encode() in err
        # A token is whole once the next one's separator follows it.
        return out.count(b" ") >= a.after_tokens

    while not ready():
        if p.poll() is not None or time.monotonic() > deadline:
            print("error: ended or timed out before the signal point")
            return 1
        pump(0.1)
    until = time.monotonic() + a.delay
    while time.monotonic() < until and sel.get_map():
        pump(0.05)

    p.send_signal(signal.SIGINT)
    if a.twice:
        until = time.monotonic() + 0.5
        while time.monotonic() < until and sel.get_map():
            pump(0.05)
        print("running after the first: %s" % ("yes" if p.poll() is None
                                                 else "no"))
        p.send_signal(signal.SIGINT)
        sent = time.monotonic()
    while sel.get_map():
        pump(1.0)
        if time.monotonic() > deadline:
            p.kill()
            print("error: no exit after SIGINT")
            return 1
    rc = p.wait()
    if a.twice:
        print("ended within 5 s of the second: %s" %
              ("yes" if time.monotonic() - sent < 5 else "no"))
    print("exit=%d" % rc)
    tokens = out.split()
    whole = all(t.lstrip(b"-").isdigit() for t in tokens)
    print("tokens: %s, at least %d: %s" % ("whole" if whole else "garbled",
                                           a.after_tokens,
                                           "yes" if len(tokens) >= a.after_tokens
                                           else "no"))
    lines = err.decode(errors="replace").strip().splitlines()
    print("last stderr line: %s" % (lines[-1] if lines else ""))
    if a.dump:
        print("dump: %s" % check_dump(a.dump, len(tokens), a.prompt_len))
    return 0


if __name__ == "__main__":
    sys.exit(main())
