#!/usr/bin/env bash
# One option table for the command. `--flag=value` and `--flag value` mean
# the same in every verb, an unknown option names the nearest known one (exit 2), a flag
# without a value refuses `=value`, compile options still come after the verb's own table,
# and `cucore help VERB` lists the table.
source "$(dirname "$0")/kernels_lib.sh" "$1"

# (times differ from run to run: compile's timing and cache result, run's time and bandwidth lines)
strip() { grep -v -e compile_ms -e '"cache' -e '^  time: ' -e '^  bandwidth: ' ; }
# same RESULT-NAME CMD... : both spellings give the same exit status, stdout and stderr.
same() {
  local what="$1" rc1 out1 err1; shift
  local split=() joined=()
  for a in "$@"; do
    if [[ "$a" == --*=* ]]; then split+=("${a%%=*}" "${a#*=}"); else split+=("$a"); fi
    joined+=("$a")
  done
  run timeout 60 "${split[@]}"; rc1=$rc; out1=$out; err1=$err
  run timeout 60 "${joined[@]}"
  check "$what: --flag=value as --flag value (exit $rc1)" [ "$rc" -eq "$rc1" ]
  check "$what: --flag=value as --flag value (same stdout)" [ "$(strip <<<"$out")" = "$(strip <<<"$out1")" ]
  check "$what: --flag=value as --flag value (same stderr)" [ "$err" = "$err1" ]
  check "$what: not a usage error" [ "$rc" -ne 2 ]
}
same "compile" "$CUCORE" compile "$dir/k.cu" --arch=sm_90 --target=ptx --output="$dir/o.ptx" --json
same "inspect" "$CUCORE" inspect "$dir/k.cubin" --arch=sm_90 --kernel=saxpy --json
same "occupancy" "$CUCORE" occupancy "$dir/k.cubin" --kernel=saxpy --arch=sm_90 --block=256 --smem=1024
same "run" "$CUCORE" run "$dir/k.cubin" --kernel=saxpy --grid=4,1,1 --block=256 --arg=f32:2 \
  --arg=buf:f32[8]=1 --arg=out:f32[8] --arg=i32:8 --repeat=3 --warmup=1 --seed=7 --show=2 \
  --rtol=0.5 --atol=0.1 --smem=0 --device=0 --priority=0
same "run (.cu, compile options after the table)" "$CUCORE" run "$dir/k.cu" --arch=sm_90 \
  --kernel=saxpy --grid=1 --block=32 --arg=f32:2 --arg=buf:f32[8]=1 --arg=out:f32[8] --arg=i32:8
run "$CUCORE" compile "$dir/k.cu" --arch sm_90 --target=ptx -o "$dir/o2.ptx"
check "compile --target=ptx -o: PTX written" grep -q ".target sm_90" "$dir/o2.ptx"

# `--` ends the options: a file whose name starts with a dash.
cp "$dir/k.cubin" "$dir/-k.cubin"
cu=$(readlink -f "$CUCORE")
(cd "$dir" && "$cu" inspect --kernel saxpy -- -k.cubin >"$dir/dash.out" 2>&1)
check "-- then -k.cubin: read" grep -q saxpy "$dir/dash.out"
(cd "$dir" && "$cu" inspect -k.cubin >"$dir/dash.out" 2>&1)
check "-k.cubin without --: an unknown option" grep -q "unknown option" "$dir/dash.out"

# Did you mean, in every verb (exit 2, stdout empty).
nearest() { # nearest WANT CMD...
  local want="$1"; shift
  run "$@"
  check "$* : exit 2" [ "$rc" -eq 2 ]
  check "$* : suggests $want" has "$err" "did you mean \`$want\`?"
  check "$* : stdout empty" [ -z "$out" ]
}
nearest --block "$CUCORE" occupancy "$dir/k.cubin" --kernel saxpy --blok 256
nearest --block "$CUCORE" occupancy "$dir/k.cubin" --kernel saxpy --blok=256
nearest --target "$CUCORE" compile "$dir/k.cu" --targt ptx
nearest --arch "$CUCORE" compile "$dir/k.cu" --arhc sm_90
nearest --kernel "$CUCORE" inspect "$dir/k.cubin" --kernal saxpy
nearest --grid "$CUCORE" run "$dir/k.cubin" --kernel saxpy --gird 4 --block 32
nearest --name-expr "$CUCORE" run "$dir/k.cu" --kernel saxpy --name-exp x --grid 4 --block 32
nearest --json "$CUCORE" cache stats --jsn
nearest --json "$CUCORE" devices --jason
nearest --json "$CUCORE" version --jsno
run "$CUCORE" devices --frobnicate
check "far from every option: exit 2" [ "$rc" -eq 2 ]
check "far from every option: no suggestion" lacks "$err" "did you mean"
check "far from every option: named" has "$err" "--frobnicate"

# Flags take no value; value options need one.
for v in "devices --json=1" "cache --json=yes" "compile $dir/k.cu --json=0"; do
  # shellcheck disable=SC2086
  run "$CUCORE" $v
  check "$v: exit 2" [ "$rc" -eq 2 ]
  check "$v: exit 2 (message)" has "$err" "takes no value"
done
run "$CUCORE" occupancy "$dir/k.cubin" --kernel saxpy --block
check "--block without a value: exit 2" [ "$rc" -eq 2 ]
check "--block without a value: exit 2 (message)" has "$err" "--block needs a value"
run "$CUCORE" compile "$dir/k.cu" --target=fatbinary
check "--target=fatbinary: exit 2 with the choices" [ "$rc" -eq 2 ]
check "--target=fatbinary: exit 2 with the choices (message)" has "$err" "ptx|cubin|ltoir|fatbin"
run "$CUCORE" cache stats path
check "cache: one action only" [ "$rc" -eq 2 ]
check "cache: one action only (message)" has "$err" "one action only"

# The library's unknown-option status (or its message, before that status) reaches the verb.
run "$CUCORE" compile "$dir/k.cu" --arch sm_90 --use-fast-mth
check "a misspelt compile option: exit 2, suggested" [ "$rc" -eq 2 ]
check "a misspelt compile option: exit 2, suggested (message)" has "$err" "--use-fast-math"

# `cucore help VERB` renders each verb's table, ranges included.
for v in compile inspect occupancy run cache devices version; do
  run "$CUCORE" help "$v"
  check "help $v: exit 0" [ "$rc" -eq 0 ]
  check "help $v: lists --json from the table" has "$out" "  --json "
  check "help $v: no placeholder left" lacks "$out" "%o"
done
run "$CUCORE" help occupancy
check "help occupancy: --block's range" has "$out" "(1 to 1024)"
run "$CUCORE" help run
check "help run: --grid's limits" has "$out" "(x 1..2147483647, y 1..65535, z 1..65535)"
check "help run: --expect" has "$out" "--expect ARG=VALUE"
finish
