#!/usr/bin/env bash
# cucore tune sharing one store's work, on the fake driver (launches take CUCORE_FAKE_LAUNCH_US
# of the calling thread, so that shards overlap): two shards started as a launcher starts them
# measure each configuration once between them; the shard and the GPU come from Open MPI's,
# MPICH's and Slurm's variables; a shard killed mid-tune loses only what it was measuring
# (the other takes over its share); --report-only reports the whole store and measures nothing;
# shards on hosts without a shared file system (--shard-own-only) merged by `cache tune merge`;
# --devices all runs one process per GPU and re-times the finalists on the first, with the
# same best as the shards; the mistakes are named.
source "$(dirname "$0")/lib.sh"
fake="$(cd "$(dirname "$CUCORE")/.." && pwd)/lib/libcucore_fake_driver.so"
[ -f "$fake" ] || { echo "skipped: no fake driver at $fake"; exit 77; }
export CUCORE_LIBCUDA="$fake"
dir=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$dir"' EXIT
export CUCORE_CACHE_DIR="$dir/cache"
unset OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE PMI_RANK PMI_SIZE SLURM_PROCID SLURM_NTASKS
cat >"$dir/w.cu" <<'CU'
extern "C" __global__ void work(float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = REPS;
}
CU
space=(--param REPS=1,2,3,4,5,6,7,8 --param block_size_x=128,256)
common=("$dir/w.cu" --kernel work --problem-size 4096 --arg 'out:f32[4096]' --arg i32:4096
  --cache hot --launch-mode single --finalists 2 "${space[@]}")
tune() { "$CUCORE" tune "${common[@]}" "$@"; }
# The store's first record of each configuration that is not a finalist's re-timing: how many
# configurations were measured, and how many more than once.
once='
import json, sys, collections
seen = collections.Counter()
uuids = set()
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["result"]["status"] == "ok" and not r["result"]["finalist"]:
        seen[json.dumps(r["config"], sort_keys=True)] += 1
        uuids.add(r["result"]["uuid"])
twice = sum(1 for v in seen.values() if v > 1)
print(len(seen), twice, len(uuids))
'

# Two shards at once, as srun starts them: each configuration measured once between them.
export CUCORE_FAKE_LAUNCH_US=500
db="$dir/db"
SLURM_PROCID=0 SLURM_NTASKS=2 "$CUCORE" tune "${common[@]}" --db-dir "$db" --json \
  >"$dir/s0.json" 2>"$dir/s0.err" &
pids+=($!)
SLURM_PROCID=1 SLURM_NTASKS=2 tune --db-dir "$db" --json >"$dir/s1.json" 2>"$dir/s1.err"
rc1=$?
wait "${pids[0]}"
rc0=$?
pids=()
{ [ "$rc0" -eq 0 ] && [ "$rc1" -eq 0 ]; }; checked "two Slurm shards: both exit 0" $?
check "two Slurm shards: each says its shard and where it came from" python3 -c '
import json, sys
for i, f in enumerate(sys.argv[1:]):
    d = json.load(open(f))
    assert d["shard"]["index"] == i and d["shard"]["count"] == 2 and d["shard"]["from"] == "Slurm", d["shard"]
    assert d["measured"] > 0, d["measured"]
' "$dir/s0.json" "$dir/s1.json"
check "two Slurm shards: 16 configurations measured, none twice" \
  [ "$(python3 -c "$once" "$db"/*.jsonl | cut -d' ' -f1,2)" = "16 0" ]
check "two Slurm shards: the store's folder holds one store and its lock file" \
  [ "$(ls "$db" | grep -c '\.jsonl$')" -eq 1 ]

