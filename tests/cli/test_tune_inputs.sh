#!/usr/bin/env bash
# cucore tune on the spaces users bring: every value reaches every output intact (a value with
# a space stays one value in the header, the CSV, the JSON, the compile), no output ever
# overwrites an input (the source, the space file, an @FILE, the store), texts longer than any
# buffer the tune ever had come back whole (names, values, -D text, JSON), one value has one
# meaning ("010" refused, "0x10" and "16" one value twice), a value the source #defines itself
# is named, arguments are checked as `cucore run` checks them (dry runs too), a kernel or a
# template hole that names nothing stops the tune once, huge spaces are said and gated before
# compiling, restriction errors are counted and named. Dry runs need NVRTC, no GPU; measured
# tunes run on the fake driver (timings mean nothing there).
source "$(dirname "$0")/lib.sh"
fake="$(cd "$(dirname "$CUCORE")/.." && pwd)/lib/libcucore_fake_driver.so"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export CUCORE_CACHE_DIR="$dir/cache"
cat >"$dir/v.cu" <<'CU'
extern "C" __global__ void k(VT *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = (VT)(SCALE);
}
CU
dry() { run timeout 120 "$CUCORE" tune "$@" --arch sm_90 --jobs 2 --dry-run; }
fake_tune() { run timeout 120 env CUCORE_LIBCUDA="$fake" "$CUCORE" tune "$@" --cache hot --jobs 2; }

# 1. A value with a space, and an expression value, are one value each everywhere.
dry "$dir/v.cu" --kernel k --param 'VT=unsigned int,float' --param 'SCALE=2 * 3' \
  --param block_size_x=32,64 --problem-size 256 --json --csv "$dir/v.csv"
check "space values: exit 0" [ "$rc" -eq 0 ]
check "space values: JSON params are whole values" python3 -c '
import json, sys
d = json.load(sys.stdin)
vals = sorted({(c["params"]["VT"], c["params"]["SCALE"]) for c in d["configs"]})
assert vals == [("float", "2 * 3"), ("unsigned int", "2 * 3")], vals
assert all(c["verdict"] == "runnable" for c in d["configs"]), [c["verdict"] for c in d["configs"]]
' <<<"$out"
check "space values: every CSV row has the header's columns, the values whole" python3 -c '
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
assert all(len(r) == len(rows[0]) for r in rows), [len(r) for r in rows]
h = rows[0]
vt = {r[h.index("VT")] for r in rows[1:]}
assert vt == {"unsigned int", "float"}, vt
assert {r[h.index("SCALE")] for r in rows[1:]} == {"2 * 3"}
' "$dir/v.csv"
run "$CUCORE" tune "$dir/v.cu" --kernel k --param "$(printf 'VT=a\nb')" --arch sm_90 --dry-run
check "a value with a newline is refused (exit 2), naming the byte" \
  bash -c '[ "$1" -eq 2 ] && grep -q "control byte 0x0a" <<<"$2"' _ "$rc" "$err"
check "the refusal names no C API call" bash -c '! grep -q "cucore_tune_" <<<"$1"' _ "$err"

# The header of a measured tune (fake driver), included by a C program that uses the values.
if [ -f "$fake" ]; then
  fake_tune "$dir/v.cu" --kernel k --param 'VT=unsigned int' --param 'SCALE=2 * 3' \
    --param block_size_x=32,64 --problem-size 256 --arg 'out:u32[256]' --arg i32:256 \
    --db "$dir/v.jsonl" --emit-header "$dir/best.h" --csv "$dir/m.csv"
  check "header: exit 0" [ "$rc" -eq 0 ]
  check "header: the value with a space is one #define" grep -qx '#define VT unsigned int' "$dir/best.h"
  check "header: the expression value is one #define" grep -qx '#define SCALE 2 \* 3' "$dir/best.h"
  cat >"$dir/use.c" <<'C'
