"""`clusterdoc stacks JOB` and `clusterdoc trace JOB`: look inside a job without stopping it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from clusterdoc.errors import UsageError
from clusterdoc.hang import channel, recorder, report, stacks, trace
from clusterdoc.launch.job import find_job

WAIT = 5.0  # seconds the ranks have to answer


def stacks_main(job: str, folder: str | None, full: bool = False, out=sys.stdout) -> int:
    """Ask every rank of a running job for its state through the job's store; print the grouped view."""
    jd = find_job(job, folder)
    try:
        info = json.loads((jd.path / "watch.json").read_text())
    except (OSError, ValueError):
        raise UsageError(
            f"job {jd.id} has no hang watch address yet ({jd.path / 'watch.json'})",
            hint="the job must be running under clusterdoc submit (or shim.init()) with "
            "--hang-timeout above 0; rank 0 writes it once its process group is up",
        ) from None
    world = int(info["world"])
    try:
        store = channel.connect(info["addr"], info["port"], timeout=5.0)
        gen = channel.request_dump(store)
        dumps = channel.collect(store, world, gen, WAIT)
    except Exception as exc:  # noqa: BLE001 - the job ended, or its rank 0 cannot be reached from here
        print(
            f"clusterdoc stacks: job {jd.id} does not answer at {info['addr']}:{info['port']} ({exc}); "
            "has it ended? ('clusterdoc status')",
            file=sys.stderr,
        )
        return 1
    hint = stacks.write(jd.path, dumps, world) if dumps else None
    exits = {r: rec["code"] for r in range(world) if r not in dumps and (rec := jd.rank_exit(r))}
    text = report.build(
        dumps,
        world,
        exits=exits,
        stacks_hint=hint,
        headline=f"clusterdoc: job {jd.id}: {len(dumps)} of {world} ranks answered",
    )
    print(text, file=out)
    if full:
        for rank in sorted(dumps):
            print("\n" + stacks.text(dumps[rank]), file=out)
    return 0 if len(dumps) == world else 1


def trace_main(job: str, folder: str | None, output: str | None, out=sys.stdout) -> int:
    """Write the job's Chrome/Perfetto trace (from `submit --trace`)."""
    jd = find_job(job, folder)
    shim, dumps = trace.read_records(jd.path / "trace"), recorder.read_folder(jd.path)
    records = recorder.merge(shim, dumps)  # the recorder's dumps: written on a stall (NCCL's on a timeout)
    source = " and ".join(name for name, got in (("--trace", shim), ("the flight recorder", dumps)) if got)
    if not records:
        raise UsageError(
            f"job {jd.id} has no collective trace ({jd.path / 'trace'} is empty) and no flight recorder dump "
            f"({jd.path / 'fr'})",
            hint="submit it with --trace (or CLUSTERDOC_TRACE=1); a stalled job's ranks dump their flight recorder",
        )
    doc = trace.build(records)
    path = Path(output) if output else jd.path / "trace.json"
    path.write_text(json.dumps(doc))
    n = sum(len(r) for r in records.values())
    print(
        f"{path}: {n} collectives on {len(records)} ranks (from {source}); open it in https://ui.perfetto.dev or "
        "chrome://tracing",
        file=out,
    )
    return 0
