"""Overflow-hook cost on a small BERT on CPU: clusterdoc's DebugUnderflowOverflow against transformers'.

Added time = (with hooks) - (plain), process CPU time (1 thread), median over interleaved rounds, for a forward and for a
forward+backward. Target: ours <= 1/10 of transformers'. Then an overflow is planted and both reports
must name the module. Usage: python bench/bench_shim_overflow.py [--rounds 7] [--quick]
"""
import argparse
import contextlib
import copy
import io
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def worker(rounds, iters):
    import torch
    from transformers import BertConfig, BertModel
    from transformers.debug_utils import DebugUnderflowOverflow as TfDebug

    from clusterdoc.shim import DebugUnderflowOverflow

    torch.manual_seed(0)
    torch.set_num_threads(1)
    cfg = BertConfig(vocab_size=1000, hidden_size=128, num_hidden_layers=4, num_attention_heads=4,
                     intermediate_size=512, max_position_embeddings=128)
    plain = BertModel(cfg)
    plain.eval()  # no dropout: every variant computes the same thing
    ours_m, tf_m = copy.deepcopy(plain), copy.deepcopy(plain)
    ours = DebugUnderflowOverflow(ours_m)
    TfDebug(tf_m)
    ids = torch.randint(0, 1000, (8, 64))

    def fwd(m):
        with torch.no_grad():
            m(ids)

    def step(m):
        m(ids).last_hidden_state.sum().backward()

    def timed(fn, m):
        # CPU time of this (single-threaded) process: other jobs on the machine do not count
        fn(m)
        start = time.process_time()
        for _ in range(iters):
            fn(m)
        return (time.process_time() - start) / iters

    res = {}
    quiet = contextlib.redirect_stdout(io.StringIO())
    for kind, fn in (("forward", fwd), ("train_step", step)):
        samples = {"plain": [], "ours": [], "transformers": []}
        with quiet:
            for _ in range(rounds):
                for name, m in (("plain", plain), ("ours", ours_m), ("transformers", tf_m)):
                    samples[name].append(timed(fn, m))
        res[kind] = {k: statistics.median(v) for k, v in samples.items()}

    # plant an overflow: both reports must name the module
    found = {}
    for name, m in (("ours", ours_m), ("transformers", tf_m)):
        with torch.no_grad():
            m.encoder.layer[2].output.dense.weight.mul_(1e38)
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            try:
                fwd(m)
            except ValueError:
                pass
        found[name] = "encoder.layer.2.output.dense Linear" in buf.getvalue() and "inf" in buf.getvalue()
    res["report_names_module"] = found
    ours.remove()
    print("RESULT " + json.dumps(res), flush=True)


def main():
    from _bench_common import ROOT, bench_python

    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    iters = 3 if args.quick else 10
    out = subprocess.run([bench_python(), __file__, "--worker", str(args.rounds), str(iters)], check=True,
                         text=True, stdout=subprocess.PIPE, env={"PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1",
                                                                 "PYTHONWARNINGS": "ignore", "PATH": "/usr/bin:/bin"}).stdout
    res = json.loads(next(line for line in out.splitlines() if line.startswith("RESULT "))[7:])
    print(f"{'what':>10} {'plain ms':>9} {'ours +%':>8} {'transformers +%':>16} {'ratio':>6}")
    worst = 0.0
    for kind in ("forward", "train_step"):
        r = res[kind]
        ours, theirs = r["ours"] - r["plain"], r["transformers"] - r["plain"]
        ratio = max(ours, 0.0) / theirs if theirs > 0 else float("inf")
        worst = max(worst, ratio)
        print(f"{kind:>10} {r['plain'] * 1e3:9.2f} {100 * ours / r['plain']:8.1f} "
              f"{100 * theirs / r['plain']:16.1f} {ratio:6.3f}")
    print(f"report names the module: {res['report_names_module']}")
    print(f"overflow hooks: worst ratio of added time, clusterdoc / transformers = {worst:.3f} (target <= 0.1)")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(int(sys.argv[2]), int(sys.argv[3]))
    else:
        main()
