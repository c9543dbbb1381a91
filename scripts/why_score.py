"""The score of `clusterdoc why --log` on folders of real logs, each with its SOURCES.md table
(| file | source | cause | culprit | why |), judged as tests/test_why_real_logs.py judges them
(clusterdoc/why/score.py).

    .venv/bin/python scripts/why_score.py [DIR ...] [--json] [--rows] [--together]

DIR defaults to tests/fixtures/why/heldout. Prints per folder: logs, settled, right category (n/N, %), unknown,
confident wrong (listed with --rows), culprit named (n/N), per category (right/total), crashes, with the date and the git
commit. `--rows` lists every log's verdict too (for the tuning set; never for a held-out one). Exit 0, or 1 when
a log crashed or has no row, 2 on a usage error (a folder without SOURCES.md).
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from clusterdoc.why import score  # noqa: E402 - after the repository is on the path


def commit() -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "describe", "--always", "--dirty"], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    return out.stdout.strip() or "?"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="*", type=Path, default=[ROOT / "tests" / "fixtures" / "why" / "heldout"])
    ap.add_argument("--json", action="store_true", help="one JSON object: the date, the commit, each folder's score")
    ap.add_argument("--rows", action="store_true", help="every log's verdict too (not for a held-out folder)")
    ap.add_argument("--together", action="store_true",
                    help="one score for all the folders too (a set collected in parts), after each folder's")
    args = ap.parse_args(argv)
    for d in args.dirs:
        if not (d / "SOURCES.md").is_file():
            print(f"why_score: {d}/SOURCES.md: no such file (a folder of logs with their table is expected)",
                  file=sys.stderr)  # fmt: skip
            return 2
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    scores = [score.score(d) for d in args.dirs]
    if args.together and len(scores) > 1:
        scores.append(score.together(scores, " + ".join(str(d) for d in args.dirs)))
    if args.json:
        if not args.rows:
            for s in scores:  # totals only: no log's name or verdict (a held-out folder stays sealed)
                s.pop("rows")
                s["wrong"] = len(s["wrong"])
                s["culprits_missed"] = len(s["culprits_missed"])  # which rank a log names is its content too
        print(json.dumps({"date": when, "commit": commit(), "scores": scores}, indent=2))
    else:
        print(f"clusterdoc why --log score, {when}, commit {commit()}")
        for s in scores:
            print("\n".join(score.lines(s, every=args.rows)))
    return 1 if any(s["crashes"] or s["without_row"] for s in scores) else 0


if __name__ == "__main__":
    sys.exit(main())
