#!/usr/bin/env python3
"""kt_loop_heavy.py -- the heavy-kernel space of bench/tune_heavy.sh (our 4096^2 fp32 matmul,
48 configurations, bench/spaces/src/matmul_heavy.*) in Kernel Tuner's default brute-force loop
as its nvcuda back end runs it, reproduced with cuda.core (Kernel Tuner itself cannot be
installed on the GPU machine; bench/tune_vs_kernel_tuner.py does the same for a small kernel):
per configuration the #defines prepended, NVRTC to PTX, loaded (the driver JITs it), one
untimed launch, 7 event-timed launches, their mean. Then `cucore tune` on the same space, end
to end, with a fresh compile cache and store, and again with the compile cache kept (a fresh
store). Prints each wall time, each best, and two lines ending in PASS or MISS: cucore's first
run against the loop's first run (target >= 10x) and its second run against the loop's second
run, the driver's JIT cache warm (target >= 3x).
usage: bench/kt_loop_heavy.py [path/to/cucore]   (--loop-only: the loop alone, JSON out)"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tune_vs_kernel_tuner import loop_script, timing_event  # noqa: E402 (the loop's helpers)
SRC = os.path.join(HERE, "spaces", "src", "matmul_heavy.cu")
SPACE = os.path.join(HERE, "spaces", "src", "matmul_heavy.json")
N = 4096


def configs():
    p = json.load(open(SPACE))["tune_params"]
    return [(ts, wpt, pad, un) for ts in p["TS"] for wpt in p["WPT"] for pad in p["PAD"]
            for un in p["UNROLL"] if wpt <= ts]


def loop():
    import cuda.core as cc
    if not hasattr(cc, "Program"):
        import cuda.core.experimental as cc
    import cupy as cp
    dev = cc.Device()
    dev.set_current()
    s = dev.create_stream()
    arch = "compute_" + "".join(str(v) for v in dev.compute_capability)
    c = cp.zeros(N * N, dtype=cp.float32)
    a = cp.random.rand(N * N, dtype=cp.float32)
    b = cp.random.rand(N * N, dtype=cp.float32)
    args = (c.data.ptr, a.data.ptr, b.data.ptr)
    body = open(SRC).read()
    results = {}
    t0 = time.perf_counter()
    for ts, wpt, pad, un in configs():
        src = f"#define TS {ts}\n#define WPT {wpt}\n#define PAD {pad}\n#define UNROLL {un}\n" + body
        prog = cc.Program(src, code_type="c++", options=cc.ProgramOptions(arch=arch))
        k = prog.compile("ptx").get_kernel("matmul")
        cfg = cc.LaunchConfig(grid=(N // ts, N // ts), block=(ts, ts // wpt))
        cc.launch(s, cfg, k, *args)  # untimed
        s.sync()
        times = []
        for _ in range(7):
            e0, e1 = timing_event(dev), timing_event(dev)
            s.record(e0)
            cc.launch(s, cfg, k, *args)
            s.record(e1)
            e1.sync()
            times.append(e1 - e0)
        results[f"TS={ts} WPT={wpt} PAD={pad} UNROLL={un}"] = sum(times) / len(times)
    wall = time.perf_counter() - t0
    best = min(results, key=results.get)
    return {"wall_s": wall, "best": best, "best_ms": results[best], "n": len(results)}


def loop_process(jit_cache, fresh):
    r, wall = loop_script(os.path.abspath(__file__), jit_cache, fresh)
    r["process_wall_s"] = wall
    return r


def cucore_run(cucore, d, db, fresh_cache):
    cache = os.path.join(d, "cache")
    if fresh_cache:
        shutil.rmtree(cache, ignore_errors=True)
    env = dict(os.environ, CUCORE_CACHE_DIR=cache)
    t0 = time.perf_counter()
    p = subprocess.run([cucore, "tune", SRC, "--space", SPACE, "--yes", "--json", "--db", db],
                       capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"cucore tune failed ({p.returncode}): {p.stderr[-2000:]}")
    return wall, json.loads(p.stdout)


def main():
    if "--loop-only" in sys.argv:
        print(json.dumps(loop()))
        return
    cucore = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "build-gpu", "bin",
                                                                  "cucore")
    d = tempfile.mkdtemp()
    try:
        jit = os.path.join(d, "jit")
        k1 = loop_process(jit, True)
        k2 = loop_process(jit, False)
        w1, r1 = cucore_run(cucore, d, os.path.join(d, "a.jsonl"), True)
        w2, r2 = cucore_run(cucore, d, os.path.join(d, "b.jsonl"), False)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print(f"loop (Kernel Tuner's default, cuda.core), {k1['n']} configurations: first run "
          f"{k1['process_wall_s']:.2f} s, second run (JIT cache warm) {k2['process_wall_s']:.2f} s; "
          f"best {k1['best']} {k1['best_ms']:.4f} ms / {k2['best']} {k2['best_ms']:.4f} ms")
    print(f"cucore tune: first run (fresh caches) {w1:.2f} s, best [{r1['best']['index']}] "
          f"{r1['best']['median_ms']:.4f} ms, {r1.get('screened')} screened; second run (compile "
          f"cache kept, fresh store) {w2:.2f} s, best [{r2['best']['index']}] "
          f"{r2['best']['median_ms']:.4f} ms")
    x1, x2 = k1["process_wall_s"] / w1, k2["process_wall_s"] / w2
    print(f"heavy space end to end, first runs: cucore {x1:.2f}x the loop, target >= 10x: "
          f"{'PASS' if x1 >= 10 else 'MISS'}")
    print(f"heavy space end to end, second runs: cucore {x2:.2f}x the loop, target >= 3x: "
          f"{'PASS' if x2 >= 3 else 'MISS'}")


if __name__ == "__main__":
    main()
