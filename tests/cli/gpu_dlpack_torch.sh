#!/usr/bin/env bash
# cucore's DLPack (0.x and 1.x) against PyTorch's and CuPy's on a GPU (label gpu): exports read
# by torch.from_dlpack and cupy.from_dlpack, their capsules (versioned and legacy) imported by
# cucore, values compared both ways (tests/dlpack_peers.py, through ctypes on libcucore.so).
# Skipped (77) when no Python here imports both torch and cupy, or no GPU is usable.
# CUCORE_PEERS_PYTHON names the interpreter to use first.
source "$(dirname "$0")/lib.sh"
here="$(cd "$(dirname "$0")/.." && pwd)"
libdir="$(cd "$(dirname "$CUCORE")/../lib" 2>/dev/null && pwd)"
lib="$libdir/libcucore.so"
[ -f "$lib" ] || { echo "FAIL: libcucore.so not found beside $CUCORE (looked in $libdir)"; exit 1; }
py=""
for cand in "${CUCORE_PEERS_PYTHON:-}" python3 python; do
  [ -n "$cand" ] || continue
  command -v "$cand" >/dev/null 2>&1 || continue
  if "$cand" -c 'import torch, cupy' >/dev/null 2>&1; then py="$cand"; break; fi
done
[ -n "$py" ] || { echo "skipped: no python here imports both torch and cupy"; exit 77; }
# libcucore keeps its thread-local state in initial-exec TLS (the hot paths' one load), which a
# Python process cannot dlopen late ("cannot allocate memory in static TLS block", glibc 2.36):
# preloaded, its TLS is laid out at start, as for a program linked with it.
LD_PRELOAD="$lib${LD_PRELOAD:+:$LD_PRELOAD}" exec "$py" "$here/dlpack_peers.py" "$lib"
