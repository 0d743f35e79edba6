#!/usr/bin/env bash
# cucore run on a GPU (label gpu): third-party-style kernels driven through the command, every
# result compared (--expect against values computed here, or python3 on the JSON), never
# against the tool's own earlier output. The timing's SM clock from the real NVML:
# the "SM clock" line and the JSON fields, skipped with a note only where NVML cannot be loaded.
source "$(dirname "$0")/lib.sh"
"$CUCORE" devices >/dev/null 2>&1 || { echo "skipped: no GPU"; exit 77; }
here="$(cd "$(dirname "$0")/../.." && pwd)"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/k.cu" <<'CU'
#include <cuda_fp16.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }
template <typename T> __global__ void fill(T *x, T v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = v; }
template <typename T> __global__ void scale(T *x, T a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= a; }
template __global__ void scale<float>(float *, float, int);
extern "C" __global__ void halves(const __half *in, float *out) { out[threadIdx.x] = __half2float(in[threadIdx.x]) * 2; }
__device__ unsigned long long hits;
__device__ unsigned long long big;
extern "C" __global__ void count(unsigned long long base) {
  atomicAdd(&hits, 1ull); if (blockIdx.x == 0 && threadIdx.x == 0) big = base - 1ull; }
struct Pair { double re, im; };                       // a 16-byte complex by value
extern "C" __global__ void cmul(Pair z, const Pair *in, Pair *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { Pair a = in[i]; out[i] = {a.re * z.re - a.im * z.im, a.re * z.im + a.im * z.re}; } }
extern "C" __global__ void __cluster_dims__(12, 1, 1) cluster12(int *rank) {
  cg::cluster_group c = cg::this_cluster();
  if (threadIdx.x == 0) rank[blockIdx.x] = (int)c.block_rank() + 100 * (int)c.num_blocks(); }
extern "C" __global__ void bigsmem(float *y) {
  extern __shared__ float s[];
  int n = 100 * 1024 / 4;
  for (int i = threadIdx.x; i < n; i += blockDim.x) s[i] = (float)i;
  __syncthreads();
  y[threadIdx.x] = s[n - 1 - threadIdx.x]; }
extern "C" __global__ void talk(float *y) { printf("device says %d\n", (int)threadIdx.x); y[threadIdx.x] = 7; }
extern "C" __global__ void exact(unsigned long long *u, double *d) { u[threadIdx.x] += 0ull; d[threadIdx.x] *= 1.0; }
CU
"$CUCORE" compile "$dir/k.cu" --name-expr 'scale<float>' --name-expr 'fill<double>' -o "$dir/k.cubin" >/dev/null 2>&1
check "the kernels compile for this GPU" [ -s "$dir/k.cubin" ]
K="$dir/k.cubin"
list() { local IFS=,; echo "{$*}"; }

# saxpy: y = 2 * iota + 0 over 1000 elements: sum = 2 * 999 * 1000 / 2 = 999000.
run "$CUCORE" run "$K" --kernel saxpy --grid 4 --block 256 --arg f32:2 --arg buf:f32[1000]=iota --arg out:f32[1000] --arg i32:1000 --repeat 5 --json
check "saxpy ran" [ "$rc" -eq 0 ]
check "saxpy: sum of 2*i over 0..999, one launch seen, cuMemAlloc memory by default" python3 -c '
import json,sys
d=json.load(sys.stdin)
o=d["outputs"][0]
assert o["sum"] == 2*999*1000/2, o
assert d["ms_per_launch"] > 0 and d["allocator"] == "cuMemAlloc", d
' <<<"$out"
run "$CUCORE" run "$dir/k.cu" --kernel 'fill<double>' --grid 1 --block 64 --arg out:f64[64] --arg f64:1.5 --arg i32:64 --expect 0=1.5
check "template by name expression: every element 1.5" [ "$rc" -eq 0 ]
check "template by name expression: every element 1.5 (2)" has "$out" "expect 0: all 64 elements match"
run "$CUCORE" run "$K" --kernel halves --grid 1 --block 32 --arg buf:f16[32]=1.5 --arg out:f32[32] --expect 1=3
check "half buffers convert: 2 * 1.5 = 3" [ "$rc" -eq 0 ]
run "$CUCORE" run "$K" --kernel saxpy --grid 1 --block 2048 --arg f32:2 --arg buf:f32[8]=1 --arg out:f32[8] --arg i32:8
check "block too large: exit 2 with the limit (no GPU has blocks above 1024 threads)" [ "$rc" -eq 2 ]
check "block too large: exit 2 with the limit (2)" has "$err" "2048"

