#!/usr/bin/env bash
# Probes of the GPU machine's slow first compile bursts (docs/BENCHMARKS.md, "What the slow
# first burst is"). Run on a fresh device machine: the effect is on first runs. Logs and a
# summary under $OUT (default ./probe-out).
#   usage: scripts/gpu-machine-probe.sh cpu|kinds|kernels|loop|ptx|minimal1|minimal2
#   cpu      machine facts, the CPU and memory alone (bench_raw_cpu_spin) in 1/8/15 processes, raw
#            NVRTC bursts with their /proc/vmstat deltas
#   kinds    which runs are slow: raw NVRTC forked and exec'd, with cucore's include paths and
#            glibc told to keep memory; cucore's dry run (cache on tmpfs, then disk, then a
#            copy of its binary); raw again after
#   kernels  raw NVRTC on three kernels new to the machine, each twice; forked after one
#            compile in the parent (zygote) and in threads
#   loop     Kernel Tuner's loop twice (fresh driver JIT cache each), then two first-time tunes
#   ptx      raw NVRTC to PTX (no ptxas) on a kernel new to the machine, then to cubin on another
#   minimal1, minimal2
#            cucore dry runs of two kernels new to the machine, one with --nvrtc-minimal (the
#            bench's kernel in minimal1, the other in minimal2), then both warm both ways
set -u
mode=${1:-cpu}
OUT=${OUT:-$PWD/probe-out}; mkdir -p "$OUT"; s="$OUT/probe.txt"
note() { echo "$*" | tee -a "$s"; }
# One timed command: its JSON or summary line, wall/user/sys seconds and page faults.
[ -x /usr/bin/time ] || { echo "no /usr/bin/time on this machine" >&2; exit 1; }
t() { note "$(date +%T) ${NVRTC_SCALING_KERNEL:+kernel $NVRTC_SCALING_KERNEL }$(/usr/bin/time -f '%e s %U user %S sys %R minflt %F majflt' "$@" 2>&1 |
      grep -E 'wall_s|^compiles:|user|^time:' | tr '\n' ' ')"; }
# t, with the /proc/vmstat counters that moved by more than 1000
tv() { cp /proc/vmstat "$OUT/vm0"; t "$@"
  note "  vmstat: $(awk 'NR==FNR {a[$1]=$2; next} ($2-a[$1] > 1000 || a[$1]-$2 > 1000) {printf "%s %+d ", $1, $2-a[$1]}' "$OUT/vm0" /proc/vmstat)"; }
