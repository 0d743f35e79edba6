#!/usr/bin/env bash
# tune_devices.sh -- `cucore tune` on every GPU of the host and as a launcher's shards, on a
# machine with two or more GPUs of one model: bench/spaces/src/matmul_heavy.cu (4096^2 fp32
# matmul, 48 configurations, kernels of several ms; and the same at 6144^2, GPU-bound).
#   1. the compile cache warmed (a dry run compiles every configuration);
#   2. one GPU (--device 0) against --devices all, each on a fresh store, REPEATS (default 2)
#      times interleaved: configurations per second (wall of the command), with racing (the
#      default: ~2 s of GPU time on an H200, not GPU-bound); then REPEATS_BIG (default 1) pairs
#      on the 6144^2 space with --no-racing (every configuration timed in full: GPU-bound, the
#      target's case);
#   3. two shards started as `srun` starts them (SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID, one
#      process per GPU) on one store, then `--report-only` over it;
#   4. a shard killed (kill -9) once a third of the space is in the store: the other finishes
#      its share and takes over the rest; the killed shard's rerun measures nothing; no
#      configuration measured twice.
# Prints each run, then one line per target ending in PASS or MISS: --devices all >= 1.8x the
# configurations per second of one GPU (with 2 GPUs; 0.9 x N with N); the same winner
# everywhere (or one within 1 % of the fastest winner: the tie floor); the kill loses nothing.
# usage: bench/tune_devices.sh [path/to/cucore]
set -uo pipefail
cd "$(dirname "$0")/.."
cucore=${1:-build-gpu/bin/cucore}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CUCORE_CACHE_DIR="$tmp/cache"
unset OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE PMI_RANK PMI_SIZE SLURM_PROCID SLURM_NTASKS
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if [ "${ngpu:-0}" -lt 2 ]; then
  echo "tune_devices: needs 2 GPUs or more (found ${ngpu:-0}): SKIP"
  exit 0
fi
src=bench/spaces/src/matmul_heavy.cu
space=("$src" --space bench/spaces/src/matmul_heavy.json --yes)
tune() { # tune NAME [options]: the report in $tmp/NAME.json, "exit RC wall S" in NAME.wall
  local name=$1 t0 t1 rc
  shift
  t0=$(date +%s.%N)
  "$cucore" tune "$src" --space "${SPACE_FILE:-bench/spaces/src/matmul_heavy.json}" --yes \
    --json "$@" >"$tmp/$name.json" 2>"$tmp/$name.err"
  rc=$?
  t1=$(date +%s.%N)
  echo "exit $rc wall $(awk -v a="$t0" -v b="$t1" 'BEGIN{print b - a}')" >"$tmp/$name.wall"
}
"$cucore" tune "${space[@]}" --dry-run --arch sm_90 >/dev/null 2>&1 # warm the compile cache
for i in $(seq 1 "${REPEATS:-2}"); do
  tune "one$i" --device 0 --db-dir "$tmp/one$i"
  tune "all$i" --devices all --db-dir "$tmp/all$i"
done
# GPU-bound: the same kernel at 6144^2 (3.4x the work a configuration), every configuration
# timed in full (no racing): ~20 s of GPU time on one H200 against ~0.9 s of start (cuInit
# alone took 0.35-0.45 s on the two-H200 machine).
export SPACE_FILE=bench/spaces/src/matmul_heavy_6144.json
"$cucore" tune "$src" --space "$SPACE_FILE" --yes --dry-run --arch sm_90 >/dev/null 2>&1
for i in $(seq 1 "${REPEATS_BIG:-1}"); do
  tune "fullone$i" --device 0 --db-dir "$tmp/fullone$i" --no-racing
  tune "fullall$i" --devices all --db-dir "$tmp/fullall$i" --no-racing
done
unset SPACE_FILE
# Two shards as srun starts them: one process per GPU (SLURM_LOCALID picks it).
t0=$(date +%s.%N)
for r in 0 1; do
  SLURM_PROCID=$r SLURM_NTASKS=2 SLURM_LOCALID=$r "$cucore" tune "${space[@]}" --json \
    --db-dir "$tmp/srun" >"$tmp/srun$r.json" 2>"$tmp/srun$r.err" &
done
wait
echo "exit 0 wall $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{print b - a}')" >"$tmp/srun.wall"
tune srun_report --db-dir "$tmp/srun" --report-only
# A shard killed once a third of the space is stored; the other finishes; the rerun.
"$cucore" tune "${space[@]}" --json --db-dir "$tmp/kill" --shard 0/2 --device 0 \
  >"$tmp/kill0.json" 2>"$tmp/kill0.err" &
victim=$!
SLURM_PROCID=1 SLURM_NTASKS=2 SLURM_LOCALID=1 "$cucore" tune "${space[@]}" --json \
  --db-dir "$tmp/kill" >"$tmp/kill1.json" 2>"$tmp/kill1.err" &
other=$!
for _ in $(seq 600); do
  [ "$(cat "$tmp"/kill/*.jsonl 2>/dev/null | wc -l)" -ge 16 ] && break
  sleep 0.05
