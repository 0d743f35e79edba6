#!/usr/bin/env bash
# cucore tune on a space too big to list: Kernel Tuner's convolution example's parameters
# (3 145 728 raw configurations, 1 867 776 valid) counted in seconds and a few megabytes, the
# reports summarising instead of printing a line per configuration (--rows all to list them,
# --rows N to move the limit), a --csv that would be cut refused before anything runs, and a
# space under the limit still listed whole. A dry run without an arch: no GPU, no compiler.
source "$(dirname "$0")/lib.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export CUCORE_CACHE_DIR="$dir/cache"
export CUDA_VISIBLE_DEVICES= # no arch on a GPU machine either: a dry run then compiles nothing
cat >"$dir/conv.cu" <<'CU'
extern "C" __global__ void convolution_kernel(float *out, const float *in, const float *f) {
  out[blockIdx.x * block_size_x + threadIdx.x] = in[0] * f[0] * tile_size_x * tile_size_y;
}
CU
cat >"$dir/conv.json" <<'JSON'
{"kernel_name": "convolution_kernel",
 "tune_params": {"filter_height": [3,5,7,9,11,13,15,17,19,21,23,25,27,29,31,33],
  "filter_width": [3,5,7,9,11,13,15,17,19,21,23,25,27,29,31,33],
  "block_size_x": [16,32,48,64,80,96,112,128], "block_size_y": [1,2,4,8,16,32],
  "tile_size_x": [1,2,3,4,5,6,7,8], "tile_size_y": [1,2,3,4,5,6,7,8],
  "use_padding": [0,1], "read_only": [0,1]},
 "restrictions": ["use_padding==0 or (block_size_x % 32 != 0)"],
 "problem_size": [4096, 4096],
 "grid_div_x": ["block_size_x", "tile_size_x"], "grid_div_y": ["block_size_y", "tile_size_y"]}
JSON

# 1. Counted, not listed: the counts Kernel Tuner reports, a summary line, a small output, and
#    (measured by /usr/bin/time when it is there) a few megabytes of memory.
timed=()
[ -x /usr/bin/time ] && timed=(/usr/bin/time -f "%M KB" -o "$dir/mem")
run timeout 120 "${timed[@]}" "$CUCORE" tune "$dir/conv.cu" --space "$dir/conv.json" --dry-run
check "big space: exit 0" [ "$rc" -eq 0 ]
check "big space: the counts" has "$out" \
  "space: 3145728 raw -> 2359296 after restrictions -> 1867776 with a valid launch"
check "big space: not listed one by one, and says how to list them" has "$out" \
  "2359296 configurations past the restrictions: more than --rows 10000, so not listed"
check "big space: a summary, not a line per configuration" [ "$(lines "$out")" -lt 20 ]
if [ -s "$dir/mem" ]; then
  kb=$(tail -n 1 "$dir/mem" | cut -d' ' -f1)
  check "big space: under 100 MB of memory ($kb KB)" [ "$kb" -lt 102400 ]
fi

# 2. The JSON report: no configs, the count of those not listed.
run timeout 120 "$CUCORE" tune "$dir/conv.cu" --space "$dir/conv.json" --dry-run --json
check "big space JSON: exit 0" [ "$rc" -eq 0 ]
check "big space JSON: counts, no configs, the number not listed" python3 -c '
import json, sys
d = json.load(sys.stdin)
k = d["counts"]
assert (k["raw"], k["after_restrictions"], k["valid_launch"]) == (3145728, 2359296, 1867776), k
assert d["configs"] == [] and d["configs_not_listed"] == 2359296, d["configs_not_listed"]
' <<<"$out"

# 3. A --csv that could not hold every configuration is refused before the tune (exit 2).
run timeout 120 "$CUCORE" tune "$dir/conv.cu" --space "$dir/conv.json" --dry-run --csv "$dir/c.csv"
check "big space --csv: refused (exit 2)" [ "$rc" -eq 2 ]
check "big space --csv: says why and what to give" has "$err" \
  "would list 2359296 configurations, more than --rows 10000; give --rows all"
check "big space --csv: no file written" [ ! -e "$dir/c.csv" ]

# 4. --rows moves the limit both ways; a small space is listed whole by default.
small=(--param block_size_x=32,64,128 --param tile_size_x=1,2 --param tile_size_y=1
  --problem-size 4096)
run timeout 120 "$CUCORE" tune "$dir/conv.cu" --kernel convolution_kernel "${small[@]}" --dry-run
check "small space: every configuration listed" [ "$(grep -c '^\[' <<<"$out")" -eq 6 ]
run timeout 120 "$CUCORE" tune "$dir/conv.cu" --kernel convolution_kernel "${small[@]}" --dry-run \
  --rows 5
check "--rows 5: six configurations summarised" has "$out" \
  "6 configurations past the restrictions: more than --rows 5"
check "--rows 5: none listed" [ "$(grep -c '^\[' <<<"$out")" -eq 0 ]
run timeout 120 "$CUCORE" tune "$dir/conv.cu" --kernel convolution_kernel "${small[@]}" --dry-run \
  --rows all --json
check "--rows all: six configs in JSON" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert len(d["configs"]) == 6 and d["configs_not_listed"] == 0, d["configs_not_listed"]
' <<<"$out"
for bad in 0 -3 abc 12x; do
  run "$CUCORE" tune "$dir/conv.cu" --kernel convolution_kernel "${small[@]}" --dry-run --rows "$bad"
  check "--rows $bad: refused (exit 2) naming what is expected" \
    bash -c '[ "$1" -eq 2 ] && grep -qF "expected a whole number of rows (1 or more) or \`all\`" <<<"$2"' \
    _ "$rc" "$err"
done
finish
