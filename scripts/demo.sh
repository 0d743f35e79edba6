#!/usr/bin/env bash
# The main job: what cucore is for, on the bundled example kernels (examples/kernels/demo.cu).
# Without a GPU: compile (twice: the second from the cache when it exists), inspect, occupancy
# for sm_90, and the argument check. With a GPU: also run saxpy and a reduction, checked
# against the CPU, with the launch time.
set -uo pipefail
CUCORE="${1:-build/bin/cucore}"
cd "$(dirname "$0")/.."
SRC=examples/kernels/demo.cu
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
# A fresh compile cache, so the first compile is cold and the second a cache hit.
export CUCORE_CACHE_DIR="$OUT/cache"
step() { printf '\n== %s\n' "$*"; }
fail=0

step "what was loaded, from where"
"$CUCORE" version

gpu=0
if "$CUCORE" devices >"$OUT/devices.txt" 2>&1; then
  gpu=1
  arch=$("$CUCORE" devices --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["devices"][0]["arch"])' 2>/dev/null || echo sm_90)
  head -3 "$OUT/devices.txt"
else
  arch=sm_90
  echo "no GPU here ($(tail -1 "$OUT/devices.txt")): compiling, inspecting and the occupancy"
  echo "model still work; launches are checked but not run"
fi

step "compile $SRC for $arch (CUDA C++ -> cubin through NVRTC, at run time), twice"
for pass in 1 2; do
  "$CUCORE" compile "$SRC" --arch "$arch" --name-expr 'scale<float>' --name-expr 'scale<double>' \
    -o "$OUT/demo.cubin" || fail=1
done
echo "(the second compile came from the on-disk cache: \`cucore cache stats\` counts it)"

step "inspect: kernels, parameter layouts and types, resources"
"$CUCORE" inspect "$SRC" --arch "$arch" --kernel apply || fail=1
"$CUCORE" inspect "$OUT/demo.cubin" | grep -E "^kernel|registers|shared memory|max threads" || fail=1

step "occupancy of the register-heavy kernel on $arch"
"$CUCORE" occupancy "$OUT/demo.cubin" --kernel heavy --arch "$arch" || fail=1

step "arguments are checked against the kernel before any GPU is involved"
echo "\$ cucore run demo.cubin --kernel saxpy ... --arg f64:2.5 ...   (a double where saxpy takes a float)"
"$CUCORE" run "$OUT/demo.cubin" --kernel saxpy --grid 4096 --block 256 --arg f64:2.5 \
  --arg buf:f32[1048576]=random --arg out:f32[1048576] --arg i32:1048576 && fail=1
echo "\$ cucore run demo.cubin --kernel saxpy ... (three arguments of four)"
"$CUCORE" run "$OUT/demo.cubin" --kernel saxpy --grid 4096 --block 256 --arg f32:2.5 \
  --arg buf:f32[1048576]=random --arg out:f32[1048576] && fail=1

if [ $gpu -eq 1 ]; then
  step "run saxpy and a reduction on the GPU, checked against the CPU"
  # out = 3 * iota over 2^20 elements: sum = 3 * n(n-1)/2. The outputs see exactly one launch
  # on the inputs as given; the 20 timed repeats come after it.
  "$CUCORE" run "$OUT/demo.cubin" --kernel saxpy --grid 4096 --block 256 --arg f32:3 \
    --arg buf:f32[1048576]=iota --arg out:f32[1048576] --arg i32:1048576 --repeat 20 --json \
    >"$OUT/saxpy.json" || fail=1
  python3 - "$OUT/saxpy.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1])); n = 1 << 20; o = d["outputs"][0]
want = 3.0 * n * (n - 1) / 2
ok = abs(o["sum"] - want) <= 1e-4 * want
print(f"saxpy: {d['ms_per_launch']*1000:.1f} us per launch; sum {o['sum']:.6g}, CPU {want:.6g}: {'match' if ok else 'DIFFER'}")
sys.exit(0 if ok else 1)
PY
  # reduce_sum over 2^20 ones, once: 1048576.
  "$CUCORE" run "$OUT/demo.cubin" --kernel reduce_sum --grid 264 --block 256 \
    --arg buf:f32[1048576]=1 --arg out:f32[1] --arg i32:1048576 --json >"$OUT/reduce.json" || fail=1
  python3 - "$OUT/reduce.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1])); got = d["outputs"][0]["sum"]
print(f"reduce_sum: {d['ms_per_launch']*1000:.1f} us; GPU {got:.0f}, CPU {1<<20}: {'match' if got == 1<<20 else 'DIFFER'}")
sys.exit(0 if got == 1 << 20 else 1)
PY
fi
echo
[ $fail -eq 0 ] && echo "demo: done" || echo "demo: something above failed"
exit $fail