# The worked example of the README: a struct by value, a __constant__ table via --global, .npy
# in and out, --expect against a reference the example's script computes in double precision.
python3 "$here/examples/fir/make_data.py" "$dir" 0.75 -0.125 2000
run "$CUCORE" run "$here/examples/fir/fir.cu" --kernel fir --grid 8 --block 256 \
  --arg 'struct:{f32:0.75,i32:2000,f64:-0.125}' --arg "buf:f32[]=@$dir/x.npy" --arg "out:f32[2000]>$dir/y.npy" \
  --global "taps=f32[]=@$dir/taps.npy" --expect "2=@$dir/y_ref.npy" --rtol 1e-5 --atol 1e-6
check "fir: struct + __constant__ + .npy: matches the reference" [ "$rc" -eq 0 ]
check "fir: struct + __constant__ + .npy: matches the reference (2)" has "$out" "expect 2: all 2000 elements match"
check "fir: y.npy written" [ -s "$dir/y.npy" ]
check "fir: y.npy holds the reference (read without cucore)" python3 -c '
import struct,sys
def load(p):
    b=open(p,"rb").read(); assert b[:8]==b"\x93NUMPY\x01\x00", b[:8]
    h=int.from_bytes(b[8:10],"little"); hdr=b[10:10+h].decode()
    assert "\x27descr\x27: \x27<f4\x27" in hdr and "(2000,)" in hdr and (10+h)%64==0, hdr
    return struct.unpack("<2000f", b[10+h:])
y=load(sys.argv[1]); r=load(sys.argv[2])
bad=[i for i in range(2000) if abs(y[i]-r[i]) > 1e-6 + 1e-5*abs(r[i])]
assert not bad, bad[:5]
try:
    import numpy as np
    assert np.allclose(np.load(sys.argv[1]), np.load(sys.argv[2]), rtol=1e-5, atol=1e-6)
except ImportError:
    pass
' "$dir/y.npy" "$dir/y_ref.npy"
# The same through the struct's wrong gain: --expect fails, exit 1, first mismatches shown.
run "$CUCORE" run "$here/examples/fir/fir.cu" --kernel fir --grid 8 --block 256 \
  --arg 'struct:{f32:0.5,i32:2000,f64:-0.125}' --arg "buf:f32[]=@$dir/x.npy" --arg out:f32[2000] \
  --global "taps=f32[]=@$dir/taps.npy" --expect "2=@$dir/y_ref.npy" --rtol 1e-5 --atol 1e-6
check "fir with another gain: exit 1" [ "$rc" -eq 1 ]
check "fir with another gain: mismatches counted, first indices shown" has "$out" "elements differ"
check "fir with another gain: mismatches counted, first indices shown (2)" has "$out" "first: ["
check "fir with another gain: says the check failed" has "$err" "1 --expect check failed"

# A 16-byte complex by value.
run "$CUCORE" run "$K" --kernel cmul --grid 1 --block 32 --arg 'struct:{f64:0,f64:1}' \
  --arg 'buf:f64[8]={1,2,3,4,5,6,7,8}' --arg out:f64[8] --arg i32:4 --expect '2={-2,1,-4,3,-6,5,-8,7}'
check "complex multiply by i: (a+bi)*i = -b+ai" [ "$rc" -eq 0 ]

# In-place: inout printed after the run; scale by 3 in place (expected computed here).
want=(); for i in $(seq 0 63); do want+=($((3 * i))); done
run "$CUCORE" run "$K" --kernel 'scale<float>' --grid 1 --block 64 --arg inout:f32[64]=iota --arg f32:3 --arg i32:64 --expect "0=$(list "${want[@]}")"
check "inout: scaled in place, compared" [ "$rc" -eq 0 ]
run "$CUCORE" run "$K" --kernel 'scale<float>' --grid 1 --block 64 --arg inout:f32[64]=iota --arg f32:3 --arg i32:64 --expect 0=iota
check "--expect that differs: exit 1" [ "$rc" -eq 1 ]
check "--expect that differs: 63 of 64, first mismatch [1] 3 (expected 1)" has "$out" "63 of 64 elements differ"
check "--expect that differs: 63 of 64, first mismatch [1] 3 (expected 1) (2)" has "$out" "[1] 3 (expected 1)"
run "$CUCORE" run "$K" --kernel 'scale<float>' --grid 1 --block 64 --arg inout:f32[64]=iota --arg f32:3 --arg i32:64 --expect 0=iota --json
check "--expect that differs, JSON: ok false with the first mismatches" python3 -c '
import json,sys
d=json.load(sys.stdin); e=d["expect"][0]
assert d["ok"] is False and e["mismatches"] == 63, e
assert e["first_mismatches"][0] == {"index": 1, "got": 3, "expected": 1}, e
assert len(e["first_mismatches"]) == 10
' <<<"$out"

