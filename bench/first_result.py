#!/usr/bin/env python3
"""Time to first result, whole processes: the raw C program (bench_raw_first_result:
cuInit, context, NVRTC compile of saxpy, load, 1 Mi floats of x and y in, one launch, y back)
against `cucore run` on the same work -- the .cu with an empty compile cache, the .cu with its
entry cached, the .cubin -- and `cucore devices` / `cucore version`, plus cuda.core and CuPy
doing the same work when they import. Every round runs each once, in a shuffled order (paired,
interleaved); a ratio is taken within each round, and the median over the rounds is printed.

One summary line per comparison, ending in PASS or MISS where the comparison has a target
(scripts/gpu-check.sh counts those), then the medians of cucore's own phases (run --json).

Usage (one command, from the repository root after `make build`):
    python3 bench/first_result.py [--build build] [--rounds 15]
"""
import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

SAXPY = r'''extern "C" __global__ void saxpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
'''
N = 1 << 20

CUDA_CORE = r'''
import sys, numpy as np
try:
    import cuda.core as cc
    if not hasattr(cc, "Program"):
        import cuda.core.experimental as cc
except Exception as e:
    sys.exit(f"cuda.core: {e}")
from cuda.bindings import driver as drv
src, n = open(sys.argv[1]).read(), 1 << 20
dev = cc.Device(); dev.set_current(); s = dev.create_stream()
arch = "sm_" + "".join(str(v) for v in dev.compute_capability)
k = cc.Program(src, code_type="c++", options=cc.ProgramOptions(arch=arch)).compile("cubin").get_kernel("saxpy")
x, y = np.ones(n, np.float32), np.full(n, 2, np.float32)
def alloc(size):  # cuda.core 0.3+ asks for the stream the allocation is ordered on
    try:
        return dev.allocate(size, stream=s)
    except TypeError:
        return dev.allocate(size)
dx, dy = alloc(4 * n), alloc(4 * n)
s.sync()
px, py = int(dx.handle), int(dy.handle)
drv.cuMemcpyHtoD(px, x.ctypes.data, 4 * n); drv.cuMemcpyHtoD(py, y.ctypes.data, 4 * n)
cc.launch(s, cc.LaunchConfig(grid=n // 256, block=256), k, np.float32(2), px, py, np.int32(n))
s.sync(); drv.cuMemcpyDtoH(y.ctypes.data, py, 4 * n)
assert (y == 4).all()
'''

CUPY = r'''
import sys
try:
    import cupy as cp
except Exception as e:
    sys.exit(f"cupy: {e}")
import numpy as np
n = 1 << 20
k = cp.RawKernel(open(sys.argv[1]).read(), "saxpy")
x, y = cp.asarray(np.ones(n, np.float32)), cp.asarray(np.full(n, 2, np.float32))
k((n // 256,), (256,), (np.float32(2), x, y, np.int32(n)))
assert (y.get() == 4).all()
'''


