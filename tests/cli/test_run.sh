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
check "five of four: exit 1, named" [ "$rc" -eq 1 ]
check "five of four: exit 1, named (2)" has "$err" "5th"
run "$CUCORE" run "$dir/k.cu" --arch sm_90 --kernel 'fill<double>' "${common[@]}" --arg out:f64[16] --arg f32:1 --arg i32:16
check "name expression kernel, float for T=double" [ "$rc" -eq 1 ]
check "name expression kernel, float for T=double (2)" has "$err" "a float given for a double?"
for bad in "f32:abc" "i8:300" "u32:-1" "buf:f32[0]=1" "buf:f32[8]" "buf:q32[8]=1" "out:f32[8]=1" "x" "i32:"; do
  run "$CUCORE" run "$dir/k.cubin" --kernel saxpy "${common[@]}" --arg "$bad"
  check "spec '$bad' does not parse: exit 2" [ "$rc" -eq 2 ]
  check "spec '$bad': quoted in the message" has "$err" "$bad"
done
run "$CUCORE" run "$dir/k.cubin" --kernel saxpy --block 256 --arg f32:1
check "no --grid: exit 2" [ "$rc" -eq 2 ]
run "$CUCORE" run "$dir/k.cubin" --kernel nosuch "${common[@]}" --arg f32:1
check "unknown kernel: exit 1, lists saxpy" [ "$rc" -eq 1 ]
check "unknown kernel: exit 1, lists saxpy (2)" has "$err" "saxpy"

# ---- real kernels: structs, bytes, globals, offline launch checks, files, hostile input ---------
cat >"$dir/t.cu" <<'CU'
struct Params { float scale; int n; double bias; };             // 16 bytes, align 8
struct __align__(64) Desc { float v[3]; };                      // 64 bytes, align 64
struct Big { float v[1024]; };                                  // 4 KiB
struct Huge { float v[8000]; };                                 // 32000 bytes (CUDA 12.1+)
__constant__ float taps[16];
__device__ unsigned long long hits;
namespace ns { template <typename T> __constant__ T coef[4]; template __constant__ float coef<float>[4]; }
extern "C" __global__ void fir(Params p, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < p.n) { float s = 0; for (int k = 0; k < 16; k++) s += taps[k] * x[(i + k) % p.n]; y[i] = p.scale * s + (float)p.bias; } }
extern "C" __global__ void desc(Desc d, float *y) { y[threadIdx.x] = d.v[threadIdx.x % 3]; }
extern "C" __global__ void big(Big b, float *y) { y[threadIdx.x] = b.v[threadIdx.x]; }
extern "C" __global__ void huge(Huge h, float *y) { y[threadIdx.x] = h.v[7999 - threadIdx.x]; }
extern "C" __global__ void __launch_bounds__(128) bounded(float *y) { y[threadIdx.x] = 1; }
extern "C" __global__ void __cluster_dims__(2, 1, 1) clustered(float *y) { y[blockIdx.x] = 1; }
extern "C" __global__ void __cluster_dims__(12, 1, 1) cluster12(float *y) { y[blockIdx.x] = 1; }
extern "C" __global__ void shared(float *y) { __shared__ float s[12000]; s[threadIdx.x] = 1; __syncthreads(); y[threadIdx.x] = s[threadIdx.x ^ 1]; }
extern "C" __global__ void count(float *y) { atomicAdd(&hits, 1ull); y[0] = ns::coef<float>[0]; }
CU
"$CUCORE" compile "$dir/t.cu" --arch sm_90 -o "$dir/t.cubin" >/dev/null 2>&1
check "the test kernels compile" [ -s "$dir/t.cubin" ]
fir=(run "$CUCORE" run "$dir/t.cubin" --kernel fir --grid 4 --block 256)
good_rc=$([ $gpu -eq 1 ] && echo 0 || echo 1)

