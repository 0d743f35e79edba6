#!/usr/bin/env bash
# Restrictions as Kernel Tuner users write them, counted as Python counts them: for each space
# below, python3 itself evaluates every restriction (eval, as Kernel Tuner's brute force does)
# over itertools.product of the values, and cucore's count after restrictions must be the same.
# Strings and booleans as values, a lambda refused with what to write instead, and expressions
# that crashed the parser or the evaluator (30 000 chained **, a 100 000-term sum) refused with
# the limit named. No compile: no arch needed.
source "$(dirname "$0")/lib.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export CUCORE_CACHE_DIR="$dir/cache"
printf 'extern "C" __global__ void k(float *y) { y[0] = 1; }\n' >"$dir/k.cu"

# same_count SPACE.json: cucore's counts against Python's own evaluation of the file.
same_count() {
  run timeout 120 "$CUCORE" tune "$dir/k.cu" --kernel k --space "$1" --dry-run --json
  [ "$rc" -eq 0 ] || { echo "  exit $rc: $err"; return 1; }
  printf '%s' "$out" >"$dir/report.json"
  python3 - "$1" "$dir/report.json" <<'PY'
import itertools, json, sys, warnings
warnings.simplefilter("ignore")  # Python warns on `is not` with a literal; it still evaluates it
space = json.load(open(sys.argv[1]))
p = space["tune_params"]
r = space.get("restrictions", [])
r = [r] if isinstance(r, str) else r
names = list(p)
want = 0
for values in itertools.product(*p.values()):
    env = dict(zip(names, values))
    if all(eval(x, {}, env) for x in r):
        want += 1
got = json.load(open(sys.argv[2]))["counts"]["after_restrictions"]
raw = 1
for v in p.values(): raw *= len(v)
assert got == want, "cucore %d, python %d of %d" % (got, want, raw)
PY
}

# Kernel Tuner's matmul example space (288 raw), its restriction and the idioms users write.
cat >"$dir/matmul.json" <<'JSON'
{"tune_params": {"block_size_x": [16, 32, 64], "block_size_y": [1, 2, 4, 8, 16, 32],
                 "tile_size_x": [1, 2, 4, 8], "tile_size_y": [1, 2, 4, 8]},
 "restrictions": ["block_size_x == block_size_y * tile_size_y"]}
JSON
check "matmul: the count Python gives" same_count "$dir/matmul.json"
cat >"$dir/idioms.json" <<'JSON'
{"tune_params": {"block_size_x": [16, 32, 64, 128], "block_size_y": [1, 2, 4, 8, 16, 32],
                 "tile_size_x": [1, 2, 4, 8], "tile_size_y": [1, 2, 4, 8]},
 "restrictions": [
   "block_size_x in [32, 64, 128]",
   "tile_size_x not in (8,)",
   "block_size_y in range(1, 17)",
   "(block_size_x * block_size_y if tile_size_y > 1 else block_size_x) <= 1024",
   "int(block_size_x / 3) >= 10",
   "block_size_x & (block_size_x - 1) == 0",
   "(tile_size_x | tile_size_y) < 16 and tile_size_x ^ tile_size_y != 3",
   "block_size_x >> 4 >= 2 and 1 << tile_size_y <= 256",
   "~tile_size_x < 0",
   "any([tile_size_x == 1, tile_size_y == 1, block_size_y == 4])",
   "all([block_size_x >= 32, len([1, 2]) == 2])",
   "round(block_size_x / 48) >= 1",
   "block_size_y is not 32",
   "min(block_size_x, 64) * max([tile_size_x, tile_size_y]) <= 512",
   "not (block_size_x == 128 and block_size_y == 16)",
   "abs(tile_size_x - tile_size_y) <= 4",
   "block_size_x // tile_size_x % 2 == 0 and 2 ** tile_size_y <= 64"]}
JSON
check "Kernel Tuner's idioms: in, not in, range, if-else, int, & | ^ << >> ~, any, all, len, round, is not, min/max, not, abs, //, %, **" \
  same_count "$dir/idioms.json"
cat >"$dir/strings.json" <<'JSON'
{"tune_params": {"dtype": ["float", "double", "half"], "vec": [1, 2, 4], "use_shared": [true, false]},
 "restrictions": ["dtype == 'float' or vec <= 2", "dtype != \"half\" or use_shared",
                  "dtype in ['float', 'half'] or vec == 1", "use_shared == True or vec > 1",
                  "len(dtype) >= 4 and 'ou' not in dtype or dtype < 'e'"]}
JSON
check "strings and booleans as values, restricted as Python restricts them" \
  same_count "$dir/strings.json"

run "$CUCORE" tune "$dir/k.cu" --kernel k --param A=1,2 --restrict 'lambda p: p["A"] > 1' --dry-run
check "a lambda: refused (exit 2), saying what to write instead" \
  bash -c '[ "$1" -eq 2 ] && grep -q "boolean expression over the parameter" <<<"$2"' _ "$rc" "$err"

pow=$(python3 -c 'print("**".join(["2"] * 30000))') # 90 KB: one argument (the limit is 128 KB)
run timeout 60 "$CUCORE" tune "$dir/k.cu" --kernel k --param A=1 --restrict "$pow" --dry-run
check "30 000 chained ** : refused with the limit named (no crash)" \
  bash -c '[ "$1" -eq 2 ] && grep -q "limit" <<<"$2"' _ "$rc" "$err"
python3 -c '
import json; json.dump({"tune_params": {"A": [1]}, "restrictions": [" + ".join(["A"] * 100000) + " > 0"]},
                       open("'"$dir"'/sum.json", "w"))'
run timeout 60 "$CUCORE" tune "$dir/k.cu" --kernel k --space "$dir/sum.json" --dry-run
check "a 100 000-term sum in a --space restriction: refused with the limit named (no crash)" \
  bash -c '[ "$1" -ne 0 ] && [ "$1" -lt 128 ] && grep -q "limit" <<<"$2"' _ "$rc" "$err"
deep=$(python3 -c 'print("(" * 3000 + "1" + ")" * 3000)')
run timeout 60 "$CUCORE" tune "$dir/k.cu" --kernel k --param A=1 --grid "$deep" --dry-run
check "3000 nested parentheses in --grid: refused, no crash" \
  bash -c '[ "$1" -eq 2 ] && grep -q "levels" <<<"$2"' _ "$rc" "$err"
finish
