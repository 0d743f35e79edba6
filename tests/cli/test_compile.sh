#!/usr/bin/env bash
# cucore compile and inspect on the command line: outputs, JSON, logs, exit codes.
source "$(dirname "$0")/lib.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/k.cu" <<'CU'
template <typename T> __global__ void scale(T *x, T a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= a; }
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }
CU
run "$CUCORE" compile "$dir/k.cu" --arch sm_90 --name-expr 'scale<float>' -o "$dir/k.cubin"
check "compile: exit 0" [ "$rc" -eq 0 ]
check "compile: wrote an ELF" bash -c "head -c4 '$dir/k.cubin' | od -c | grep -q 'E   L   F'"
check "compile: prints the lowered name" has "$out" "_Z5scaleIfEvPT_S0_i"
run "$CUCORE" compile "$dir/k.cu" --arch sm_80 --target ptx --json
check "compile --json: valid, names the output" python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["target"]=="ptx" and d["output"].endswith("k.ptx") and d["arch"]==80' <<<"$out"
check "compile --target ptx: PTX for sm_80" grep -q ".target sm_80" "$dir/k.ptx"

printf '__global__ void f(int *p) {\n  *p = nope;\n}\n' >"$dir/bad.cu"
run "$CUCORE" compile "$dir/bad.cu" --arch sm_90
check "compile error: exit 1" [ "$rc" -eq 1 ]
check "compile error: file:line:col: severity: message" has "$err" "bad.cu:2:8: error: identifier \"nope\" is undefined"
check "compile error: the source line and caret kept" eval 'has "$err" "  *p = nope;" && has "$err" "       ^"'
check "compile error: the summary line kept" has "$err" "1 error detected in the compilation of"
run "$CUCORE" compile "$dir/bad.cu" --arch sm_90 --json
check "compile error --json: exit 1" [ "$rc" -eq 1 ]
check "compile error --json: the error and its records on stdout" python3 -c '
import json,sys; d=json.load(sys.stdin); e=d["diagnostics"][0]
assert d["input"].endswith("bad.cu") and d["target"]=="cubin" and "failed" in d["error"], d
assert e["severity"]=="error" and e["line"]==2 and e["column"]==8 and "nope" in e["message"], e' <<<"$out"
run "$CUCORE" compile "$dir/missing.cu" --arch sm_90 --json
check "missing file --json: exit 1, stdout empty" eval '[ "$rc" -eq 1 ] && [ -z "$out" ]'
printf 'extern "C" __global__ void w(int *p) { int unused = 3; *p = 1; }\n' >"$dir/warn.cu"
run "$CUCORE" compile "$dir/warn.cu" --arch sm_90 --json -o "$dir/warn.cubin"
check "compile --json: the warning as a record" python3 -c '
import json,sys; d=json.load(sys.stdin); w=d["diagnostics"][0]
assert w["severity"]=="warning" and w["line"]==1 and w["column"]==44 and w["number"]==177, w
assert w["file"].endswith("warn.cu") and "unused" in w["message"], w' <<<"$out"
run "$CUCORE" compile "$dir/warn.cu" --arch sm_90 -o "$dir/warn.cubin"
check "compile: the warning with its number" has "$err" "warn.cu:1:44: warning: variable \"unused\" was declared but never referenced [#177]"
check "compile error: nothing written" [ ! -e "$dir/bad.cubin" ]
run "$CUCORE" compile "$dir/k.cu" --arch sm_90 --arhc sm_80
check "misspelt option: exit 2 with a suggestion" eval '[ "$rc" -eq 2 ] && has "$err" "did you mean"'
run "$CUCORE" compile "$dir/missing.cu" --arch sm_90
check "missing file: exit 1, named" eval '[ "$rc" -eq 1 ] && has "$err" "missing.cu"'
run "$CUCORE" compile "$dir/k.cu" --arch sm_90 --target fatbinary
check "unknown target: exit 2" [ "$rc" -eq 2 ]