#include "best.h"
#include <stdio.h>
int main(void) {
  VT v = SCALE; /* unsigned int, 6 */
  return sizeof(VT) == sizeof(unsigned int) && v == 6 && (VT)-1 > 0 ? 0 : 1;
}
C
  check "header: a program compiled against it sees unsigned int and 6" \
    bash -c 'cc -I"$1" -o "$1/use" "$1/use.c" && "$1/use"' _ "$dir"
  check "reproduce: the -D with a space is one shell word" has "$out" "'-DVT=unsigned int'"
fi

# 2. No output is an input: the source, the space file, an @FILE, the store.
printf '{"tune_params": {"block_size_x": [32, 64]}, "problem_size": 256}' >"$dir/s.json"
head -c 1024 /dev/zero >"$dir/in.bin"
cp "$dir/v.cu" "$dir/v_copy.cu"
run "$CUCORE" tune "$dir/v.cu" --kernel k --param VT=float --param SCALE=1 \
  --param block_size_x=32 --db "$dir/v.cu" --dry-run
check "--db onto the kernel source: refused (exit 2)" \
  bash -c '[ "$1" -eq 2 ] && grep -q "same file as the input" <<<"$2"' _ "$rc" "$err"
run "$CUCORE" tune "$dir/v.cu" --kernel k --space "$dir/s.json" --param VT=float --param SCALE=1 \
  --csv "$dir/s.json" --dry-run
check "--csv onto the --space file: refused" [ "$rc" -eq 2 ]
run "$CUCORE" tune "$dir/v.cu" --kernel k --param VT=float --param SCALE=1 --param block_size_x=32 \
  --arg "f32[256]=@$dir/in.bin" --arg i32:256 --t4 "$dir/in.bin" --dry-run
check "--t4 onto an @FILE input: refused, the input untouched" \
  bash -c '[ "$1" -eq 2 ] && [ "$(wc -c <"$2")" -eq 1024 ]' _ "$rc" "$dir/in.bin"
run "$CUCORE" tune "$dir/v.cu" --kernel k --param VT=float --param SCALE=1 --param block_size_x=32 \
  --db "$dir/store.jsonl" --csv "$dir/store.jsonl" --dry-run
check "--csv onto the --db store: refused" [ "$rc" -eq 2 ]
ln -s "$dir/v.cu" "$dir/link.cu"
run "$CUCORE" tune "$dir/v.cu" --kernel k --param VT=float --param SCALE=1 --param block_size_x=32 \
  --plot "$dir/link.cu" --dry-run
check "--plot onto a symlink to the source: refused" [ "$rc" -eq 2 ]
run "$CUCORE" tune "$dir/v.cu" --kernel k --param VT=float --param SCALE=1 --param block_size_x=32 \
  --db "$dir/no/such/folder/db.jsonl" --dry-run
check "--db into a missing folder: refused like every output" \
  bash -c '[ "$1" -eq 2 ] && grep -q "does not exist" <<<"$2"' _ "$rc" "$err"
check "the source is untouched by all of it" cmp -s "$dir/v.cu" "$dir/v_copy.cu"

# 3 and 4. Texts past every old buffer: 4 KB of -D text, a 300-byte name, 1 KB of JSON params.
long=$(printf 'N%.0s' $(seq 300))
cat >"$dir/long.cu" <<CU
static_assert(REPS == 12345, "REPS reached the compile cut");
static_assert($long == 7, "the long name reached the compile cut");
extern "C" __global__ void k(float *y) { y[threadIdx.x] = REPS + $long; }
CU
pad=()
for i in $(seq 60); do pad+=(--param "PAD_$(printf 'x%.0s' $(seq 60))_$i=1"); done
dry "$dir/long.cu" --kernel k --param REPS=12345 --param "$long=7" "${pad[@]}" \
  --param block_size_x=32 --problem-size 32 --json
check "long texts: exit 0, the compile saw REPS=12345 and the 300-byte name whole" \
  bash -c '[ "$1" -eq 0 ]' _ "$rc"
