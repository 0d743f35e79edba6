#!/usr/bin/env bash
# profile of the heavy tune's second run (compile cache warm, fresh store)
cd "$(dirname "$0")/.." 2>/dev/null || true
export CUCORE_CACHE_DIR=/tmp/hcache
c=build-gpu/bin/cucore
for i in 1 2; do
  t0=$(date +%s.%N)
  $c tune bench/spaces/src/matmul_heavy.cu --space bench/spaces/src/matmul_heavy.json --yes --json --db /tmp/h$i.jsonl --timings > /tmp/h$i.json 2>/tmp/h$i.err
  t1=$(date +%s.%N)
  echo "run $i wall $(awk -v a=$t0 -v b=$t1 'BEGIN{print b-a}')"
  python3 -c "
import json; d=json.load(open('/tmp/h$i.json')); print({k: round(v,3) for k,v in d['time_s'].items()}, d['measured'], d['screened'], d['finalists_retimed'])"
  grep -E "^ *[0-9.]+ ms|phase|cuInit|context|process" /tmp/h$i.err | head -30
done