# Structs by C rules against the parameter's size and alignment.
"${fir[@]}" --arg 'struct:{f32:0.5,i32:1024,f64:0.25}' --arg buf:f32[1024]=1 --arg out:f32[1024] --global taps=f32[16]=1
check "struct {f32,i32,f64} fits Params (16 B, align 8)" [ "$rc" -eq "$good_rc" ]
[ $gpu -eq 0 ] && check "struct: offline says the arguments and module variables fit" has "$err" "module variables fit"
"${fir[@]}" --arg 'struct:{f32:0.5,i32:1024}' --arg buf:f32[1024]=1 --arg out:f32[1024]
check "a struct too small: exit 1" [ "$rc" -eq 1 ]
check "a struct too small: the sizes" has "$err" "is 16 bytes at offset 0"
check "a struct too small: the layout built" has "$err" "laid out as f32@0 i32@4: 8 bytes, aligned to 4"
"${fir[@]}" --arg 'struct:{f32:0.5,i32:1024,f64:0.25,f64:1}' --arg buf:f32[1024]=1 --arg out:f32[1024]
check "a struct bigger than the parameter: exit 1, laid out" [ "$rc" -eq 1 ]
check "a struct bigger than the parameter: exit 1, laid out (2)" has "$err" "f32@0 i32@4 f64@8 f64@16: 24 bytes"
"${fir[@]}" --arg 'struct:{i8:1,f64:0.25}' --arg buf:f32[1024]=1 --arg out:f32[1024] --global taps=f32[16]=1
check "{i8,f64} is 16 bytes too (padding 7): fits" [ "$rc" -eq "$good_rc" ]
"${fir[@]}" --arg 'bytes:0000003f00040000000000000000d03f' --arg buf:f32[1024]=1 --arg out:f32[1024] --global taps=f32[16]=1
check "bytes:HEX of 16 bytes fits Params" [ "$rc" -eq "$good_rc" ]
"${fir[@]}" --arg 'bytes:0000003f000400000000000000000d03f' --arg buf:f32[1024]=1 --arg out:f32[1024]
check "bytes of odd length: exit 2, says so" [ "$rc" -eq 2 ]
check "bytes of odd length: exit 2, says so (2)" has "$err" "33 hex digits"
printf '0123456789abcdef' >"$dir/p.bin"
"${fir[@]}" --arg "bytes@8:@$dir/p.bin" --arg buf:f32[1024]=1 --arg out:f32[1024] --global taps=f32[16]=1
check "bytes@8:@file of 16 bytes fits Params" [ "$rc" -eq "$good_rc" ]
run "$CUCORE" run "$dir/t.cubin" --kernel desc --grid 1 --block 32 --arg 'struct@64:{f32[3]={1,2,3}}' --arg out:f32[32]
check "struct@64 fits a 64-byte-aligned descriptor" [ "$rc" -eq "$good_rc" ]
run "$CUCORE" run "$dir/t.cubin" --kernel desc --grid 1 --block 32 --arg 'struct:{f32[3]={1,2,3}}' --arg out:f32[32]
check "the same struct without @64: exit 1, sizes named" [ "$rc" -eq 1 ]
check "the same struct without @64: exit 1, sizes named (2)" has "$err" "is 64 bytes"
check "the same struct without @64: exit 1, sizes named (3)" has "$err" "12 bytes"
run "$CUCORE" run "$dir/t.cubin" --kernel big --grid 1 --block 32 --arg 'struct:{f32[1024]=iota}' --arg out:f32[32]
check "a 4 KiB parameter block" [ "$rc" -eq "$good_rc" ]
want=(); for t in $(seq 0 31); do want+=($((7999 - t))); done
run "$CUCORE" run "$dir/t.cubin" --kernel huge --grid 1 --block 32 --arg 'struct:{f32[8000]=iota}' --arg out:f32[32] --expect "1={$(IFS=,; echo "${want[*]}")}"
check "a 32000-byte parameter block (values checked on a GPU)" [ "$rc" -eq "$good_rc" ]
run "$CUCORE" run "$dir/t.cubin" --kernel huge --grid 1 --block 32 --arg 'struct:{f32[7999]=iota}' --arg out:f32[32]
check "a parameter block 4 bytes short: exit 1" [ "$rc" -eq 1 ]
check "a parameter block 4 bytes short: both sizes" has "$err" "31996 bytes"
run "$CUCORE" run "$dir/t.cubin" --kernel fir --grid 4 --block 256 --arg null --arg null --arg null
check "null for a struct parameter: exit 1, named" [ "$rc" -eq 1 ]
check "null for a struct parameter: exit 1, named (2)" has "$err" "argument 0 of \`fir\`"

