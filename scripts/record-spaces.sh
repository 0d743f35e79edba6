#!/usr/bin/env bash
# Records bench/spaces/'s own spaces on the GPU machine: every configuration of each space in
# bench/spaces/src/ (NAME.cu with NAME.json) measured by a brute-force `cucore tune`, the
# results written as TuningSchema T4 (gzip) under $OUT, with the tune's JSON report and its
# wall time. Copy $OUT/h100_NAME.t4.json.gz into bench/spaces/ to keep them.
#   usage: scripts/record-spaces.sh [NAME...]   (default: every space of bench/spaces/src/)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/record-out}"
mkdir -p "$OUT"
cmake_extra=()
if { ! [ -f /usr/include/cmocka.h ] || ! [ -f /usr/include/zlib.h ] ||
     ! [ -f /usr/include/xxhash.h ] || ! [ -f /usr/include/dlpack/dlpack.h ]; } &&
   ls .deps/*.deb >/dev/null 2>&1; then
  rm -rf /tmp/cucore-deps && mkdir -p /tmp/cucore-deps
  for f in .deps/*.deb; do dpkg -x "$f" /tmp/cucore-deps; done
  cmake_extra+=(-DCUCORE_DEPS_PREFIX=/tmp/cucore-deps)
fi
build=build-gpu
cmake -S . -B $build -DCMAKE_BUILD_TYPE=RelWithDebInfo "${cmake_extra[@]}" >"$OUT/build.log" 2>&1 &&
  cmake --build $build -j"$(nproc)" --target cucore_cli >>"$OUT/build.log" 2>&1 ||
  { tail -30 "$OUT/build.log"; exit 1; }
names=("$@")
[ ${#names[@]} -eq 0 ] && names=($(ls bench/spaces/src/*.json | xargs -n1 basename | sed 's/\.json$//'))
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
echo "device: $gpu" | tee "$OUT/record.txt"
for n in "${names[@]}"; do
  t0=$(date +%s.%N)
  CUCORE_CACHE_DIR=/tmp/cucore-record-cache $build/bin/cucore tune "bench/spaces/src/$n.cu" \
    --space "bench/spaces/src/$n.json" --yes --fresh --t4 "$OUT/h100_$n.t4.json" --json \
    >"$OUT/$n.tune.json" 2>"$OUT/$n.err"
  rc=$?
  t1=$(date +%s.%N)
  gzip -9 -f "$OUT/h100_$n.t4.json" 2>/dev/null
  python3 - "$OUT/$n.tune.json" "$n" "$rc" "$t0" "$t1" <<'PY' | tee -a "$OUT/record.txt"
import json, sys
path, n, rc, t0, t1 = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
try:
    d = json.load(open(path))
    c = d["counts"]
    print(f"{n}: exit {rc}, {t1 - t0:.1f} s; {c['after_restrictions']} configurations, "
          f"{c.get('measured', '?')} measured, {c['compiles']} compiles; best {d.get('best', {}).get('median_ms', '?')} ms")
except Exception as e:  # the report is what it is; say so
    print(f"{n}: exit {rc}, {t1 - t0:.1f} s; no JSON report ({e})")
PY
  tail -3 "$OUT/$n.err" | sed 's/^/  /' | tee -a "$OUT/record.txt"
done