def wall(cmd, env=None):
    """Seconds the whole process took; None when it failed (its stderr is kept)."""
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    dt = time.perf_counter() - t0
    return (dt if p.returncode == 0 else None), p


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=15)
    a = ap.parse_args()
    cucore = os.path.join(a.build, "bin", "cucore")
    raw = os.path.join(a.build, "bin", "bench_raw_first_result")
    for f in (cucore, raw):
        if not os.access(f, os.X_OK):
            sys.exit(f"first_result: {f} is missing; run `make build` (the raw program needs "
                     "the toolkit's libcuda stub and NVRTC)")
    work = tempfile.mkdtemp(prefix="cucore-first-")
    try:
        return run(a, cucore, raw, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def prepare(cucore, work):
    cu = os.path.join(work, "saxpy.cu")
    with open(cu, "w") as f:
        f.write(SAXPY)
    info = json.loads(subprocess.run([cucore, "devices", "--json"], capture_output=True,
                                     text=True, check=True).stdout)
    arch = info["devices"][0]["arch"]  # "sm_90"
    cubin = os.path.join(work, "saxpy.cubin")
    subprocess.run([cucore, "compile", cu, "--arch", arch, "-o", cubin], check=True,
                   capture_output=True)
    return cu, cubin


def run(a, cucore, raw, work):
    cu, cubin = prepare(cucore, work)
    args = ["--kernel", "saxpy", "--grid", str(N // 256), "--block", "256", "--arg", "f32:2",
            "--arg", "buf:f32[%d]=1" % N, "--arg", "inout:f32[%d]=2" % N, "--arg", "i32:%d" % N,
            "--show", "0", "--json"]
    base = dict(os.environ)
    cold_dir, warm_dir = os.path.join(work, "cold"), os.path.join(work, "warm")
    warm_env = dict(base, CUCORE_CACHE_DIR=warm_dir)
    subprocess.run([cucore, "run", cu] + args, env=warm_env, capture_output=True, check=True)

    def cold():
        shutil.rmtree(cold_dir, ignore_errors=True)
        return wall([cucore, "run", cu] + args, dict(base, CUCORE_CACHE_DIR=cold_dir))

    variants = {
        "raw": lambda: wall([raw]),
        "cold": cold,
        "warm": lambda: wall([cucore, "run", cu] + args, warm_env),
        "cubin": lambda: wall([cucore, "run", cubin] + args, warm_env),
        # Diagnostics (no target). The .cubin run with its context made on a thread beside the
        # code's load (CUCORE_RUN_EARLY; a .cubin run is serial since the fifth round). The
        # .cubin run with the driver's own number of hardware work queues
        # (CUCORE_RUN_DRIVER_QUEUES; a run asks for 1 since the fifth round; an explicit
        # CUDA_DEVICE_MAX_CONNECTIONS=8 measured slower still, 1.15x raw). The raw program
        # with 1 queue: what it gains from the same setting. `cucore devices` without NVML. (A run of one launch loads no NVML since the round that measured it
        # costing ~14 ms on two H200s: 592 -> 578 ms.)
        "cubin_early": lambda: wall([cucore, "run", cubin] + args,
                                    dict(warm_env, CUCORE_RUN_EARLY="1")),
        "cubin_driver_queues": lambda: wall([cucore, "run", cubin] + args,
                                            dict(warm_env, CUCORE_RUN_DRIVER_QUEUES="1")),
        "raw_1_queue": lambda: wall([raw], dict(base, CUDA_DEVICE_MAX_CONNECTIONS="1")),
        "devices": lambda: wall([cucore, "devices"]),
        "devices_no_nvml": lambda: wall([cucore, "devices"],
                                        dict(base, CUCORE_LIBNVML="/nonexistent/libnvidia-ml.so.1")),
        "version": lambda: wall([cucore, "version"]),
    }
    for name, code in (("cuda.core", CUDA_CORE), ("CuPy", CUPY)):
        ok, p = wall([sys.executable, "-c", code, cu],
                     dict(base, CUPY_CACHE_DIR=os.path.join(work, "cupy-warmup")))
        if ok is None:
            print(f"{name}: not run ({(p.stderr or p.stdout).strip().splitlines()[-1:]})")
            continue

        def peer(code=code):
            d = tempfile.mkdtemp(dir=work)  # CuPy's kernel cache starts empty, as NVRTC's does
            return wall([sys.executable, "-c", code, cu], dict(base, CUPY_CACHE_DIR=d))
        variants[name] = peer

    times = {k: [] for k in variants}
    ratios = {k: [] for k in variants}
    raw_init = []
    phases = {}
    outside = {}  # wall time outside main (exec, the loader, the exit), per variant
    for _ in range(a.rounds):
        order = list(variants)
        random.shuffle(order)
        got = {}
        for name in order:
            t, p = variants[name]()
            if t is None:
                sys.exit(f"first_result: {name} failed:\n{p.stderr}")
            got[name] = t
            if name in ("raw", "raw_1_queue"):
                f = p.stdout.split()
                init = float(f[f.index("cuinit_context_ms") + 1])
                if name == "raw":
                    raw_init.append(init / 1e3)
                else:
                    outside.setdefault("raw_1_queue's in-process cuInit + context", []).append(init)
                outside.setdefault(name, []).append(t * 1e3 - float(f[f.index("total_ms") + 1]))
            elif name in ("cold", "warm", "cubin", "cubin_early",
                          "cubin_driver_queues"):
                ph_all = json.loads(p.stdout).get("phases", {})
                for ph, v in ph_all.items():
                    phases.setdefault((name, ph), []).append(v["ms"])
                main_start = ph_all.get("process_start", {}).get("ms", 0)
                main_end = max((v["start_ms"] + v["ms"] for v in ph_all.values()), default=0)
                outside.setdefault(name, []).append(t * 1e3 - (main_end - main_start))
        for name, t in got.items():
            times[name].append(t)
            ratios[name].append(t / got["raw"])
    report(a, times, ratios, raw_init, phases, outside)
    return 0


def report(a, times, ratios, raw_init, phases, outside):
    med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    init = statistics.median(raw_init) * 1e3
    print(f"time to first result, {a.rounds} interleaved rounds, whole processes (medians):")
    print(f"raw C program                 : {med['raw']:8.1f} ms "
          f"(in process: cuInit + context {init:.1f} ms)")
    targets = {"cold": ("cucore run saxpy.cu, empty cache", 1.02),
               "warm": ("cucore run saxpy.cu, cached    ", 0.95),
               "cubin": ("cucore run saxpy.cubin         ", 0.95)}
    for k, (label, limit) in targets.items():
        r = statistics.median(ratios[k])
        print(f"{label}: {med[k]:8.1f} ms, {r:.3f}x raw (target <= {limit:.2f}x): "
              f"{'PASS' if r <= limit else 'MISS'}")
    for k in ("devices", "version"):
        print(f"cucore {k:<23}: {med[k]:8.1f} ms (target <= raw cuInit + context {init:.1f} ms): "
              f"{'PASS' if med[k] <= init else 'MISS'}")
    for k in ("cuda.core", "CuPy"):
        if k in med:
            print(f"{k:<30}: {med[k]:8.1f} ms, {statistics.median(ratios[k]):.3f}x raw, "
                  f"cucore cold is {med['cold'] / med[k]:.3f}x {k}")
    for k in ("cubin_early", "cubin_driver_queues", "raw_1_queue",
              "devices_no_nvml"):
        print(f"diagnostic {k:<19}: {med[k]:8.1f} ms, {statistics.median(ratios[k]):.3f}x raw")
    print(f"  (cucore's .cubin run against the raw program given 1 queue as well: "
          f"{statistics.median(a / b for a, b in zip(times['cubin'], times['raw_1_queue'])):.3f}x)")
    print("outside main (exec, the loader, the exit: wall minus the in-process time; the")
    print("process start is known to a 10 ms clock tick), median ms:")
    for k, xs in outside.items():
        print(f"  {k:<16}{statistics.median(xs):9.1f}")
    print("cucore's phases (run --json, median ms; cold / warm / cubin):")
    names = sorted({ph for (_, ph) in phases},
                   key=lambda ph: statistics.median(phases.get(("cold", ph)) or [0]))
    for ph in names:
        cells = []
        for v in ("cold", "warm", "cubin"):
            xs = phases.get((v, ph))
            cells.append(f"{statistics.median(xs):9.3f}" if xs else "        -")
        print(f"  {ph:<16}" + " ".join(cells))


if __name__ == "__main__":
    sys.exit(main())
