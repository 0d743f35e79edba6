#!/usr/bin/env bash
# make_seeds.sh OUTDIR -- the seed corpus for fuzz_reader: small cubins for several arches,
# fatbins with each compression mode, PTX, a host object (all built with nvcc from
# tests/kernels when nvcc is there), the hand-written PTX, and a few hand-made inputs.
set -euo pipefail
out=${1:?usage: make_seeds.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
kernels=$here/../kernels
mkdir -p "$out"

cp "$kernels/directives.ptx" "$out/directives.ptx"
printf 'LZ4\x0a\x00\x13a\x01\x00\x20bc' > "$out/lz4_block"
printf '\x50\xed\x55\xba\x01\x00\x10\x00\x00\x00\x00\x00\x00\x00\x00\x00' > "$out/empty.fatbin"
printf '.version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 .ptr .align 8 p, .param .align 16 .b8 s[32])\n.maxntid 128\n{\n ret;\n}\n' > "$out/tiny.ptx"

nvcc=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
if [ ! -x "$nvcc" ]; then
  echo "make_seeds: nvcc not found; only the hand-made seeds were written" >&2
  exit 0
fi
cd "$kernels"
for arch in sm_75 sm_90a sm_120; do
  "$nvcc" -cubin -arch=$arch -o "$out/launch_attrs_$arch.cubin" launch_attrs.cu
done
"$nvcc" -cubin -arch=sm_80 -o "$out/big_params_sm_80.cubin" big_params.cu
"$nvcc" -cubin -arch=sm_90 -o "$out/cluster_sm_90.cubin" cluster.cu
for mode in none speed size; do
  opt=--compress-mode=$mode
  [ $mode = none ] && opt=--no-compress
  "$nvcc" -fatbin $opt -gencode arch=compute_80,code=[sm_80,compute_80] \
    -o "$out/big_params_$mode.fatbin" big_params.cu
done
"$nvcc" -ptx -arch=compute_90 -o "$out/params.ptx" params.cu
"$nvcc" -c -arch=sm_90 -o "$out/big_params.o" big_params.cu
