#!/usr/bin/env bash
# Time to first result, on the project's fake driver and fake NVML: what the floor needs from the
# command, checked on any machine.
# - `cucore run` allocates with plain cuMemAlloc by default (the pool's first use cost 14-16 ms
#   of a one-launch run); --pool opts in, --no-pool still says cuMemAlloc.
# - The context is made on a thread started when the command line is read (beside the
#   compile): the phase "context" runs twice, that thread's and the main thread's retain;
#   CUCORE_RUN_SERIAL=1 makes it once, after the code, as before. A .cubin (nothing to
#   compile) is serial too; CUCORE_RUN_EARLY=1 starts the thread for it anyway.
# - The context has one hardware work queue: CUDA_DEVICE_MAX_CONNECTIONS=1 unless the
#   environment names a number ("max_connections" in --json; null for a value that is not).
# - NVML's load is a phase of its own (load_nvml), run once, on a thread started before cuInit,
#   in a timed run (--repeat 3 here); a run of one launch loads no NVML (test_system_facts.sh).
# - `cucore devices` opens no context by default: the default pool's state is read only with
#   --pools ("default_pool" is null without it, and the text has no pool line). NVML's facts
#   are read on NVML's thread, every GPU by index, beside cuInit (the fake NVML's
#   CUCORE_FAKE_NVML_NO_LOOKUP=1 finds no GPU any other way).
# - A compile cache entry is written without waiting on fsync (its checksum finds one a crash
#   cut short): checked with strace where it and NVRTC are present.
# In the code before these checks, the default was the pool, NVML had no phase and `devices`
# read the pool (a context on every device) unasked: the first checks of each part fail there.
source "$(dirname "$0")/lib.sh"

libdir="$(dirname "$CUCORE")/../lib"
fake="$libdir/libcucore_fake_driver.so"
nvml="$libdir/libcucore_fake_nvml.so"
[ -f "$fake" ] && [ -f "$nvml" ] || { echo "skipped: no fake driver or NVML in $libdir"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export CUCORE_CACHE_DIR="$dir/cache" CUCORE_LIBCUDA="$fake" CUCORE_LIBNVML="$nvml"
printf '.version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p, .param .u32 n)\n{\n  ret;\n}\n' >"$dir/k.ptx"
kargs=(run "$dir/k.ptx" --kernel k --grid 1 --block 32 --arg 'buf:f32[1024]=1' --arg i32:32 --json)

field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }

run timeout 20 "$CUCORE" "${kargs[@]}"
check "run: exit 0 (rc $rc: $err)" [ "$rc" -eq 0 ]
a=$(field 'd["allocator"]' <<<"$out")
check "run: cuMemAlloc by default ($a)" [ "$a" = "cuMemAlloc" ]
run timeout 20 "$CUCORE" "${kargs[@]}" --repeat 3
n=$(field 'd["phases"].get("load_nvml", {}).get("count")' <<<"$out")
check "run: NVML's load is the phase load_nvml, run once ($n)" [ "$n" = "1" ]
ok=$(field 'd["phases"]["load_nvml"]["start_ms"] <= d["phases"]["report"]["start_ms"] if "report" in d["phases"] else d["phases"]["load_nvml"]["start_ms"] <= d["phases"]["launch"]["start_ms"] + d["phases"]["launch"]["ms"] + 1000' <<<"$out")
check "run: NVML began loading before the result was reported ($ok)" [ "$ok" = "True" ]
n=$(field 'd["phases"]["context"]["count"]' <<<"$out")
check "run: the context opened on the early thread and retained by the main one ($n)" [ "$n" = "2" ]
run env CUCORE_RUN_SERIAL=1 timeout 20 "$CUCORE" "${kargs[@]}"
n=$(field 'd["phases"]["context"]["count"]' <<<"$out")
check "run with CUCORE_RUN_SERIAL=1: one context open, after the code (rc $rc, $n)" [ "$rc" -eq 0 -a "$n" = "1" ]
m=$(field 'd["max_connections"]' <<<"$out")
check "run: one hardware work queue by default ($m)" [ "$m" = "1" ]
run env CUDA_DEVICE_MAX_CONNECTIONS=4 timeout 20 "$CUCORE" "${kargs[@]}"
m=$(field 'd["max_connections"]' <<<"$out")
check "run: the user's CUDA_DEVICE_MAX_CONNECTIONS kept (rc $rc, $m)" [ "$rc" -eq 0 -a "$m" = "4" ]
run env CUDA_DEVICE_MAX_CONNECTIONS=lots timeout 20 "$CUCORE" "${kargs[@]}"
m=$(field 'd["max_connections"]' <<<"$out")
check "run: a CUDA_DEVICE_MAX_CONNECTIONS that is no number is kept, said null (rc $rc, $m)" \
  [ "$rc" -eq 0 -a "$m" = "None" ]
