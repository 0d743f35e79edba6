#!/usr/bin/env bash
# cucore inspect: parameter types from the mangled C++ signature (`float*`, `const int*`,
# `unsigned long`, `__half`, struct names, templates), PTX's `.u64` without a signature said
# to be a pointer or a 64-bit integer, and --json carrying the same; argument errors of
# `cucore run` name the C++ type too. No GPU needed.
source "$(dirname "$0")/lib.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/t.cu" <<'CU'
#include <cuda_fp16.h>
struct Params { float a; int n; double b; };
namespace ns { struct Desc { int x; }; }
__global__ void typed(const int *a, __half h, Params p, unsigned long n, ns::Desc d, float *out,
                      const Params *pp, unsigned char c, long long ll, double dd) {}
template <typename T> __global__ void scale(T *x, T a, int n) { if (threadIdx.x < n) x[threadIdx.x] *= a; }
template __global__ void scale<float>(float *, float, int);
extern "C" __global__ void plain(float *x, unsigned long long n, int k) {}
CU
want=("const int*" "__half" "Params" "unsigned long" "ns::Desc" "float*" "const Params*" "unsigned char" "long long" "double")
for fmt in cubin ptx; do
  "$CUCORE" compile "$dir/t.cu" --arch sm_90 --target $fmt -o "$dir/t.$fmt" >/dev/null 2>&1
  check "$fmt compiles" [ -s "$dir/t.$fmt" ]
  run "$CUCORE" inspect "$dir/t.$fmt" --kernel typed
  check "$fmt: inspect runs" [ "$rc" -eq 0 ]
  for i in "${!want[@]}"; do
    line=$(grep -E "^ +$i +[0-9]+ +[0-9]+ +[0-9?]+ +" <<<"$out" | head -1)
    check "$fmt: parameter $i is ${want[$i]}" [ "$(sed -E 's/^ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9?]+ +//' <<<"$line")" = "${want[$i]}" ]
  done
  run "$CUCORE" inspect "$dir/t.$fmt" --kernel 'scale<float>'
  check "$fmt: template parameters" has "$out" "float*"
  check "$fmt: template parameters (2)" has "$out" "void scale<float>(float*, float, int)"
  # --json carries the same, and says pointer for pointers.
  run "$CUCORE" inspect "$dir/t.$fmt" --json
  check "$fmt: --json types" python3 -c '
import json, sys
d = json.load(sys.stdin)
want = sys.argv[1].split("|")
k = [k for k in d["kernels"] if k["demangled"] and k["demangled"].startswith("typed(")][0]
got = [p["cpp_type"] for p in k["params"]]
assert got == want, (got, want)
assert [p["type_text"] for p in k["params"]] == want
kinds = [p["type"] for p in k["params"]]
assert kinds[0] == "pointer" and kinds[5] == "pointer" and kinds[6] == "pointer", kinds
assert sys.argv[2] == "cubin" or (kinds[9] == "float" and kinds[3] == "int"), kinds
plain = [k for k in d["kernels"] if k["name"] == "plain"][0]
assert [p["cpp_type"] for p in plain["params"]] == [None, None, None], plain
' "$(IFS='|'; echo "${want[*]}")" $fmt <<<"$out"
done
# PTX without a signature (extern "C"): a .u64 is a pointer or a 64-bit integer.
run "$CUCORE" inspect "$dir/t.ptx" --kernel plain
check "extern C .u64: pointer or 64-bit integer" [ "$(grep -c 'u64 (pointer or 64-bit integer)' <<<"$out")" -eq 2 ]
check "extern C .u32" grep -qE "^ +2 +16 +4 +4 +u32$" <<<"$out"
run "$CUCORE" inspect "$dir/t.ptx" --kernel plain --json
check "extern C in JSON: type_text and no cpp_type" python3 -c '
import json, sys
p = json.load(sys.stdin)["kernels"][0]["params"]
assert p[0]["type_text"] == "u64 (pointer or 64-bit integer)" and p[0]["cpp_type"] is None, p
assert p[2]["type_text"] == "u32", p
' <<<"$out"
# Argument errors of cucore run name the C++ type and signature.
run "$CUCORE" run "$dir/t.cubin" --kernel typed --grid 1 --block 1 --arg null --arg f32:1
check "run: a float for __half: exit 1" [ "$rc" -eq 1 ]
check "run: the parameter's C++ type in the message" has "$err" "parameter 1 is \`__half\`"
check "run: the signature in the message" has "$err" "typed(int const*, __half, Params"
finish
