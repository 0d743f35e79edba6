#!/usr/bin/env bash
# The newer compile options on the command line: NVRTC's and nvJitLink's typed flags and the
# precompiled headers compile, a wrong value is refused naming the option and what it takes, an
# option for another tool is refused naming the tools, a compile that writes a file as it runs
# is not cached, and `cucore help compile` lists them.
source "$(dirname "$0")/kernels_lib.sh" "$1"

run "$CUCORE" compile "$dir/k.cu" --arch sm_90 --target ptx -o "$dir/m.ptx" --minimal \
  --diag-suppress 177,550 --ofast-compile=mid -restrict --dopt --no-cache --frandom-seed 7
check "typed NVRTC options: compiled" [ "$rc" -eq 0 ]
check "typed NVRTC options: PTX written" grep -q ".target sm_90" "$dir/m.ptx"

run "$CUCORE" compile "$dir/k.cu" --arch sm_90 --target ptx -o "$dir/x.ptx" --ofast-compile turbo
check "ofast-compile turbo: refused" [ "$rc" -ne 0 ]
check "ofast-compile turbo: says what it takes" has "$err" "expected 0, min, mid or max"

run "$CUCORE" compile "$dir/k.cu" --arch sm_90 --target ptx -o "$dir/x.ptx" --diag-error 177-D
check "diag-error 177-D: refused naming the option" has "$err" "diag-error"

run "$CUCORE" compile "$dir/k.cu" --arch sm_90 --target ptx -o "$dir/x.ptx" --kernels-used saxpy
check "kernels-used on a .cu: refused" [ "$rc" -ne 0 ]
check "kernels-used on a .cu: names the tools" has "$err" "is for nvJitLink only"

run "$CUCORE" compile "$dir/k.cu" --arch sm_90 --target ptx -o "$dir/t.ptx" --time "$dir/t.csv" --json
check "time: compiled" [ "$rc" -eq 0 ]
check "time: the CSV written" grep -q "CUDA C++ Frontend" "$dir/t.csv"
check "time: not cached, saying why" has "$out" "option \`time\`"

mkdir "$dir/pch"
run "$CUCORE" compile "$dir/k.cu" --arch sm_90 --target ptx -o "$dir/p.ptx" \
  --create-pch "$dir/pch/k.pch"
check "create-pch: compiled" [ "$rc" -eq 0 ]
check "create-pch: the PCH written" [ -s "$dir/pch/k.pch" ]

# --nvcc: the options nvcc has are passed on in its spelling (its --time writes the CSV too).
if [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ]; then
  run "$CUCORE" compile "$dir/k.cu" --nvcc --arch sm_90 -o "$dir/n.cubin" --time "$dir/n.csv" \
    -restrict --diag-suppress 177 --ofast-compile=mid
  check "nvcc: compiled with the typed options" [ "$rc" -eq 0 ]
  check "nvcc: --time passed on" grep -q "phase name" "$dir/n.csv"
fi

run "$CUCORE" help compile
for name in extensible-whole-program ofast-compile diag-suppress jitlink-verbose kernels-used \
  split-compile-extended pch create-pch use-pch pch-dir instantiate-templates-in-pch; do
  check "help compile: --$name" has "$out" "--$name"
done
finish
