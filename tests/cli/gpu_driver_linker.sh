#!/usr/bin/env bash
# Without a usable nvJitLink, PTX is linked into a cubin by the driver's own linker, and the
# cubin runs (label gpu).
source "$(dirname "$0")/lib.sh"
"$CUCORE" devices >/dev/null 2>&1 || { echo "skipped: no GPU"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/k.cu" <<'CU'
extern "C" __global__ void triple(int *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 3; }
CU
run "$CUCORE" compile "$dir/k.cu" --target ptx -o "$dir/k.ptx"
check "PTX made with NVRTC" [ "$rc" -eq 0 -a -s "$dir/k.ptx" ]
export CUCORE_NVJITLINK=/nonexistent/libnvJitLink.so.13
run "$CUCORE" version
check "version names the driver's linker" has "$out" "PTX linker driver"
run "$CUCORE" compile "$dir/k.ptx" --target cubin -o "$dir/k.cubin"
check "PTX -> cubin through the driver's linker" [ "$rc" -eq 0 -a -s "$dir/k.cubin" ]
run "$CUCORE" inspect "$dir/k.cubin" --json
check "the driver-linked cubin holds the kernel" python3 -c 'import json,sys; d=json.load(sys.stdin); assert any(k["name"]=="triple" for k in d["kernels"]), d' <<<"$out"
run "$CUCORE" run "$dir/k.cubin" --kernel triple --grid 4 --block 256 --arg buf:i32[1000]=iota --arg i32:1000 --json
check "the driver-linked cubin runs" [ "$rc" -eq 0 ]
run "$CUCORE" compile "$dir/k.ptx" --target cubin --use-fast-math -o "$dir/fast.cubin"
check "a flag the driver cannot honour is refused, named" eval '[ "$rc" -eq 1 ] && has "$err" "cannot honour"'
finish
