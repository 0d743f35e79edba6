#!/usr/bin/env bash
# cucore tune's measuring path on the fake driver (tests/fake: launches are recorded, nothing
# runs, copies and fills move real bytes): results stored and resumed (nothing measured twice,
# one more value measures only the new configurations, an edited kernel measures everything
# again), kill -9 in the middle of a tune loses nothing finished, outputs reset or poisoned
# before every check (a configuration that writes nothing fails with --poison), in-place
# buffers restored. Timings on the fake mean nothing; the GPU test (gpu_tune.sh) checks them.
source "$(dirname "$0")/lib.sh"
fake="$(cd "$(dirname "$CUCORE")/.." && pwd)/lib/libcucore_fake_driver.so"
[ -f "$fake" ] || { echo "skipped: no fake driver at $fake"; exit 77; }
export CUCORE_LIBCUDA="$fake"
dir=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$dir"' EXIT
export CUCORE_CACHE_DIR="$dir/cache"
cat >"$dir/w.cu" <<'CU'
extern "C" __global__ void work(float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = REPS;
}
CU
counts() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["measured"], d["from_store"], d["wrong_answers"], d["failed"])'; }
tune() { run timeout 120 "$CUCORE" tune "$dir/w.cu" --kernel work --problem-size 4096 \
  --arg 'out:f32[4096]' --arg i32:4096 --cache hot --db "$dir/db.jsonl" "$@"; }

tune --param REPS=16,4,1 --param block_size_x=128,256 --json
check "first tune: exit 0" [ "$rc" -eq 0 ]
check "first tune: 6 measured" [ "$(counts <<<"$out")" = "6 0 0 0" ]
check "first tune: a best and its cucore run command" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["best"]["run_command"].startswith("cucore run "), d["best"]
assert "--arg" in d["best"]["run_command"] and d["key"] and d["store"].endswith("db.jsonl")
' <<<"$out"
tune --param REPS=16,4,1 --param block_size_x=128,256 --json
check "same tune again: 0 measured, 6 from the store" [ "$(counts <<<"$out")" = "0 6 0 0" ]
check "same tune again: 0 compiles (nothing to measure needs a cubin)" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["counts"]["compiles_made"] == 0 and d["counts"]["compiles"] == 3, d["counts"]
' <<<"$out"
tune --param REPS=16,4,1,2 --param block_size_x=128,256 --json
check "one more value: only its 2 configurations measured" [ "$(counts <<<"$out")" = "2 6 0 0" ]
check "one more value: its compile, and only finalists' from the store" python3 -c '
import json, sys
d = json.load(sys.stdin)
fin = sum(1 for c in d["configs"] if c.get("finalist") and c.get("from_store"))
assert 1 <= d["counts"]["compiles_made"] <= 4, d["counts"]
' <<<"$out"
tune --param REPS=16,4,1 --param block_size_x=128,256 --json --fresh
check "--fresh: all measured again" [ "$(counts <<<"$out")" = "6 0 0 0" ]
sed -i 's/y\[i\] = REPS;/y[i] = REPS; \/\/ edited/' "$dir/w.cu"
tune --param REPS=16,4,1 --param block_size_x=128,256 --json
check "an edited kernel is a new key: all measured" [ "$(counts <<<"$out")" = "6 0 0 0" ]

# Nothing compiled twice: a configuration the compiler refused is kept in the store as a
# compile error, and a rerun of the finished tune compiles nothing and measures nothing.
cat >"$dir/bad.cu" <<'CU'
extern "C" __global__ void work(float *y, int n) {
#if REPS == 4
  this_does_not_compile;
#endif
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = REPS;
}
CU
bad() { run timeout 120 "$CUCORE" tune "$dir/bad.cu" --kernel work --problem-size 4096 \
  --arg 'out:f32[4096]' --arg i32:4096 --cache hot --db "$dir/bad.jsonl" \
  --param REPS=16,4,1 --param block_size_x=128,256 "$@"; }
