#!/usr/bin/env bash
# tune_heavy.sh -- racing and "nothing done twice" on a space of heavy kernels, on the GPU
# machine: bench/spaces/src/matmul_heavy.cu (4096^2 fp32 matmul, 48 configurations, kernels of
# several ms). REPEATS (default 3) pairs of fresh tunes (--fresh store, the compile cache warm
# after the first), one with racing (the default) and one with --no-racing, interleaved; then a
# rerun of the first racing tune's finished store. Prints each run, then one line per target
# ending in PASS or MISS: every tune picks the same winner (or one within 1 % of the fastest
# winner's time: the tie floor); racing's measuring time against --no-racing's
# (reported, target: less); the rerun compiles nothing, measures nothing, and ends in <= 0.3 s.
# usage: bench/tune_heavy.sh [path/to/cucore]
set -uo pipefail
cd "$(dirname "$0")/.."
cucore=${1:-build-gpu/bin/cucore}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CUCORE_CACHE_DIR="$tmp/cache"
tune() { # tune OUT.json DB [options]
  local out=$1 db=$2
  shift 2
  local t0 t1
  t0=$(date +%s.%N)
  "$cucore" tune bench/spaces/src/matmul_heavy.cu --space bench/spaces/src/matmul_heavy.json \
    --yes --json --db "$db" "$@" >"$out" 2>"$out.err"
  local rc=$?
  t1=$(date +%s.%N)
  echo "exit $rc wall $(awk -v a="$t0" -v b="$t1" 'BEGIN{print b - a}')" >"$out.wall"
}
for i in $(seq 1 "${REPEATS:-3}"); do
  tune "$tmp/race$i.json" "$tmp/race$i.jsonl"
  tune "$tmp/full$i.json" "$tmp/full$i.jsonl" --no-racing
done
tune "$tmp/rerun.json" "$tmp/race1.jsonl"
python3 - "$tmp" "${REPEATS:-3}" <<'PY'
import json, sys
tmp, reps = sys.argv[1], int(sys.argv[2])
def load(name):
    rc, wall = open(f"{tmp}/{name}.json.wall").read().split()[1::2]
    try:
        d = json.load(open(f"{tmp}/{name}.json"))
    except Exception as e:
        print(f"{name}: exit {rc}, no report ({e})"); return None, float(wall)
    return d, float(wall)
runs = {}
for i in range(1, reps + 1):
    for kind in ("race", "full"):
        d, wall = load(f"{kind}{i}")
        if not d: continue
        b = d.get("best") or {}
        runs[(kind, i)] = (d, wall, b)
        print(f"{kind} {i}: wall {wall:.2f} s, measuring {d['time_s']['measuring']:.2f} s, "
              f"gpu busy {d['time_s']['gpu_busy']:.2f} s, measured {d['measured']}, "
              f"screened {d.get('screened')}, about {d.get('racing_saved_launches')} launches "
              f"saved; best configuration {b.get('index')}, {b.get('median_ms'):.4f} ms ({b.get('ties')} ties)")
bests = [(k, r[2]) for k, r in runs.items() if r[2].get("median_ms")]
if len(bests) != 2 * reps:
    print(f"every tune ran and picked a winner: {len(bests)} of {2 * reps}: MISS")
else:
    low = min(b["median_ms"] for _, b in bests)
    names = {b.get("index") for _, b in bests}
    ties = all(b["median_ms"] - low <= 0.01 * low for _, b in bests)
    print(f"same winner with and without racing ({reps} + {reps} tunes): {len(names)} distinct "
          f"winner(s){', all within the tie window' if ties else ''}: "
          f"{'PASS' if len(names) == 1 or ties else 'MISS'}")
    rm = sorted(r[0]["time_s"]["measuring"] for k, r in runs.items() if k[0] == "race")
    fm = sorted(r[0]["time_s"]["measuring"] for k, r in runs.items() if k[0] == "full")
    mr, mf = rm[len(rm) // 2], fm[len(fm) // 2]
    print(f"racing's measuring time: median {mr:.2f} s against {mf:.2f} s with --no-racing "
          f"({mf / mr:.2f}x), target less: {'PASS' if mr < mf else 'MISS'}")
d, wall = load("rerun")
if d:
    made = d["counts"].get("compiles_made")
    ok = made == 0 and d["measured"] == 0 and wall <= 0.3
    print(f"rerun of a finished tune: {made} compiles, {d['measured']} measured, "
          f"{d['from_store']} from the store, wall {wall:.2f} s; target 0, 0, <= 0.3 s: "
          f"{'PASS' if ok else 'MISS'}")
    print("  rerun time_s: " + ", ".join(f"{k} {v:.3f}" for k, v in d["time_s"].items()
                                          if isinstance(v, (int, float))))
PY
tail -2 "$tmp/race1.json.err" | sed 's/^/  stderr: /'