check "long texts: --json is valid JSON with every parameter" python3 -c '
import json, sys
d = json.load(sys.stdin)
p = d["configs"][0]["params"]
assert p["REPS"] == 12345 and len(p) == 63 and any(len(k) == 300 for k in p), len(p)
assert d["counts"]["compiles_ok"] == 1, d["counts"]
' <<<"$out"

# 5. One value, one meaning.
dry "$dir/v.cu" --kernel k --param VT=float --param SCALE=010
check "'010' is refused (octal in C, 10 in Python)" \
  bash -c '[ "$1" -eq 2 ] && grep -q "leading zero" <<<"$2"' _ "$rc" "$err"
dry "$dir/v.cu" --kernel k --param VT=float --param SCALE=0x10,16
check "'0x10' and '16' are one value twice" \
  bash -c '[ "$1" -eq 2 ] && grep -q "are equal" <<<"$2"' _ "$rc" "$err"
dry "$dir/v.cu" --kernel k --param VT=float --param SCALE=0x10,17 --param block_size_x=32 --json
check "'0x10' reaches JSON as 16" python3 -c '
import json, sys
assert sorted(c["params"]["SCALE"] for c in json.load(sys.stdin)["configs"]) == [16, 17]' <<<"$out"

# 6. A parameter the source #defines itself: the compiler's warning once, and the values
# named as changing nothing.
cat >"$dir/def.cu" <<'CU'
#define REPS 4
extern "C" __global__ void k(float *y) { for (int r = 0; r < REPS; r++) y[threadIdx.x] += r; }
CU
dry "$dir/def.cu" --kernel k --param REPS=1,2,3 --param block_size_x=32 --problem-size 32
check "self-defined: the redefinition warning is shown once" \
  bash -c '[ "$(grep -c "compiler warning (3 compiles" <<<"$1")" -eq 1 ]' _ "$out"
check "self-defined: REPS changes nothing in the code" \
  has "$out" "parameter \`REPS\` changes nothing in the code"
check "self-defined: 3 compiles gave 1 distinct cubin" has "$out" "3 compiles gave 1 distinct cubins"

# 7. Arguments are checked as `cucore run` checks them, dry runs included.
cat >"$dir/p.cu" <<'CU'
extern "C" __global__ void k(float *y, int n) { if (threadIdx.x < n) y[threadIdx.x] = n; }
CU
dry "$dir/p.cu" --kernel k --param block_size_x=32,64 --arg f64:1 --arg i32:4
check "a double for a pointer: refused as run refuses it" \
  bash -c '[ "$1" -ne 0 ] && grep -q "cucore tune: --arg f64:1: argument 0 of .k." <<<"$2"' \
  _ "$rc" "$err"
check "the message names tune, not run" bash -c '! grep -q "cucore run:" <<<"$1"' _ "$err"
dry "$dir/p.cu" --kernel k --param block_size_x=32 --arg 'out:f32[32]'
check "a missing argument: refused in a dry run" \
  bash -c '[ "$1" -ne 0 ] && grep -q "takes 2 parameters, 1 was given" <<<"$2"' _ "$rc" "$err"
dry "$dir/p.cu" --kernel k --param block_size_x=32 --arg "f32[32]=@$dir/missing.bin" --arg i32:1
check "a missing @FILE: refused in a dry run" [ "$rc" -ne 0 ]
if [ -f "$fake" ]; then
  fake_tune "$dir/p.cu" --kernel k --param block_size_x=32,64 --problem-size 64 \
    --arg 'buf:f32[64]=1' --arg i32:64 --db "$dir/p.jsonl"
  check "no output to check: nothing is verified, said" \
    bash -c 'grep -q "nothing is verified" <<<"$1" && grep -q "| unverified" <<<"$1"' _ "$out"
  check "no output to check: the rows are not marked ok" bash -c '! grep -q "| ok" <<<"$1"' _ "$out"
