#!/usr/bin/env bash
# A kernel fault does not end cucore tune (fake driver: CUCORE_FAKE_FAULT_BLOCK=128 makes a
# launch with blockDim.x 128 "fault": every later stream, memory, launch and synchronize call
# fails with CUDA_ERROR_ILLEGAL_ADDRESS until the primary context is released). The faulting
# configurations are recorded as "fault", the device is closed and opened again, the buffers
# made again (an in-place buffer holds its initial values again), the other configurations
# are measured and verified, the store keeps the faults (a second run measures nothing).
# With CUCORE_FAKE_FAULT_STICKY=1 the device does not come back in the process (as a real
# driver's): the tune goes on in a fresh process, resuming from the store, once per fault.
source "$(dirname "$0")/lib.sh"
fake="$(cd "$(dirname "$CUCORE")/.." && pwd)/lib/libcucore_fake_driver.so"
[ -f "$fake" ] || { echo "skipped: no fake driver at $fake"; exit 77; }
export CUCORE_LIBCUDA="$fake" CUCORE_LIBNVML=/nonexistent/libnvidia-ml.so.1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export CUCORE_CACHE_DIR="$dir/cache"
cat >"$dir/w.cu" <<'CU'
extern "C" __global__ void work(float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = y[i] * REPS;
}
CU
summary() { python3 -c '
import json, sys
d = json.load(sys.stdin)
st = sorted((r["status"], r["block"][0]) for r in d["configs"] if r.get("status"))
print(d["measured"], d["from_store"], d["failed"], d["faults"], d["device_resets"], d["device_lost"], st)'; }
tune() { run timeout 120 env CUCORE_FAKE_FAULT_BLOCK=128 "$CUCORE" tune "$dir/w.cu" --kernel work \
  --problem-size 64 --arg 'inout:f32[64]=iota' --arg i32:64 --expect 0=iota --cold none \
  --param REPS=1,2 --param block_size_x=64,128,256 --db "$dir/db.jsonl" --json "$@"; }

tune
check "faults: exit 0 (the others verified)" [ "$rc" -eq 0 ]
want="4 0 2 2 2 False [('fault', 128), ('fault', 128), ('ok', 64), ('ok', 64), ('ok', 256), ('ok', 256)]"
check "faults: both block-128 configurations are faults, 2 resets, the 4 others ok" \
  [ "$(summary <<<"$out")" = "$want" ]
check "faults: each reset said on stderr" [ "$(grep -c 'faulted: the device was reset' <<<"$err")" -eq 2 ]
check "faults: the store keeps them" [ "$(grep -c '"status":"fault"' "$dir/db.jsonl")" -eq 2 ]
tune
# The faults recorded by the first run are failures of this one too (counted wherever they
# were recorded; no reset happened in this process).
check "again: nothing measured, the faults come from the store and count as failures" \
  [ "$(summary <<<"$out" | cut -d' ' -f1-6)" = "0 6 2 2 0 False" ]
run timeout 120 env CUCORE_FAKE_FAULT_BLOCK=128 "$CUCORE" tune "$dir/w.cu" --kernel work \
  --problem-size 64 --arg 'inout:f32[64]=iota' --arg i32:64 --expect 0=iota --cold none \
  --param REPS=1 --param block_size_x=128,64 --db "$dir/db.jsonl" --fresh
{ \
  has "$out" "| fault: the kernel faulted" && has "$out" "1 kernel faults (1 device resets)"; }; checked "text: the fault in the configuration's line and the results" $?

restarts() { python3 -c '
import json, sys
d = json.load(sys.stdin)
st = sorted((r["status"], r["block"][0]) for r in d["configs"] if r.get("status"))
print(d["process_restarts"], d["device_lost"], d["measured"] + d["from_store"], st)'; }
run timeout 120 env CUCORE_FAKE_FAULT_BLOCK=128 CUCORE_FAKE_FAULT_STICKY=1 "$CUCORE" tune \
  "$dir/w.cu" --kernel work --problem-size 64 --arg 'inout:f32[64]=iota' --arg i32:64 \
  --expect 0=iota --cold none --param REPS=1,2 --param block_size_x=64,128,256 \
  --db "$dir/sticky.jsonl" --fresh --json
want="2 False 6 [('fault', 128), ('fault', 128), ('ok', 64), ('ok', 64), ('ok', 256), ('ok', 256)]"
check "device lost: exit 0 ($rc)" [ "$rc" -eq 0 ]
check "device lost: 2 fresh processes, every configuration measured or a fault ($(restarts <<<"$out"))" \
  [ "$(restarts <<<"$out")" = "$want" ]
check "device lost: each restart said on stderr" \
  [ "$(grep -c 'goes on in a fresh process' <<<"$err")" -eq 2 ]
check "device lost: the store has no device-lost record" \
  bash -c '! grep -q "device-lost" "$1"' _ "$dir/sticky.jsonl"
finish
