#!/usr/bin/env bash
# cucore tune --dry-run: counts per stage, distinct compiles (launch-only parameters
# make none), template kernels, Kernel Tuner JSON spaces, compile failures and model rejections
# recorded as data, the compile cache on a second run, usage errors. Needs NVRTC, no GPU.
source "$(dirname "$0")/lib.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export CUCORE_CACHE_DIR="$dir/cache"
# k: __launch_bounds__(LB) caps the block; SMEM_KB of static shared memory (64 KiB is more
# than the 48 KiB a kernel may declare statically: a compile error by construction).
cat >"$dir/k.cu" <<'CU'
extern "C" __global__ void __launch_bounds__(LB) k(float *y, int n) {
  __shared__ float s[SMEM_KB * 256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x % (SMEM_KB * 256)] = i;
  __syncthreads();
  if (i < n) y[i] = s[(threadIdx.x + 1) % (SMEM_KB * 256)];
}
CU
cat >"$dir/t.cu" <<'CU'
template <int BS> __global__ void t(float *y) { y[blockIdx.x * BS + threadIdx.x] = BS; }
CU
tune() { run timeout 120 "$CUCORE" tune "$dir/k.cu" --arch sm_90 --jobs 2 --dry-run "$@"; }

# 4 x 3 x 2 x 2 = 48 raw; restriction nb <= 2 keeps 48 * 2/3 = 32 (nb is 1,2,4);
# block_size_x = 2048 is over sm_90's 1024: 32 / 4 = 8 out -> 24; compiles: nb and
# block_size_x are no words of the source and are used by the launch, so launch-only:
# (LB in 2) x (SMEM_KB in 2) = 4 distinct compiles, the 2 with SMEM_KB=64 fail.
tune --kernel k --param block_size_x=128,256,1024,2048 --param nb=1,2,4 \
     --param LB=256,1024 --param SMEM_KB=1,64 --restrict 'nb <= 2' --grid 'nb * 132' \
     --sm-count 132
check "tune: exit 0" [ "$rc" -eq 0 ]
check "tune: counts per stage" has "$out" "space: 48 raw -> 32 after restrictions -> 24 with a valid launch within the limits -> 4 distinct compiles (launch-only: block_size_x, nb)"
check "tune: 4 compiles with 2 jobs" has "$out" "compiles: 4 with 2 jobs"
check "tune: the compile failures are data" has "$out" "2 failed"
check "tune: a compile error line names ptxas's reason" bash -c "grep -q 'compile error' <<<\"\$1\"" _ "$out"
check "tune: arch limit with the reason" has "$out" "arch-limit: block.x = 2048, sm_90 allows 1024"
# LB=256 with 1024 threads: the model rejects it (the kernel's max threads per block)
check "tune: model rejects a block above __launch_bounds__" bash -c "grep 'block_size_x=1024 nb=1 LB=256 SMEM_KB=1 ' <<<\"\$1\" | grep -q 'model-rejected'" _ "$out"
check "tune: a runnable line has the model's numbers" bash -c "grep 'block_size_x=256 nb=2 LB=256 SMEM_KB=1 ' <<<\"\$1\" | grep -q 'occ 1.00 (.*) waves .* score .* can run'" _ "$out"
check "tune: best by the model" has "$out" "best by the model's score"

# The same again: every compile comes from the cache (FRESH, a define no earlier run gave,
# makes the first run's compiles new).
tune --kernel k --param block_size_x=128,256 --param LB=256,1024 --param SMEM_KB=1 --param FRESH=1
first="$out"
tune --kernel k --param block_size_x=128,256 --param LB=256,1024 --param SMEM_KB=1 --param FRESH=1
check "tune: second run compiles from the cache" has "$out" "(2 from the cache), 0 failed"
check "tune: first run compiled" has "$first" "(0 from the cache)"

# JSON: one object; configs past the restrictions with verdicts; template kernel names.
run timeout 120 "$CUCORE" tune "$dir/t.cu" --arch sm_90 --dry-run --kernel 't<{block_size_x}>' \
    --param block_size_x=32,64,2048 --problem-size 4096 --json
check "tune --json: exit 0" [ "$rc" -eq 0 ]
check "tune --json: shape" python3 -c '
import json, sys
d = json.load(sys.stdin)
c = d["counts"]
assert (c["raw"], c["valid_launch"], c["compiles"], c["arch_limit"]) == (3, 2, 2, 1), c
cfg = {x["index"]: x for x in d["configs"]}
assert cfg[0]["params"] == {"block_size_x": 32} and cfg[0]["grid"] == [128, 1, 1], cfg[0]
assert cfg[1]["block"] == [64, 1, 1] and cfg[1]["grid"] == [64, 1, 1], cfg[1]
assert cfg[0]["verdict"] == "runnable" and cfg[0]["registers"] > 0, cfg[0]
assert cfg[2]["verdict"] == "arch-limit" and "2048" in cfg[2]["reason"], cfg[2]
assert d["best_by_model"] and d["arch"] == "sm_90"
' <<<"$out"

# A Kernel Tuner space file, plus a --param added on the command line.
cat >"$dir/space.json" <<'JSON'
{ "tune_params": {"block_size_x": [128, 256], "SMEM_KB": [1, 2]},
  "restrictions": ["block_size_x * SMEM_KB <= 256"],
  "problem_size": 100000, "kernel_name": "ignored_when_--kernel_is_given" }
JSON
tune --kernel k --space "$dir/space.json" --param LB=1024 --json
check "tune --space: counts" python3 -c '
import json, sys
c = json.load(sys.stdin)["counts"]
assert (c["raw"], c["after_restrictions"], c["compiles"]) == (4, 3, 2), c
' <<<"$out"

