"""Starts sgc-serve for a test and talks to it with the standard library
(the openai package is used where the test is about that client)."""
import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request


class Server:
    """sgc-serve MODEL --weights W on 127.0.0.1, a free port; its log in
    LOG. stop() sends SIGTERM and returns the exit code."""

    def __init__(self, binary, model, weights, log, args=(), env=None):
        e = dict(os.environ)
        e.update(env or {})
        self.log_path = log
        self.log = open(log, "w")
        self.proc = subprocess.Popen(
            [binary, model, "--weights", weights, "--port", "0", *args],
            stdout=self.log, stderr=subprocess.PIPE, text=True, env=e)
        self.lines = []
        self.port = None
        deadline = time.time() + 60
        while self.port is None:
            line = self.proc.stderr.readline()
            if not line:
                self.fail("exited before it listened")
            self.note(line)
            m = re.search(r"listening on http://[^:]+:(\d+)", line)
            if m:
                self.port = int(m.group(1))
            if time.time() > deadline:
                self.fail("did not listen within 60 s")
        self.url = "http://127.0.0.1:%d" % self.port
        # Keep reading the log so the server never blocks on stderr.
        self.reader = threading.Thread(target=self.drain_stderr, daemon=True)
        self.reader.start()

    def note(self, line):
        self.lines.append(line)
        self.log.write(line)
        self.log.flush()

    def drain_stderr(self):
        for line in self.proc.stderr:
            self.note(line)

    def fail(self, why):
        self.proc.kill()
        sys.exit("sgc-serve %s:\n%s" % (why, "".join(self.lines)))

    def wait_ready(self, timeout=120):
        deadline = time.time() + timeout
        while time.time() < deadline:
            status, _, _ = self.get("/health")
            if status == 200:
                return
            if self.proc.poll() is not None:
                self.fail("exited while loading")
            time.sleep(0.05)
        self.fail("was not ready within %d s" % timeout)

    def request(self, method, path, body=None, headers=None, timeout=120):
        """(status, parsed JSON or text, headers); never raises on 4xx/5xx."""
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Content-Type", "application/json")
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, decode(r.read(), r.headers), dict(r.headers)
        except urllib.error.HTTPError as e:
            return e.code, decode(e.read(), e.headers), dict(e.headers)

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body, **kw):
        return self.request("POST", path, body, **kw)

    def metric(self, name):
        _, text, _ = self.get("/metrics")
        m = re.search(r"^%s (\S+)$" % re.escape(name), text, re.M)
        assert m, "no metric %s in:\n%s" % (name, text)
        return float(m.group(1))

    def stop(self, timeout=60):
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.fail("did not stop within %d s of SIGTERM" % timeout)
        self.reader.join(5)
        return code


def decode(raw, headers):
    text = raw.decode("utf-8", "replace")
    if "json" in headers.get("Content-Type", ""):
        return json.loads(text)
    return text


def sse_events(sock_file):
    """The data: payloads of an SSE stream read from a raw socket's file
    (chunked framing skipped)."""
    for line in sock_file:
        line = line.decode("utf-8", "replace").rstrip("\r\n")
        if line.startswith("data: "):
            yield line[6:]


def raw_stream(port, path, body):
    """Sends a streaming POST on a plain socket; returns the socket and a
    file over it positioned after the response head."""
    s = socket.create_connection(("127.0.0.1", port), timeout=60)
    data = json.dumps(body).encode()
    s.sendall(b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n" % (path.encode(), len(data)) + data)
    f = s.makefile("rb")
    status = f.readline()
    while f.readline() not in (b"\r\n", b""):
        pass
    return s, f, int(status.split()[1])


def check(cond, what):
    if not cond:
        sys.exit("FAILED: " + what)
    print("ok: " + what)


def arguments(*names):
    """The parser every test script starts from: the server binary, the
    model, the weights and the log, and |names| (more required options)."""
    p = argparse.ArgumentParser()
    for name in ("--serve", "--model", "--weights", "--log") + names:
        p.add_argument(name, required=True)
    return p
