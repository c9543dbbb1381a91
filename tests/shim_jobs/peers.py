"""A 2-rank job for the real torchrun (tests/test_shim_peers.py): logging with the caller's file and line, in-order
logging on every rank, release_memory, and the OOM retry's warning naming the caller's line.

Each call whose site the test checks ends with a `# site: NAME` comment; the test finds its line number there.
Output goes to stdout, one `RESULT {...}` line per rank at the end.
"""

import json
import logging
import sys
import warnings

import torch

from clusterdoc import shim

warnings.filterwarnings("ignore")
logger = shim.get_logger(__name__, log_level="INFO")  # at import, before the script's own logging set-up


def main():
    logging.basicConfig(format="%(filename)s:%(lineno)d %(funcName)s %(message)s", stream=sys.stdout)
    env = shim.init()
    logger.info(f"plain message from rank {env.rank}")  # site: plain
    logger.info(f"in-order message from rank {env.rank}", in_order=True)  # site: ordered

    @shim.find_executable_batch_size(starting_batch_size=4)
    def train(batch_size):
        if env.rank == 1 and batch_size > 3:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return batch_size

    batch = train()  # site: retry
    model = torch.nn.Linear(4, 4)
    model = shim.release_memory(model)
    sys.stdout.flush()
    sys.stdout.write("RESULT " + json.dumps({"rank": env.rank, "released": model, "batch": batch}) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
