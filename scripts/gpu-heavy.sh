#!/usr/bin/env bash
# The heavy-kernel part of the GPU round alone (bench/kt_loop_heavy.py, bench/tune_heavy.sh)
# and the floor of a first run on that space: cuInit + a context, and one launch of every
# configuration (the least any tuner that checks each configuration must spend on the GPU),
# from a --no-racing tune's medians. Logs under $OUT (default ./gpu-out).
#   usage: scripts/gpu-heavy.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/gpu-out}"
mkdir -p "$OUT"
cmake_extra=()
if ! [ -f /usr/include/cmocka.h ] && ls .deps/*.deb >/dev/null 2>&1; then
  rm -rf /tmp/cucore-deps && mkdir -p /tmp/cucore-deps
  for f in .deps/*.deb; do dpkg -x "$f" /tmp/cucore-deps; done
  cmake_extra+=(-DCUCORE_DEPS_PREFIX=/tmp/cucore-deps)
fi
{ cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo "${cmake_extra[@]}" &&
  cmake --build build-gpu -j"$(nproc)" --target cucore_cli; } >"$OUT/build.log" 2>&1 ||
  { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
python3 bench/kt_loop_heavy.py build-gpu/bin/cucore 2>&1 | tee "$OUT/kt_loop_heavy.log" | tail -8
REPEATS=2 bench/tune_heavy.sh build-gpu/bin/cucore 2>&1 | tee "$OUT/tune_heavy.log" | tail -8
tmp=$(mktemp -d)
CUCORE_CACHE_DIR="$tmp/cache" build-gpu/bin/cucore tune bench/spaces/src/matmul_heavy.cu \
  --space bench/spaces/src/matmul_heavy.json --yes --json --no-racing --finalists 0 \
  --db "$tmp/db.jsonl" >"$OUT/floor.json" 2>"$OUT/floor.err"
python3 - "$OUT/floor.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ms = [c["median_ms"] for c in d["configs"] if c.get("median_ms")]
t = d.get("time_s", {})
print(f"floor: {len(ms)} configurations, one launch of each {sum(ms) / 1000:.3f} s "
      f"(fastest {min(ms):.2f} ms, slowest {max(ms):.2f} ms); the tune's times {t}")
PY
rm -rf "$tmp"