# inspect: the binary we made, the source directly (name expression), and --json's shape.
run "$CUCORE" inspect "$dir/k.cubin" --json
check "inspect --json: arch and kernels with params" python3 -c '
import json,sys
d=json.load(sys.stdin)
assert d["arch"]=="sm_90"
names=[k["name"] for k in d["kernels"]]
assert "saxpy" in names and "_Z5scaleIfEvPT_S0_i" in names, names
k=[k for k in d["kernels"] if k["name"]=="saxpy"][0]
assert [p["size"] for p in k["params"]]==[4,8,8,4], k["params"]
assert [p["offset"] for p in k["params"]]==[0,8,16,24], k["params"]
for key in ("registers","static_shared_bytes","local_bytes","const_bytes","max_threads_per_block"): assert key in k
' <<<"$out"
run "$CUCORE" inspect "$dir/k.cu" --arch sm_90 --kernel 'scale<float>'
check "inspect a .cu by name expression" has "$out" "void scale<float>(float*, float, int)"
check "inspect shows the PTX types" has "$out" "float"
run "$CUCORE" inspect "$dir/k.cubin" --kernel sxapy
check "inspect unknown kernel: exit 1, lists the kernels" eval '[ "$rc" -eq 1 ] && has "$err" "saxpy"'
head -c 100 "$dir/k.cubin" >"$dir/trunc.cubin"
run "$CUCORE" inspect "$dir/trunc.cubin"
check "truncated cubin: exit 1 with a reason" eval '[ "$rc" -eq 1 ] && [ -n "$err" ]'

# occupancy without a GPU: the model, table and --json.
run "$CUCORE" occupancy "$dir/k.cubin" --kernel saxpy --arch sm_90 --block 256 --json
check "occupancy --block --json: one object" python3 -c '
import json,sys
d=json.load(sys.stdin)
for key in ("block","smem","active_blocks_per_sm","active_warps_per_sm","occupancy","limit","source"): assert key in d, key
assert d["block"]==256 and d["limit"] in ("warps","registers","shared_memory","blocks","barriers")
assert abs(d["occupancy"] - d["active_warps_per_sm"]/64) < 1e-9
' <<<"$out"
run "$CUCORE" occupancy "$dir/k.cu" --kernel 'scale<float>' --arch sm_80 --json
check "occupancy table --json: rows 32..1024 and a best block" python3 -c '
import json,sys
d=json.load(sys.stdin)
assert [r["block"] for r in d["rows"]]==list(range(32,1025,32))
best=max(d["rows"], key=lambda r:(r["active_warps_per_sm"], r["block"]))
assert d["best_block"]==best["block"]
' <<<"$out"
run "$CUCORE" occupancy "$dir/k.cubin" --kernel saxpy --arch sm_90
check "occupancy table marks the best" has "$out" "<- best"
run "$CUCORE" occupancy "$dir/k.cubin" --kernel saxpy --arch sm_90 --block 2000
check "occupancy --block 2000: usage error" [ "$rc" -eq 2 ]
# The lto option makes LTO-IR: the file is named and reported for what it holds, and a fatbin
# (which holds cubins and PTX) refuses it with the reason.
printf 'extern "C" __global__ void k(float *x) { x[threadIdx.x] = 1; }\n' >"$dir/l.cu"
run "$CUCORE" compile "$dir/l.cu" --lto --arch sm_90
check "lto without a target: LTO-IR written as .ltoir" [ "$rc" -eq 0 -a -s "$dir/l.ltoir" ]
check "lto: the output says ltoir, and why" has "$out" "the lto option makes ltoir"
run "$CUCORE" compile "$dir/l.cu" --lto --arch sm_90 --json -o "$dir/l.out"
check "lto --json: target is what was made" python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["target"]=="ltoir" and d["asked"]=="cubin", d' <<<"$out"
run "$CUCORE" compile "$dir/l.cu" --lto --arch sm_90 --target fatbin -o "$dir/l.fatbin"
check "lto + fatbin: exit 1 with the reason" eval '[ "$rc" -eq 1 ] && has "$err" "lto option makes LTO-IR"'
check "lto + fatbin: no file" [ ! -e "$dir/l.fatbin" ]
# A whole program (host code, <cstdio>: CUDA samples and llm.c are written so) is beyond NVRTC;
# nvcc compiles it and keeps the device code, found by symbol or demangled name.
cat >"$dir/whole.cu" <<'CU'
#include <cstdio>
__global__ void scale_kernel(float *x, float a, int n) { int i = threadIdx.x; if (i < n) x[i] *= a; }
template <typename T> __global__ void fill(T *x, T v) { x[threadIdx.x] = v; }
template __global__ void fill<float>(float *, float);
int main() { printf("host code\n"); return 0; }
CU
if [ -x "$CUDA_ROOT/bin/nvcc" ]; then
  run "$CUCORE" inspect "$dir/whole.cu" --arch sm_90 --json
  check "whole program: NVRTC fails, nvcc compiles it (note on stderr)" eval '[ "$rc" -eq 0 ] && has "$err" "compiling it with nvcc instead"'
  check "whole program: both kernels, JSON on stdout" python3 -c '
