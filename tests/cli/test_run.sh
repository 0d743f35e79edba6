#!/usr/bin/env bash
# cucore run without a GPU: argument specs parse, and are checked against the kernel before a
# GPU is needed; a right list says so and that nothing was launched.
source "$(dirname "$0")/lib.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/k.cu" <<'CU'
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }
template <typename T> __global__ void fill(T *x, T v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = v; }
CU
"$CUCORE" compile "$dir/k.cu" --arch sm_90 -o "$dir/k.cubin" >/dev/null 2>&1
if "$CUCORE" devices >/dev/null 2>&1; then gpu=1; else gpu=0; fi
common=(--grid 4 --block 256)

run "$CUCORE" run "$dir/k.cubin" --kernel saxpy "${common[@]}" --arg f64:2.5 --arg buf:f32[1024]=random --arg out:f32[1024] --arg i32:1024
check "double for float: exit 1" [ "$rc" -eq 1 ]
check "double for float: named" has "$err" "argument 0 of \`saxpy\` is 4 bytes"
run "$CUCORE" run "$dir/k.cubin" --kernel saxpy "${common[@]}" --arg f32:2.5 --arg buf:f32[1024]=random --arg out:f32[1024]
check "three of four: exit 1" [ "$rc" -eq 1 ]
check "three of four: the count" has "$err" "takes 4 parameters, 3 were given"
run "$CUCORE" run "$dir/k.cubin" --kernel saxpy "${common[@]}" --arg f32:2.5 --arg buf:f32[8]=1 --arg out:f32[8] --arg i32:8 --arg i32:9
check "five of four: exit 1, named" [ "$rc" -eq 1 ] && has "$err" "5th"
run "$CUCORE" run "$dir/k.cu" --arch sm_90 --kernel 'fill<double>' "${common[@]}" --arg out:f64[16] --arg f32:1 --arg i32:16
check "name expression kernel, float for T=double" [ "$rc" -eq 1 ] && has "$err" "a float given for a double?"
for bad in "f32:abc" "i8:300" "u32:-1" "buf:f32[0]=1" "buf:f32[8]" "buf:q32[8]=1" "out:f32[8]=1" "x" "i32:"; do
  run "$CUCORE" run "$dir/k.cubin" --kernel saxpy "${common[@]}" --arg "$bad"
  check "spec '$bad' does not parse: exit 2" [ "$rc" -eq 2 ]
  check "spec '$bad': quoted in the message" has "$err" "$bad"
done
run "$CUCORE" run "$dir/k.cubin" --kernel saxpy --block 256 --arg f32:1
check "no --grid: exit 2" [ "$rc" -eq 2 ]
run "$CUCORE" run "$dir/k.cubin" --kernel nosuch "${common[@]}" --arg f32:1
check "unknown kernel: exit 1, lists saxpy" [ "$rc" -eq 1 ] && has "$err" "saxpy"
if [ $gpu -eq 0 ]; then
  run "$CUCORE" run "$dir/k.cubin" --kernel saxpy "${common[@]}" --arg f32:2.5 --arg buf:f32[1024]=random --arg out:f32[1024] --arg i32:1024
  check "right list, no GPU: exit 1" [ "$rc" -eq 1 ]
  check "right list, no GPU: says the arguments match" has "$err" "arguments match kernel"
fi
finish
