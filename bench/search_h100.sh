#!/usr/bin/env bash
# A measured tune that searches, on the GPU: bench/spaces/src/gemm.cu over gemm_big.json
# (101 376 configurations raw; its values include every value of gemm.json, whose brute-force
# H100 recording is bench/spaces/h100_gemm.t4.json.gz) with --max-evals 200 and the default
# strategy. Targets: done within a minute; its best within 3 % of the best the brute force of
# the sub-space found (the recording's optimum). Prints PASS/MISS lines (the GPU check counts
# them). usage: bench/search_h100.sh [CUCORE] [SEED]
set -uo pipefail
cd "$(dirname "$0")/.."
cucore=${1:-build-gpu/bin/cucore}
seed=${2:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
t0=$(date +%s.%N)
CUCORE_CACHE_DIR="$tmp/cache" "$cucore" tune bench/spaces/src/gemm.cu \
  --space bench/spaces/src/gemm_big.json --max-evals 200 --seed "$seed" --yes --json \
  >"$tmp/search.json" 2>"$tmp/search.err"
rc=$?
t1=$(date +%s.%N)
"$cucore" tune --simulate bench/spaces/h100_gemm.t4.json.gz --max-evals 1 --json >"$tmp/rec.json"
python3 - "$tmp/search.json" "$tmp/rec.json" "$rc" "$t0" "$t1" <<'PY'
import json, sys
path, rec, rc, t0, t1 = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
wall = t1 - t0
opt = json.load(open(rec))["recording"]["optimum_ms"]
try:
    d = json.load(open(path))
except Exception as e:
    print(f"search on the GPU: exit {rc}, no report ({e}): MISS")
    sys.exit(0)
best = d.get("best", {}).get("median_ms")
s = d.get("search", {})
print(f"search on the GPU: gemm_big ({d['counts']['raw']} configurations raw, "
      f"{d['counts']['valid_launch']} valid), {s.get('evals')} evaluated, exit {rc}")
print(f"  wall {wall:.1f} s (compile wall {d['time_s']['compile_wall']:.1f} s, measuring "
      f"{d['time_s']['measuring']:.1f} s), target < 60 s: {'PASS' if wall < 60 and rc == 0 else 'MISS'}")
ratio = best / opt if best else float("inf")
print(f"  best {best} ms against the recorded sub-space's optimum {opt} ms: {ratio:.3f}x, "
      f"target <= 1.03: {'PASS' if ratio <= 1.03 else 'MISS'}")
PY
tail -3 "$tmp/search.err" | sed 's/^/  stderr: /'
