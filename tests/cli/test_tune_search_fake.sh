#!/usr/bin/env bash
# cucore tune --max-evals on the fake driver (launches recorded, nothing runs): a measured tune
# that searches a space of 1 440 configurations (a restriction, a launch-only parameter)
# evaluates exactly its budget, each configuration runnable and once, in batches, with the same
# configurations for the same seed; the store keeps what it measured, so the same search again
# measures nothing; --time-limit stops it early; wrong uses are refused. Timings on the fake mean
# nothing (gpu_tune.sh-style checks belong to the GPU).
source "$(dirname "$0")/lib.sh"
libdir="$(cd "$(dirname "$CUCORE")/.." && pwd)/lib"
fake="$libdir/libcucore_fake_driver.so"
[ -f "$fake" ] || { echo "skipped: no fake driver in $libdir"; exit 77; }
export CUCORE_LIBCUDA="$fake" CUCORE_LIBNVML="$libdir/none.so"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export CUCORE_CACHE_DIR="$dir/cache"
cat >"$dir/s.cu" <<'CU'
extern "C" __global__ void scale(float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = A * 2 + B - C;
}
CU
space=(--kernel scale --problem-size 256 --arg 'out:f32[256]' --arg i32:256
       --param A=1,2,3,4,5,6 --param B=1,2,3,4,5,6 --param C=0,1,2,3
       --param block_size_x=32,64,128,256,512,1024,96,160,192,224 --restrict 'A <= B')
small=(--kernel scale --problem-size 256 --arg 'out:f32[256]' --arg i32:256 --param A=1,2,3
       --param B=1,2 --param C=0 --param block_size_x=32,64,128,256 --restrict 'A != 3 or B != 2')
search() { run timeout 300 "$CUCORE" tune "$dir/s.cu" "${space[@]}" --finalists 0 --json \
  --jobs 2 --db "$dir/$1.jsonl" "${@:2}"; }