# --report-only: every shard's results, nothing compiled or measured.
run tune --db-dir "$db" --report-only --json
check "report only: exit 0, 0 measured, 16 from the store, 0 compiles" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["report_only"] and d["measured"] == 0 and d["from_store"] == 16, d
assert d["counts"]["compiles_made"] == 0 and "best" in d, d["counts"]
' <<<"$out"
best_shards=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["best"]["index"])' <<<"$out")
run tune --db-dir "$db" --report-only
check "report only: the text says so" has "$out" "report only: the store's results; nothing compiled or measured"
CUCORE_LIBCUDA=/nonexistent/libcuda.so.1 run tune --db-dir "$db" --report-only --json
check "report only without a driver (a login node): the store's model, the same best" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["from_store"] == 16 and d["measured"] == 0 and d["device_uuid"] == "", d
assert d["best"]["index"] == int(sys.argv[1]), (d["best"], sys.argv[1])
' "$best_shards" <<<"$out"
cp -r "$db" "$dir/two_models"
CUCORE_FAKE_DEVICES=2 CUCORE_FAKE_DEVICE1_NAME="cucore fake L4" run tune --device 1 \
  --db-dir "$dir/two_models" --finalists 0
CUCORE_LIBCUDA=/nonexistent/libcuda.so.1 run tune --db-dir "$dir/two_models" --report-only
{ \
  [ "$rc" -ne 0 ] && has "$err" "more than one device" && has "$err" "cucore fake L4"; }; checked "report only without a GPU over two models' results: refused, both named" $?
run tune --db-dir "$dir/empty" --report-only --json
{ python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["measured"] == 0 and d["from_store"] == 0 and not d.get("best"), d
assert not any(c.get("status") == "ok" for c in d["configs"]), d["configs"][0]
' <<<"$out" && [ "$rc" -eq 1 ]; }; checked "report only on an empty store: exit 1, nothing measured, no best" $?

# The launchers' variables: Open MPI's win over Slurm's; the local rank picks the GPU.
export CUCORE_FAKE_DEVICES=2
run env OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=3 OMPI_COMM_WORLD_LOCAL_RANK=1 \
  SLURM_PROCID=0 SLURM_NTASKS=2 "$CUCORE" tune "$dir/w.cu" --kernel work --problem-size 4096 \
  --arg 'out:f32[4096]' --arg i32:4096 --cache hot "${space[@]}" --db-dir "$dir/ompi" --json
check "Open MPI: shard 1 of 3 on device 1 (its local rank)" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["shard"] == {"index": 1, "count": 3, "from": "Open MPI", "taken_over": d["shard"]["taken_over"]}, d["shard"]
assert d["device"] == 1 and d["device_uuid"].endswith("01"), (d["device"], d["device_uuid"])
assert d["measured"] == 16 and d["shard"]["taken_over"] > 0, d["measured"]  # alone: it took the rest over
' <<<"$out"
PMI_RANK=0 PMI_SIZE=2 MPI_LOCALRANKID=3 run tune --db-dir "$dir/pmi" --json
check "MPICH: shard 0 of 2; local rank 3 of 2 GPUs: device 1" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["shard"]["from"] == "MPICH" and d["shard"]["count"] == 2 and d["device"] == 1, d
' <<<"$out"
SLURM_PROCID=1 SLURM_NTASKS=2 run tune --db-dir "$dir/none" --shard none --json
check "--shard none: not a shard" python3 -c 'import json,sys; d=json.load(sys.stdin); assert "shard" not in d, d' <<<"$out"

# A shard killed mid-tune loses only what it was measuring: the other takes over its share,
# and the killed shard's rerun measures nothing twice.
export CUCORE_FAKE_LAUNCH_US=2000
kdb="$dir/kill"
"$CUCORE" tune "${common[@]}" --db-dir "$kdb" --shard 0/2 --json >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 300); do [ "$(cat "$kdb"/*.jsonl 2>/dev/null | wc -l)" -ge 3 ] && break; sleep 0.05; done
kill -9 "${pids[0]}" 2>/dev/null
wait "${pids[0]}" 2>/dev/null
pids=()
run tune --db-dir "$kdb" --shard 1/2 --json
check "kill -9 of shard 0: shard 1 took over its share and finished" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["shard"]["taken_over"] > 0 and d["measured"] + d["from_store"] == 16, d
' <<<"$out"
run tune --db-dir "$kdb" --shard 0/2 --json
check "the killed shard's rerun: nothing left to measure" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["measured"] == 0 and d["from_store"] == 16, d
' <<<"$out"
check "after the kill: 16 configurations measured, none twice" \
  [ "$(python3 -c "$once" "$kdb"/*.jsonl | cut -d' ' -f1,2)" = "16 0" ]

