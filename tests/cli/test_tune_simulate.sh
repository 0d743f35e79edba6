#!/usr/bin/env bash
# cucore tune --simulate: a search replayed over a recorded space (a Kernel Tuner cache file,
# plain or gzip) with no source, GPU or compiler. The report (text, JSON with the curve, an SVG
# with --plot), the budget used exactly, the same seed giving the same search, the comparison
# table, and every wrong use refused with what was wrong. The recording is generated here: a
# bowl of 3 parameters (one of strings) with a narrow best and a failed region.
source "$(dirname "$0")/lib.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

python3 - "$dir" <<'PY'
import gzip, json, sys
d = sys.argv[1]
cache = {}
for x in range(12):
    for y in range(10):
        for m in ("a", "b"):
            e = {"x": x * 8, "y": y, "mode": m, "compile_time": 30.0}
            if x + y > 17:
                e["time"] = "CompilationFailedConfig"
            else:
                e["time"] = 1.0 + 0.04 * ((x - 7) ** 2 + (y - 2) ** 2) + (0.3 if m == "b" else 0)
                if (x, y, m) == (7, 2, "a"):
                    e["time"] = 0.55
                e["benchmark_time"] = 10 * e["time"]
            cache["%d,%d,%s" % (x * 8, y, m)] = e
rec = {"device_name": "Fake GPU", "kernel_name": "bowl",
       "tune_params_keys": ["x", "y", "mode"],
       "tune_params": {"x": [x * 8 for x in range(12)], "y": list(range(10)), "mode": ["a", "b"]},
       "cache": cache}
text = json.dumps(rec)
open(d + "/rec.json", "w").write(text)
open(d + "/rec.json.gz", "wb").write(gzip.compress(text.encode()))
open(d + "/cut.json.gz", "wb").write(gzip.compress(text.encode())[:200])
open(d + "/bad.json", "w").write('{"tune_params_keys": ["x"], "tune_params": {"x": [1]}}')
# The same results as TuningSchema T4 (as cucore tune --t4 writes them): seconds in "times",
# the time measurement in ms, failures by "invalidity", and two results outside the space
# ("constraints") that the recording leaves out.
results = []
for e in cache.values():
    ok = not isinstance(e["time"], str)
    results.append({"configuration": {"x": e["x"], "y": e["y"], "mode": e["mode"]},
                    "objectives": ["time"],
                    "times": {"compilation_time": e["compile_time"] / 1e3,
                              "runtimes": [e["benchmark_time"] / 1e3] if ok else []},
                    "invalidity": "correct" if ok else "compile", "correctness": int(ok),
                    "measurements": [{"name": "time", "value": e["time"], "unit": "ms"}] if ok else []})
for x in (96, 104):
    results.insert(3, {"configuration": {"x": x, "y": 0, "mode": "c"}, "invalidity": "constraints",
                       "times": {"compilation_time": 0, "runtimes": []}, "measurements": []})
open(d + "/rec.t4.json", "w").write(json.dumps({"schema_version": "1.0.0", "results": results}))
open(d + "/bad.t4.json", "w").write(json.dumps({"schema_version": "1.0.0", "results": [
    {"configuration": {"x": 1}, "invalidity": "correct"}, {"configuration": {"y": 2}}]}))
PY

# 1. One strategy, text: the recording, the evaluations, the ratio, the simulated time.
run "$CUCORE" tune --simulate "$dir/rec.json" --strategy forest --max-evals 40 --seed 3
check "text: exit 0" [ "$rc" -eq 0 ]
check "text: the recording described" has "$out" "kernel bowl on Fake GPU, 3 parameters, 240 configurations recorded"
check "text: the budget used" has "$out" "forest (seed 3, batch 1): 40 evaluations"
check "text: the ratio to the optimum" has "$out" "of the optimum"

# 2. JSON: exactly the budget, a curve per evaluation that never rises, the ratio it implies;
# the same seed gives the same search; gzip gives what plain JSON gives.
for s in random ils anneal genetic forest; do
  run "$CUCORE" tune --simulate "$dir/rec.json" --strategy $s --max-evals 25 --seed 5 --json
  a=$out
  run "$CUCORE" tune --simulate "$dir/rec.json.gz" --strategy $s --max-evals 25 --seed 5 --json
  check "$s: gzip and plain, the same seed: the same search" python3 -c '
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
for r in (a, b):  # only the strategy wall time and the file name differ
    del r["strategy_ms"], r["recording"]["file"]
