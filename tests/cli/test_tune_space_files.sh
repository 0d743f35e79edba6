#!/usr/bin/env bash
# Kernel Tuner users' space files just work with `cucore tune --space`: kernel_name when
# --kernel is absent, a typo'd key refused naming the nearest, compiler_options in every
# compile, Kernel Tuner's `defines` (exactly those, parameters substituted), cmem_args as
# module variables checked against the code, JSON booleans as values, grid_div_x [] as no
# division, keys that change nothing noted. Dry runs with --arch: NVRTC, no GPU.
source "$(dirname "$0")/lib.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export CUCORE_CACHE_DIR="$dir/cache"
dry() { run timeout 120 "$CUCORE" tune "$dir/k.cu" --arch sm_90 --jobs 2 --dry-run "$@"; }

cat >"$dir/k.cu" <<'CU'
#ifndef EXTRA
#error "compiler_options did not reach the compile"
#endif
static_assert(EXTRA == 5, "EXTRA");
extern "C" __global__ void vadd(float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = USE ? EXTRA : 0;
}
CU
cat >"$dir/s.json" <<'JSON'
{"kernel_name": "vadd", "problem_size": 1000,
 "tune_params": {"block_size_x": [64, 128], "USE": [true, false]},
 "restrictions": ["USE == True or block_size_x == 64"],
 "compiler_options": ["-DEXTRA=5"],
 "arguments": "Python objects", "verbose": true}
JSON
dry --space "$dir/s.json" --json
check "kernel_name from the file, compiler_options in every compile: exit 0" [ "$rc" -eq 0 ]
check "booleans are values; the restriction on them; all compiled" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["kernel"] == "vadd", d["kernel"]
c = d["counts"]
assert (c["raw"], c["after_restrictions"], c["compiles_ok"], c["compile_failed"]) == (4, 3, 2, 0), c
assert sorted((x["params"]["block_size_x"], x["params"]["USE"]) for x in d["configs"]) == \
    [(64, False), (64, True), (128, True)]
' <<<"$out"
check "keys that change nothing are noted, once each" \
  bash -c 'grep -q "note: .*.arguments. is not used" <<<"$1" && [ "$(grep -c ".verbose. is not used" <<<"$1")" -eq 1 ]' \
  _ "$err"

printf '{"kernel_name": "vadd", "tune_param": {"USE": [1]}}' >"$dir/typo.json"
dry --space "$dir/typo.json" -DEXTRA=5
check "a typo'd key: refused, naming the nearest known key" \
  bash -c '[ "$1" -ne 0 ] && grep -q "unknown key .tune_param.*did you mean .tune_params." <<<"$2"' \
  _ "$rc" "$err"

# Kernel Tuner's defines: exactly those are defined, parameter names replaced by their values.
cat >"$dir/d.cu" <<'CU'
#ifdef block_size_x
#error "with defines, the parameters themselves are not defined"
#endif
static_assert(TWICE == 2 * BS, "defines rendered per configuration");
extern "C" __global__ void k(float *y) { y[threadIdx.x] = TWICE + BS; }
CU
cat >"$dir/d.json" <<'JSON'
{"kernel_name": "k", "tune_params": {"block_size_x": [32, 64], "UNUSED": [1, 2]},
 "defines": {"BS": "block_size_x", "TWICE": "block_size_x * 2"}, "problem_size": 64}
JSON
run timeout 120 "$CUCORE" tune "$dir/d.cu" --space "$dir/d.json" --arch sm_90 --dry-run --json
check "defines: exit 0, every configuration compiled with its own rendered defines" python3 -c '
import json, sys
c = json.load(sys.stdin)["counts"]
assert c["compile_failed"] == 0 and c["compiles_ok"] == 2 and c["compiles"] == 2, c
' <<<"$out"

# cmem_args: a __constant__ table, its size checked against the code before any compile of the tune.
cat >"$dir/c.cu" <<'CU'
__constant__ float coeffs[4];
extern "C" __global__ void k(float *y) { y[threadIdx.x] = coeffs[threadIdx.x % 4]; }
CU
printf '{"kernel_name": "k", "tune_params": {"block_size_x": [32]}, "problem_size": 32,
 "cmem_args": {"coeffs": {"type": "f32", "values": [1, 2, 3]}}}' >"$dir/c.json"
run timeout 120 "$CUCORE" tune "$dir/c.cu" --space "$dir/c.json" --arch sm_90 --dry-run \
  --arg 'out:f32[32]'
check "cmem_args of the wrong size: refused before the tune, naming both sizes" \
  bash -c '[ "$1" -ne 0 ] && grep -q "the value is 12 bytes; .coeffs. (constant) is 16 bytes" <<<"$2"' \
  _ "$rc" "$err"
printf '{"kernel_name": "k", "tune_params": {"block_size_x": [32]}, "problem_size": 32,
 "cmem_args": {"coeffs": {"type": "f32", "values": [1, 2, 3, 4]}}}' >"$dir/c.json"
run timeout 120 "$CUCORE" tune "$dir/c.cu" --space "$dir/c.json" --arch sm_90 --dry-run \
  --arg 'out:f32[32]'
check "cmem_args of the right size: accepted" [ "$rc" -eq 0 ]

# grid_div_x: [] is Kernel Tuner's "no division": the grid is the problem size.
printf '{"kernel_name": "k", "tune_params": {"block_size_x": [32]}, "problem_size": 100,
 "grid_div_x": []}' >"$dir/g.json"
run timeout 120 "$CUCORE" tune "$dir/c.cu" --space "$dir/g.json" --dry-run --json
check "grid_div_x []: grid = problem_size" python3 -c '
import json, sys
assert json.load(sys.stdin)["configs"][0]["grid"] == [100, 1, 1]' <<<"$out"
finish
