"""The doctor, in three steps anyone can call:

    g = gather(opts)                # facts per node: this machine, every node over SSH, or saved files
    findings = judge(g, opts)       # pure: facts in, findings out (the rules are in clusterdoc/checks/)
    report = Report.build(g, findings, opts.strict)   # render() / to_json(), exit_code

`check(opts)` does all three; `clusterdoc check`, the submit preflight and `clusterdoc.check()` call it.
A new check goes in clusterdoc/checks/ (a pure function of a node's facts) plus a line in rules.py; what
it needs from the node goes in clusterdoc/probe/ (the one round trip).
"""

from __future__ import annotations

from clusterdoc.doctor.facts import Gathered, gather
from clusterdoc.doctor.options import CheckOptions
from clusterdoc.doctor.report import NodeResult, Report
from clusterdoc.doctor.rules import judge

__all__ = ["CheckOptions", "Gathered", "NodeResult", "Report", "check", "gather", "judge"]


def check(opts: CheckOptions | None = None) -> Report:
    opts = opts or CheckOptions()
    g = gather(opts)
    return Report.build(g, judge(g, opts), opts.strict, opts.verbose, opts)
