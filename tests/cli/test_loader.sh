#!/usr/bin/env bash
# The command with no driver, with the toolkit's stub driver, and with a missing NVRTC:
# each a clear one-line reason and exit status 1, never a crash.
source "$(dirname "$0")/lib.sh"

run env CUCORE_LIBCUDA=/nonexistent/libcuda.so.1 "$CUCORE" devices
check "no driver: exit 1" [ "$rc" -eq 1 ]
check "no driver: says what it could not load" has "$err" "could not load the CUDA driver"
check "no driver: names the path it tried" has "$err" "/nonexistent/libcuda.so.1"
check "no driver: one line" [ "$(lines "$err")" -eq 1 ]
check "no driver: nothing on stdout" [ -z "$out" ]

if [ -f "$CUDA_ROOT/lib64/stubs/libcuda.so" ]; then
  run env CUCORE_LIBCUDA="$CUDA_ROOT/lib64/stubs/libcuda.so" "$CUCORE" devices
  check "stub driver: exit 1" [ "$rc" -eq 1 ]
  check "stub driver: named as the stub" has "$err" "stub"
  check "stub driver: one line" [ "$(lines "$err")" -eq 1 ]
fi

run env CUCORE_NVRTC=/nonexistent/libnvrtc.so.13 "$CUCORE" version --json
check "missing NVRTC: version still answers" [ "$rc" -eq 0 ]
check "missing NVRTC: valid JSON" python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["nvrtc"]["loaded"] is False; assert "CUCORE_NVRTC" in d["nvrtc"]["error"]' <<<"$out"

run "$CUCORE" version --json
check "version --json is valid JSON with the cucore version" python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["cucore"]; assert d["nvrtc"]["loaded"] and d["nvrtc"]["path"]' <<<"$out"

run "$CUCORE" devices --json
if [ "$rc" -eq 0 ]; then
  check "devices --json lists devices" python3 -c 'import json,sys; d=json.load(sys.stdin); assert len(d["devices"]) >= 1; assert d["devices"][0]["sm_count"] > 0' <<<"$out"
else
  check "devices without a GPU: exit 1 with a reason" [ "$rc" -eq 1 -a -n "$err" ]
fi
finish
