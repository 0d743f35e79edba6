#!/usr/bin/env bash
# cucore run on a GPU: outputs checked against what the kernel computes (label gpu).
source "$(dirname "$0")/lib.sh"
"$CUCORE" devices >/dev/null 2>&1 || { echo "skipped: no GPU"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/k.cu" <<'CU'
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }
template <typename T> __global__ void fill(T *x, T v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = v; }
extern "C" __global__ void halves(const __half *in, float *out) { out[threadIdx.x] = __half2float(in[threadIdx.x]) * 2; }
CU
sed -i '1i #include <cuda_fp16.h>' "$dir/k.cu"
# y = 2 * iota + 0 over 1000 elements: sum = 2 * 999 * 1000 / 2 = 999000.
run "$CUCORE" run "$dir/k.cu" --kernel saxpy --grid 4 --block 256 --arg f32:2 --arg buf:f32[1000]=iota --arg out:f32[1000] --arg i32:1000 --repeat 5 --json
check "saxpy ran" [ "$rc" -eq 0 ]
check "saxpy: sum of 2*i over 0..999" python3 -c '
import json,sys
d=json.load(sys.stdin)
o=d["outputs"][0]
n=1000; a=2.0
# y starts at 0; the outputs see exactly one launch (the --repeat launches come after it)
assert abs(o["sum"] - a*(n-1)*n/2) < 1e-3*o["sum"], o
assert d["ms_per_launch"] > 0
' <<<"$out"
run "$CUCORE" run "$dir/k.cu" --kernel 'fill<double>' --grid 1 --block 64 --arg out:f64[64] --arg f64:1.5 --arg i32:64
check "template by name expression ran" [ "$rc" -eq 0 ] && has "$out" "sum 96"
run "$CUCORE" run "$dir/k.cu" --kernel halves --grid 1 --block 32 --arg buf:f16[32]=1.5 --arg out:f32[32]
check "half buffers convert" [ "$rc" -eq 0 ] && has "$out" "sum 96"
run "$CUCORE" run "$dir/k.cu" --kernel saxpy --grid 1 --block 2048 --arg f32:2 --arg buf:f32[8]=1 --arg out:f32[8] --arg i32:8
check "block too large: exit 1 with the limit" [ "$rc" -eq 1 ] && has "$err" "2048"
finish
