#!/usr/bin/env python3
"""strategies.py -- cucore's search strategies replayed on the recorded spaces of bench/spaces/
(`cucore tune --simulate FILE --compare all`), against the targets of the default strategy and
Kernel Tuner 1.4.0's best strategy per space (its own simulation mode on the same recordings,
50 seeds, run by bench/kt_strategies.sh; docs/BENCHMARKS.md).

usage: bench/strategies.py [--cucore PATH] [--repeats R] [--budgets 100,200] [FILE...]
Prints each comparison table, then one line per target ending in PASS or MISS (the GPU check
counts them): the default strategy's median and 10th percentile of optimum / best found at
100 evaluations (>= 0.98 and >= 0.95) and at 200 (>= 0.99 and >= 0.97), on every recording,
proposing one at a time; and its time per proposal (<= 1 ms) in batches of 8, as a measured
tune proposes (twice its compile workers). Exit 1 when a run fails, 0 otherwise.
"""
import argparse
import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# Kernel Tuner 1.4.0's best strategy per space and budget, median / p10 of optimum / best
# found: its own simulation mode on the same recordings, 50 seeds (bench/kt_strategies.sh,
# 2026-11-28; docs/BENCHMARKS.md has every strategy's row and the versions).
KT_BEST = {
    ("gemm", 100): ("adaptive_tabu_greywolf", 0.982, 0.945),
    ("gemm", 200): ("adaptive_tabu_greywolf", 1.000, 0.982),
    ("convolution", 100): ("firefly_algorithm", 0.989, 0.901),
    ("convolution", 200): ("firefly_algorithm", 1.000, 0.992),
    ("pnpoly", 100): ("adaptive_tabu_greywolf", 0.999, 0.868),
    ("pnpoly", 200): ("pso", 1.000, 1.000),
    ("h100_conv2d", 100): ("adaptive_tabu_greywolf", 0.995, 0.937),
    ("h100_conv2d", 200): ("adaptive_tabu_greywolf", 1.000, 0.968),
    ("h100_gemm", 100): ("firefly_algorithm", 1.000, 0.947),
    ("h100_gemm", 200): ("firefly_algorithm", 1.000, 1.000),
}
TARGETS = {100: (0.98, 0.95), 200: (0.99, 0.97)}
DEFAULT = "bayes"


def find_cucore(given):
    for path in [given] if given else [os.path.join(HERE, "..", b, "bin", "cucore")
                                       for b in ("build", "build-gpu")]:
        if path and os.access(path, os.X_OK):
            return path
    sys.exit("strategies.py: no cucore binary (build first, or --cucore PATH)")


def space_of(path):
    """The Kernel Tuner anchor's name of a kt_ recording; else the file's name."""
    base = os.path.basename(path).split(".")[0]
    for name in ("gemm", "convolution", "pnpoly"):
        if base.startswith("kt_") and name in base:
            return name
    return base


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cucore")
    ap.add_argument("--repeats", type=int, default=50)
    ap.add_argument("--budgets", default="100,200")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    cucore = find_cucore(a.cucore)
    files = a.files or sorted(glob.glob(os.path.join(HERE, "spaces", "*.json.gz")))  # KT and T4
    lines, failed = [], 0
    for f in files:
        cmd = [cucore, "tune", "--simulate", f, "--compare", "all", "--budgets", a.budgets,
               "--repeats", str(a.repeats)]
        text = subprocess.run(cmd, capture_output=True, text=True)
        js = subprocess.run(cmd + ["--json"], capture_output=True, text=True)
        if text.returncode or js.returncode:
            print(f"{f}: {text.stderr or js.stderr}")
            failed = 1
            continue
        print(text.stdout)
        r = json.loads(js.stdout)
        space = space_of(f)
        for x in r["results"]:
            if x["strategy"] != DEFAULT:
                continue
            b = x["budget"]
            kt = KT_BEST.get((space, b))
            ktt = f"; Kernel Tuner's best ({kt[0]}) {kt[1]:.3f} / {kt[2]:.3f}" if kt and kt[1] else ""
            if b in TARGETS:
                med, p10 = TARGETS[b]
                ok = x["median"] >= med and x["p10"] >= p10
                lines.append(f"  {space} {b} evaluations, {DEFAULT}: median {x['median']:.3f} "
                             f"p10 {x['p10']:.3f} over {a.repeats} seeds{ktt}; target >= {med} / "
                             f">= {p10}: {'PASS' if ok else 'MISS'}")
            lines.append(f"  {space} {b} evaluations, {DEFAULT}, one proposal at a time: "
                         f"{x['strategy_ms_per_eval']:.2f} ms per proposal")
        # The cost target at a tune's batch (twice its compile workers; 8 for 4 workers): the
        # model is fitted once per batch, as a measured tune proposes.
        cost = subprocess.run([cucore, "tune", "--simulate", f, "--compare", DEFAULT,
                               "--budgets", a.budgets, "--repeats", str(a.repeats),
                               "--batch", "8", "--json"], capture_output=True, text=True)
        if cost.returncode:
            print(f"{f}: {cost.stderr}")
            failed = 1
            continue
        for x in json.loads(cost.stdout)["results"]:
            ms = x["strategy_ms_per_eval"]
            lines.append(f"  {space} {x['budget']} evaluations, {DEFAULT}, batches of 8: median "
                         f"{x['median']:.3f} p10 {x['p10']:.3f}; {ms:.2f} ms per proposal, "
                         f"target <= 1 ms: {'PASS' if ms <= 1 else 'MISS'}")
    print("search strategy targets (default strategy):")
    print("\n".join(lines))
    return failed


if __name__ == "__main__":
    sys.exit(main())
