#!/usr/bin/env bash
# `run` on a driver that lacks the optional cuLibraryLoadFromFile (the project's fake driver):
# the code is loaded from the bytes read instead (cuLibraryLoadData), never through a NULL
# pointer (it once segfaulted here).
source "$(dirname "$0")/lib.sh"

fake="$(dirname "$CUCORE")/../lib/libcucore_fake_driver.so"
[ -f "$fake" ] || { echo "skipped: no fake driver at $fake"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf '.version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p, .param .u32 n)\n{\n  ret;\n}\n' >"$dir/k.ptx"
run env CUCORE_LIBCUDA="$fake" timeout 20 "$CUCORE" run "$dir/k.ptx" --kernel k --grid 1 --block 32 \
  --arg 'buf:f32[32]=0' --arg i32:32
check "PTX file on a driver without cuLibraryLoadFromFile: exit 0 (rc $rc: $err)" [ "$rc" -eq 0 ]
check "PTX file: the launch is reported" has "$out" "grid 1x1x1"

printf 'extern "C" __global__ void k(float *x, int n) { if (threadIdx.x < n) x[threadIdx.x] = 1; }\n' >"$dir/k.cu"
if timeout 60 "$CUCORE" compile "$dir/k.cu" --arch sm_90 -o "$dir/k.cubin" >/dev/null 2>&1; then
  run env CUCORE_LIBCUDA="$fake" timeout 20 "$CUCORE" run "$dir/k.cubin" --kernel k --grid 1 \
    --block 32 --arg 'buf:f32[32]=0' --arg i32:32
  check "cubin file on a driver without cuLibraryLoadFromFile: exit 0 (rc $rc: $err)" [ "$rc" -eq 0 ]
  check "cubin file: the launch is reported" has "$out" "grid 1x1x1"
fi
finish