# A __device__ counter read with --read-global, and exact 64-bit integers in JSON.
run "$CUCORE" run "$K" --kernel count --grid 4 --block 64 --arg u64:0 --read-global hits:u64 --read-global big:u64 --expect hits=256 --expect big=18446744073709551615 --json
check "__device__ counter: 256 threads" [ "$rc" -eq 0 ]
check "--read-global in JSON: 256 and 2^64-1 exact" python3 -c '
import json,sys
d=json.load(sys.stdin); g={x["name"]: x for x in d["globals"]}
assert g["hits"]["first"] == [256] and g["big"]["first"] == [2**64-1], g
assert g["big"]["size"] == 8 and g["big"]["kind"] == "device", g
' <<<"$out"
run "$CUCORE" run "$K" --kernel exact --grid 1 --block 3 --arg 'inout:u64[3]={18446744073709551615,549755289600,1}' \
  --arg 'inout:f64[3]={549755289600,0.1,0.30000000000000004}' --json
check "exact JSON: integers and doubles read back as given" python3 -c '
import json,sys
d=json.load(sys.stdin); o=d["outputs"]
assert o[0]["first"] == [2**64-1, 549755289600, 1] and o[0]["max"] == 2**64-1, o[0]
assert o[1]["first"] == [549755289600, 0.1, 0.30000000000000004], o[1]
' <<<"$out"

# A compile-time cluster of 12 blocks: non-portable, allowed on the kernel automatically.
want=(); for b in $(seq 0 23); do want+=($((b % 12 + 1200))); done
run "$CUCORE" run "$K" --kernel cluster12 --grid 24 --block 32 --arg out:i32[24] --expect "0=$(list "${want[@]}")"
check "cluster of 12: each block its rank in a cluster of 12" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || echo "$err"

# Dynamic shared memory above 48 KiB (100 KiB), raised automatically.
want=(); for t in $(seq 0 127); do want+=($((25600 - 1 - t))); done
run "$CUCORE" run "$K" --kernel bigsmem --grid 1 --block 128 --smem 102400 --arg out:f32[128] --expect "0=$(list "${want[@]}")"
check "100 KiB of dynamic shared memory" [ "$rc" -eq 0 ]

# Device printf stays off the JSON stream (stdout is JSON alone; the text goes to stderr).
run "$CUCORE" run "$K" --kernel talk --grid 1 --block 4 --arg out:f32[4] --expect 0=7 --json
check "printf + --json: stdout is one JSON object" python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["ok"] is True' <<<"$out"
check "printf + --json: the device output is on stderr" has "$err" "device says 3"
# --json-out: the JSON in the file, the text report on stdout.
run "$CUCORE" run "$K" --kernel talk --grid 1 --block 4 --arg out:f32[4] --expect 0=7 --json-out "$dir/r.json"
check "--json-out: the file holds the JSON" python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["outputs"][0]["first"] == [7,7,7,7], d' "$dir/r.json"
check "--json-out: the text report on stdout" has "$out" "expect 0: all 4 elements match"

# Timing: warm-up and timed launches; the outputs still see exactly one launch.
run "$CUCORE" run "$K" --kernel 'scale<float>' --grid 1 --block 64 --arg inout:f32[64]=1 --arg f32:2 --arg i32:64 --warmup 3 --repeat 20 --expect 0=2 --json
check "--repeat 20 --warmup 3: one launch seen by the outputs" [ "$rc" -eq 0 ]
check "--repeat 20 --warmup 3: timing" python3 -c '
import json,sys
d=json.load(sys.stdin); t=d["time_ms"]
assert d["timed_launches"] == 20 and d["launches"] == 24 and d["warmup"] == 3, d
assert 0 < t["min"] <= t["median"] <= t["max"] and t["min"] <= t["mean"] <= t["max"], t
assert d["graph"] is None
' <<<"$out"
run "$CUCORE" run "$K" --kernel 'scale<float>' --grid 1 --block 64 --arg inout:f32[64]=1 --arg f32:2 --arg i32:64 --repeat 10 --flush-l2
check "text timing: median of 10 with the L2 flushed" [ "$rc" -eq 0 ]
check "text timing: median of 10 with the L2 flushed (2)" has "$out" "median of 10"
check "text timing: median of 10 with the L2 flushed (3)" has "$out" "L2 flushed before each"

