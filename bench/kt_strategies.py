#!/usr/bin/env python3
"""kt_strategies.py -- Kernel Tuner's side of the search-strategy comparison: Kernel Tuner's own
strategies replayed in its simulation mode on the recorded spaces of bench/spaces/ (the same
recordings `bench/strategies.py` replays cucore's strategies on).

usage: bench/kt_strategies.py --kt-src DIR [--repeats 50] [--budgets 100,200]
           [--strategies a,b,...] [--repeats-for STRATEGY=N,...] [--out results.json]
           [--table table.txt] [--workdir DIR] [--resume] [FILE...]
  DIR      a directory from which `import kernel_tuner` works (and `import constraint`, unless
           python-constraint2 is installed); bench/kt_strategies.sh prepares one from Kernel
           Tuner's and python-constraint's sources and runs this script with Debian's python3.
  FILE     Kernel Tuner cache files (.json or .json.gz) or TuningSchema T4 files (.t4.json.gz),
           default bench/spaces/*.json.gz. T4 files are converted to Kernel Tuner cache files
           in --workdir (default: a temporary directory).

Method (that of ../shared/research/tune-strategies-anchor.md, with derived seeds):
* Search space = exactly the recorded configurations, failed ones included: tune_kernel() with
  the cache's tune_params and one restriction, FunctionConstraint(lambda *v: v in recorded),
  simulation_mode=True, objective "time". A failed configuration costs one evaluation when a
  strategy first picks it (Kernel Tuner marks it __error__). T4 configurations with invalidity
  "constraints" are outside the space (left out, as cucore's simulation does); other T4
  failures become Kernel Tuner's error strings (compile -> CompilationFailedConfig, runtime,
  timeout, correctness -> RuntimeFailedConfig).
* Budget = strategy_options {"max_fevals": B}: unique configurations evaluated (revisits and
  proposals outside the space are free). All other strategy options at their defaults.
* Seeds: run r of every cell uses s = SeedSequence(r).generate_state(1)[0] (uint32); before the
  run random.seed(s) and numpy.random.seed(s) (Kernel Tuner's strategies and the SciPy
  optimisers they wrap draw from these global generators). Consecutive small seeds fed straight
  into MT19937 gave unrepresentative runs on pnpoly in the anchor; the SeedSequence scrambles
  them. Kernel Tuner 1.4 creates scipy.stats.qmc.LatinHypercube without a seed (diff_evo's
  initial population, bayes_opt's initial sample): before Kernel Tuner is imported, that class
  is replaced by a subclass whose default seed is drawn from the seeded global numpy generator
  (nothing else changes). The script re-executes itself with PYTHONHASHSEED=0.
* Metric: perf = recorded optimum time / best valid recorded time among the configurations the
  run evaluated (1.0 = the optimum, 0 when it found no valid one). Per cell: median, 10th
  percentile (numpy's linear interpolation), share of runs >= 0.95 and >= 0.99, and the mean
  (min, max) number of unique configurations evaluated.

To reproduce: bench/kt_strategies.sh --kt-src KT_SOURCE --constraint-src PC_SOURCE
  --out results.json (Kernel Tuner 1.4.0, python-constraint2 2.6.0; see that script).
Prints the versions first, then a table per (space, budget), then the best strategy per
(space, budget) by median, ties broken by the 10th percentile.
"""
import argparse
import contextlib
import glob
import gzip
import importlib
import io
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

from strategies import space_of  # one naming of the recordings for both sides (bench/)

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_STRATEGIES = ("adaptive_tabu_greywolf,firefly_algorithm,pso,diff_evo,genetic_algorithm,"
                      "simulated_annealing,hybrid_vndx,random_sample")
T4_ERRORS = {"compile": "CompilationFailedConfig", "runtime": "RuntimeFailedConfig",
             "timeout": "RuntimeFailedConfig", "correctness": "RuntimeFailedConfig"}


def reexec_with_hash_seed():
    """Set PYTHONHASHSEED=0 for this process by starting it again (it is read at start-up)."""
    if os.environ.get("PYTHONHASHSEED") != "0":
        env = dict(os.environ, PYTHONHASHSEED="0")
        os.execve(sys.executable, [sys.executable] + sys.argv, env)


def seed_of(run):
    """The seed of run `run` of every cell: derived through numpy's SeedSequence."""
    import numpy as np
    return int(np.random.SeedSequence(run).generate_state(1)[0])