# Module variables: sizes checked offline; C++ names through their name expressions.
"${fir[@]}" --arg 'struct:{f32:1,i32:1024,f64:0}' --arg buf:f32[1024]=1 --arg out:f32[1024] --global taps=f32[15]=1
check "--global of the wrong size: exit 1, both sizes" [ "$rc" -eq 1 ]
check "--global of the wrong size: exit 1, both sizes (2)" has "$err" "60 bytes"
check "--global of the wrong size: exit 1, both sizes (3)" has "$err" "64 bytes"
"${fir[@]}" --arg 'struct:{f32:1,i32:1024,f64:0}' --arg buf:f32[1024]=1 --arg out:f32[1024] --global nosuch=f32[16]=1
check "--global of a missing variable: exit 1, lists taps" [ "$rc" -eq 1 ]
check "--global of a missing variable: exit 1, lists taps (2)" has "$err" "taps"
"${fir[@]}" --arg 'struct:{f32:1,i32:1024,f64:0}' --arg buf:f32[1024]=1 --arg out:f32[1024] --read-global taps:f32[17]
check "--read-global past the variable: exit 1" [ "$rc" -eq 1 ]
check "--read-global past the variable: exit 1 (2)" has "$err" "64 bytes"
run "$CUCORE" run "$dir/t.cu" --arch sm_90 --kernel count --grid 1 --block 32 --arg out:f32[1] --global 'ns::coef<float>=f32[4]={1,2,3,4}' --read-global hits:u64 --expect hits=32
fallback=$(has "$err" "nvcc instead" && echo yes || echo no)
check "a C++ __constant__ template by name: no nvcc fallback" [ "$fallback" = no ]
check "a C++ __constant__ template by name: checked" [ "$rc" -eq "$good_rc" ]
run "$CUCORE" run "$dir/t.cu" --arch sm_90 --kernel count --grid 1 --block 32 --arg out:f32[1] --global 'ns::coef<float>=f32[3]={1,2,3}'
check "a C++ variable of the wrong size: exit 1, both sizes" [ "$rc" -eq 1 ]
check "a C++ variable of the wrong size: exit 1, both sizes (2)" has "$err" "12 bytes"
check "a C++ variable of the wrong size: exit 1, both sizes (3)" has "$err" "16 bytes"
run "$CUCORE" run "$dir/t.cubin" --kernel count --grid 1 --block 32 --arg out:f32[1] --expect nosuch=1
check "--expect of no output: exit 2, lists what can be" [ "$rc" -eq 2 ]
check "--expect of no output: exit 2, lists what can be (2)" has "$err" "these can be expected: 0"
run "$CUCORE" run "$dir/t.cubin" --kernel count --grid 1 --block 32 --arg out:f32[1] --expect 0=random
check "--expect random: exit 2" [ "$rc" -eq 2 ]

# Offline launch checks, with the messages of the GPU path.
run "$CUCORE" run "$dir/t.cubin" --kernel bounded --grid 1 --block 256 --arg out:f32[256]
check "block 256 for __launch_bounds__(128): exit 1" [ "$rc" -eq 1 ]
check "block 256 for __launch_bounds__(128): the limit" has "$err" "cucore run: bounded: kernel \`bounded\`: a block of 256x1x1 = 256 threads exceeds the kernel's maximum of 128 threads per block"
run "$CUCORE" run "$dir/t.cubin" --kernel bounded --grid 1 --block 128 --arg out:f32[256]
check "block 128 for __launch_bounds__(128) passes" [ "$rc" -eq "$good_rc" ]
run "$CUCORE" run "$dir/t.cubin" --kernel clustered --grid 3 --block 32 --arg out:f32[4]
check "grid 3 for __cluster_dims__(2): exit 1, the arithmetic" [ "$rc" -eq 1 ]
check "grid 3 for __cluster_dims__(2): exit 1, the arithmetic (2)" has "$err" "3 % 2 = 1"
run "$CUCORE" run "$dir/t.cubin" --kernel clustered --grid 4 --block 32 --arg out:f32[4]
check "grid 4 for __cluster_dims__(2) passes" [ "$rc" -eq "$good_rc" ]
run "$CUCORE" run "$dir/t.cubin" --kernel cluster12 --grid 24 --block 32 --arg out:f32[24]
check "a cluster of 12 passes offline (non-portable allowed)" [ "$rc" -eq "$good_rc" ]
run "$CUCORE" run "$dir/t.cubin" --kernel shared --grid 1 --block 32 --arg out:f32[32] --smem 200000
check "static 48000 + dynamic 200000 over sm_90's limit: exit 1" [ "$rc" -eq 1 ]
# (offline the limit is sm_90's, on a GPU device 0's: the rest of the message is the same)
check "shared memory: the arithmetic" has "$err" "cucore run: shared: kernel \`shared\`: 200000 bytes of dynamic shared memory + 48000 bytes of static shared memory exceed"
check "shared memory: the limit" has "$err" "maximum of 232448 bytes per block (at most 184448 dynamic bytes fit)"
run "$CUCORE" run "$dir/t.cubin" --kernel shared --grid 1 --block 32 --arg out:f32[32] --smem 184448
check "the largest dynamic size that fits passes" [ "$rc" -eq "$good_rc" ]