# --graph N: N launches captured once, replayed --repeat times, beside direct launches.
run "$CUCORE" run "$K" --kernel 'scale<float>' --grid 1 --block 64 --arg inout:f32[64]=1 --arg f32:2 --arg i32:64 --graph 10 --warmup 2 --repeat 5 --expect 0=2 --json
check "--graph 10: the outputs see one launch" [ "$rc" -eq 0 ]
check "--graph 10: a graph of 10 kernel nodes replayed 5 times" python3 -c '
import json,sys
d=json.load(sys.stdin); g=d["graph"]
assert g["launches_per_replay"] == 10 and g["nodes"] == 10 and g["replays"] == 5, g
assert d["launches"] == 1 + 10*2 + 10*5 + 10*5, d["launches"]
assert g["ms_per_launch"] > 0 and g["direct_ms_per_launch"]["median"] > 0, g
assert abs(d["ms_per_launch"] - d["time_ms"]["median"] / 10) < 1e-12, d
' <<<"$out"
run "$CUCORE" run "$K" --kernel saxpy --grid 4 --block 256 --arg f32:2 --arg buf:f32[1000]=iota --arg out:f32[1000] --arg i32:1000 --graph 100 --repeat 3
check "--graph 100, text: per replay and per launch beside direct" [ "$rc" -eq 0 ]
check "--graph 100, text: per replay and per launch beside direct (2)" has "$out" "per graph replay of 100 launches"
check "--graph 100, text: per replay and per launch beside direct (3)" has "$out" "direct launches back to back"
run "$CUCORE" run "$K" --kernel saxpy --grid 1 --block 64 --arg f32:2 --arg buf:f32[8]=1 --arg out:f32[8] --arg i32:8 --graph 4 --cluster 3
check "--graph with a bad launch: exit 1, checked before capture" [ "$rc" -eq 1 ]

# Stream-ordered pool vs cuMemAlloc: the same outputs.
for p in --pool ""; do
  run "$CUCORE" run "$K" --kernel saxpy --grid 4 --block 256 --arg f32:2.5 --arg buf:f32[1000]=random --arg inout:f32[1000]=iota --arg i32:1000 --seed 9 --json $p
  echo "$out" >"$dir/pool$p.json"
done
check "--pool and the default: the same outputs, each allocator named" python3 -c '
import json,sys
a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]))
assert a["allocator"] == "pool" and b["allocator"] == "cuMemAlloc", (a["allocator"], b["allocator"])
assert a["outputs"] == b["outputs"], (a["outputs"], b["outputs"])
'  "$dir/pool--pool.json" "$dir/pool.json"

# The SM clock around the timing, read from the real NVML (the spellings test_system_facts.sh
# checks on the fake NVML): the text line, and sm_clock_mhz, clock_reasons, throttled in JSON.
run "$CUCORE" devices --json
nvml=$(nvml_state <<<"$out")
if [ "$nvml" = "absent" ]; then
  echo "note: NVML could not be loaded on this host; the timing's SM clock is not checked"
else
  check "NVML answers for device 0 ($nvml)" [ "$nvml" = "yes" ]
  run "$CUCORE" run "$K" --kernel saxpy --grid 4 --block 256 --arg f32:2 --arg buf:f32[1000]=iota --arg out:f32[1000] --arg i32:1000 --repeat 20
  check "run with NVML: exit 0" [ "$rc" -eq 0 ]
  check "run with NVML: the SM clock line" grep -qE \
    "^  SM clock: [0-9]+ MHz \(max -?[0-9]+\) around the timing; clock event reasons: [^ ]" <<<"$out"
  echo "$out" | grep -E "SM clock|throttled" || true
  run "$CUCORE" run "$K" --kernel saxpy --grid 4 --block 256 --arg f32:2 --arg buf:f32[1000]=iota --arg out:f32[1000] --arg i32:1000 --repeat 20 --json
  check "run --json with NVML: exit 0" [ "$rc" -eq 0 ]
  check "run --json with NVML: sm_clock_mhz, clock_reasons, throttled" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert isinstance(d["sm_clock_mhz"], int) and d["sm_clock_mhz"] > 0, d["sm_clock_mhz"]
if d["clock_reasons"] is None:
    assert d["throttled"] is None, d["throttled"]
else:
    assert isinstance(d["clock_reasons"], str) and d["clock_reasons"], d["clock_reasons"]
    assert isinstance(d["throttled"], bool), d["throttled"]
print("SM clock %d MHz, reasons %s, throttled %s" % (d["sm_clock_mhz"], d["clock_reasons"],
                                                     d["throttled"]))
' <<<"$out"
fi
finish
