#!/usr/bin/env bash
# Every number on the command line is read into its real type with a range check (no (int)strtol
# truncation), and the refusal (exit 2) names the real limit; --arg values must fit their type (f32,
# f16, bf16, f64 included: a value that would round to infinity is refused with the range unless
# written inf; subnormals and 0 are values).
source "$(dirname "$0")/kernels_lib.sh" "$1"
occ=("$CUCORE" occupancy "$dir/k.cubin" --kernel saxpy --arch sm_90)
launch=("$CUCORE" run "$dir/k.cubin" --kernel saxpy)
args=(--arg f32:2 --arg buf:f32[8]=1 --arg out:f32[8] --arg i32:8)

# refused WHAT-IN-MESSAGE CMD... : exit 2, stdout empty, the message has the limit.
refused() {
  local limit="$1"; shift
  run timeout 60 "$@"
  check "${*: -2}: exit 2" [ "$rc" -eq 2 ]
  check "${*: -2}: names the limit ($limit)" has "$err" "$limit"
  check "${*: -2}: stdout empty" [ -z "$out" ]
}
# (int)strtol made 4294967328 into 32: the number is refused, not truncated.
refused "from 1 to 1024" "${occ[@]}" --block 4294967328
refused "from 1 to 1024" "${occ[@]}" --block=4294967328
refused "from 1 to 1024" "${occ[@]}" --block 0
refused "from 1 to 1024" "${occ[@]}" --block 1025
refused "from 1 to 1024" "${occ[@]}" --block 99999999999999999999999
refused "from 1 to 1024" "${occ[@]}" --block 12x
refused "KiB: the most dynamic shared memory a block can opt into" "${occ[@]}" --smem 4294967296
refused "KiB: the most dynamic shared memory a block can opt into" "${occ[@]}" --smem -1
refused "x 1..16, y 1..16, z 1..16" "${occ[@]}" --cluster 17
refused "at most 16 blocks per cluster" "${occ[@]}" --cluster 4,4,2
refused "x 1..2147483647, y 1..65535, z 1..65535" "${launch[@]}" --block 32 "${args[@]}" --grid 2147483648
refused "y = 65536 is out of range" "${launch[@]}" --block 32 "${args[@]}" --grid 1,65536
refused "z = 65536 is out of range" "${launch[@]}" --block 32 "${args[@]}" --grid 1,1,65536
refused "x 1..2147483647" "${launch[@]}" --block 32 "${args[@]}" --grid 4294967297
refused "at most 1024 threads per block" "${launch[@]}" --grid 1 "${args[@]}" --block 32,32,2
refused "x = 1025 is out of range" "${launch[@]}" --grid 1 "${args[@]}" --block 1025
refused "z = 65 is out of range" "${launch[@]}" --grid 1 "${args[@]}" --block 1,1,65
refused "malformed" "${launch[@]}" --grid 1 "${args[@]}" --block 1,2,3,4
g=("${launch[@]}" --grid 1 --block 32 "${args[@]}")
refused "KiB: the most dynamic shared memory a block can opt into" "${g[@]}" --smem 4294967296
refused "at most 16 blocks per cluster" "${g[@]}" --cluster 2,2,8
refused "from 1 to 1000000" "${g[@]}" --repeat 1000001
refused "from 1 to 1000000" "${g[@]}" --repeat 4294967297
refused "from 0 to 1000000" "${g[@]}" --warmup -1
refused "from 1 to 100000" "${g[@]}" --graph 100001
refused "from 0 to 1023" "${g[@]}" --device 4294967296
refused "from -1000 to 1000" "${g[@]}" --priority 4294967295
refused "from 0 to 9223372036854775807" "${g[@]}" --seed -1
refused "from 0 to 9223372036854775807" "${g[@]}" --seed 18446744073709551616
refused "from 0 to 1073741824" "${g[@]}" --show 1073741825
refused "a finite number >= 0" "${g[@]}" --rtol inf
refused "a finite number >= 0" "${g[@]}" --atol=-1e-3

# Values are what was typed: each type's range.
t=("$CUCORE" run "$dir/k.cubin" --kernel take --grid 1 --block 1)
run "${t[@]}" --arg u16:1 --arg u16:1 --arg f32:1 --arg f64:1
good_rc=$rc
check "in-range values: not a usage error" [ "$good_rc" -ne 2 ]
refused "f32 (finite values -3.4028235e38..3.4028235e38" "${t[@]}" --arg u16:1 --arg u16:1 --arg f32:1e39
refused "f32 (finite values -3.4028235e38..3.4028235e38" "${t[@]}" --arg u16:1 --arg u16:1 --arg f32:-3.5e38
refused "f64 (finite values -1.7976931348623157e308" "${t[@]}" --arg u16:1 --arg u16:1 --arg f32:1 --arg f64:1e309
refused "f16 (finite values -65504..65504" "${t[@]}" --arg f16:70000
refused "f16 (finite values -65504..65504" "${t[@]}" --arg f16:-65520
refused "bf16 (finite values -3.3895314e38..3.3895314e38" "${t[@]}" --arg bf16:3.4e38
refused "f16 (finite values -65504..65504" "${t[@]}" --arg 'buf:f16[2]={1,70000}'
refused "f32 (finite values" "${t[@]}" --arg 'buf:f32[4]=1e39'
refused "i8 (-128..127)" "${t[@]}" --arg i8:128
# inf, -inf, nan written so; the largest finite values; values that round to a subnormal or 0.
for v in "f16:65504 bf16:3.3895313892515355e38 f32:3.4028235e38 f64:1.7976931348623157e308" \
         "f16:inf bf16:-inf f32:nan f64:-inf" "f16:-Infinity bf16:NaN f32:inf f64:inf" \
         "f16:1e-9 bf16:1e-50 f32:1e-45 f64:4.9e-324" "f16:1e-30 bf16:-1e-60 f32:1e-50 f64:1e-400"; do
  set -- $v
  run "${t[@]}" --arg "$1" --arg "$2" --arg "$3" --arg "$4"
  check "$v: accepted as without them (exit $good_rc)" [ "$rc" -eq "$good_rc" ]
  check "$v: nothing out of range" lacks "$err" "out of range"
done
finish