# Compiles run in compile processes (a template's lowered name comes back from them); one that
# runs past --compile-timeout is killed and recorded, and the tune goes on.
run timeout 120 "$CUCORE" tune "$dir/t.cu" --arch sm_90 --dry-run --kernel 't<{block_size_x}>' \
    --param block_size_x=32,64 --problem-size 4096 --compile-timeout 60 --json
check "compile in a child: both compiled and judged" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["counts"]["compile_failed"] == 0 and all(c["registers"] > 0 for c in d["configs"]), d["counts"]
' <<<"$out"
run timeout 120 "$CUCORE" tune "$dir/t.cu" --arch sm_90 --dry-run --kernel 't<{block_size_x}>' \
    --param block_size_x=96,160 --problem-size 4096 --compile-timeout 0.001
{ [ "$rc" -eq 1 ] && has "$out" "compile timeout: stopped after 0.001 s" && has "$out" "2 failed"; }; checked "a compile past --compile-timeout is stopped and recorded" $?
# A compiler that crashes takes only its process: that configuration is recorded with the
# signal, a new process compiles the rest.
run env 'CUCORE_TEST_TUNE_WORKER_CRASH=t<64>' timeout 120 "$CUCORE" tune "$dir/t.cu" \
    --arch sm_90 --dry-run --kernel 't<{block_size_x}>' --param block_size_x=32,64,96,128 \
    --problem-size 4096 --jobs 1 --json
check "a crashed compile is recorded, the others compiled" python3 -c '
import json, sys
d = json.load(sys.stdin)
bad = [c for c in d["configs"] if c["verdict"] == "compile-error"]
assert len(bad) == 1 and "signal 11" in bad[0]["reason"], bad
assert bad[0]["params"]["block_size_x"] == 64, bad[0]
assert sum(1 for c in d["configs"] if c.get("registers", 0) > 0) == 3, d["configs"]
' <<<"$out"
check "no temporary folder of a killed compile is left" bash -c '! ls /tmp | grep -q "^cucore-tune-......$" || [ -z "$(find /tmp -maxdepth 1 -name "cucore-tune-*" -newer "$1" 2>/dev/null)" ]' _ "$dir/t.cu"

# Usage errors name what is wrong; measuring is not in this build.
tune --kernel k --param LB=1 --restrict 'LB >'
{ [ "$rc" -eq 2 ] && has "$err" "column 5"; }; checked "bad restriction: exit 2 with the column" $?
tune --kernel k --param LB=1 --grid 'LB, foo'
{ [ "$rc" -eq 2 ] && has "$err" "unknown name \`foo\`"; }; checked "unknown name in --grid: exit 2" $?
tune --param LB=1
check "no --kernel: exit 2" [ "$rc" -eq 2 ]
tune --kernel k --param 'LB'
{ [ "$rc" -eq 2 ] && has "$err" "NAME=V1,V2"; }; checked "a --param without values: exit 2" $?
printf '{"tune_params": {"a": [1, 2,]}}' >"$dir/bad.json"
tune --kernel k --space "$dir/bad.json"
{ [ "$rc" -eq 1 ] && has "$err" "line 1, column 29"; }; checked "malformed space JSON: exit 1 with line and column" $?
run timeout 20 "$CUCORE" tune "$dir/k.cu" --kernel k --param LB=128
check "without --dry-run or arguments: exit 1" [ "$rc" -eq 1 ]
run "$CUCORE" help tune
{ has "$out" "--restrict" && has "$out" "examples:"; }; checked "help tune: options and examples" $?
# --nvrtc-minimal (a compile 20-30 % shorter): used after the first configuration that
# compiles gives a byte-identical cubin with it; a kernel that needs the runtime's types (a
# texture object) compiles without it, every configuration; not used unless asked for. A group
# that fails (64 KiB of static shared memory) passes the check to the next one.
mode() { python3 -c 'import json,sys; c=json.load(sys.stdin)["counts"]; print(c["nvrtc_minimal"], c["compile_failed"], c["compiles_made"])'; }
tune --kernel k --param LB=256 --param SMEM_KB=64,1,2,4 --nvrtc-minimal --json
m=$(mode <<<"$out")
check "tune --nvrtc-minimal: used after a byte-identical cubin, a failing group passed over (rc $rc, $m)" [ "$rc" -eq 0 -a "$m" = "True 1 4" ]
check "tune --nvrtc-minimal: said in the text too" bash -c "\"\$@\" | grep -q \"^compile mode: NVRTC's -minimal\"" _ "$CUCORE" tune "$dir/k.cu" --arch sm_90 --jobs 2 --dry-run --kernel k --param LB=256 --param SMEM_KB=1,2 --nvrtc-minimal
tune --kernel k --param LB=256 --param SMEM_KB=1,2 --json
m=$(mode <<<"$out")
check "tune: without --nvrtc-minimal, not used ($m)" [ "$m" = "False 0 2" ]
cat >"$dir/tex.cu" <<'CU'
extern "C" __global__ void fetch(cudaTextureObject_t t, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = tex1Dfetch<float>(t, i) * SCALE;
}
CU
run timeout 120 "$CUCORE" tune "$dir/tex.cu" --arch sm_90 --jobs 2 --dry-run --kernel fetch --param SCALE=1,2,3 --block 128 --nvrtc-minimal --json
m=$(mode <<<"$out")
check "tune --nvrtc-minimal: a kernel it cannot compile compiles without it, every configuration ($m)" [ "$m" = "False 0 3" ]
finish
