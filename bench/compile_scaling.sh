#!/usr/bin/env bash
# compile_scaling.sh BUILD [COUNT] -- parallel compile scaling, NVRTC's own and cucore tune's
# (the target: compile wall must scale >= 0.75 x jobs at 4 and 8 jobs). Prints JSON lines:
#   raw NVRTC, COUNT distinct programs to a cubin, by J threads of one process and by J processes;
#   `cucore tune --dry-run --jobs J` on the 512-configuration bench space, fresh cache each time.
set -euo pipefail
build=${1:?usage: compile_scaling.sh BUILD [COUNT]}
count=${2:-128}
arch=${CUCORE_BENCH_ARCH:-90}
for j in 1 4 8; do
  for mode in threads procs; do
    "$build/bin/bench_raw_nvrtc_scaling" "$mode" "$j" "$count" "$arch" cubin
  done
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/axpy.cu" <<'CU'
extern "C" __global__ void axpy_u(const float *x, float *y, int n) {
  int base = (blockIdx.x * block_size_x + threadIdx.x) * UNROLL;
  #pragma unroll
  for (int u = 0; u < UNROLL; u++) {
    int i = base + u;
    if (i < n) y[i] = 2.0f * x[i] + y[i];
  }
}
CU
for j in 1 4 8; do
  export CUCORE_CACHE_DIR="$tmp/cache-$j"
  t0=$(date +%s%N)
  "$build/bin/cucore" tune "$tmp/axpy.cu" --kernel axpy_u --param block_size_x=32..1024:32 \
    --param UNROLL=1..16 --grid "ceil(4194304 / (block_size_x * UNROLL))" \
    --arg "buf:f32[4194304]=random" --arg "inout:f32[4194304]=1" --arg "i32:4194304" \
    --dry-run --arch "sm_$arch" --jobs "$j" --json > "$tmp/out-$j.json"
  t1=$(date +%s%N)
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps({'mode': 'cucore tune --dry-run', 'jobs': int(sys.argv[2]), 'compile_wall_ms': d.get('compile_wall_ms'), 'process_wall_s': round(float(sys.argv[3]), 3)}))" "$tmp/out-$j.json" "$j" "$(( (t1 - t0) / 1000000 ))e-3"
done
