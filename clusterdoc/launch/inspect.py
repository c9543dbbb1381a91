"""`clusterdoc stacks JOB` and `clusterdoc trace JOB`: look inside a job without stopping it."""

from __future__ import annotations

import sys
from pathlib import Path

from clusterdoc import private
from clusterdoc.errors import UsageError
from clusterdoc.hang import channel, recorder, report, seal, stacks, trace
from clusterdoc.launch.job import find_job
from clusterdoc.shim import pace, straggler
from clusterdoc.untrusted import json_text, printable, printable_lines

WAIT = 5.0  # seconds the ranks have to answer


def stacks_main(job: str, folder: str | None, full: bool = False, out=sys.stdout) -> int:
    """Ask every rank of a running job for its state through the job's store; print the grouped view."""
    jd = find_job(job, folder)
    try:
        info = private.read_json(jd.path / "watch.json")
        world, addr, port = int(info["world"]), str(info["addr"]), int(info["port"])
        if not 1 <= world <= (1 << 20):
            raise ValueError(world)
    except (OSError, ValueError, TypeError, KeyError) as exc:
        why = f": {printable(exc.strerror or exc, 200) if isinstance(exc, OSError) else 'malformed'}"
        raise UsageError(
            f"job {jd.id} has no readable hang watch address yet ({jd.path / 'watch.json'}{why})",
            hint="the job must be running under clusterdoc submit (or shim.init()) with "
            "--hang-timeout above 0; rank 0 writes it once its process group is up",
        ) from None
    secret = seal.read_secret(jd.path)
    if secret is None:
        raise UsageError(
            f"job {jd.id} has no readable store secret ({jd.path / seal.FILE})",
            hint="only the job's owner can look inside it; jobs started without clusterdoc submit have none",
        )
    try:
        store = channel.connect(addr, port, timeout=5.0, secret=secret)
        gen = channel.request_dump(store)
        dumps = channel.collect(store, world, gen, WAIT)
    except Exception as exc:  # the job ended, or its rank 0 cannot be reached from here
        print(
            f"clusterdoc stacks: job {jd.id} does not answer at {printable(addr)}:{port} ({printable(exc, 300)}); "
            "has it ended? ('clusterdoc status')",
            file=sys.stderr,
        )
        return 1
    exits = {r: rec["code"] for r in range(world) if r not in dumps and (rec := jd.rank_exit(r))}
    try:
        hint = stacks.write(jd.path, dumps, world) if dumps else None
    except OSError as err:  # another user's folder, a full disk, a symlink in place of stacks/: print them only
        print(f"clusterdoc stacks: not saved in {printable(jd.path)}: {err.strerror or err}", file=sys.stderr)
        hint = None
    try:
        text = report.build(
            dumps,
            world,
            exits=exits,
            stacks_hint=hint,
            headline=f"clusterdoc: job {jd.id}: {len(dumps)} of {world} ranks answered",
        )
    except Exception as exc:  # a rank's state of an unexpected form: a finding, not a crash
        print(f"clusterdoc stacks: the ranks' states could not be read ({printable(exc, 200)})", file=sys.stderr)
        return 1
    print(printable_lines(text), file=out)
    ranks, judged = pace.settled(dumps)
    if len(ranks) > 1:  # who keeps the others waiting, and each rank's figures so far (shim/straggler.py)
        title = f"pace {pace.title(ranks, judged)} (compute, waiting in collectives, peak memory):"
        text = straggler.summary_text(ranks, title, straggler.threshold_from_env(), judged)
        print("\n" + printable_lines(text), file=out)
    if full:
        for rank in sorted(dumps):
            print("\n" + printable_lines(stacks.text(dumps[rank])), file=out)
    if store.rejected:
        print(
            f"clusterdoc stacks: ignored {store.rejected} value(s) on the job's store that failed authentication",
            file=sys.stderr,
        )
    return 0 if len(dumps) == world else 1


def trace_main(job: str, folder: str | None, output: str | None, out=sys.stdout) -> int:
    """Write the job's Chrome/Perfetto trace (from `submit --trace`)."""
    jd = find_job(job, folder)
    skipped: list[str] = []
    try:
        shim, dumps = trace.read_records(jd.path / "trace", skipped), recorder.read_folder(jd.path, skipped)
    except OSError as err:
        raise UsageError(f"cannot read the job's trace: {err.strerror or err}", where=printable(err.filename)) from None
    for note in skipped[:20]:  # the job folder is untrusted: what was not read is said, escaped
        print(f"clusterdoc trace: {printable(note, 400)}", file=sys.stderr)
    if len(skipped) > 20:
        print(f"clusterdoc trace: ... and {len(skipped) - 20} more files", file=sys.stderr)
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
    try:  # never through a symlink: whoever runs this (an admin too) writes this file and no other
        private.write(path, json_text(doc))
    except OSError as err:
        raise UsageError(f"cannot write the trace: {err.strerror or err}", where=printable(path)) from None
    n = sum(len(r) for r in records.values())
    print(
        f"{path}: {n} collectives on {len(records)} ranks (from {source}); open it in https://ui.perfetto.dev or "
        "chrome://tracing",
        file=out,
    )
    return 0
