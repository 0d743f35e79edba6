#!/usr/bin/env bash
# The command's inputs: special files refused quickly and by kind, the
# size cap, text sources that are not text refused before any compiler runs, the nvcc fallback
# only for host code or a host header (recorded by a fake nvcc), an option NVRTC refuses is
# exit 2, compile logs cut at 50 lines with --log FILE, nvcc's JSON with the real arch and time.
source "$(dirname "$0")/lib.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
T="timeout 10"

# A fake nvcc: records each call, prints 120 lines with a terminal escape, and "compiles" by
# copying $FAKE_CUBIN to its -o path (exit 0), or fails (exit 1) without one.
cat >"$dir/nvcc" <<'SH'
#!/usr/bin/env bash
echo "$*" >>"$NVCC_CALLS"
for i in $(seq 1 120); do printf 'nvcc line %d \033[31mred\033[0m\n' "$i" >&2; done
out=
while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
[ -n "$FAKE_CUBIN" ] && cp "$FAKE_CUBIN" "$out" && exit 0
exit 1
SH
chmod +x "$dir/nvcc"
export CUCORE_NVCC="$dir/nvcc" NVCC_CALLS="$dir/calls"
nvcc_ran() { [ -s "$NVCC_CALLS" ]; }
reset_calls() { rm -f "$NVCC_CALLS"; }

cat >"$dir/k.cu" <<'CU'
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }
CU

# ---- special files: a quick, clear error naming the kind (23.2) ----
mkfifo "$dir/fifo.cu"
run $T "$CUCORE" compile "$dir/fifo.cu" --arch sm_90
check "FIFO with no writer: exit 1 at once, named a FIFO" eval '[ "$rc" -eq 1 ] && has "$err" "is a FIFO"'
for dev in /dev/zero /dev/urandom; do
  run $T "$CUCORE" compile "$dev" --arch sm_90
  check "$dev: exit 1 at once, a character device" eval '[ "$rc" -eq 1 ] && has "$err" "character device"'
done
run $T "$CUCORE" compile "$dir" --arch sm_90
check "directory: exit 1, said to be a directory" eval '[ "$rc" -eq 1 ] && has "$err" "is a directory"'
run $T "$CUCORE" run "$dir/k.cu" --arch sm_90 --kernel saxpy --arg f32:2 --arg "buf:f32[]=@$dir" \
  --grid 1 --block 4
check "run --arg @dir: a directory, not a bogus size" eval '[ "$rc" -ne 0 ] &&
  has "$err" "\`$dir\` is a directory" && ! has "$err" "out of host memory"'
truncate -s 1100M "$dir/big.cu" # sparse: no disk used
run $T "$CUCORE" compile "$dir/big.cu" --arch sm_90
check "past the size cap: exit 1 naming size and cap" eval '[ "$rc" -eq 1 ] &&
  has "$err" "is 1153433600 bytes; the most cucore reads is 1073741824 bytes"'
rm -f "$dir/big.cu"
run $T "$CUCORE" compile - --arch sm_90 -o "$dir/stdin.cubin" <"$dir/k.cu"
check "- reads standard input" eval '[ "$rc" -eq 0 ] && [ -s "$dir/stdin.cubin" ]'

# ---- text sources that are not text: refused before any compiler (23.3) ----
printf '__global__ void k(int *p) { *p = 1; }\n\0junk' >"$dir/nul.cu"
reset_calls
run $T "$CUCORE" compile "$dir/nul.cu" --arch sm_90
check "NUL byte: exit 1 with its offset" eval '[ "$rc" -eq 1 ] && has "$err" "is not text: NUL byte at offset 38"'
check "NUL byte: no nvcc" eval '! nvcc_ran'
for seed in 1 2 3; do
  reset_calls
  head -c 200000 /dev/urandom >"$dir/rand.cu"
  run $T "$CUCORE" compile "$dir/rand.cu" --arch sm_90
  check "random bytes ($seed): exit 1, not text, no nvcc" eval '[ "$rc" -eq 1 ] && has "$err" "is not text" && ! nvcc_ran'
  head -c 200000 /dev/urandom | tr -d '\000' >"$dir/rand.ptx"
  run $T "$CUCORE" compile "$dir/rand.ptx" --arch sm_90
  check "random bytes without NUL as PTX ($seed): invalid UTF-8" eval '[ "$rc" -eq 1 ] && has "$err" "invalid UTF-8"'
  head -c 20000 /dev/urandom | tr -dc 'a-z{}();=* \n' >"$dir/garbage.cu"
  run $T "$CUCORE" compile "$dir/garbage.cu" --arch sm_90
  check "text garbage ($seed): exit 1 and nvcc never runs" eval '[ "$rc" -eq 1 ] && ! nvcc_ran'
done
printf '// caf\xe9 (Latin-1 in a comment)\n__global__ void k(int *p) { *p = 1; }\n' >"$dir/latin1.cu"
run $T "$CUCORE" compile "$dir/latin1.cu" --arch sm_90 -o "$dir/latin1.cubin"
check "one Latin-1 byte in a comment: still compiled" eval '[ "$rc" -eq 0 ]'

