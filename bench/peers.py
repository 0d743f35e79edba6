#!/usr/bin/env python3
"""Peers on the same GPU: cuda.core and CuPy launching the kernels bench_launch_overhead uses,
back to back, medians over rounds; cuda.core's graphs (capture of 1000 launches with its
GraphBuilder, replay) as bench_graph measures cucore's; cuda.core's memory resources (64 KiB
allocate + close, device pool and pinned) as bench_memory measures cucore's; and what each does
with a wrong number of arguments. Run on the GPU machine (scripts/gpu-check.sh runs it); prints
a table, never fails the check."""
import statistics
import subprocess
import sys
import time

SRC = r'''
extern "C" __global__ void empty() {}
extern "C" __global__ void four(float *x, int n, float a, float *y) {
  if (threadIdx.x == 0 && blockIdx.x == 0 && n < 0) y[0] = a * x[0]; }
'''
PER_ROUND, ROUNDS = 20000, 15


def timed(fn, sync):
    out = []
    fn(); sync()
    for _ in range(ROUNDS):
        sync()
        t0 = time.perf_counter()
        for _ in range(PER_ROUND):
            fn()
        sync()
        out.append((time.perf_counter() - t0) / PER_ROUND * 1e6)
    return statistics.median(out)


def cuda_core_device():
    """(cuda.core, its current Device, None): the module (its `experimental` part where the top
    level has no Program yet) and device 0 made current; or (None, None, why it cannot be
    imported)."""
    try:
        import cuda.core as cc
        if not hasattr(cc, "Program"):
            import cuda.core.experimental as cc
    except Exception as e:  # noqa: BLE001
        return None, None, f"cuda.core not importable: {e}"
    dev = cc.Device()
    dev.set_current()
    return cc, dev, None


def cuda_core_module(cc, dev):
    """SRC compiled by cuda.core for the device's architecture: the cubin's module."""
    arch = "sm_" + "".join(str(v) for v in dev.compute_capability)
    prog = cc.Program(SRC, code_type="c++", options=cc.ProgramOptions(arch=arch))
    return prog.compile("cubin")


def bench_cuda_core():
    cc, dev, why = cuda_core_device()
    if why:
        return why
    import numpy as np
    import cupy as cp
    s = dev.create_stream()
    mod = cuda_core_module(cc, dev)
    ke, k4 = mod.get_kernel("empty"), mod.get_kernel("four")
    cfg = cc.LaunchConfig(grid=1, block=32)
    x = cp.zeros(256, dtype=cp.float32)
    ptr = x.data.ptr
    args4 = (ptr, np.int32(1), np.float32(2.0), ptr)
    e = timed(lambda: cc.launch(s, cfg, ke), s.sync)
    f = timed(lambda: cc.launch(s, cfg, k4, *args4), s.sync)
    return e, f, getattr(cc, "__version__", None) or __import__("cuda.core").core.__version__


GRAPH_KERNELS, GRAPH_ROUNDS, GRAPH_REPLAYS = 1000, 15, 20
MEM_BYTES, MEM_PAIRS, MEM_ROUNDS = 64 << 10, 2000, 15


def bench_cuda_core_memory():
    """cuda.core's memory resources, as bench_memory measures cucore's: a 64 KiB allocate +
    close pair from DeviceMemoryResource (the device's stream-ordered pool) on a stream, and from
    its pinned resource (PinnedMemoryResource where this cuda.core has one, else
    LegacyPinnedMemoryResource, i.e. cuMemAllocHost); us per pair, medians."""
    cc, dev, why = cuda_core_device()
    if why:
        return why
    s = dev.create_stream()

    def pairs(mr, n):
        out = []
        for r in range(MEM_ROUNDS + 1):  # round 0 warms up
            s.sync()
            t0 = time.perf_counter()
            for _ in range(n):
                mr.allocate(MEM_BYTES, stream=s).close(stream=s)
            s.sync()
            if r:
                out.append((time.perf_counter() - t0) / n * 1e6)
        return statistics.median(out)

    device_us = pairs(cc.DeviceMemoryResource(dev.device_id), MEM_PAIRS)
    pinned_cls = getattr(cc, "PinnedMemoryResource", None)
    pinned_name, pinned_mr, n = "PinnedMemoryResource", None, MEM_PAIRS
    if pinned_cls is not None:
        try:
            pinned_mr = pinned_cls()
        except Exception:  # noqa: BLE001  (older signatures want arguments)
            pinned_mr = None
    if pinned_mr is None:
        pinned_name, pinned_mr, n = "LegacyPinnedMemoryResource", cc.LegacyPinnedMemoryResource(), 20
    return device_us, pinned_name, pairs(pinned_mr, n)