# --devices all: one process per GPU, the finalists re-timed on the first; the same best.
export CUCORE_FAKE_LAUNCH_US=300
run tune --db-dir "$dir/dev" --devices all --json
check "--devices all: exit 0, both GPUs measured, the report from device 0" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["devices"] == [0, 1] and d["device"] == 0 and d["measured"] > 0, d
assert d["measured"] + d["from_store"] == 16 and d["shard"]["from"] == "--devices", d
assert d["finalists_retimed"] >= 2, d["finalists_retimed"]  # the whole store: re-timed on device 0
' <<<"$out"
# (Each process measures its share first, then takes over what nobody holds: on a loaded
# machine -- sanitizers, two cores -- the first GPU can finish both shares before the second
# process claims one, so one UUID or two are both right; every record names one.)
devs=$(python3 -c "$once" "$dir"/dev/*.jsonl)
check "--devices all: 16 configurations measured, none twice, by 1 or 2 GPUs (UUIDs kept)" \
  [ "$devs" = "16 0 2" -o "$devs" = "16 0 1" ]
best_devices=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["best"]["index"])' <<<"$out")
check "--devices all: the same best as the two shards" [ "$best_devices" = "$best_shards" ]
run tune --db-dir "$dir/dev" --devices all
check "--devices all: the text names the GPUs and where the finalists were re-timed" \
  has "$out" "devices: 2 GPUs measured, one process each (0, 1); the finalists re-timed on device 0"

# Hosts without a shared file system: each shard its own store and its share only
# (--shard-own-only), gathered with `cucore cache tune merge` into one folder, reported once.
tune --db-dir "$dir/h0" --shard 0/2 --shard-own-only --json >"$dir/h0.json" 2>/dev/null
tune --db-dir "$dir/h1" --shard 1/2 --shard-own-only --json >"$dir/h1.json" 2>/dev/null
check "own share only: 8 + 8 measured, nothing taken over" python3 -c '
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert a["measured"] == 8 and b["measured"] == 8, (a["measured"], b["measured"])
assert a["shard"]["taken_over"] == 0 and b["shard"]["taken_over"] == 0
' "$dir/h0.json" "$dir/h1.json"
run "$CUCORE" cache tune merge "$dir/h0" --into "$dir/merged"
{ [ "$rc" -eq 0 ] && has "$out" "into 1 tune store (0 already there)"; }; checked "cache tune merge: the first host's records" $?
run "$CUCORE" cache tune merge "$dir/h1" --into "$dir/merged" --json
check "cache tune merge --json: the second host's, one store" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert len(d["stores"]) == 1 and len(d["stores"][0]["key"]) == 64 and d["imported"] > 0, d
' <<<"$out"
run "$CUCORE" cache tune merge "$dir/h1" --into "$dir/merged"
check "cache tune merge again: every record already there" has "$out" "imported 0 records"
run tune --db-dir "$dir/merged" --report-only --json
check "the merged folder reported as one tune: 16 from the store" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["from_store"] == 16 and d["measured"] == 0 and d["best"], d
' <<<"$out"
run "$CUCORE" cache tune merge "$dir/nothing"
{ [ "$rc" -eq 1 ] && has "$err" "holds no tune store"; }; checked "cache tune merge of a folder without stores: exit 1, named" $?
run "$CUCORE" cache tune list --into "$dir/x"
{ [ "$rc" -eq 2 ] && has "$err" "--into DIR belongs to tune merge"; }; checked "--into outside merge: exit 2" $?

# A search split between shards: each proposes its share of the budget (seed + its number)
# and, before each batch, learns what the others stored; nothing is measured twice.
search=("$dir/w.cu" --kernel work --problem-size 4096 --arg 'out:f32[4096]' --arg i32:4096
  --cache hot --launch-mode single --param REPS=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16
  --param block_size_x=128,256 --max-evals 12 --batch 2 --db-dir "$dir/search" --json)
"$CUCORE" tune "${search[@]}" --shard 0/2 >"$dir/q0.json" 2>/dev/null
"$CUCORE" tune "${search[@]}" --shard 1/2 >"$dir/q1.json" 2>/dev/null
check "a sharded search: 6 + 6 evaluations, the second learned the first's results" python3 -c '
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert a["search"]["evals"] == 6 and b["search"]["evals"] == 6, (a["search"], b["search"])
assert a["shard"]["learned"] == 0 and b["shard"]["learned"] >= 4, (a["shard"], b["shard"])
' "$dir/q0.json" "$dir/q1.json"
check "a sharded search: nothing measured twice" [ "$(python3 -c "$once" "$dir"/search/*.jsonl | cut -d' ' -f2)" = "0" ]

# Mistakes, named.
unset CUCORE_FAKE_LAUNCH_US
run tune --devices all --db-dir "$dir/bad" --arg 'nonsense:f32[8]'
sleep 0.3
{ \
  [ "$rc" -eq 2 ] && ! pgrep -f -- "--db-dir $dir/bad" >/dev/null; }; checked "--devices with a bad --arg: exit 2, the other GPU's process stopped too" $?
run tune --shard 2/2
{ [ "$rc" -eq 2 ] && has "$err" "expected I/N"; }; checked "--shard 2/2: exit 2, the range named" $?
run tune --shard 0/2 --fresh
{ [ "$rc" -eq 2 ] && has "$err" "--fresh with shards"; }; checked "--fresh with a shard: exit 2" $?
run tune --devices 0,0
{ [ "$rc" -eq 2 ] && has "$err" "device 0 is named twice"; }; checked "--devices 0,0: exit 2" $?
run tune --devices 0,5
{ [ "$rc" -eq 2 ] && has "$err" "there are 2 GPUs"; }; checked "--devices 0,5: exit 2, the GPUs counted" $?
run tune --device 7
{ [ "$rc" -eq 2 ] && has "$err" "--device 7: there are 2 GPUs (0..1)"; }; checked "--device 7: exit 2" $?
run env CUCORE_FAKE_DEVICE1_NAME="cucore fake L4" "$CUCORE" tune "$dir/w.cu" --kernel work \
  --problem-size 4096 --arg 'out:f32[4096]' --arg i32:4096 "${space[@]}" --devices all
{ [ "$rc" -eq 2 ] && has "$err" "cucore fake L4" && has "$err" "--mixed-devices"; }; checked "--devices over two models: exit 2, both named" $?
# --mixed-devices: each model its own tune on its GPU, both reports in one output.
mixed=(env CUCORE_FAKE_DEVICE1_NAME="cucore fake L4" "$CUCORE" tune "$dir/w.cu" --kernel work
  --problem-size 4096 --arg 'out:f32[4096]' --arg i32:4096 "${space[@]}" --devices all
  --mixed-devices --cache hot --launch-mode single --finalists 2)
"${mixed[@]}" --db-dir "$dir/mixed" --json >"$dir/mixed.json" 2>"$dir/mixed.err"
check "--mixed-devices --json: exit 0, the other GPU's own report in device_reports" \
  python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
r = d["device_reports"]
assert len(r) == 1 and r[0]["device"] == 1, r
assert r[0]["device_uuid"] != d["device_uuid"], (r[0]["device_uuid"], d["device_uuid"])
assert r[0]["best"]["index"] == d["best"]["index"] and r[0]["measured"] == 16, r[0]
assert d["measured"] == 16, d["measured"]
' "$dir/mixed.json"
out=$("${mixed[@]}" --db-dir "$dir/mixed" 2>/dev/null)
{ \
  has "$out" "== device 1: its own tune ==" && has "$out" "other GPUs' reports below" &&
  [ "$(printf '%s\n' "$out" | grep -c '^best: ')" -eq 2 ] &&
  [ "$(printf '%s\n' "$out" | grep -c '16 from the store')" -eq 2 ]; }; checked "--mixed-devices, text: the second GPU's report after the first's, from the store" $?
run tune --report-only --max-evals 4
{ [ "$rc" -eq 2 ] && has "$err" "--report-only"; }; checked "--report-only with --max-evals: exit 2" $?
run tune --db "$dir/x.jsonl" --db-dir "$dir/x"
{ [ "$rc" -eq 2 ] && has "$err" "give one"; }; checked "--db with --db-dir: exit 2" $?
finish