# ---- the nvcc fallback: only what nvcc can fix (23.3, 28.2) ----
reset_calls
run $T "$CUCORE" inspect "$dir/k.cu" --arch sm_90 --kernel nope
check "inspect --kernel typo: exit 1, no nvcc" eval '[ "$rc" -eq 1 ] && ! nvcc_ran && has "$err" "name expression"'
run $T "$CUCORE" compile "$dir/k.cu" --arch sm_90 --name-expr 'nope<int>' -o "$dir/x.cubin"
check "compile --name-expr typo: exit 1, no nvcc" eval '[ "$rc" -eq 1 ] && ! nvcc_ran'
printf '__global__ void k(int *p) { *p = 1 }\n' >"$dir/syntax.cu"
run $T "$CUCORE" compile "$dir/syntax.cu" --arch sm_90
check "syntax error: exit 1, no nvcc" eval '[ "$rc" -eq 1 ] && ! nvcc_ran && has "$err" "syntax.cu:1:"'
run $T "$CUCORE" compile "$dir/k.cu" --arch sm_90 -D '=1' -o "$dir/x.cubin"
check "-D '=1': exit 2, no nvcc" eval '[ "$rc" -eq 2 ] && ! nvcc_ran && has "$err" "is not a macro definition"'
run $T "$CUCORE" compile "$dir/k.cu" --arch sm_90 --nvcc -D '=1' -o "$dir/x.cubin"
check "-D '=1' with --nvcc: exit 2, no nvcc" eval '[ "$rc" -eq 2 ] && ! nvcc_ran'
check "refused compiles wrote nothing" eval '[ ! -e "$dir/x.cubin" ]'

printf '#include <cstdio>\n__global__ void k(int *p) { *p = 1; }\n' >"$dir/host.cu"
run $T "$CUCORE" compile "$dir/host.cu" --arch sm_90
check "host header: nvcc runs, the reason said" eval 'nvcc_ran && has "$err" "host header <cstdio>"'
check "nvcc failing: exit 1" eval '[ "$rc" -eq 1 ]'
# nvcc's 120 lines: cut at 50, escapes filtered.
check "nvcc's log cut after 50 lines" eval 'has "$err" "nvcc line 50 " && ! has "$err" "nvcc line 51 " &&
  has "$err" "(70 more lines: --log FILE)"'
check "nvcc's log filtered (no raw ESC)" bash -c '! grep -q $'"'"'\033'"'"' <<<"$1"' _ "$err"
check "nvcc's log: escape shown as \\x1b" has "$err" '\x1b[31mred'
reset_calls
run $T "$CUCORE" compile "$dir/host.cu" --arch sm_90 --log "$dir/full.log"
check "--log FILE: the whole log written" [ "$(grep -c 'nvcc line' "$dir/full.log")" -eq 120 ]
check "--log FILE: named in the cut line" eval 'has "$err" "(70 more lines: all 120 in \`$dir/full.log\`)"'
printf 'int main() { return 0; }\n__global__ void k(int *p) { *p = 1; }\n' >"$dir/main.cu"
reset_calls
run $T "$CUCORE" compile "$dir/main.cu" --arch sm_90
check "host code: nvcc runs, the reason said" eval 'nvcc_ran && has "$err" "it has host code"'

# nvcc's result: the real arch and time in the JSON; name expressions found or refused.
"$CUCORE" compile "$dir/k.cu" --arch sm_90 -o "$dir/real.cubin" >/dev/null 2>&1
export FAKE_CUBIN="$dir/real.cubin"
run $T "$CUCORE" compile "$dir/host.cu" --arch sm_90 --json -o "$dir/h.cubin"
check "nvcc JSON: exit 0" [ "$rc" -eq 0 ]
check "nvcc JSON: arch 90 and a compile time" python3 -c '
import json,sys; d=json.load(sys.stdin); assert d["arch"]==90 and d["compile_ms"]>0, d' <<<"$out"
run $T "$CUCORE" compile "$dir/host.cu" --arch sm_90 --name-expr saxpy -o "$dir/h.cubin"
check "nvcc: a name expression that names a kernel is found" eval '[ "$rc" -eq 0 ]'
run $T "$CUCORE" compile "$dir/host.cu" --arch sm_90 --name-expr 'scale<float>' -o "$dir/h2.cubin"
check "nvcc: a name expression naming no kernel fails" eval '[ "$rc" -eq 1 ] && has "$err" "no kernel \`scale<float>\`" &&
  [ ! -e "$dir/h2.cubin" ]'
unset FAKE_CUBIN

# nvcc gets the compile options in its own spelling, from the library's reading of them (not from a
# table of its own): bools that are off and aliases included, in the order NVRTC gets them.
reset_calls
run $T "$CUCORE" compile "$dir/k.cu" --nvcc --arch sm_80 -DA=1 -UB -I "$dir" --std c++17 \
  --fmad=false --prec-div=false -rdc --pre-include cstdint --use-fast-math -G --maxrregcount 64 \
  --ptxas-option -v -o "$dir/n.cubin"
words=$(cat "$NVCC_CALLS")
check "nvcc's spelling of the compile options" eval 'has "$words" "-cubin -std=c++17 -DA=1 -UB -I$dir \
--pre-include=cstdint -G -use_fast_math -prec-div=false -fmad=false -maxrregcount=64 -rdc=true \
-Xptxas=-v -arch=sm_80 -o "'

# ---- NVRTC's own log is cut too ----
{ for i in $(seq 1 40); do echo "__global__ void k$i(int *p) { *p = undefined_$i; }"; done; } >"$dir/many.cu"
run $T "$CUCORE" compile "$dir/many.cu" --arch sm_90 --log "$dir/many.log"
nerr=$(grep -c 'undefined_' <<<"$err"); nlog=$(grep -c 'is undefined' "$dir/many.log")
check "NVRTC log: exit 1, cut with the count" eval '[ "$rc" -eq 1 ] && has "$err" "more lines: all" &&
  [ "$nerr" -lt 40 ] && [ "$nlog" -eq 40 ]'
finish