assert a == b' "$a" "$out"
  check "$s: the JSON's budget, curve and ratio" python3 -c '
import json, sys
r = json.loads(sys.argv[1])
c, t = r["curve_best_ms"], r["curve_clock_ms"]
assert r["evals"] == 25 and len(c) == 25 and len(t) == 25, r["evals"]
assert all(b <= a for a, b in zip([x for x in c if x is not None], [x for x in c if x is not None][1:]))
assert all(b > a for a, b in zip(t, t[1:])), "every evaluation costs time"
assert abs(r["ratio"] - r["recording"]["optimum_ms"] / r["best_ms"]) < 1e-9
assert r["simulated_ms"] == t[-1] and r["recording"]["configs"] == 240
' "$out"
done
run "$CUCORE" tune --simulate "$dir/rec.json" --strategy random --max-evals 25 --seed 5 --json
a=$out
run "$CUCORE" tune --simulate "$dir/rec.json" --strategy random --max-evals 25 --seed 6 --json
check "another seed: another search" python3 -c '
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert (a["curve_best_ms"], a["curve_clock_ms"]) != (b["curve_best_ms"], b["curve_clock_ms"])' \
  "$a" "$out"
# A T4 file of the same results is the same recording: the same search, the same curve.
for s in forest genetic; do
  run "$CUCORE" tune --simulate "$dir/rec.json" --strategy $s --max-evals 30 --seed 2 --json
  a=$out
  run "$CUCORE" tune --simulate "$dir/rec.t4.json" --strategy $s --max-evals 30 --seed 2 --json
  check "$s: T4 and Kernel Tuner cache: the same recording, the same search" python3 -c '
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
for r in (a, b):
    del r["strategy_ms"], r["recording"]["file"]
    r["recording"]["kernel"] = r["recording"]["device"] = ""
    r["curve_clock_ms"] = [round(t, 6) for t in r["curve_clock_ms"]]
    r["simulated_ms"] = round(r["simulated_ms"], 6)
    r["recording"]["brute_force_ms"] = round(r["recording"]["brute_force_ms"], 3)
assert a == b, (a, b)' "$a" "$out"
done
run "$CUCORE" tune --simulate "$dir/bad.t4.json"
check "a T4 file whose results name other parameters: exit 1, named" bash -c '[ "$1" -eq 1 ] && grep -q "results\[1\]" <<<"$2"' _ "$rc" "$err"

# The whole space as the budget finds the optimum.
run "$CUCORE" tune --simulate "$dir/rec.json" --max-evals 1000 --json
check "a budget past the space: every configuration, the optimum" python3 -c '
import json, sys
r = json.loads(sys.argv[1]); assert r["evals"] == 240 and r["ratio"] == 1, r' "$out"

# 3. The curve as an SVG; never over an input.
run "$CUCORE" tune --simulate "$dir/rec.json" --max-evals 30 --plot "$dir/curve.svg"
check "--plot: written" bash -c 'grep -q "<svg" "$1" && [ "$(grep -c "<polyline" "$1")" -eq 2 ]' _ "$dir/curve.svg"
run "$CUCORE" tune --simulate "$dir/rec.json" --max-evals 30 --plot "$dir/rec.json"
check "--plot onto the recording: refused" [ "$rc" -eq 2 ]
check "--plot onto the recording: the recording intact" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$dir/rec.json"