bad --json
check "a compile error: exit 0, 4 measured, 1 compile failed" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["measured"] == 4 and d["counts"]["compiles_made"] == 3, d["counts"]
assert d["compile_errors_from_store"] == 0
bad = [c for c in d["configs"] if c.get("verdict") == "compile-error"]
assert len(bad) == 2 and all("this_does_not_compile" in c["reason"] for c in bad), bad
' <<<"$out"
bad --json
check "its rerun: 0 compiles, 0 measured, the compile errors from the store" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["measured"] == 0 and d["from_store"] == 6, d
assert d["counts"]["compiles_made"] == 0, d["counts"]
assert d["compile_errors_from_store"] == 2
bad = [c for c in d["configs"] if c.get("verdict") == "compile-error"]
assert len(bad) == 2 and all("this_does_not_compile" in c["reason"] for c in bad), bad
' <<<"$out"
bad
check "its rerun's report says the store kept the compile errors" \
  grep -q "2 configurations not compiled again (the store keeps their compile errors)" <<<"$out"
bad --t4 "$dir/bad.t4.json"
check "its rerun's T4 gives them as compile failures" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
inv = sorted(r["invalidity"] for r in d["results"])
assert inv == ["compile"] * 2 + ["correct"] * 4, inv
' "$dir/bad.t4.json"

# A space file that carries cucore's argument specs and checks: no --arg needed; the command
# line's own --arg wins over the file's.
cat >"$dir/space.json" <<'JSON'
{"tune_params": {"REPS": [3, 5]}, "problem_size": 4096,
 "cucore_args": ["out:f32[4096]", "i32:4096"], "cucore_expect": ["0=0"], "atol": 0.5}
JSON
run timeout 120 "$CUCORE" tune "$dir/w.cu" --kernel work --space "$dir/space.json" --cache hot \
  --db "$dir/db-space.jsonl" --json
{ [ "$rc" -eq 0 ] && [ "$(counts <<<"$out")" = "2 0 0 0" ]; }; checked "space file with cucore_args: exit 0, both measured and checked" $?
run timeout 120 "$CUCORE" tune "$dir/w.cu" --kernel work --space "$dir/space.json" --cache hot \
  --db "$dir/db-space.jsonl" --arg 'out:f32[8]' --arg i32:4096 --json
check "the command line's --arg wins over the file's" has "$out" "--arg 'out:f32[8]'"
printf '{"tune_params": {"REPS": [3]}, "cucore_args": "out:f32[4]"}' >"$dir/bad.json"
run timeout 120 "$CUCORE" tune "$dir/w.cu" --kernel work --space "$dir/bad.json" --dry-run
{ [ "$rc" -eq 1 ] && has "$err" "\`cucore_args\` must be an array of strings"; }; checked "a malformed cucore_args is named" $?

# --csv: a header and one row per configuration; --emit-header: the best as #defines.
tune --param REPS=16,4 --csv "$dir/t.csv" --emit-header "$dir/best.h"
check "csv and header: exit 0" [ "$rc" -eq 0 ]
{ [ "$(wc -l <"$dir/t.csv")" -eq 3 ] && grep -q '^index,REPS,grid_x' "$dir/t.csv"; }; checked "csv: a header and 2 rows" $?
check "csv: the rows are verified results" [ "$(grep -c ',ok,' "$dir/t.csv")" -eq 2 ]
{ grep -q '^#ifdef TARGET_' "$dir/best.h" && [ "$(grep -c '^#define REPS ' "$dir/best.h")" -eq 2 ]; }; checked "header: a target block and the default" $?
tune --param REPS=16,4 --t4 "$dir/t4.json"
check "t4: TuningSchema results, correct and timed" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema_version"] and len(d["results"]) == 2
r = d["results"][0]
assert r["configuration"] == {"REPS": 16} and r["invalidity"] == "correct" and r["correctness"] == 1
assert r["measurements"][0]["unit"] == "ms" and len(r["times"]["runtimes"]) == 1
' "$dir/t4.json"
tune --param REPS=16,4 --plot "$dir/t.svg"
check "plot: an SVG with a panel per parameter and the occupancy" python3 -c '
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
assert "REPS" in texts and "occupancy (model)" in texts, texts
assert len(list(root.iter("{http://www.w3.org/2000/svg}circle"))) == 4
' "$dir/t.svg"
tune --param REPS=1 --csv "$dir/w.cu"
{ [ "$rc" -eq 2 ] && has "$err" "input"; }; checked "--csv may not overwrite the source: exit 2" $?

