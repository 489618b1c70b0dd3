"""Runs a command against a running sgc-serve: starts it (SGC_SERVE_URL in
the command's environment), runs the command, stops the server with
SIGTERM; fails when either fails.

    with-server.py --serve BIN --model SO --weights W --log LOG [-- server
    args] -- command ...
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server import Server  # noqa: E402

args = sys.argv[1:]
opts = {}
while args and args[0] in ("--serve", "--model", "--weights", "--log"):
    opts[args[0][2:]] = args[1]
    args = args[2:]
assert args and args[0] == "--", "usage: see the docstring"
args = args[1:]
server_args = []
if "--" in args:
    cut = args.index("--")
    server_args, args = args[:cut], args[cut + 1:]
srv = Server(opts["serve"], opts["model"], opts["weights"], opts["log"], server_args)
srv.wait_ready()
env = dict(os.environ, SGC_SERVE_URL=srv.url)
rc = subprocess.call(args, env=env)
code = srv.stop()
if code != 0:
    sys.exit("sgc-serve exited %d after SIGTERM" % code)
sys.exit(rc)
