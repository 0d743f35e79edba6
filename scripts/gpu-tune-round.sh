#!/usr/bin/env bash
# A GPU round for `cucore tune` alone, shorter than scripts/gpu-check.sh: the build,
# the gpu-labelled tune tests, bench/tune_vs_kernel_tuner.py, and whole tunes at several
# compile job counts with their time split. Logs under $OUT (default: ./gpu-tune-out).
#   usage: scripts/gpu-tune-round.sh [REPEATS] [JOBS,JOBS,...]   (defaults: 10, dryshm,dry,dryshm,dry,raw,dry)
set -u
OUT=${OUT:-$PWD/gpu-tune-out}
mkdir -p "$OUT"
repeats=${1:-10}
sweep=${2:-dryshm,dry,dryshm,dry,raw,dry}
summary="$OUT/summary.txt"
note() { echo "$*" | tee -a "$summary"; }
cmake_extra=()
if ! [ -f /usr/include/cmocka.h ] && ls .deps/*.deb >/dev/null 2>&1; then
  rm -rf /tmp/cucore-deps && mkdir -p /tmp/cucore-deps
  for f in .deps/*.deb; do dpkg -x "$f" /tmp/cucore-deps; done
  cmake_extra+=(-DCUCORE_DEPS_PREFIX=/tmp/cucore-deps)
fi
(vmstat -t 1 >"$OUT/vmstat.txt" 2>&1 &) # CPU steal and free memory beside the timings
note "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
if ! { cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo "${cmake_extra[@]}" &&
       cmake --build build-gpu -j"$(nproc)"; } >"$OUT/build.log" 2>&1; then
  note "BUILD FAILED"; tail -30 "$OUT/build.log" | tee -a "$summary"; exit 1
fi
(cd build-gpu && ctest -L gpu -R tune --output-on-failure --timeout 600) >"$OUT/ctest.log" 2>&1
grep -E "tests passed|tests failed|\*\*\*Failed" "$OUT/ctest.log" | tee -a "$summary"
if [ "$repeats" -gt 0 ]; then # 0: the sweep alone
build-gpu/bin/bench_tune_timing 50 2>&1 | tee -a "$summary"
python3 bench/tune_vs_kernel_tuner.py build-gpu/bin/cucore --repeats "$repeats" \
  >"$OUT/tune_bench.json" 2>"$OUT/tune_bench.err"
note "tune bench: exit $?"
python3 - "$OUT/tune_bench.json" <<'PY' | tee -a "$summary"
import json, sys
d = json.load(open(sys.argv[1]))
c, k = d["cucore"], d["kernel_tuner_loop"]
print("machine warm-up (raw NVRTC, two bursts):", json.dumps(d.get("machine_warm_up")))
print(f"cucore {c['configs_per_s']:.1f}/s ({c['wall_s']:.2f} s), loop {k['configs_per_s']:.1f}/s,"
      f" speedup {d['speedup']:.2f}x, busy {c.get('gpu_busy_fraction')}, cold {c.get('cold')},"
      f" samples while compiles ran {c.get('samples_while_compiles_ran')}")
print("time_s", json.dumps(c["time_s"]))
c2 = d["cucore_second"]
print(f"second tune {c2['configs_per_s']:.1f}/s ({c2['wall_s']:.2f} s), speedup {d['speedup_second']:.2f}x;"
      f" end to end (the loop's whole process {k['configs_per_s_process']:.1f}/s):"
      f" {d['speedup_end_to_end']:.2f}x and {d['speedup_second_end_to_end']:.2f}x")
k2 = d.get("kernel_tuner_loop_second")
if k2:
    print(f"the loop's second run {k2['configs_per_s']:.1f}/s ({k2['configs_per_s_process']:.1f}/s whole"
          f" process); second runs against each other: {d['speedup_second_runs']:.2f}x"
          f" ({d['speedup_second_runs_end_to_end']:.2f}x)")
print("second time_s", json.dumps(c2["time_s"]))
print("best", c["best"], c["best_ms"], "ties", c["ties"], "loop best", k["best"],
      "kt/cucore", d.get("kt_best_vs_cucore_best"))
print("hot_l2", json.dumps(d.get("hot_l2")))
print("compile_wall_ms", d["compile_wall_ms"], "per job", d.get("compile_speedup_per_job"),
      "runs", d.get("compile_wall_ms_runs"))
print("raw NVRTC (exec'd processes, the machine's ceiling): compile_wall_ms",
      d.get("raw_nvrtc_compile_wall_ms"), "per job", d.get("raw_nvrtc_compile_speedup_per_job"),
      "runs", d.get("raw_nvrtc_compile_wall_ms_runs"))
print("repeats", json.dumps(d["repeats"]), "samples", c.get("samples_per_config"))
PY
fi
# Whole tunes at other job counts: where the GPU thread's time goes.
N=$((1 << 22)); d=$(mktemp -d)
python3 -c "import sys; sys.path.insert(0, 'bench'); import tune_vs_kernel_tuner as t; open('$d/axpy.cu','w').write(t.SRC)"
# A job count ending in m runs with glibc's malloc told to keep freed memory (is a compile
# process slowed by fresh pages from the VM?).
n=0
for jm in ${sweep//,/ }; do
  case $jm in
    sleep*) sleep "${jm#sleep}"; note "slept ${jm#sleep} s"; continue ;;
    spin) # every CPU busy for 2 s first (are the host's cores slow to wake?)
      for i in $(seq "$(nproc)"); do timeout 2 sh -c 'while :; do :; done' & done; wait
      note "spun every CPU for 2 s"; continue ;;
    raw) # NVRTC alone (no cucore): 15 processes, 512 programs
      note "$(date +%T) raw NVRTC: $(build-gpu/bin/bench_raw_nvrtc_scaling procs 15 512 90 cubin)"
      continue ;;
    cuhits) # three cucore tunes whose compiles all hit the cache (as the bench's repeats)
      for i in 1 2 3; do CUCORE_CACHE_DIR="$d/hits" build-gpu/bin/cucore tune "$d/axpy.cu" \
        --kernel axpy_u --param block_size_x=32..1024:32 --param UNROLL=1..16 --dry-run \
        >/dev/null 2>&1; done
      note "$(date +%T) three dry runs, all but the first from the cache"; continue ;;
    touch*) # N GiB of host memory written and freed (is the first burst slow on fresh pages?)
      t0=$(date +%s.%N); python3 -c "import numpy as np; a = np.ones(${jm#touch} << 27); a[::512] += 1"
      note "$(date +%T) touched ${jm#touch} GiB in $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s; $(grep MemTotal /proc/meminfo)"
      continue ;;
    py) python3 -c "import cupy, cuda.core; cupy.ones(1 << 28).sum()"; note "ran cupy"; continue ;;
    dry|dryshm) cdir="$d/dry"; [ "$jm" = dryshm ] && cdir=/dev/shm/cucore-dry
      CUCORE_CACHE_DIR="$cdir" build-gpu/bin/cucore tune "$d/axpy.cu" --kernel axpy_u \
        --param block_size_x=32..1024:32 --param UNROLL=1..16 --dry-run >"$OUT/dry.txt" 2>&1
      rm -rf "$cdir"
      note "$(date +%T) $jm: $(grep '^compiles:' "$OUT/dry.txt")"; continue ;;
  esac
  j=${jm%m}; tun=
  [ "$jm" != "$j" ] && tun=glibc.malloc.trim_threshold=4294967295:glibc.malloc.mmap_threshold=33554432
  t0=$(date +%s.%N)
  GLIBC_TUNABLES=$tun CUCORE_CACHE_DIR="$d/c$j" build-gpu/bin/cucore tune "$d/axpy.cu" --kernel axpy_u \
    --param block_size_x=32..1024:32 --param UNROLL=1..16 \
    --grid "ceil($N / (block_size_x * UNROLL))" --arg "buf:f32[$N]=random" \
    --arg "inout:f32[$N]=1" --arg "i32:$N" --jobs "$j" --db "$d/db$j.jsonl" --timings \
    >"$OUT/tune_j$j.txt" 2>&1
  n=$((n + 1)); cp "$OUT/tune_j$j.txt" "$OUT/tune_run$n.txt"
  t1=$(date +%s.%N)
  rm -rf "$d/c$j" "$d/db$j.jsonl"
  note "$(date +%T) jobs $jm: $(python3 -c "print(round($t1 - $t0, 2))") s; $(grep -E '^time:|GPU thread busy' "$OUT/tune_j$j.txt" | tr '\n' ' ')"
  python3 -c "import re, statistics as s; v = [int(x) for x in re.findall(r'cc (\d+) ms', open('$OUT/tune_j$j.txt').read())]; print('  compile ms per configuration: median', s.median(v) if v else None)" | tee -a "$summary"
done
grep -A30 "phase timings" "$OUT/tune_j15.txt" | tee -a "$summary"
for j in 8 15; do
  CUCORE_CACHE_DIR="$d/dry$j" build-gpu/bin/cucore tune "$d/axpy.cu" --kernel axpy_u \
    --param block_size_x=32..1024:32 --param UNROLL=1..16 --dry-run --jobs "$j" \
    | grep -E "^compiles:" | sed "s/^/dry run: /" | tee -a "$summary"
done
rm -rf "$d"
pkill vmstat
