#!/usr/bin/env bash
# diagnostic: where --devices all's wall goes against one GPU (GPU-bound: --no-racing)
cd "$(dirname "$0")/.."
export CUCORE_CACHE_DIR=/tmp/dcache
c=build-gpu/bin/cucore
sp=(bench/spaces/src/matmul_heavy.cu --space bench/spaces/src/matmul_heavy.json --yes --no-racing --json --timings)
$c tune "${sp[@]}" --dry-run --arch sm_90 >/dev/null 2>&1
for k in one all; do
  extra=(--device 0); [ $k = all ] && extra=(--devices all)
  t0=$(date +%s.%N)
  $c tune "${sp[@]}" --db-dir /tmp/dd$k "${extra[@]}" >/tmp/d$k.json 2>/tmp/d$k.err
  t1=$(date +%s.%N)
  echo "$k wall $(awk -v a=$t0 -v b=$t1 'BEGIN{print b-a}')"
  python3 -c "
import json; d=json.load(open('/tmp/d$k.json')); print({k: round(v,3) for k,v in d['time_s'].items()}, 'measured', d['measured'], 'store', d['from_store'], 'finalists', d['finalists_retimed'], d.get('shard'))"
  grep -E "^  [a-z_]+ +[0-9.]+ +[0-9.]+" /tmp/d$k.err | head -20
done