# 4. The comparison: every strategy at every budget over the repeats.
run "$CUCORE" tune --simulate "$dir/rec.json" --max-evals 30 --seed 4 --json
plain="$out"
run "$CUCORE" tune --simulate "$dir/rec.json" --max-evals 30 --seed 4 --json --strategy-options '{"gp_steps": 2, "pool": 8}'
check "--strategy-options (JSON): exit 0, heard (another search than the defaults)" bash -c '[ "$1" -eq 0 ] && [ "$2" != "$3" ]' _ "$rc" "$out" "$plain"
run "$CUCORE" tune --simulate "$dir/rec.json" --strategy anneal --strategy-options t_start=1,t_end=0.01 --max-evals 30
check "--strategy-options (key=value): exit 0" [ "$rc" -eq 0 ]
run "$CUCORE" tune --simulate "$dir/rec.json" --strategy forest --strategy-options trees=0
check "--strategy-options out of range: exit 1, the range named" bash -c '[ "$1" -eq 1 ] && grep -q "expected a whole number from 1 to 1024" <<<"$2"' _ "$rc" "$err"
run "$CUCORE" tune --simulate "$dir/rec.json" --strategy-options trees=4
check "a forest option to bayes (the default): exit 1, the other strategy named" bash -c '[ "$1" -eq 1 ] && grep -q "bayes has no option .trees.*strategy forest" <<<"$2"' _ "$rc" "$err"
run "$CUCORE" tune --simulate "$dir/rec.json" --compare forest,genetic --repeats 2 --strategy-options trees=4
check "--compare with an option one strategy lacks: exit 1, named" bash -c '[ "$1" -eq 1 ] && grep -q "no option of genetic" <<<"$2"' _ "$rc" "$err"
run "$CUCORE" tune --simulate "$dir/rec.json.gz" --compare all --budgets 10,30 --repeats 6 --json
check "--compare: exit 0" [ "$rc" -eq 0 ]
check "--compare: 6 strategies x 2 budgets, each summarised" python3 -c '
import json, sys
r = json.loads(sys.argv[1])["results"]
assert len(r) == 12, len(r)
for x in r:
    assert x["budget"] in (10, 30) and x["mean_evals"] == x["budget"], x
    assert 0 < x["p10"] <= x["median"] <= 1 and 0 <= x["share_099"] <= x["share_095"] <= 1, x
' "$out"
run "$CUCORE" tune --simulate "$dir/rec.json" --compare random,forest,bayes --budgets 20 --repeats 4
check "--compare text: the table" bash -c 'grep -q "^20 *forest" <<<"$1" && grep -q "^20 *bayes" <<<"$1" && grep -q "median" <<<"$1"' _ "$out"

# 5. Wrong uses, each refused with what was wrong.
run "$CUCORE" tune --simulate "$dir/rec.json" "$dir/k.cu"
check "a FILE with --simulate: exit 2" bash -c '[ "$1" -eq 2 ] && grep -q "takes no FILE" <<<"$2"' _ "$rc" "$err"
run "$CUCORE" tune --simulate "$dir/rec.json" --strategy exhaustive
check "--strategy exhaustive with --simulate: exit 2" bash -c '[ "$1" -eq 2 ] && grep -q "replays a search" <<<"$2"' _ "$rc" "$err"
run "$CUCORE" tune --simulate "$dir/rec.json" --compare random,pso
check "--compare with an unknown strategy: exit 2, named" bash -c '[ "$1" -eq 2 ] && grep -q "pso" <<<"$2"' _ "$rc" "$err"
run "$CUCORE" tune --simulate "$dir/rec.json" --compare all --budgets 10,x
check "--budgets not numbers: exit 2" [ "$rc" -eq 2 ]
run "$CUCORE" tune --simulate "$dir/rec.json" --repeats 3
check "--repeats without --compare: exit 2" [ "$rc" -eq 2 ]
run "$CUCORE" tune "$dir/k.cu" --kernel k --param x=1,2 --max-evals 5 --dry-run
check "--max-evals on a dry run: exit 2, says why" bash -c '[ "$1" -eq 2 ] && grep -q -- "--dry-run" <<<"$2"' _ "$rc" "$err"
run "$CUCORE" tune "$dir/k.cu" --kernel k --param x=1,2 --compare all
check "--compare without --simulate: exit 2, says where it belongs" bash -c '[ "$1" -eq 2 ] && grep -q -- "--simulate" <<<"$2"' _ "$rc" "$err"
run "$CUCORE" tune --simulate "$dir/missing.json"
check "a missing recording: exit 1" [ "$rc" -eq 1 ]
run "$CUCORE" tune --simulate "$dir/bad.json"
check "a cache without configurations: exit 1, named" bash -c '[ "$1" -eq 1 ] && grep -q "no \"cache\" object" <<<"$2"' _ "$rc" "$err"
run "$CUCORE" tune --simulate "$dir/cut.json.gz"
check "cut gzip: exit 1, said" bash -c '[ "$1" -eq 1 ] && grep -q "cut.json.gz" <<<"$2"' _ "$rc" "$err"
finish