configs() { python3 -c '
import json, sys
d = json.load(sys.stdin)
print(" ".join(str(r["index"]) for r in d["configs"]))' <<<"$1"; }

search a --max-evals 16 --seed 7 --batch 4
check "a search: exit 0" [ "$rc" -eq 0 ]
check "a search: 16 configurations, each runnable and once, all measured" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
rows = d["configs"]
assert len(rows) == 16, len(rows)
assert len({r["index"] for r in rows}) == 16
assert all(r["verdict"] == "runnable" and r["status"] == "ok" for r in rows), rows[0]
assert d["search"]["evals"] == 16 and d["search"]["budget"] == 16, d["search"]
assert d["counts"]["valid_launch"] == 840, d["counts"]
' "$out"
first=$(configs "$out")
search b --max-evals 16 --seed 7 --batch 4
check "the same seed: the same configurations" [ "$(configs "$out")" = "$first" ]
search b --max-evals 16 --seed 7 --batch 4
check "the same search again: everything from the store, the same configurations" python3 -c '
import json, sys
d = json.loads(sys.argv[1]); assert d["measured"] == 0 and d["from_store"] == 16, d' "$out"
check "the same search again: the same configurations" [ "$(configs "$out")" = "$first" ]
search c --max-evals 16 --seed 8 --batch 4
check "another seed: other configurations" [ "$(configs "$out")" != "$first" ]
run timeout 300 "$CUCORE" tune "$dir/s.cu" "${space[@]}" --finalists 0 --jobs 2 \
  --db "$dir/d.jsonl" --max-evals 6 --strategy genetic --batch 3
check "text: the search line" has "$out" "search: genetic (seed 0), 6 of 840 runnable configurations evaluated (budget 6)"
search e --max-evals 800 --batch 4 --time-limit 0.000001
check "--time-limit: one batch, stopped" python3 -c '
import json, sys
d = json.loads(sys.argv[1]); s = d["search"]
assert s["evals"] == 4 and s["stopped_by_time"], s' "$out"
run timeout 300 "$CUCORE" tune "$dir/s.cu" "${small[@]}" --finalists 2 --json --jobs 2 \
  --db "$dir/f.jsonl" --max-evals 500 --strategy random --batch 5
check "a budget past the space: every runnable configuration once, in one pass, finalists re-timed" python3 -c '
import json, sys
d = json.loads(sys.argv[1]); rows = d["configs"]; s = d["search"]
assert len(rows) == 20 and len({r["index"] for r in rows}) == 20, len(rows)
assert s["evals"] == 20 and d["best"]["index"] in {r["index"] for r in rows}, d["best"]
assert s["strategy"] == "exhaustive", s
c = s["curve_best_ms"]
assert len(c) == 20 and all(b <= a for a, b in zip(c, c[1:]) if a is not None), c
' "$out"
run timeout 300 "$CUCORE" tune "$dir/s.cu" --kernel scale --problem-size 256 --arg 'out:f32[256]' \
  --arg i32:256 --param A=1,2 --param block_size_x=32,64,2048 --finalists 0 --json --jobs 2 \
  --db "$dir/f3.jsonl" --max-evals 50
check "a covering budget over a space with configurations past the limits: evals and the curve count the runnable ones" python3 -c '
import json, sys
d = json.loads(sys.argv[1]); s = d["search"]
assert d["counts"]["valid_launch"] == 4 and d["counts"]["arch_limit"] == 2, d["counts"]
assert s["strategy"] == "exhaustive" and s["evals"] == 4 and len(s["curve_best_ms"]) == 4, s
' "$out"
run timeout 300 "$CUCORE" tune "$dir/s.cu" "${small[@]}" --finalists 0 --jobs 2 \
  --db "$dir/f2.jsonl" --max-evals 20
check "text: a budget that covers the space says so" has "$out" "search: the budget (20) covers all 20 runnable configurations: each measured once, in one pass (exhaustive, no strategy)"
search h --max-evals 12 --batch 4 --strategy-options 'gp_steps=2,pool=64,explore_every=4'
check "--strategy-options: the search takes them, the JSON names them and its curve" python3 -c '
import json, sys
d = json.loads(sys.argv[1]); s = d["search"]
assert s["strategy"] == "bayes" and s["strategy_options"] == "gp_steps=2,pool=64,explore_every=4", s
assert s["evals"] == 12 and len(s["curve_best_ms"]) == 12, s
' "$out"

# A search reports and stores like any tune: --csv lists its rows.
run timeout 300 "$CUCORE" tune "$dir/s.cu" "${small[@]}" --finalists 0 --jobs 2 \
  --db "$dir/g.jsonl" --max-evals 7 --batch 3 --csv "$dir/g.csv"
check "--csv of a search: a header and its 7 rows" [ "$(grep -c '' "$dir/g.csv")" -eq 8 ]

# Wrong uses.
run "$CUCORE" tune "$dir/s.cu" "${space[@]}" --strategy forest
check "--strategy forest without --max-evals: exit 2" bash -c '[ "$1" -eq 2 ] && grep -q -- "--max-evals N" <<<"$2"' _ "$rc" "$err"
run "$CUCORE" tune "$dir/s.cu" "${space[@]}" --max-evals 10 --dry-run --arch sm_90
check "--max-evals with --dry-run: exit 2" [ "$rc" -eq 2 ]
run "$CUCORE" tune "$dir/s.cu" "${space[@]}" --max-evals 10 --strategy model-first
check "--max-evals with model-first: exit 2" [ "$rc" -eq 2 ]
run "$CUCORE" tune "$dir/s.cu" "${space[@]}" --max-evals 10 --strategy genetic --strategy-options trees=3
check "--strategy-options the strategy lacks: exit 1 before any compile, named" bash -c '[ "$1" -eq 1 ] && grep -q "`trees` is no option of genetic: expected population, mutation or tournament" <<<"$2"' _ "$rc" "$err"
run "$CUCORE" tune "$dir/s.cu" "${space[@]}" --strategy-options trees=3
check "--strategy-options without --max-evals: exit 2" [ "$rc" -eq 2 ]
run "$CUCORE" tune "$dir/s.cu" "${space[@]}" --compare all
check "--compare without --simulate: exit 2" [ "$rc" -eq 2 ]
finish