run timeout 20 "$CUCORE" "${kargs[@]}" --pool
a=$(field 'd["allocator"]' <<<"$out")
check "run --pool: the stream-ordered pool (rc $rc, $a)" [ "$rc" -eq 0 -a "$a" = "pool" ]
run timeout 20 "$CUCORE" "${kargs[@]}" --pool --no-pool
a=$(field 'd["allocator"]' <<<"$out")
check "run --pool --no-pool: cuMemAlloc (rc $rc, $a)" [ "$rc" -eq 0 -a "$a" = "cuMemAlloc" ]

run timeout 20 "$CUCORE" devices
check "devices: exit 0 (rc $rc: $err)" [ "$rc" -eq 0 ]
check "devices: the device is listed" has "$out" "device 0: cucore fake H100"
check "devices: no default pool line without --pools" bash -c '! grep -q "default pool " <<<"$1"' _ "$out"
check "devices: NVML's facts still shown" has "$out" "clocks now           SM 1755 MHz"
run env CUCORE_FAKE_NVML_NO_LOOKUP=1 timeout 20 "$CUCORE" devices
check "devices: NVML's facts read by index on NVML's thread (found by UUID after)" \
  has "$out" "clocks now           SM 1755 MHz"
run timeout 20 "$CUCORE" devices --json
p=$(field '("default_pool" in d["devices"][0], d["devices"][0].get("default_pool"), d["devices"][0]["system"]["available"])' <<<"$out")
check "devices --json: default_pool null, NVML available (rc $rc, $p)" [ "$rc" -eq 0 -a "$p" = "(True, None, True)" ]
run env CUCORE_FAKE_NO_POOLS=1 timeout 20 "$CUCORE" devices --json --pools
# (The fake driver without its pool functions: the pool is asked for and said unreadable.)
p=$(field 'sorted(d["devices"][0]["default_pool"])[:2]' <<<"$out")
check "devices --json --pools: the default pool asked for (rc $rc, $p)" \
  [ "$rc" -eq 0 -a "$p" = "['error', 'readable']" ]
run timeout 20 "$CUCORE" devices --pools
check "devices --pools: the default pool line" has "$out" "default pool         "
run timeout 20 "$CUCORE" devices --json --pools
p=$(field 'd["devices"][0]["default_pool"]["readable"]' <<<"$out")
check "devices --json --pools: the fake's default pool read (rc $rc, $p)" [ "$rc" -eq 0 -a "$p" = "True" ]

printf 'extern "C" __global__ void k(float *x, int n) { if (threadIdx.x < n) x[threadIdx.x] = 1; }\n' >"$dir/k.cu"
if command -v strace >/dev/null && timeout 60 "$CUCORE" compile "$dir/k.cu" --arch sm_90 -o "$dir/k.cubin" >/dev/null 2>&1; then
  rm -rf "$CUCORE_CACHE_DIR"
  # (LeakSanitizer cannot run under ptrace: off for this one run in sanitizer builds.)
  run timeout 60 env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -y -e trace=fsync,fdatasync -o "$dir/strace.txt" "$CUCORE" "${kargs[@]/k.ptx/k.cu}"
  check ".cu run under strace: exit 0 (rc $rc: $err)" [ "$rc" -eq 0 ]
  entries=$(find "$CUCORE_CACHE_DIR" -mindepth 2 -type f | wc -l)
  check ".cu run: the entry stored ($entries)" [ "$entries" -ge 1 ]
  check ".cu run: no fsync of a cache file" bash -c '! grep -E "sync\(.*(cache|\.tmp-)" "$1"' _ "$dir/strace.txt"
  run timeout 20 "$CUCORE" "${kargs[@]/k.ptx/k.cubin}"
  n=$(field 'd["phases"]["context"]["count"]' <<<"$out")
  check ".cubin run: serial, one context open (rc $rc, $n)" [ "$rc" -eq 0 -a "$n" = "1" ]
  run env CUCORE_RUN_EARLY=1 timeout 20 "$CUCORE" "${kargs[@]/k.ptx/k.cubin}"
  n=$(field 'd["phases"]["context"]["count"]' <<<"$out")
  check ".cubin run with CUCORE_RUN_EARLY=1: the early thread's and the retain (rc $rc, $n)" \
    [ "$rc" -eq 0 -a "$n" = "2" ]
else
  echo "note: no strace or no NVRTC here; the cache store's fsync is not checked"
fi
finish
