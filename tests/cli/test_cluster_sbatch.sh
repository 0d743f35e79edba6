#!/usr/bin/env bash
# examples/cluster/tune.sbatch run as Slurm would run it, on the fake driver (two "GPUs"): a
# stand-in `srun` on PATH starts the tasks with SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID (and
# --output's %t) as srun does; the shards measure each configuration once between them, and
# the closing step writes the header and the CSV from the whole store.
source "$(dirname "$0")/lib.sh"
fake="$(cd "$(dirname "$CUCORE")/.." && pwd)/lib/libcucore_fake_driver.so"
[ -f "$fake" ] || { echo "skipped: no fake driver at $fake"; exit 77; }
top="$(cd "$(dirname "$0")/../.." && pwd)"
export CUCORE_LIBCUDA="$fake" CUCORE_FAKE_DEVICES=2 CUCORE_FAKE_LAUNCH_US=300
export CUCORE="$(cd "$(dirname "$CUCORE")" && pwd)/$(basename "$CUCORE")"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export CUCORE_CACHE_DIR="$dir/cache"
unset OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE PMI_RANK PMI_SIZE SLURM_PROCID SLURM_NTASKS
mkdir -p "$dir/bin" "$dir/job"
cat >"$dir/bin/srun" <<'SH'
#!/usr/bin/env bash
# srun's part here: --ntasks=N (default SRUN_TASKS), --output=PATTERN (%t: the task), then the
# command, started once per task with the variables srun sets.
n=${SRUN_TASKS:-2} out=
while [[ "$1" == --* ]]; do
  case "$1" in --ntasks=*) n=${1#--ntasks=} ;; --output=*) out=${1#--output=} ;; esac
  shift
done
pids=()
for ((t = 0; t < n; t++)); do
  if [ -n "$out" ]; then
    SLURM_PROCID=$t SLURM_NTASKS=$n SLURM_LOCALID=$t "$@" >"${out//%t/$t}" &
  else
    SLURM_PROCID=$t SLURM_NTASKS=$n SLURM_LOCALID=$t "$@" &
  fi
  pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=$?; done
exit $rc
SH
chmod +x "$dir/bin/srun"
cat >"$dir/job/w.cu" <<'CU'
extern "C" __global__ void work(float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = REPS;
}
CU
cat >"$dir/job/w.json" <<'JSON'
{"kernel_name": "work", "problem_size": 4096,
 "tune_params": {"REPS": [1, 2, 3], "block_size_x": [128, 256]},
 "cucore_args": ["out:f32[4096]", "i32:4096"], "cucore_expect": ["0=0"], "atol": 0.5}
JSON
(cd "$dir/job" && PATH="$dir/bin:$PATH" SLURM_JOB_ID=7 SRC=w.cu SPACE=w.json DB="$dir/job/db" \
  bash "$top/examples/cluster/tune.sbatch") >"$dir/out" 2>"$dir/err"
rc=$?
err=$(cat "$dir/err")
check "tune.sbatch runs: exit 0" [ "$rc" -eq 0 ]
check "two shards, from Slurm's variables, on two GPUs, each configuration measured once" python3 -c '
import glob, json, sys, collections
job = sys.argv[1]
shards = [json.load(open(f"{job}/shard-{t}.json")) for t in (0, 1)]
for t, d in enumerate(shards):
    assert d["shard"]["index"] == t and d["shard"]["count"] == 2 and d["shard"]["from"] == "Slurm", d["shard"]
assert {d["device"] for d in shards} == {0, 1}, [d["device"] for d in shards]
seen = collections.Counter()
for line in open(glob.glob(f"{job}/db/*.jsonl")[0]):
    r = json.loads(line)
    if not r["result"]["finalist"]:
        seen[json.dumps(r["config"], sort_keys=True)] += 1
assert len(seen) == 6 and max(seen.values()) == 1, seen
' "$dir/job"
check "the closing step: the winner as a header and every row in the CSV" \
  bash -c 'grep -q "^#define REPS " "$1/best.h" && [ "$(wc -l <"$1/results.csv")" -eq 7 ]' _ "$dir/job"
check "the closing step re-timed the whole store's finalists on one GPU" grep -q "finalists re-timed" "$dir/out"
finish
