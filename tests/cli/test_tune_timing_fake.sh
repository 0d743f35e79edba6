#!/usr/bin/env bash
# cucore tune's timing modes and checks on the fake driver (launches recorded, nothing runs):
# --launch-mode graph|batch|single (auto: a graph for kernels of a few us), --cold
# rotate|flush|none (rotation past 2 x L2, or the flush with a note when the copies would be
# too many), the SM clock per sample through the fake NVML (throttled samples discarded and
# counted; without NVML a note and the tune goes on), and the largest absolute and relative
# errors of a wrong answer in the per-configuration line, the JSON and the store. Timings on
# the fake mean nothing; gpu_tune.sh checks them.
source "$(dirname "$0")/lib.sh"
libdir="$(cd "$(dirname "$CUCORE")/.." && pwd)/lib"
fake="$libdir/libcucore_fake_driver.so"
nvml="$libdir/libcucore_fake_nvml.so"
[ -f "$fake" ] && [ -f "$nvml" ] || { echo "skipped: no fake driver or NVML in $libdir"; exit 77; }
export CUCORE_LIBCUDA="$fake"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export CUCORE_CACHE_DIR="$dir/cache"
cat >"$dir/w.cu" <<'CU'
extern "C" __global__ void work(float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = REPS;
}
CU
rows() { python3 -c '
import json, sys
d = json.load(sys.stdin)
for r in d["configs"]:
    print(r["status"], r.get("launch_mode"), r.get("sm_clock_mhz"), r.get("throttled_samples"),
          r.get("max_abs_error"), r.get("max_rel_error"))'; }
tune() { run timeout 120 "$CUCORE" tune "$dir/w.cu" --kernel work --problem-size 64 \
  --arg 'out:f32[64]' --arg i32:64 --param REPS=1,2 --finalists 0 --fresh --json \
  --db "$dir/db.jsonl" "$@"; }

# Without NVML: a note, the tune goes on, no clock recorded.
CUCORE_LIBNVML="$dir/none.so" tune --cold none
check "no NVML: exit 0" [ "$rc" -eq 0 ]
check "no NVML: the note says the clock is not observed" has "$err" "SM clock is not observed"
check "no NVML: auto picks a graph for a kernel of a few us, no clock" \
  [ "$(rows <<<"$out" | sort -u)" = "ok graph None 0 None None" ]
export CUCORE_LIBNVML="$nvml"
for mode in graph batch single; do
  tune --cold none --launch-mode $mode
  check "--launch-mode $mode: both ok, timed so, the fake NVML's 1755 MHz recorded" \
    [ "$(rows <<<"$out" | sort -u)" = "ok $mode 1755 0 None None" ]
done
check "the store keeps the mode and the clock" grep -q '"mode":1,"sm_clock_mhz":1755,"throttled":0' "$dir/db.jsonl"
CUCORE_FAKE_NVML_REASONS=0x44 tune --cold none --launch-mode batch
check "throttled clocks: samples discarded and counted, the tune still ends ok" python3 -c '
import json, sys
for r in json.load(sys.stdin)["configs"]:
    assert r["status"] == "ok" and r["throttled_samples"] > 0 and r["samples"] >= 10, r' <<<"$out"
run timeout 120 "$CUCORE" tune "$dir/w.cu" --kernel work --problem-size 64 --arg 'out:f32[64]' \
  --arg i32:64 --param REPS=1 --launch-mode fast
{ [ "$rc" -eq 2 ] && has "$err" "auto|single|batch|graph"; }; checked "--launch-mode fast: exit 2 naming the choices" $?

# --cold rotate: small buffers need too many copies (the flush then, said once); 2 MiB of
# output against the fake's 50 MiB L2 makes 50 sets cycled through a graph of >= 50 launches.
tune --cold rotate
check "rotate with tiny buffers: the flush instead, said" has "$err" "the L2 is flushed instead"
run timeout 120 "$CUCORE" tune "$dir/w.cu" --kernel work --problem-size 524288 \
  --arg 'out:f32[524288]' --arg i32:524288 --param REPS=1 --finalists 0 --json \
  --db "$dir/rot.jsonl" --cold rotate --launch-mode graph
{ [ "$rc" -eq 0 ] && ! has "$err" "flushed instead"; }; checked "rotate: exit 0, no flush note" $?
{ python3 -c '
import json, sys
r = json.load(sys.stdin)["configs"][0]
assert r["status"] == "ok" and r["batch"] >= 50, r' <<<"$out" && grep -q 'timing=rotate;' "$dir/rot.jsonl"; }; checked "rotate: a graph of at least the 50 sets, keyed as rotate" $?

# --cold auto (the default): the same 2 MiB rotate without a word; 256 B of buffers would need
# too many copies, so they are flushed, also without a note; the JSON says which was used.
run timeout 120 "$CUCORE" tune "$dir/w.cu" --kernel work --problem-size 524288 \
  --arg 'out:f32[524288]' --arg i32:524288 --param REPS=1 --finalists 0 --json \
  --db "$dir/auto.jsonl"
{ [ "$rc" -eq 0 ] && ! has "$err" "flushed" &&
  has "$out" '"cold": "rotate"' && grep -q 'timing=rotate;' "$dir/auto.jsonl"; }; checked "auto, 2 MiB: rotated, keyed so, no note" $?
run timeout 120 "$CUCORE" tune "$dir/w.cu" --kernel work --problem-size 64 --arg 'out:f32[64]' \
  --arg i32:64 --param REPS=1 --finalists 0 --json --db "$dir/auto_tiny.jsonl"
{ [ "$rc" -eq 0 ] && ! has "$err" "flushed" &&
  has "$out" '"cold": "flush"' && grep -q 'timing=cold;' "$dir/auto_tiny.jsonl"; }; checked "auto, 256 B: flushed, keyed so, no note" $?
# A wrong answer records its largest errors: iota wanted, zeros got (the fake runs nothing).
tune --cold none --expect 0=iota
check "wrong answer: exit 1" [ "$rc" -eq 1 ]
check "wrong answer: max abs error 63 and max rel error 1 in the JSON" \
  [ "$(rows <<<"$out" | sort -u)" = "wrong-answer None None 0 63 1" ]
check "wrong answer: and in the store" grep -q '"max_abs_err":63,"max_rel_err":1,' "$dir/db.jsonl"
run timeout 120 "$CUCORE" tune "$dir/w.cu" --kernel work --problem-size 64 --arg 'out:f32[64]' \
  --arg i32:64 --param REPS=1 --fresh --db "$dir/db.jsonl" --expect 0=iota
check "wrong answer: and in the configuration's line" has "$out" "wrong-answer (max abs error 63, max rel error 1)"
# The finalists' re-timing: how many, and its own time in the split (part of measuring).
finals() { run timeout 120 "$CUCORE" tune "$dir/w.cu" --kernel work --problem-size 64 \
  --arg 'out:f32[64]' --arg i32:64 --param REPS=1,2,3 --cold none --fresh --db "$dir/fin.jsonl" "$@"; }
finals --finalists 2 --json
check "finalists: two asked, two or three re-timed (the best and its ties), timed apart" python3 -c '
import json, sys
d = json.load(sys.stdin)
t = d["time_s"]
n = d["finalists_retimed"]
assert 2 <= n <= 3 and 0 < t["finalists"] <= t["measuring"], (n, t)
assert sum(1 for r in d["configs"] if r.get("finalist")) == n, d["configs"]' <<<"$out"
finals --finalists 0 --json
check "no finalists: 0 and no time" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["finalists_retimed"] == 0 and d["time_s"]["finalists"] == 0, d["time_s"]' <<<"$out"
finals --finalists 2
check "the time line names the finalists' re-timing" grep -qE "[23] finalists re-timed at the end in [0-9.]+ s" <<<"$out"

# Long kernels (CUCORE_TUNE_LONG_MS): each launch takes 2 ms of the host, and the fake's events
# read 2 ms for a block of 128 threads and 4 ms for 256. A configuration is timed with its 3 lone launches and 2 more samples (5),
# and the finalists are only those within 5 % of the best: the four of 128 threads (ties), not
# the 256-thread ones at twice their time; 3 interleaved rounds each. (Run twice: the second
# finds every compile in the cache, so no sample is taken while a compile is awaited.)
long() { run env CUCORE_FAKE_EVENT_MS=2 CUCORE_FAKE_EVENT_PER_BLOCK=1 CUCORE_FAKE_LAUNCH_US=2000 timeout 120 "$CUCORE" tune \
  "$dir/w.cu" --kernel work --problem-size 4096 --arg 'out:f32[4096]' --arg i32:4096 \
  --param REPS=1,2,3,4 --param block_size_x=128,256 --cache hot --launch-mode single \
  --finalists 8 --no-racing --db "$dir/long.jsonl" --fresh --json; }
long
long
check "long kernels: 5 samples each; the finalists those within 5 % of the best, 3 rounds" python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["finalists_retimed"] == 4, d["finalists_retimed"]
for c in d["configs"]:
    fast = c["params"]["block_size_x"] == 128
    assert c["finalist"] == fast, c
    assert c["samples"] == (3 if fast else 5), c  # a finalist: the median of 3 rounds
    assert abs(c["median_ms"] - (2 if fast else 4)) < 1e-3, c
' <<<"$out"
finish