import json,sys
d=json.load(sys.stdin)
names=[k.get("demangled") or k["name"] for k in d["kernels"]]
assert any("scale_kernel" in n for n in names) and any("fill<float>" in n for n in names), names
' <<<"$out"
  run "$CUCORE" run "$dir/whole.cu" --nvcc --kernel 'fill<float>' --grid 1 --block 32 --arg 'out:f32[32]' --arg f32:2 --arch sm_90
  check "run --nvcc: the demangled name is found and the arguments checked (and run, on a GPU)" \
    eval '[ "$rc" -eq 0 ] || has "$out$err" "2 arguments match kernel"' 
  run "$CUCORE" run "$dir/whole.cu" --nvcc --kernel scale_kernel --grid 1 --block 32 --arg 'out:f32[32]' --arg f32:2 --arch sm_90
  check "run --nvcc: a missing argument is still refused" eval '[ "$rc" -eq 1 ] && has "$err" "takes 3 parameters"'
  run "$CUCORE" compile "$dir/whole.cu" --nvcc --arch sm_90 --target ptx -DSCALE=2 --use-fast-math -o "$dir/whole.ptx"
  check "compile --nvcc --target ptx: PTX with both entries" grep -q '.entry _Z12scale_kernelPffi' "$dir/whole.ptx"
  printf '__global__ void broken(float *x) { x[0] = ; }\nint main() { return 0; }\n' >"$dir/broken.cu"
  run "$CUCORE" inspect "$dir/broken.cu" --nvcc --arch sm_90
  check "nvcc failing: exit 1, its message and the reason" eval '[ "$rc" -eq 1 ] && has "$err" "expected an expression" && has "$err" "nvcc -cubin failed"'
fi
CUCORE_NVCC=/nonexistent/nvcc run "$CUCORE" inspect "$dir/whole.cu" --arch sm_90
check "no nvcc: NVRTC's error stands" eval '[ "$rc" -eq 1 ] && has "$err" "cstdio"'
CUCORE_NVCC=/nonexistent/nvcc run "$CUCORE" inspect "$dir/whole.cu" --nvcc --arch sm_90
check "--nvcc without nvcc: exit 1 naming where it looked" eval '[ "$rc" -eq 1 ] && has "$err" "nvcc not found"'
# Library internals (CCCL constants that <cooperative_groups.h> brings, string literals) are
# counted, not listed, in the text; the program's own variables are listed; JSON has them all.
cat >"$dir/cgvars.cu" <<'CU'
#include <cooperative_groups.h>
__constant__ float taps[4];
extern "C" __global__ void k(float *x) { cooperative_groups::sync(cooperative_groups::this_thread_block()); x[0] = taps[0]; }
CU
run "$CUCORE" inspect "$dir/cgvars.cu" --arch sm_90
check "inspect: the program's variable is listed" has "$out" "taps"
check "inspect: library internals counted, not listed" eval 'has "$out" "library internals or string literals, not listed" && ! has "$out" "cuda::std::"'
run "$CUCORE" inspect "$dir/cgvars.cu" --arch sm_90 --json
check "inspect --json: every variable" python3 -c '
import json,sys
d=json.load(sys.stdin); names=[g["name"] for g in d["globals"]]
assert "taps" in names and len(names) > 1, names
' <<<"$out"
finish