# Data files: clear errors, never a crash (exit 1: the command line was right).
npy="$(dirname "$0")/../data/npy"
for f in bad_big_endian bad_fortran bad_truncated bad_extra bad_huge_shape bad_overflow_shape bad_structured bad_header_len bad_magic bad_short bad_dict; do
  "${fir[@]}" --arg 'struct:{f32:1,i32:3,f64:0}' --arg "buf:f32[]=@$npy/$f.npy" --arg out:f32[3]
  check "$f.npy: exit 1 naming the file" [ "$rc" -eq 1 ]
  check "$f.npy: exit 1 naming the file (2)" has "$err" "$f.npy"
done
"${fir[@]}" --arg 'struct:{f32:1,i32:3,f64:0}' --arg "buf:f64[]=@$npy/f32_3.npy" --arg out:f32[3]
check "dtype mismatch: exit 1, both dtypes" [ "$rc" -eq 1 ]
check "dtype mismatch: exit 1, both dtypes (2)" has "$err" "'<f4'"
check "dtype mismatch: exit 1, both dtypes (3)" has "$err" "'<f8'"
"${fir[@]}" --arg 'struct:{f32:1,i32:3,f64:0}' --arg "buf:f32[4]=@$npy/f32_3.npy" --arg out:f32[3]
check "count mismatch: exit 1, both counts" [ "$rc" -eq 1 ]
check "count mismatch: exit 1, both counts (2)" has "$err" "holds 3 elements; the spec says [4]"
"${fir[@]}" --arg 'struct:{f32:1,i32:3,f64:0}' --arg "buf:f32[]=@$npy/f32_3.npy" --arg out:f32[3] --global taps=f32[16]=0
check "a good .npy with [] takes its count" [ "$rc" -eq "$good_rc" ]
head -c 1000000 /dev/urandom >"$dir/garbage.npy"
"${fir[@]}" --arg 'struct:{f32:1,i32:3,f64:0}' --arg "buf:f32[]=@$dir/garbage.npy" --arg out:f32[3]
check "random bytes as .npy: exit 1" [ "$rc" -eq 1 ]
check "random bytes as .npy: exit 1 (2)" has "$err" "garbage.npy"
"${fir[@]}" --arg 'struct:{f32:1,i32:3,f64:0}' --arg "buf:f32[]=@$dir" --arg out:f32[3]
check "a directory as a data file: exit 1" [ "$rc" -eq 1 ]
"${fir[@]}" --arg 'struct:{f32:1,i32:3,f64:0}' --arg "buf:f32[]=@$dir/none.bin" --arg out:f32[3]
check "a missing file: exit 1 naming it" [ "$rc" -eq 1 ]
check "a missing file: exit 1 naming it (2)" has "$err" "none.bin"

