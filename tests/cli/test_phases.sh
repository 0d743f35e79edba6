#!/usr/bin/env bash
# `run --timings` and the "phases" object of `run --json`, on the project's
# fake driver: the phases are there, in the order they began, with times that only go forward;
# a PTX or cubin input loads no compiler library (NVRTC, nvJitLink, libNVVM); a .cu input
# loads NVRTC when it compiles and not when the compile cache has the entry.
source "$(dirname "$0")/lib.sh"

fake="$(dirname "$CUCORE")/../lib/libcucore_fake_driver.so"
[ -f "$fake" ] || { echo "skipped: no fake driver at $fake"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export CUCORE_CACHE_DIR="$dir/cache"
printf '.version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p, .param .u32 n)\n{\n  ret;\n}\n' >"$dir/k.ptx"
kargs=(--kernel k --grid 1 --block 32 --arg 'buf:f32[1024]=1' --arg i32:32)

# check_phases FILE MUST-HAVE... MUST-NOT-HAVE after a `--`: the phases object of a JSON report.
check_phases() {
  python3 - "$@" <<'PY'
import json, sys
path, rest = sys.argv[1], sys.argv[2:]
cut = rest.index("--")
need, absent = rest[:cut], rest[cut + 1:]
phases = json.load(open(path))["phases"]
names = list(phases)
missing = [n for n in need if n not in phases]
extra = [n for n in absent if n in phases]
starts = [phases[n]["start_ms"] for n in names]
bad = [n for n in names if phases[n]["ms"] < 0 or phases[n]["start_ms"] < 0 or phases[n]["count"] < 1]
ordered = all(a <= b for a, b in zip(starts, starts[1:]))
if phases.get("process_start", {}).get("start_ms", 0) != 0: bad.append("process_start")
if missing or extra or bad or not ordered:
    print("phases", names, "missing", missing, "unexpected", extra, "bad", bad, "ordered", ordered)
    sys.exit(1)
PY
}

base=(process_start load_libcuda cuinit context module_load alloc copy_in launch copy_out teardown)
compilers=(load_nvrtc load_nvjitlink load_nvvm)

run env CUCORE_LIBCUDA="$fake" timeout 20 "$CUCORE" run "$dir/k.ptx" "${kargs[@]}" --json
printf '%s' "$out" >"$dir/ptx.json"
check "PTX run --json: exit 0 (rc $rc: $err)" [ "$rc" -eq 0 ]
check "PTX run: every phase present and in order, no compiler library loaded" \
  check_phases "$dir/ptx.json" "${base[@]}" -- "${compilers[@]}" compile cache_lookup

run env CUCORE_LIBCUDA="$fake" timeout 20 "$CUCORE" run "$dir/k.ptx" "${kargs[@]}" --timings
check "--timings: exit 0 (rc $rc: $err)" [ "$rc" -eq 0 ]
check "--timings: the table is on stderr" has "$err" "phase timings"
check "--timings: the launch is a row" grep -qE '^  launch +[0-9]' <<<"$err"
check "--timings: the report and teardown are rows" \
  bash -c 'grep -qE "^  report +[0-9]" <<<"$1" && grep -qE "^  teardown +[0-9]" <<<"$1"' _ "$err"
check "--timings: NVRTC was not needed" grep -qE 'not needed:.* load_nvrtc' <<<"$err"
check "--timings: stdout keeps only the report" bash -c '! grep -q "phase timings" <<<"$1"' _ "$out"

printf 'extern "C" __global__ void k(float *x, int n) { if (threadIdx.x < n) x[threadIdx.x] = 1; }\n' >"$dir/k.cu"
if timeout 60 "$CUCORE" compile "$dir/k.cu" --arch sm_90 -o "$dir/k.cubin" >/dev/null 2>&1; then
  run env CUCORE_LIBCUDA="$fake" timeout 20 "$CUCORE" run "$dir/k.cubin" "${kargs[@]}" --json
  printf '%s' "$out" >"$dir/cubin.json"
  check "cubin run --json: exit 0 (rc $rc: $err)" [ "$rc" -eq 0 ]
  check "cubin run: no compiler library loaded, nothing compiled" \
    check_phases "$dir/cubin.json" "${base[@]}" -- "${compilers[@]}" compile
  rm -rf "$CUCORE_CACHE_DIR"
  run env CUCORE_LIBCUDA="$fake" timeout 60 "$CUCORE" run "$dir/k.cu" "${kargs[@]}" --json
  printf '%s' "$out" >"$dir/cold.json"
  check ".cu, empty cache: exit 0 (rc $rc: $err)" [ "$rc" -eq 0 ]
  check ".cu, empty cache: looked up, NVRTC loaded, compiled, stored" \
    check_phases "$dir/cold.json" "${base[@]}" cache_lookup load_nvrtc compile cache_store -- \
    load_nvjitlink load_nvvm
  run env CUCORE_LIBCUDA="$fake" timeout 60 "$CUCORE" run "$dir/k.cu" "${kargs[@]}" --json
  printf '%s' "$out" >"$dir/warm.json"
  check ".cu, cached: exit 0 (rc $rc: $err)" [ "$rc" -eq 0 ]
  check ".cu, cached: a cache hit loads no compiler library" \
    check_phases "$dir/warm.json" "${base[@]}" cache_lookup -- "${compilers[@]}" compile cache_store
fi

# --timings on every verb that compiles: the table on stderr, the compile in it.
printf 'extern "C" __global__ void k(float *y) { y[threadIdx.x] = 1; }\n' >"$dir/t.cu"
rm -rf "$CUCORE_CACHE_DIR"
run timeout 60 "$CUCORE" compile "$dir/t.cu" --arch sm_90 -o "$dir/t.cubin" --timings
check "compile --timings: the table with the compile" \
  bash -c '[ "$1" -eq 0 ] && grep -q "^phase timings" <<<"$2" && grep -q "^  compile " <<<"$2"' _ "$rc" "$err"
run timeout 60 "$CUCORE" inspect "$dir/t.cu" --arch sm_90 --timings
check "inspect --timings: the table, the cached compile looked up" \
  bash -c '[ "$1" -eq 0 ] && grep -q "^  cache_lookup " <<<"$2"' _ "$rc" "$err"
run timeout 60 env CUCORE_LIBCUDA=/nonexistent "$CUCORE" occupancy "$dir/t.cu" --kernel k \
  --arch sm_90 --block 128 --timings
check "occupancy --timings: the table" \
  bash -c '[ "$1" -eq 0 ] && grep -q "^phase timings" <<<"$2"' _ "$rc" "$err"
finish