done
kill -9 "$victim" 2>/dev/null
wait "$victim" 2>/dev/null
wait "$other"
tune kill0_rerun --db-dir "$tmp/kill" --shard 0/2 --device 0
python3 - "$tmp" "${REPEATS:-2}" "$ngpu" <<'PY'
import glob, json, os, sys, collections
tmp, reps, ngpu = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def load(name):
    try:
        rc, wall = open(f"{tmp}/{name}.wall").read().split()[1::2]
        wall = float(wall)
    except Exception:
        rc, wall = "?", 0.0
    try:
        return json.load(open(f"{tmp}/{name}.json")), wall
    except Exception as e:
        print(f"{name}: exit {rc}, no report ({e})")
        return None, wall
def once(folder):
    seen, uuids = collections.Counter(), collections.Counter()
    for path in glob.glob(f"{tmp}/{folder}/*.jsonl"):
        for line in open(path):
            r = json.loads(line)
            res = r["result"]
            if res["status"] != "compile-error" and not res.get("finalist"):
                seen[json.dumps(r["config"], sort_keys=True)] += 1
                uuids[res.get("uuid", "")] += 1
    return seen, uuids
winners = []
rates = {k: [] for k in ("one", "all", "fullone", "fullall")}
for i in range(1, reps + 1):
    for kind in rates:
        if not os.path.exists(f"{tmp}/{kind}{i}.json"):
            continue
        d, wall = load(f"{kind}{i}")
        if not d:
            continue
        seen, uuids = once(f"{kind}{i}")
        b = d.get("best") or {}
        rate = len(seen) / wall if wall else 0
        rates[kind].append(rate)
        winners.append((f"{kind}{i}", b))
        print(f"{kind} {i}: wall {wall:.2f} s, {len(seen)} configurations measured "
              f"({rate:.1f}/s) on {len(uuids)} GPU(s) {dict(uuids)}; best {b.get('index')} "
              f"{b.get('median_ms', 0):.4f} ms ({b.get('ties')} ties)")
d, _ = load("srun_report")
seen, uuids = once("srun")
if d:
    b = d.get("best") or {}
    winners.append(("srun", b))
    wall = float(open(f"{tmp}/srun.wall").read().split()[3])
    print(f"srun-like shards: wall {wall:.2f} s, {len(seen)} configurations on {len(uuids)} "
          f"GPU(s), measured twice: {sum(1 for v in seen.values() if v > 1)}; --report-only: "
          f"{d['from_store']} from the store, best {b.get('index')} {b.get('median_ms', 0):.4f} ms")
    for r in (0, 1):
        s, _ = load(f"srun{r}")
        if s:
            print(f"  shard {r}: measured {s['measured']}, taken over {s['shard']['taken_over']}, "
                  f"device {s['device']} {s['device_uuid']}")
need = 1.8 if ngpu == 2 else 0.9 * ngpu
if rates["one"] and rates["all"]:
    one, every = max(rates["one"]), max(rates["all"])
    print(f"--devices all on {ngpu} GPUs, racing (the default; ~2 s of GPU time, not GPU-bound): "
          f"{every:.1f} configurations/s against {one:.1f} on one ({every / one:.2f}x)")
if rates["fullone"] and rates["fullall"]:
    one, every = max(rates["fullone"]), max(rates["fullall"])
    print(f"--devices all on {ngpu} GPUs, GPU-bound (6144^2, --no-racing): {every:.1f} configurations/s "
          f"against {one:.1f} on one ({every / one:.2f}x), target >= {need:.1f}x: "
          f"{'PASS' if every >= need * one else 'MISS'}")
good = [(n, b) for n, b in winners if b.get("median_ms") and not n.startswith("full")]
big = [(n, b) for n, b in winners if n.startswith("full")]
if big:
    names = {b.get("index") for _, b in big}
    low = min(b["median_ms"] for _, b in big if b.get("median_ms"))
    ties = all(b.get("median_ms", 1e30) - low <= 0.01 * low for _, b in big)
    print(f"6144^2 space: same winner on one GPU and --devices all: {sorted(names)}: "
          f"{'PASS' if len(names) == 1 or ties else 'MISS'}")
if good:
    low = min(b["median_ms"] for _, b in good)
    names = {b.get("index") for _, b in good}
    ties = all(b["median_ms"] - low <= 0.01 * low for _, b in good)
    ok = len(good) == len(winners) - len(big) and (len(names) == 1 or ties)
    print(f"same winner on one GPU, --devices all and the srun-like shards ({len(good)} tunes): "
          f"{sorted(names)}{' (all within the tie window)' if ties else ''}: "
          f"{'PASS' if ok else 'MISS'}")
k1, _ = load("kill1")
kr, _ = load("kill0_rerun")
seen, _ = once("kill")
if k1 and kr:
    twice = sum(1 for v in seen.values() if v > 1)
    runnable = kr["from_store"] + kr["measured"]
    ok = twice == 0 and kr["measured"] == 0 and k1["shard"]["taken_over"] > 0
    print(f"a shard killed mid-tune: the other took over {k1['shard']['taken_over']} compiles, "
          f"the rerun measured {kr['measured']} ({kr['from_store']} from the store), "
          f"{len(seen)} configurations stored, {twice} measured twice: {'PASS' if ok else 'MISS'}")
else:
    print("a shard killed mid-tune: no report: MISS")
PY
for f in one1 all1 srun0; do tail -2 "$tmp/$f.err" | sed "s/^/  $f stderr: /"; done