fi

# 14. A template hole naming no parameter: exit 2 before any compile; a kernel that is not in
# the file: said once, with the kernels it has.
dry "$dir/p.cu" --kernel 'k<{BS},{X}>' --param BS=32
check "a hole naming no parameter: exit 2, before compiling" \
  bash -c '[ "$1" -eq 2 ] && grep -q "{X}. names no parameter" <<<"$2" && ! grep -q "compile" <<<"$3"' \
  _ "$rc" "$err" "$out"
dry "$dir/p.cu" --kernel nosuch --param block_size_x=32,64,128
check "a kernel not in the file: said once with what it has" \
  bash -c '[ "$1" -ne 0 ] && [ "$(grep -c "no kernel .nosuch. in" <<<"$2")" -eq 1 ] && grep -q "it has: k" <<<"$2"' \
  _ "$rc" "$err"

# 11. Parameters nothing names, and a gate on huge compile counts.
dry "$dir/p.cu" --kernel k --param A=1..1000 --param B=1..1000 --param block_size_x=32
check "10^6 compiles: refused without --yes and without a terminal (exit 2), quickly" \
  bash -c '[ "$1" -eq 2 ] && grep -q "1000000 distinct compiles" <<<"$2" && grep -q -- "--yes" <<<"$2"' \
  _ "$rc" "$err"
check "10^6 compiles: the parameters nothing names are warned of" \
  bash -c 'grep -q "parameter .A. is named by no word" <<<"$1" && grep -q "parameter .B. is named" <<<"$1"' \
  _ "$err"

# 12. A restriction that cannot be evaluated is counted and named, not silent.
dry "$dir/p.cu" --kernel k --param block_size_x=32,64 --param D=0,1 --restrict 'block_size_x % D == 0' \
  --json
check "restriction errors: counted apart" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["counts"]["restriction_errors"] == 2 and d["counts"]["after_restrictions"] == 2, d["counts"]
assert d["first_restriction_error"]["params"]["D"] == 0, d["first_restriction_error"]
' <<<"$out"
check "restriction errors: named on stderr with the first configuration" \
  bash -c 'grep -q "could not be evaluated for 2 configurations" <<<"$1" && grep -q "D=0" <<<"$1"' _ "$err"

# 17. A -D option that names a parameter; waves without an SM count; --log written.
dry "$dir/p.cu" --kernel k --param block_size_x=32 --param REPS=1,2 -DREPS=9
check "-DREPS=9 with --param REPS: refused (exit 2)" \
  bash -c '[ "$1" -eq 2 ] && grep -q "defines .REPS., which is a parameter" <<<"$2"' _ "$rc" "$err"
# sm_80: a table's limits, no SM count (an sm_90 GPU here would give its own)
run timeout 120 "$CUCORE" tune "$dir/def.cu" --kernel k --param REPS=1,2 --param block_size_x=32 \
  --problem-size 32 --arch sm_80 --dry-run --log "$dir/tune.log"
check "waves without an SM count: n/a" has "$out" "waves n/a tail n/a"
check "--log: written, with the warnings" grep -q "warning (2 compiles" "$dir/tune.log"
# 3. Texts past the old buffers, measured (fake driver): every result stored whole and resumed.
if [ -f "$fake" ]; then
  cat >"$dir/lm.cu" <<CU
extern "C" __global__ void k(float *y, int n) { if (threadIdx.x < n) y[threadIdx.x] = REPS + $long; }
CU
  lm() { fake_tune "$dir/lm.cu" --kernel k --param REPS=1,2 --param "$long=7" "${pad[@]}" \
    --param block_size_x=32 --problem-size 32 --arg 'out:f32[32]' --arg i32:32 \
    --db "$dir/lm.jsonl" --json; }
  lm
  check "long texts measured: both configurations measured and stored" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["measured"] == 2 and d["failed"] == 0, (d["measured"], d["failed"])