def patch_latin_hypercube():
    """Make scipy's LatinHypercube draw its default seed from numpy's global generator."""
    import numpy as np
    import scipy.stats.qmc as qmc
    base = qmc.LatinHypercube

    class SeededLatinHypercube(base):
        def __init__(self, d, *args, seed=None, **kwargs):
            if seed is None:
                seed = np.random.randint(0, 2**31 - 1)
            super().__init__(d, *args, seed=seed, **kwargs)

    SeededLatinHypercube.__name__ = "LatinHypercube"
    qmc.LatinHypercube = SeededLatinHypercube


def versions(kt_src):
    """Python, numpy, scipy, scikit-learn, Kernel Tuner and python-constraint versions."""
    from importlib import metadata
    import numpy
    import scipy
    import constraint
    import kernel_tuner
    v = {"python": platform.python_version() + " (" + sys.executable + ")",
         "numpy": numpy.__version__, "scipy": scipy.__version__}
    try:
        import sklearn
        v["sklearn"] = sklearn.__version__
    except ImportError:
        v["sklearn"] = "not installed"
    for mod in (numpy, scipy):
        v[mod.__name__] += " (" + os.path.dirname(mod.__file__) + ")"
    source = os.path.join(kt_src, "KT_SOURCE")
    if os.path.exists(source):  # written by kt_strategies.sh
        with open(source) as f:
            commit = f.read().strip()
    else:
        try:
            commit = subprocess.run(["git", "-C", kt_src, "rev-parse", "HEAD"], capture_output=True,
                                    text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            commit = "commit unknown"
    v["kernel_tuner"] = "%s, %s (%s)" % (kernel_tuner.__version__, commit,
                                         os.path.dirname(kernel_tuner.__file__))
    try:
        cv = metadata.version("python-constraint2")
    except metadata.PackageNotFoundError:
        cv = "version unknown"
    compiled = any(f.endswith(".so") for f in os.listdir(os.path.dirname(constraint.__file__)))
    source = os.path.join(os.path.dirname(os.path.dirname(constraint.__file__)), "CONSTRAINT_SOURCE")
    if os.path.exists(source):
        with open(source) as f:
            cv += ", " + f.read().strip()
    v["constraint"] = "python-constraint2 %s, %s (%s)" % (
        cv, "compiled" if compiled else "pure Python", os.path.dirname(constraint.__file__))
    return v


def read_json(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def t4_to_cache(t4, name):
    """A TuningSchema T4 recording as a Kernel Tuner cache (a dict), "constraints" left out."""
    results = t4["results"]
    keys = list(results[0]["configuration"])
    tune_params = {k: sorted({r["configuration"][k] for r in results}) for k in keys}
    scale = {"s": 1000.0, "ms": 1.0, "us": 0.001, "ns": 1e-6}
    cache = {}
    for r in results:
        invalidity = r.get("invalidity", "correct")
        if invalidity == "constraints":
            continue
        config = r["configuration"]
        entry = {k: config[k] for k in keys}
        times = r.get("times", {})
        runtimes = [1000.0 * t for t in times.get("runtimes", [])]  # T4 times are in seconds
        if invalidity == "correct":
            m = next(m for m in r["measurements"] if m["name"] == "time")
            entry["time"] = m["value"] * scale[m.get("unit", "ms")]
        else:
            entry["time"] = T4_ERRORS.get(invalidity, "RuntimeFailedConfig")
        entry["times"] = runtimes
        entry["compile_time"] = 1000.0 * times.get("compilation_time", 0.0)
        entry["verification_time"] = 0
        entry["benchmark_time"] = sum(runtimes)
        entry["strategy_time"] = 0
        entry["framework_time"] = 0
        cache[",".join(str(config[k]) for k in keys)] = entry
    return {"device_name": "cucore T4 recording " + name, "kernel_name": name,
            "problem_size": [1], "tune_params_keys": keys, "tune_params": tune_params,
            "objective": "time", "cache": cache}


def load_space(path, workdir):
    """Read a recording; write it as a plain Kernel Tuner cache file into workdir."""
    data = read_json(path)
    name = space_of(path)
    if "cache" not in data:
        data = t4_to_cache(data, name)
    cachefile = os.path.join(workdir, name + ".json")
    with open(cachefile, "w") as f:
        json.dump(data, f)
    keys = data["tune_params_keys"]
    recorded = set()
    valid_times = []
    for entry in data["cache"].values():
        recorded.add(tuple(entry[k] for k in keys))
        if not isinstance(entry["time"], str):
            valid_times.append(entry["time"])
    return {"name": name, "file": os.path.relpath(os.path.abspath(path), os.path.dirname(HERE)),
            "cachefile": cachefile, "kernel_name": data["kernel_name"],
            "problem_size": data["problem_size"], "tune_params": data["tune_params"],
            "keys": keys, "recorded": recorded, "configs": len(recorded),
            "valid": len(valid_times), "optimum": min(valid_times)}


def run_once(space, strategy, budget, seed):
    """One seeded Kernel Tuner run; its perf, unique evaluations and wall seconds."""
    import numpy as np
    from constraint import FunctionConstraint
    from kernel_tuner import tune_kernel
    recorded = space["recorded"]
    restriction = FunctionConstraint(lambda *values: values in recorded)
    # brute_force (a sanity check: every configuration, the optimum) takes no budget option
    options = None if strategy == "brute_force" else {"max_fevals": budget}
    random.seed(seed)
    np.random.seed(seed)
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results, _ = tune_kernel(space["kernel_name"], "", space["problem_size"], [],
                                 space["tune_params"], restrictions=[restriction],
                                 cache=space["cachefile"], simulation_mode=True,
                                 strategy=strategy, strategy_options=options,
                                 objective="time", quiet=True)
    wall = time.perf_counter() - start
    evaluated = set()
    best = None
    for r in results:
        evaluated.add(tuple(r[k] for k in space["keys"]))
        t = r.get("time")
        if "__error__" not in r and isinstance(t, (int, float)) and (best is None or t < best):
            best = t
    perf = space["optimum"] / best if best else 0.0
    return {"seed": seed, "perf": perf, "best_time": best, "evals": len(evaluated),
            "wall_s": round(wall, 3)}


def summarise(cell):
    import numpy as np
    perfs = [r["perf"] for r in cell["runs"]]
    evals = [r["evals"] for r in cell["runs"]]
    cell.update(median=float(np.median(perfs)), p10=float(np.percentile(perfs, 10)),
                ge95=sum(p >= 0.95 for p in perfs) / len(perfs),
                ge99=sum(p >= 0.99 for p in perfs) / len(perfs),
                mean_evals=sum(evals) / len(evals), min_evals=min(evals), max_evals=max(evals),
                median_wall_s=statistics.median(r["wall_s"] for r in cell["runs"]),
                total_wall_s=round(sum(r["wall_s"] for r in cell["runs"]), 1))
    return cell


def header(doc):
    """The versions and the seeding, printed first."""
    out = ["Kernel Tuner strategies in simulation mode (bench/kt_strategies.py)"]
    out += ["  %-13s %s" % (k + ":", v) for k, v in doc["versions"].items()]
    out.append("  seeds:        run r uses SeedSequence(r).generate_state(1)[0], r = 0..repeats-1")
    return "\n".join(out) + "\n"


def body(doc):
    """The spaces, one table per (space, budget), the best strategy per (space, budget)."""
    out = []
    for s in doc["spaces"].values():
        out.append("  space %-12s %s: %d configurations, %d valid, optimum %.6g ms"
                   % (s["name"], s["file"], s["configs"], s["valid"], s["optimum"]))
    best = []
    for sname in doc["spaces"]:
        for budget in doc["budgets"]:
            cells = [c for c in doc["cells"] if c["space"] == sname and c["budget"] == budget]
            if not cells:
                continue
            out.append("")
            out.append("%s, budget %d (perf = optimum / best found)" % (sname, budget))
            out.append("  %-24s %4s %7s %7s %6s %6s %16s %8s" % (
                "strategy", "runs", "median", "p10", ">=.95", ">=.99", "evals mean (min)",
                "s/run"))
            for c in cells:
                short = " <" if c["min_evals"] < budget else ""
                out.append("  %-24s %4d %7.3f %7.3f %6.2f %6.2f %9.1f (%4d)%s %6.2f" % (
                    c["strategy"], len(c["runs"]), c["median"], c["p10"], c["ge95"], c["ge99"],
                    c["mean_evals"], c["min_evals"], short or "  ", c["median_wall_s"]))
            # medians equal to the printed 3 decimals are ties, broken by the 10th percentile,
            # then the share >= 0.99, then the mean perf
            ranked = sorted(cells, key=lambda c: (
                round(c["median"], 3), round(c["p10"], 3), c["ge99"],
                statistics.mean(r["perf"] for r in c["runs"])), reverse=True)
            best.append((sname, budget, ranked[0], ranked[1] if len(ranked) > 1 else None))
    out.append("")
    out.append("'<': some runs evaluated fewer unique configurations than the budget")
    out.append("")
    out.append("Best Kernel Tuner strategy per (space, budget): by median (to 3 decimals), then p10, "
               "share >= 0.99, mean; runner-up median / p10")
    for sname, budget, c, r in best:
        out.append("  %-12s %4d  %-24s median %.3f  p10 %.3f  >=.95 %.2f  >=.99 %.2f  (%d runs)"
                   "  %s" % (sname, budget, c["strategy"], c["median"], c["p10"], c["ge95"],
                             c["ge99"], len(c["runs"]),
                             "%s %.3f / %.3f" % (r["strategy"], r["median"], r["p10"]) if r else ""))
    return "\n".join(out) + "\n"


def main():
    reexec_with_hash_seed()
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kt-src", required=True,
                    help="directory from which kernel_tuner (and constraint) import")
    ap.add_argument("--repeats", type=int, default=50)
    ap.add_argument("--repeats-for", default="",
                    help="per-strategy repeats, e.g. hybrid_vndx=20,bayes_opt=20")
    ap.add_argument("--budgets", default="100,200")
    ap.add_argument("--strategies", default=DEFAULT_STRATEGIES)
    ap.add_argument("--out", help="write all results as JSON here (after every cell)")
    ap.add_argument("--table", help="also write the printed table here")
    ap.add_argument("--workdir", help="where the plain cache files go (default: a temp dir)")
    ap.add_argument("--resume", action="store_true", help="keep the cells already in --out")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()

    sys.path.insert(0, os.path.abspath(a.kt_src))
    patch_latin_hypercube()  # before Kernel Tuner imports it
    importlib.import_module("kernel_tuner")  # fails early when the source is not usable

    files = a.files or sorted(glob.glob(os.path.join(HERE, "spaces", "*.json.gz")))
    budgets = [int(b) for b in a.budgets.split(",")]
    strategies = [s for s in a.strategies.split(",") if s]
    repeats_for = {k: int(v) for k, v in (kv.split("=") for kv in a.repeats_for.split(",") if kv)}
    workdir = a.workdir or tempfile.mkdtemp(prefix="kt_strategies.")
    os.makedirs(workdir, exist_ok=True)

    doc = {"versions": versions(a.kt_src), "command": sys.argv, "budgets": budgets,
           "strategies": strategies, "seeds": "SeedSequence(r).generate_state(1)[0]",
           "spaces": {}, "cells": []}
    print(header(doc), end="", flush=True)
    done = {}
    if a.resume and a.out and os.path.exists(a.out):
        with open(a.out) as f:
            prev = json.load(f)
        done = {(c["space"], c["budget"], c["strategy"]): c for c in prev["cells"]}
        doc["previous_runs"] = prev.get("previous_runs", []) + [
            {"command": prev["command"], "total_wall_s": prev.get("total_wall_s")}]

    started = time.perf_counter()
    for path in files:
        space = load_space(path, workdir)
        doc["spaces"][space["name"]] = {k: space[k] for k in (
            "name", "file", "kernel_name", "configs", "valid", "optimum")}
        for budget in budgets:
            for strategy in strategies:
                n = repeats_for.get(strategy, a.repeats)
                key = (space["name"], budget, strategy)
                if key in done and len(done[key]["runs"]) == n:
                    doc["cells"].append(done[key])
                    continue
                cell = {"space": space["name"], "budget": budget, "strategy": strategy,
                        "runs": [run_once(space, strategy, budget, seed_of(r)) for r in range(n)]}
                doc["cells"].append(summarise(cell))
                print("%-12s %4d %-24s %3d runs  median %.3f  p10 %.3f  evals %.1f  %6.1f s  "
                      "(%.0f s so far)" % (space["name"], budget, strategy, n, cell["median"],
                                            cell["p10"], cell["mean_evals"], cell["total_wall_s"],
                                            time.perf_counter() - started),
                      file=sys.stderr, flush=True)
                if a.out:
                    with open(a.out, "w") as f:
                        json.dump(doc, f, indent=1)
    doc["total_wall_s"] = round(time.perf_counter() - started, 1)
    text = body(doc)
    print(text, end="")
    if a.table:
        with open(a.table, "w") as f:
            f.write(header(doc) + text)
    if a.out:
        with open(a.out, "w") as f:
            json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