def bench_cuda_core_graph():
    """cuda.core's GraphBuilder: capture GRAPH_KERNELS launches of `four` (us per launch, begin
    to end of building), then replay the completed graph (us per kernel, launch to sync)."""
    cc, dev, why = cuda_core_device()
    if why:
        return why
    import numpy as np
    import cupy as cp
    if not hasattr(dev, "create_graph_builder"):
        return "this cuda.core has no graphs (Device.create_graph_builder)"
    s = dev.create_stream()
    k4 = cuda_core_module(cc, dev).get_kernel("four")
    cfg = cc.LaunchConfig(grid=1, block=32)
    x = cp.zeros(256, dtype=cp.float32)
    args4 = (x.data.ptr, np.int32(1), np.float32(2.0), x.data.ptr)

    def capture():
        gb = dev.create_graph_builder()
        gb.begin_building("global")
        for _ in range(GRAPH_KERNELS):
            cc.launch(gb, cfg, k4, *args4)
        gb.end_building()
        return gb

    capture()  # warm up
    cap = []
    for _ in range(GRAPH_ROUNDS):
        t0 = time.perf_counter()
        gb = capture()
        cap.append((time.perf_counter() - t0) / GRAPH_KERNELS * 1e6)
        del gb
    graph = capture().complete()
    graph.upload(s)
    graph.launch(s)
    s.sync()
    rep = []
    for _ in range(GRAPH_ROUNDS):
        s.sync()
        t0 = time.perf_counter()
        for _ in range(GRAPH_REPLAYS):
            graph.launch(s)
        s.sync()
        rep.append((time.perf_counter() - t0) / (GRAPH_REPLAYS * GRAPH_KERNELS) * 1e6)
    return statistics.median(cap), statistics.median(rep)


def bench_cupy():
    try:
        import cupy as cp
    except Exception as e:  # noqa: BLE001
        return f"CuPy not importable: {e}"
    import numpy as np
    ke = cp.RawKernel(SRC, "empty")
    k4 = cp.RawKernel(SRC, "four")
    x = cp.zeros(256, dtype=cp.float32)
    st = cp.cuda.Stream(non_blocking=True)
    with st:
        e = timed(lambda: ke((1,), (32,), ()), st.synchronize)
        f = timed(lambda: k4((1,), (32,), (x, np.int32(1), np.float32(2.0), x)), st.synchronize)
    return e, f, cp.__version__


WRONG = {
    "cuda.core": r'''
import cuda.core as cc
if not hasattr(cc, "Program"):
    import cuda.core.experimental as cc
import cupy as cp, numpy as np
d = cc.Device(); d.set_current(); s = d.create_stream()
arch = "sm_" + "".join(str(v) for v in d.compute_capability)
k = cc.Program(SRC, code_type="c++", options=cc.ProgramOptions(arch=arch)).compile("cubin").get_kernel("four")
x = cp.zeros(4, dtype=cp.float32)
cc.launch(s, cc.LaunchConfig(grid=1, block=32), k, x.data.ptr, np.int32(1))
s.sync(); print("returned without error")
''',
    "CuPy": r'''
import cupy as cp, numpy as np
k = cp.RawKernel(SRC, "four"); x = cp.zeros(4, dtype=cp.float32)
k((1,), (32,), (x, np.int32(1))); cp.cuda.Device().synchronize(); print("returned without error")
''',
}


def wrong_count(name):
    code = "SRC = " + repr(SRC) + "\n" + WRONG[name]
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    if p.returncode < 0:
        return f"killed by signal {-p.returncode} (segfault)" if p.returncode == -11 else f"signal {-p.returncode}"
    if p.returncode == 0:
        return "no error: " + p.stdout.strip()[-80:]
    last = (p.stderr.strip().splitlines() or ["?"])[-1]
    return f"exception: {last[:120]}"


def attempt(fn):
    """fn()'s result, or "failed: TYPE: message" when it raises."""
    try:
        return fn()
    except Exception as e:  # noqa: BLE001
        return f"failed: {type(e).__name__}: {e}"


def main():
    print(f"peers: {PER_ROUND} launches per round, {ROUNDS} rounds, median us per launch")
    for name, fn in (("cuda.core", bench_cuda_core), ("CuPy", bench_cupy)):
        r = attempt(fn)
        if isinstance(r, str):
            print(f"  {name:10s} {r}")
        else:
            print(f"  {name:10s} {r[2]}: empty {r[0]:.3f} us, 4-arg {r[1]:.3f} us")
    r = attempt(bench_cuda_core_graph)
    if isinstance(r, str):
        print(f"  {'cuda.core':10s} graphs: {r}")
    else:
        print(f"  {'cuda.core':10s} graph of {GRAPH_KERNELS} launches (GraphBuilder): capture "
              f"{r[0]:.3f} us/launch, replay {r[1]:.4f} us/kernel (bench_graph has cucore's and "
              f"the raw driver's)")
    r = attempt(bench_cuda_core_memory)
    if isinstance(r, str):
        print(f"  {'cuda.core':10s} memory: {r}")
    else:
        print(f"  {'cuda.core':10s} 64 KiB allocate + close: DeviceMemoryResource {r[0]:.3f} us/pair, "
              f"{r[1]} {r[2]:.3f} us/pair (bench_memory has cucore's and the raw driver's)")
    for name in WRONG:
        try:
            print(f"  {name:10s} wrong argument count (2 of 4): {wrong_count(name)}")
        except Exception as e:  # noqa: BLE001
            print(f"  {name:10s} wrong argument count: could not run ({e})")


if __name__ == "__main__":
    main()
