"""Ports: a listener for the store/peer test and connection attempts to other nodes.

Part of the probe (see clusterdoc/probe/__init__.py): stdlib only, Python 3.6+.
"""

import os
import threading
import time

from clusterdoc.probe.network import resolve


class Listener(object):
    """A TCP listener held for the probe's life: "store" binds every address as torch's TCPStore does
    (so a leftover rank on the port shows as in_use); "peer" binds the node's own address and every
    address with SO_REUSEPORT (nodes sharing one network stack each get their own connections).
    It accepts until `expect` connections came or the probe stops it."""

    def __init__(self, port, mode, expect, own_addr=None):
        import socket

        self.port, self.mode, self.expect, self.accepted, self.closed = port, mode, expect, 0, None
        self.status, self.message, self.socks = "listening", None, []
        self.done = threading.Event()
        binds = [("::", socket.AF_INET6), ("0.0.0.0", socket.AF_INET)]
        if mode == "peer" and own_addr:
            binds.insert(0, (own_addr, socket.AF_INET6 if ":" in own_addr else socket.AF_INET))
        for addr, fam in binds:
            if fam == socket.AF_INET and addr == "0.0.0.0" and any(s.family == socket.AF_INET6 for s in self.socks):
                continue  # the dual-stack socket has IPv4 too
            try:
                s = socket.socket(fam, socket.SOCK_STREAM)
            except OSError:
                continue
            try:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                if mode == "peer" and hasattr(socket, "SO_REUSEPORT"):
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
                if fam == socket.AF_INET6 and addr == "::":
                    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
                s.bind((addr, port))
                s.listen(128)
                s.settimeout(0.1)
                self.socks.append(s)
            except OSError as exc:
                s.close()
                if exc.errno == 98 and (mode == "store" or not self.socks):  # EADDRINUSE
                    self.status, self.message = "in_use", str(exc)[:200]
                    break
                if exc.errno not in (97, 99):  # IPv6 off / address not here: try the next
                    self.message = str(exc)[:200]
        if self.status == "in_use":
            for s in self.socks:
                s.close()
            self.socks = []
        elif not self.socks:
            self.status = "error"

    def start(self):
        if self.socks:
            t = threading.Thread(target=self._serve)
            t.daemon = True
            t.start()

    def _serve(self):
        import socket

        while not self.done.is_set() and self.accepted < self.expect:
            for s in self.socks:
                try:
                    conn, _ = s.accept()
                    conn.close()
                    self.accepted += 1
                except (socket.timeout, OSError):
                    pass
        for s in self.socks:
            s.close()
        self.closed = time.time()
        self.done.set()

    def wait(self, deadline):
        self.done.wait(max(0.0, deadline - time.time()))
        self.done.set()
        closed = self.closed or time.time()  # the server thread closes within 0.1 s
        return {
            "port": self.port,
            "mode": self.mode,
            "status": self.status,
            "message": self.message,
            "expected": self.expect,
            "accepted": self.accepted,
            "closed": round(closed, 3),
        }


def connect_one(target, window, per_try=1.5):
    """TCP connect to HOST:PORT, retrying until `window` seconds have passed (the listener may start a
    little later): {target, ok, error None|refused|timeout|unreachable|unresolved, message, attempts, elapsed}."""
    import errno
    import socket

    host, _, port = target.rpartition(":")
    start = time.time()
    res = {"target": target, "ok": False, "error": None, "message": None, "attempts": 0, "elapsed": 0.0, "at": None}
    try:
        addr = resolve(host.strip("[]"))[0]
    except Exception as exc:
        res.update(error="unresolved", message=str(exc)[:200])
        return res
    while True:
        res["attempts"] += 1
        res["at"] = round(time.time(), 3)  # the last attempt's start: the head compares it with the listener's
        left = start + window - time.time()
        s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(max(0.2, min(per_try, left)))
        try:
            s.connect((addr, int(port)))
            res.update(ok=True, error=None, message="connected to %s" % addr)
            break
        except socket.timeout:
            res.update(error="timeout", message="no answer from %s:%s (timed out)" % (addr, port))
        except OSError as exc:
            kind = "refused" if exc.errno == errno.ECONNREFUSED else "unreachable"
            res.update(error=kind, message="%s:%s: %s" % (addr, port, os.strerror(exc.errno or 0) or exc))
            time.sleep(0.1)
        finally:
            s.close()
        if time.time() - start >= window:
            break
    res["elapsed"] = round(time.time() - start, 3)
    return res