# Outputs are reset before each check: zeros match 0 (the fake runs nothing) ...
tune --param REPS=1,2 --expect 0=0 --json
check "reset outputs: zeros checked" [ "$(counts <<<"$out")" = "2 0 0 0" ]
# ... and --poison fills them with 0xff: nothing written, so both fail, and the tune says so.
tune --param REPS=1,2 --poison --fresh
check "poison: exit 1 (no configuration verified)" [ "$rc" -eq 1 ]
check "poison: never-written elements are named" has "$out" "4096 of 4096 elements were never written"
check "poison: both recorded as wrong answers" has "$out" "results: 0 measured, 0 from the store, 2 wrong answers"
# In place: restored from a pristine copy before each check.
run timeout 120 "$CUCORE" tune "$dir/w.cu" --kernel work --problem-size 64 --param REPS=1,2 \
  --arg 'inout:f32[64]=iota' --arg i32:64 --expect 0=iota --cache hot --db "$dir/db2.jsonl"
{ [ "$rc" -eq 0 ] && has "$out" "2 measured"; }; checked "in-place: restored inputs verify" $?
tune --param REPS=1 --expect 0=3 --json
{ [ "$rc" -eq 1 ] && [ "$(counts <<<"$out")" = "0 0 1 0" ]; }; checked "a wrong --expect: recorded, exit 1" $?

# --strategy model-first --top-fraction: on the fake H100 (132 SMs) a block of 256 threads
# fits 8 times per SM, 1056 blocks a wave: G=1056 scores 1 (a full wave), G=2000 0.95, G=100
# 0.09; a third of the 6 configurations are measured: both with G=1056.
run timeout 120 "$CUCORE" tune "$dir/w.cu" --kernel work --param REPS=1,2 --param G=100,1056,2000 \
  --grid G --block 256 --arg 'out:f32[4096]' --arg i32:4096 --cache hot --db "$dir/mf.jsonl" \
  --strategy model-first --top-fraction 0.33 --json
check "model-first: the best-scored third measured, the rest skipped" python3 -c '
import json, sys
d = json.load(sys.stdin)
st = {(c["params"]["REPS"], c["params"]["G"]): c["status"] for c in d["configs"]}
assert d["measured"] == 2 and d["skipped"] == 4, (d["measured"], d["skipped"])
assert st[(1, 1056)] == "ok" and st[(2, 1056)] == "ok" and st[(1, 100)] == "skipped", st
' <<<"$out"

# cucore cache tune: the stores under the cache folder (the default --db).
run timeout 120 "$CUCORE" tune "$dir/w.cu" --kernel work --problem-size 64 --param REPS=1,2 \
  --arg 'out:f32[64]' --arg i32:64 --cache hot
run "$CUCORE" cache tune list
key=$(awk '{print $1}' <<<"$out" | head -1)
{ [ "$rc" -eq 0 ] && [ ${#key} -eq 64 ] && has "$out" "verified, best {\"REPS\":"; }; checked "cache tune list: the store, its records and best" $?
run "$CUCORE" cache tune show "$key" --json
check "cache tune show --json" python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["stores"][0]["verified"] >= 2' <<<"$out"
run "$CUCORE" cache tune clear
{ [ "$rc" -eq 0 ] && has "$out" "removed 1 tune store"; }; checked "cache tune clear: removed" $?
run "$CUCORE" cache tune show "$key"
check "cache tune show after clear: exit 1" [ "$rc" -eq 1 ]

# kill -9 in the middle: what was written is found again; the rerun measures the rest.
# (--cache cold: the fake's 2 x L2 fills make each configuration slow enough to stop.)
slow=(--param REPS=1,2,3,4,5,6 --cache cold --db "$dir/kill.jsonl" --finalists 0 --json)
timeout 120 "$CUCORE" tune "$dir/w.cu" --kernel work --problem-size 4096 \
  --arg 'out:f32[4096]' --arg i32:4096 "${slow[@]}" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 200); do [ -s "$dir/kill.jsonl" ] && break; sleep 0.1; done
kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null; pid=
done_lines=$(grep -c '"status":"ok"' "$dir/kill.jsonl")
check "kill -9: at least one result was stored before the kill" [ "$done_lines" -ge 1 ]
tune "${slow[@]}"
check "after kill -9: the stored ones resumed, the rest measured" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["from_store"] >= int(sys.argv[1]) and d["measured"] + d["from_store"] == 6, d
' "$done_lines" <<<"$out"
finish
