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

# Without a usable nvJitLink, PTX -> cubin falls back to the driver's linker, which needs a GPU.
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf '.version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p) { ret; }\n' >"$dir/k.ptx"
run env CUCORE_NVJITLINK=/nonexistent/libnvJitLink.so.13 "$CUCORE" version --json
check "missing nvJitLink: the PTX linker is named" python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["nvjitlink"]["loaded"] is False; assert d["ptx_linker"] is None or d["ptx_linker"].startswith("driver"), d["ptx_linker"]' <<<"$out"
if ! "$CUCORE" devices >/dev/null 2>&1; then
  run env CUCORE_NVJITLINK=/nonexistent/libnvJitLink.so.13 "$CUCORE" version
  check "missing nvJitLink, no GPU: no PTX linker, said so" has "$out" "PTX linker none"
  run env CUCORE_NVJITLINK=/nonexistent/libnvJitLink.so.13 "$CUCORE" compile "$dir/k.ptx" --arch sm_90 --target cubin -o "$dir/k.cubin"
  check "missing nvJitLink, no GPU: PTX -> cubin exits 1" [ "$rc" -eq 1 ]
  check "missing nvJitLink, no GPU: names nvJitLink and the driver's linker" has "$err" "the driver's linker"
  check "missing nvJitLink, no GPU: no output file" [ ! -e "$dir/k.cubin" ]
fi

run "$CUCORE" version --json
check "version --json is valid JSON with the cucore version" python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["cucore"]; assert d["nvrtc"]["loaded"] and d["nvrtc"]["path"]' <<<"$out"

run "$CUCORE" devices --json
if [ "$rc" -eq 0 ]; then
  check "devices --json lists devices" python3 -c 'import json,sys; d=json.load(sys.stdin); assert len(d["devices"]) >= 1; assert d["devices"][0]["sm_count"] > 0' <<<"$out"
else
  check "devices without a GPU: exit 1 with a reason" [ "$rc" -eq 1 -a -n "$err" ]
fi
finish