extra=()
if ! [ -f /usr/include/cmocka.h ] && ls .deps/*.deb >/dev/null 2>&1; then
  mkdir -p /tmp/cucore-deps && for f in .deps/*.deb; do dpkg -x "$f" /tmp/cucore-deps; done
  extra+=(-DCUCORE_DEPS_PREFIX=/tmp/cucore-deps)
fi
{ cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo "${extra[@]}" &&
  cmake --build build-gpu -j"$(nproc)" --target cucore_cli bench_raw_cpu_spin bench_raw_nvrtc_scaling; } >"$OUT/build.log" 2>&1 ||
  { note "BUILD FAILED"; tail -20 "$OUT/build.log"; exit 1; }
b=build-gpu/bin; raw="$b/bench_raw_nvrtc_scaling"; arch=90; cu=${CUDA_HOME:-/usr/local/cuda}
d=$(mktemp -d); python3 -c "import sys; sys.path.insert(0, 'bench'); import tune_vs_kernel_tuner as t; open('$d/axpy.cu','w').write(t.SRC)"
N=$((1 << 22)); space=(--param block_size_x=32..1024:32 --param UNROLL=1..16)
# A 15-job dry run of the bench's space: EXE CACHE [options]; src= and kern= name another
# file (in $d) and kernel.
dry() { local exe=$1 cache=$2 k=${kern:-axpy_u}; shift 2; rm -rf "$cache"
  note "cucore dry run of $k ($exe, cache $cache) $*"
  CUCORE_CACHE_DIR=$cache t "$exe" tune "$d/${src:-axpy.cu}" "${space[@]}" --kernel "$k" \
    --dry-run --jobs 15 --arch "sm_$arch" "$@"; }
tune() { rm -rf "$d/c" "$d/db.jsonl"; note "cucore tune, first time (fresh cache and store)"
  CUCORE_CACHE_DIR=$d/c t $b/cucore tune "$d/axpy.cu" --kernel axpy_u "${space[@]}" --grid "ceil($N / (block_size_x * UNROLL))" \
    --arg "buf:f32[$N]=random" --arg "inout:f32[$N]=1" --arg "i32:$N" --jobs 15 --db "$d/db.jsonl"; }
loop() { rm -rf "$d/jit"; note "$(date +%T) Kernel Tuner's loop: $(CUDA_CACHE_PATH=$d/jit python3 bench/tune_vs_kernel_tuner.py --loop-only |
  python3 -c "import json, sys; d = json.load(sys.stdin); print(round(d['configs_per_s'], 1), 'configs/s')")"; }
case $mode in
cpu)
  { findmnt -T "$cu/lib64/"; findmnt -T /tmp; lscpu; cat /proc/cmdline; grep -E "MemTotal|MemFree|Huge" /proc/meminfo
    cat /sys/kernel/mm/transparent_hugepage/enabled; grep -E "^Node|managed" /proc/zoneinfo; } >"$OUT/machine.txt" 2>&1
  for r in before after; do
    note "CPU alone, $r the first burst:"
    for n in 1 8 15; do t $b/bench_raw_cpu_spin $n 300000000; done
    for n in 1 8; do t $b/bench_raw_cpu_spin $n 20000000 256; done
    [ $r = before ] && { tv $raw procs 1 48 $arch cubin; tv $raw procs 15 512 $arch cubin; }
  done
  tv $raw procs 15 512 $arch cubin; tv $raw procs 1 48 $arch cubin
  note "glibc's heap on transparent huge pages:"; GLIBC_TUNABLES=glibc.malloc.hugetlb=1 tv $raw procs 15 512 $arch cubin ;;
kinds)
  t $raw procs 15 512 $arch cubin; t $raw procs 15 512 $arch cubin
  t $raw exec 15 512 $arch cubin; t $raw exec 15 512 $arch cubin
  note "raw with cucore's include paths:"; NVRTC_SCALING_OPTS="-I$cu/include -I$cu/include/cccl" t $raw exec 15 512 $arch cubin
  note "raw with glibc told to keep freed memory (as cucore's compile processes):"
  GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824 t $raw exec 15 512 $arch cubin
  dry $b/cucore /dev/shm/cucore-probe; dry $b/cucore /dev/shm/cucore-probe; dry $b/cucore "$d/c"
  cp $b/cucore "$d/cucore-copy"; dry "$d/cucore-copy" "$d/c"
  t $raw procs 15 512 $arch cubin ;;
kernels)
  for k in 0 1 2; do export NVRTC_SCALING_KERNEL=$k; tv $raw procs 15 512 $arch cubin; tv $raw procs 15 512 $arch cubin; done
  export NVRTC_SCALING_KERNEL=1 NVRTC_SCALING_SALT=zygote; t $raw zygote 15 512 $arch cubin; t $raw zygote 15 512 $arch cubin
  export NVRTC_SCALING_KERNEL=2 NVRTC_SCALING_SALT=threads; t $raw threads 15 512 $arch cubin; t $raw threads 15 512 $arch cubin ;;
loop) loop; loop; tune; tune ;;
minimal1|minimal2)
  cat >"$d/scale.cu" <<'CU'
extern "C" __global__ void scale_v(float *y, const float *x, float a, int n) {
  int i = (blockIdx.x * block_size_x + threadIdx.x) * UNROLL;
  #pragma unroll
  for (int v = 0; v < UNROLL; v++)
    if (i + v < n) y[i + v] = a * x[i + v] - y[i + v] * 0.5f;
}
CU
  dk() { local f=$1 k=$2; shift 2; src=$f kern=$k dry $b/cucore "$d/c" "$@"; }
  if [ $mode = minimal1 ]; then dk axpy.cu axpy_u --nvrtc-minimal; dk scale.cu scale_v
  else dk axpy.cu axpy_u; dk scale.cu scale_v --nvrtc-minimal; fi
  for i in 1 2; do dk axpy.cu axpy_u --nvrtc-minimal; dk axpy.cu axpy_u; dk scale.cu scale_v --nvrtc-minimal; dk scale.cu scale_v; done ;;
ptx)
  t $raw procs 15 512 $arch ptx; t $raw procs 15 512 $arch ptx
  export NVRTC_SCALING_KERNEL=1; t $raw procs 15 512 $arch cubin; t $raw procs 15 512 $arch cubin
  t $raw procs 15 512 $arch ptx
  export NVRTC_SCALING_KERNEL=2; t $raw procs 15 512 $arch ptx; t $raw procs 15 512 $arch ptx ;;
*) echo "unknown mode $mode" >&2; exit 2 ;;
esac
rm -rf "$d" /dev/shm/cucore-probe