# Hostile specs: exit 2 with the spec quoted.
for bad in 'struct:{}' 'struct:{f32:1' 'struct@3:{f32:1}' 'struct:{pad:-1}' 'bytes:abc' 'bytes:zz' \
           'buf:f32[-4]=1' 'buf:f32[99999999999999999999]=1' 'buf:f32[4]={1,2}' 'inout:f32[4]' \
           'out:f32[4]=@x.npy' 'ptr:-1' 'f16:1x' 'bf16:' 'u64:18446744073709551616' 'i64:-9223372036854775809'; do
  "${fir[@]}" --arg "$bad"
  check "hostile spec '$bad': exit 2" [ "$rc" -eq 2 ]
  check "hostile spec '$bad': quoted" has "$err" "$bad"
done
for opt in "--graph 0" "--graph -1" "--graph x" "--graph 100001" "--repeat 0" "--warmup -1" "--rtol -1" "--atol nan" "--smem -5" "--grid 0" "--block 1,0" "--cluster 0"; do
  # shellcheck disable=SC2086
  "${fir[@]}" --arg 'struct:{f32:1,i32:3,f64:0}' --arg buf:f32[3]=1 --arg out:f32[3] $opt
  check "option '$opt': exit 2" [ "$rc" -eq 2 ]
done
"${fir[@]}" --arg 'struct:{f32:1,i32:3,f64:0}' --arg buf:f32[3]=1 --arg out:f32[3] --graph 100000 --repeat 10000
check "--graph x --repeat over 10^8 launches: exit 2" [ "$rc" -eq 2 ]
check "--graph x --repeat over 10^8 launches: exit 2 (2)" has "$err" "at most 100000000"
"${fir[@]}" --arg 'struct:{f32:1,i32:3,f64:0}' --arg buf:f32[3]=1 --arg out:f32[3] --graph 10 --repeat 3 --no-pool --global taps=f32[16]=1
check "--graph 10 --repeat 3 --no-pool parse and pass the checks" [ "$rc" -eq "$good_rc" ]
"${fir[@]}" --arg 'struct:{f32:1,i32:3,f64:0}' --arg buf:f32[3]=1 --arg out:f32[3] --graph
check "--graph without a value: exit 2" [ "$rc" -eq 2 ]
check "--graph without a value: exit 2 (2)" has "$err" "--graph needs a value"

# The README's worked example, as written there (the command's path replaced), and the same
# example in `cucore help run`.
root="$(cd "$(dirname "$0")/../.." && pwd)"
example=$(sed -n '/^cd examples\/fir$/,/^```$/p' "$root/README.md" | sed '1d;$d' | sed "s|\.\./\.\./build/bin/cucore|\"\$CUCORE\"|")
check "README: the worked example is there" has "$example" "--expect '2=@y_ref.npy'"
[ $gpu -eq 1 ] || example="$example --arch sm_90"
abs="$(cd "$(dirname "$CUCORE")" && pwd)/$(basename "$CUCORE")"
(cd "$root/examples/fir" && rm -f y.npy && CUCORE="$abs" eval "$example") >"$dir/ex.out" 2>"$dir/ex.err"; rc=$?
if [ $gpu -eq 1 ]; then
  check "README example: runs and matches y_ref.npy" [ "$rc" -eq 0 ]
  check "README example: runs and matches y_ref.npy (2)" grep -q "all 1024 elements match" "$dir/ex.out"
  rm -f "$root/examples/fir/y.npy"
else
  check "README example: every check passes without a GPU" [ "$rc" -eq 1 ]
  check "README example: every check passes without a GPU (2)" grep -q "3 arguments match kernel \`fir\`, the launch configuration fits sm_.* and the 1 module variables fit" "$dir/ex.err"
fi
run "$CUCORE" help run
check "help run: the same example" has "$out" "--expect '2=@y_ref.npy' --rtol 1e-5 --atol 1e-6"
check "help run: the same example (2)" has "$out" "--global 'taps=f32[]=@taps.npy'"
check "help run: the same example (3)" has "$out" "--graph N"

if [ $gpu -eq 0 ]; then
  run "$CUCORE" run "$dir/k.cubin" --kernel saxpy "${common[@]}" --arg f32:2.5 --arg buf:f32[1024]=random --arg out:f32[1024] --arg i32:1024
  check "right list, no GPU: exit 1" [ "$rc" -eq 1 ]
  check "right list, no GPU: says the arguments match" has "$err" "arguments match kernel"
fi
finish
