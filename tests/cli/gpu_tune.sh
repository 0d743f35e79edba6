#!/usr/bin/env bash
# cucore tune on a GPU (label gpu): a kernel whose best configuration is known by
# construction, verification against --expect and against the first configuration, an
# in-place kernel whose data is restored before every check, two configurations that each
# write only half of the output (both must fail), the store resumed with nothing measured
# twice, and the winner reproduced with the printed `cucore run` command; kernels of a few us
# timed as a graph (auto) faster per launch than single launches, --cold rotate, the SM clock
# from NVML, and configurations that fault recorded as faults with the tune going on; two
# shards on one store and --devices all.
source "$(dirname "$0")/lib.sh"
"$CUCORE" devices >/dev/null 2>&1 || { echo "skipped: no GPU"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export CUCORE_CACHE_DIR="$dir/cache"
# work: REPS x 4096 dependent multiply-adds per element; REPS=1 does a sixteenth of REPS=16's
# work and the launch is the same, so REPS=1 is the best configuration by construction.
# inc: in place, x[i] += 1 (a run on dirty data would give 2, 3, ...).
# half: PART 0 writes the first half of y, PART 1 the second half, PART 2 all of it.
cat >"$dir/k.cu" <<'CU'
#ifndef REPS /* each tune defines only its own kernel's parameters */
#define REPS 1
#endif
#ifndef PART
#define PART 2
#endif
#ifndef BAD
#define BAD 0
#endif
extern "C" __global__ void work(float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = 0.5f + 1e-12f * (float)i; /* from the index, so the compiler cannot fold the loop */
  for (int r = 0; r < REPS * 4096; r++) v = v * 0.999f + 0.0005f;
  y[i] = v;
}
extern "C" __global__ void inc(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}
extern "C" __global__ void oops(float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (BAD && i == 0) *(volatile float *)8 = 1.0f; /* an illegal address: the context is lost */
  if (i < n) y[i] = 3.0f;
}
extern "C" __global__ void half(float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int lo = PART == 1 ? n / 2 : 0, hi = PART == 0 ? n / 2 : n;
  if (i >= lo && i < hi) y[i] = 7.0f;
}
CU
N=1048576
tunew() { run timeout 300 "$CUCORE" tune "$dir/k.cu" --kernel work --param REPS=16,4,1 \
  --param block_size_x=128,256 --problem-size $N --arg out:f32[$N] --arg i32:$N "$@"; }

tunew --json
check "tune work: exit 0" [ "$rc" -eq 0 ]
check "tune work: REPS=1 wins, every config verified against the first" python3 -c '
import json, sys
d = json.load(sys.stdin)
cfg = {c["index"]: c for c in d["configs"]}
best = cfg[d["best"]["index"]]
assert best["params"]["REPS"] == 1, best
assert all(c["status"] == "ok" for c in d["configs"]), [c["status"] for c in d["configs"]]
assert d["measured"] == 6 and d["from_store"] == 0, d
assert all(c["samples"] >= 5 for c in d["configs"])
slow = [c for c in d["configs"] if c["params"]["REPS"] == 16]
assert min(c["median_ms"] for c in slow) > 4 * best["median_ms"]
' <<<"$out"
first="$out"

# The same tune again: everything from the store, nothing measured twice, same winner.
tunew --json
check "tune again: all 6 from the store, same best" python3 -c '
import json, sys
a = json.loads(sys.argv[1]); b = json.load(sys.stdin)
assert b["measured"] == 0 and b["from_store"] == 6, (b["measured"], b["from_store"])
ca = {c["index"]: c for c in a["configs"]}
assert ca[b["best"]["index"]]["params"]["REPS"] == 1
' "$first" <<<"$out"

# One more value: only the 2 new configurations are measured.
run timeout 300 "$CUCORE" tune "$dir/k.cu" --kernel work --param REPS=16,4,1,2 \
  --param block_size_x=128,256 --problem-size $N --arg out:f32[$N] --arg i32:$N --json
check "one more value: only the new configurations measured" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["measured"] == 2 and d["from_store"] == 6, (d["measured"], d["from_store"])
' <<<"$out"

# The printed command reproduces the winner and its output.
tunew
cmd=$(grep '^reproduce: ' <<<"$out" | sed 's/^reproduce: //')
check "tune prints a cucore run command" [ -n "$cmd" ]
# work's loop keeps v at its fixed point 0.5 (0.5 * 0.999 + 0.0005 = 0.5)
run bash -c "'$CUCORE' run${cmd#cucore run} --expect 0=0.5 --rtol 1e-4"
check "the reproduced run matches the expected value" [ "$rc" -eq 0 ]

# In place: x = 1 restored before every check, so x + 1 = 2 for every configuration.
run timeout 300 "$CUCORE" tune "$dir/k.cu" --kernel inc --param block_size_x=64,128,256 \
  --problem-size 4096 --arg inout:f32[4096]=1 --arg i32:4096 --expect 0=2 --fresh --json
check "in-place: every configuration checks x+1 on restored data" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert [c["status"] for c in d["configs"]] == ["ok"] * 3, [(c["status"], c.get("detail")) for c in d["configs"]]
' <<<"$out"

# Each of PART 0 and 1 writes half of y: both fail; PART 2 (all of y) is the winner.
run timeout 300 "$CUCORE" tune "$dir/k.cu" --kernel half --param PART=0,1,2 \
  --problem-size 4096 --arg out:f32[4096] --arg i32:4096 --expect 0=7 --json
check "two half-writers both fail verification" python3 -c '
import json, sys
d = json.load(sys.stdin)
st = {c["params"]["PART"]: c["status"] for c in d["configs"]}
assert st == {0: "wrong-answer", 1: "wrong-answer", 2: "ok"}, st
assert d["wrong_answers"] == 2 and d["configs"][d["best"]["index"]]["params"]["PART"] == 2
' <<<"$out"
# Without --expect, --poison makes the half-writers fail against nobody's output.
run timeout 300 "$CUCORE" tune "$dir/k.cu" --kernel half --param PART=0,1 \
  --problem-size 4096 --arg out:f32[4096] --arg i32:4096 --poison --fresh
check "poison: never-written elements fail both" eval '[ "$rc" -eq 1 ] && has "$out" "never written"' 

# A kernel of a few us: auto times it as a graph of launches, cheaper per launch than single
# launches between events; the SM clock comes from NVML.
tinyt() { run timeout 300 "$CUCORE" tune "$dir/k.cu" --kernel inc --param block_size_x=64,128 \
  --problem-size 256 --arg inout:f32[256]=0 --arg i32:256 --finalists 0 --fresh --json "$@"; }
tinyt
graph="$out"
tinyt --launch-mode single
check "graph mode: auto picks it for a tiny kernel, the clock recorded, <= single launches" python3 -c '
import json, sys
g, s = (json.loads(open(f).read()) for f in sys.argv[1:])
for c in g["configs"]:
    assert c["status"] == "ok" and c["launch_mode"] == "graph" and c["batch"] > 1, c
    assert c["sm_clock_mhz"] is None or c["sm_clock_mhz"] > 100, c
for a, b in zip(g["configs"], s["configs"]):
    assert b["launch_mode"] == "single", b
    assert a["median_ms"] <= b["median_ms"] * 1.1, (a["median_ms"], b["median_ms"])
' <(printf '%s' "$graph") <(printf '%s' "$out")
tunew --cold rotate --finalists 0 --fresh --json
check "--cold rotate: exit 0" [ "$rc" -eq 0 ]
check "--cold rotate: REPS=1 still wins" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["configs"][d["best"]["index"]]["params"]["REPS"] == 1, d["best"]' <<<"$out"

# BAD=1 faults (an illegal address): recorded as a fault and the tune goes on. The device comes
# back when cucore's close releases the last hold on its primary context; where it does not
# (driver 580 keeps the fault for the process: CUDA says the process must end), cucore tune
# goes on in a fresh process that resumes from the store. Either way every BAD=0
# configuration is measured and verified, every BAD=1 one is a fault, and nothing is left
# device-lost.
run timeout 300 "$CUCORE" tune "$dir/k.cu" --kernel oops --param BAD=1,0 \
  --param block_size_x=128,256 --problem-size 4096 --arg out:f32[4096] --arg i32:4096 \
  --expect 0=3 --json
check "faults: exit 0" [ "$rc" -eq 0 ]
check "faults: recorded as data; the others all measured (resets or fresh processes)" python3 -c '
import json, sys
d = json.load(sys.stdin)
st = sorted((c["params"]["BAD"], c["status"]) for c in d["configs"])
assert all(s == "fault" for b, s in st if b == 1), st
assert all(s == "ok" for b, s in st if b == 0), st
assert not d["device_lost"], d
print("fresh processes: %d, resets in the last: %d; %s" % (d["process_restarts"], d["device_resets"], st))
' <<<"$out"
# Values and names as users bring them: a string value with a space, a 200-byte
# parameter name, an expression value; measured, the winner emitted as a header, a program
# compiled against that header prints the winner's values, the same as the tune's JSON.
long=$(printf 'L%.0s' $(seq 200))
cat >"$dir/v.cu" <<CU
extern "C" __global__ void fill(VT *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = (VT)(SCALE + $long);
}
CU
run timeout 300 "$CUCORE" tune "$dir/v.cu" --kernel fill --param 'VT=unsigned int' \
  --param 'SCALE=2 * 3' --param "$long=1,2" --param block_size_x=64,128 --problem-size 4096 \
  --arg out:u32[4096] --arg i32:4096 --expect 0=7 --emit-header "$dir/best.h" --json
check "strings and long names: exit 0, every configuration measured" python3 -c '
import json, sys
d = json.load(sys.stdin)
st = [(c["params"], c["status"]) for c in d["configs"]]
ok = [p for p, s in st if s == "ok"]
assert len(ok) == 2 and all(p["VT"] == "unsigned int" and p["SCALE"] == "2 * 3" for p in ok), st
assert d["wrong_answers"] == 2, d["wrong_answers"]  # LONG=2 gives 8, not 7
' <<<"$out"
cat >"$dir/use.c" <<C
#include "best.h"
#include <stdio.h>
int main(void) { printf("%zu %d %d\\n", sizeof(VT), (int)(SCALE), (int)$long); return 0; }
C
check "the emitted header compiles into a program that prints the winner's values" \
  bash -c 'cc -I"$1" -o "$1/use" "$1/use.c" && [ "$("$1/use")" = "4 6 1" ]' _ "$dir"

# Two shards on one store, as a launcher starts them (both on this GPU: the local rank modulo
# the GPUs): each configuration measured once between them, the winner REPS=1, the same
# winner from --report-only; --devices all (one GPU here: no processes of its own, or one per
# GPU) finds it too.
shard() { SLURM_PROCID=$1 SLURM_NTASKS=2 SLURM_LOCALID=$1 timeout 300 "$CUCORE" tune "$dir/k.cu" \
  --kernel work --param REPS=1,4,16 --param block_size_x=128,256 --problem-size 65536 \
  --arg 'out:f32[65536]' --arg i32:65536 --db-dir "$dir/shards" --json "${@:2}"; }
shard 0 >"$dir/shard0.json" 2>"$dir/shard0.err" &
spid=$!
shard 1 >"$dir/shard1.json" 2>"$dir/shard1.err"
wait $spid
check "two Slurm shards on the GPU: each configuration measured once, REPS=1 found" python3 -c '
import glob, json, sys, collections
seen = collections.Counter()
for line in open(glob.glob(sys.argv[1] + "/shards/*.jsonl")[0]):
    r = json.loads(line)
    if not r["result"]["finalist"]:
        seen[json.dumps(r["config"], sort_keys=True)] += 1
assert len(seen) == 6 and max(seen.values()) == 1, seen
for f in ("shard0", "shard1"):
    d = json.load(open(f"{sys.argv[1]}/{f}.json"))
    assert d["shard"]["count"] == 2 and d["shard"]["from"] == "Slurm", d.get("shard")
' "$dir"
run shard 0 --report-only --shard none
check "--report-only over the shards' store: REPS=1, nothing measured" python3 -c '
import json, sys
d = json.load(sys.stdin)
b = next(c for c in d["configs"] if c["index"] == d["best"]["index"])
assert d["measured"] == 0 and d["from_store"] == 6 and b["params"]["REPS"] == 1, d["best"]
' <<<"$out"
run timeout 300 "$CUCORE" tune "$dir/k.cu" --kernel work --param REPS=1,4,16 --problem-size 65536 \
  --arg 'out:f32[65536]' --arg i32:65536 --db-dir "$dir/devices" --devices all --json
check "--devices all on this host: REPS=1, the finalists on device 0" python3 -c '
import json, sys
d = json.load(sys.stdin)
b = next(c for c in d["configs"] if c["index"] == d["best"]["index"])
assert b["params"]["REPS"] == 1 and d["device"] == 0 and len(d["device_uuid"]) == 36, d
' <<<"$out"

# The README's worked example, measured as written, from examples/tune/.
top="$(cd "$(dirname "$0")/../.." && pwd)"
readme=$(python3 - "$top/README.md" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
t = t[t.index("### A worked example: `cucore tune`"):].replace("\\\n", " ")
print(next(re.sub(r"\s+", " ", l.strip()) for l in t.splitlines() if l.strip().startswith("cucore tune ")))
PY
)
abs="$(cd "$(dirname "$CUCORE")" && pwd)/$(basename "$CUCORE")"
(cd "$top/examples/tune" && eval "timeout 300 \"$abs\" ${readme#cucore } --db \"$dir/readme.jsonl\"") \
  >"$dir/readme.out" 2>"$dir/readme.err"
rc=$?
err=$(cat "$dir/readme.err")
check "the README's worked example runs as written on the GPU, a best found" \
  bash -c '[ "$1" -eq 0 ] && grep -q "^best: \[" "$2"' _ "$rc" "$dir/readme.out"
finish