lines = [json.loads(l) for l in open(sys.argv[1])]
assert len([l for l in lines if len(json.dumps(l["config"])) > 4096]) >= 2
' "$dir/lm.jsonl" <<<"$out"
  lm
  check "long texts measured: a rerun resumes both, measures nothing" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["measured"] == 0 and d["from_store"] == 2, (d["measured"], d["from_store"])' <<<"$out"

# 17. The reproduce line keeps every check of the tune: --expect, --rtol, --atol, --seed.
  fake_tune "$dir/p.cu" --kernel k --param block_size_x=32,64 --problem-size 64 \
    --arg 'out:f32[64]' --arg i32:64 --expect 0=0 --rtol 0.001 --atol 0.5 --seed 7 \
    --db "$dir/r.jsonl" --finalists 0
  check "reproduce: --expect, --rtol, --atol and --seed kept" bash -c '
    l=$(grep "^reproduce: " <<<"$1")
    grep -q -- "--expect 0=0" <<<"$l" && grep -q -- "--rtol 0.001" <<<"$l" &&
    grep -q -- "--atol 0.5" <<<"$l" && grep -q -- "--seed 7" <<<"$l"' _ "$out"
fi

# 17. A compile time-out is named as one (not a compile error), in the text and in JSON.
printf 'extern "C" __global__ void k(float *y) { y[0] = REPS; } /* %s */\n' "$RANDOM$$" \
  >"$dir/to.cu" # a source no earlier run compiled: no cache hit beats the limit
dry "$dir/to.cu" --kernel k --param REPS=1,2 --param block_size_x=32 --problem-size 32 \
  --compile-timeout 0.001 --json
check "compile time-out: its own verdict" python3 -c '
import json, sys
d = json.load(sys.stdin)
v = {c["verdict"] for c in d["configs"]}
assert v == {"compile-timeout"}, v
assert d["counts"]["compile_timeouts"] == 2 and d["counts"]["compiles_ok"] == 0, d["counts"]' <<<"$out"

# 10. A space file of 100 000 parameters and one of 200 000 values: read, counted and reported
# in seconds (the repeat checks are hashed or sorted, never quadratic).
python3 -c '
import json, sys
json.dump({"tune_params": {"p%d" % i: [1] for i in range(100000)}}, open(sys.argv[1], "w"))
json.dump({"tune_params": {"v": list(range(200000))}}, open(sys.argv[2], "w"))' \
  "$dir/many.json" "$dir/big.json"
# A dry run without an arch (the GPU hidden where there is one): counted, nothing compiled.
run timeout 60 env CUDA_VISIBLE_DEVICES= "$CUCORE" tune "$dir/p.cu" --kernel k \
  --space "$dir/many.json" --dry-run --json
check "100 000 parameters: done within a minute" [ "$rc" -eq 0 ]
run timeout 60 env CUDA_VISIBLE_DEVICES= "$CUCORE" tune "$dir/p.cu" --kernel k \
  --space "$dir/big.json" --dry-run --json
check "200 000 values: done within a minute" [ "$rc" -eq 0 ]
# With an arch the one configuration of 100 000 -D options (1.2 MB of option text) compiles:
# the compile process takes the whole text.
run timeout 120 "$CUCORE" tune "$dir/p.cu" --kernel k --space "$dir/many.json" --dry-run --json \
  --arch sm_90
check "100 000 parameters with an arch: exit 0" [ "$rc" -eq 0 ]
check "100 000 parameters with an arch: compiled, runnable" has "$out" '"verdict": "runnable"'
# With an arch, 200 000 distinct compiles wait for --yes, as a measured tune does.
run timeout 60 "$CUCORE" tune "$dir/p.cu" --kernel k --space "$dir/big.json" --dry-run --arch sm_90
check "200 000 values with an arch: the gate asks for --yes" \
  bash -c '[ "$1" -eq 2 ] && grep -q "pass --yes" <<<"$2"' _ "$rc" "$err"
finish
