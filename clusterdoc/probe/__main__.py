"""`python -m clusterdoc.probe [ARGS]`: this machine's facts as the nodes report them;
`python -m clusterdoc.probe --payload`: the one script sent to the nodes (to run by hand: `python3 - < it`)."""

import os
import sys

if sys.argv[1:] == ["--payload"]:
    from clusterdoc.probe.payload import probe_payload

    sys.stdout.buffer.write(probe_payload())
    sys.exit(0)

from clusterdoc.probe.gather import main

code = main()
sys.stdout.flush()
os._exit(code)  # a stuck probe thread must not keep the process alive
