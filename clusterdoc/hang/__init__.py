"""The hang doctor's shared parts: the side channel (channel.py), the grouped report (report.py), the
stack files (stacks.py) and the Chrome/Perfetto trace (trace.py). The rank side is clusterdoc/shim/track.py
(collective tracking) and clusterdoc/shim/watch.py (the watchdog); the launcher side is
clusterdoc/launch/hangwatch.py."""
