#!/usr/bin/env bash
# --json on failure. The rule, in every verb's help: stdout holds one JSON
# object when the verb has a result, and nothing otherwise; the reason is on stderr and the
# exit status is the one without --json. A compile error's records are a result.
source "$(dirname "$0")/kernels_lib.sh" "$1"
printf '__global__ void f(int *p) { *p = nope; }\n' >"$dir/bad.cu"
gpu=0
"$CUCORE" devices >/dev/null 2>&1 && gpu=1

# failing CMD... : with --json appended, nothing on stdout, a reason on stderr, and the exit
# status of the same command without --json (which is not 0).
failing() {
  run timeout 60 "$@"
  local plain=$rc
  run timeout 60 "$@" --json
  check "$*: fails (exit $plain)" [ "$plain" -ne 0 ]
  check "$* --json: the same exit status ($plain)" [ "$rc" -eq "$plain" ]
  check "$* --json: stdout empty" [ -z "$out" ]
  check "$* --json: the reason on stderr" [ -n "$err" ]
}
failing "$CUCORE" compile "$dir/missing.cu" --arch sm_90
# A compile error is the one failure with a result: the compiler's records (the exit status
# stays the one without --json).
run timeout 60 "$CUCORE" compile "$dir/bad.cu" --arch sm_90 -o "$dir/bad.cubin"
plain=$rc
run timeout 60 "$CUCORE" compile "$dir/bad.cu" --arch sm_90 -o "$dir/bad.cubin" --json
check "compile error --json: the same exit status ($plain), not 0" eval '[ "$plain" -ne 0 ] && [ "$rc" -eq "$plain" ]'
check "compile error --json: the error and the records on stdout" python3 -c '
import json, sys; d = json.loads(sys.argv[1])
assert "nope" in d["error"] and d["diagnostics"][0]["severity"] == "error", d' "$out"
check "compile error --json: nothing written" [ ! -e "$dir/bad.cubin" ]
failing "$CUCORE" compile "$dir/k.cu" --arch sm_90 --target nope
failing "$CUCORE" inspect "$dir/missing.cubin"
failing "$CUCORE" inspect "$dir/k.cubin" --kernel nope
failing "$CUCORE" inspect "$dir/k.cubin" --bogus
failing "$CUCORE" occupancy "$dir/k.cubin" --kernel nope --arch sm_90
failing "$CUCORE" occupancy "$dir/k.cubin" --kernel saxpy --block 4294967328
failing "$CUCORE" occupancy "$dir/k.cubin" --kernel big --arch sm_90 --block 256 --smem 200000
failing "$CUCORE" run "$dir/k.cubin" --kernel saxpy --grid 1 --block 32 --arg f64:1
failing "$CUCORE" run "$dir/k.cubin" --kernel saxpy --grid 1 --block 32 --arg f32:1e39
failing "$CUCORE" cache frobnicate
failing "$CUCORE" cache --bogus
failing "$CUCORE" version --bogus
failing "$CUCORE" devices --bogus
if [ "$gpu" = 0 ]; then
  failing "$CUCORE" devices
  failing "$CUCORE" run "$dir/k.cubin" --kernel saxpy --grid 1 --block 32 --arg f32:2 \
    --arg buf:f32[8]=1 --arg out:f32[8] --arg i32:8
fi

# A result that is a failure: occupancy's table where no block size can run. The answer is
# printed (text or JSON) and the exit status is 1 either way, with the reason on stderr.
occ=("$CUCORE" occupancy "$dir/k.cubin" --kernel big --arch sm_90 --smem 200000)
run "${occ[@]}"
plain=$rc
run "${occ[@]}" --json
check "occupancy, no block size fits: exit 1" [ "$plain" -eq 1 ]
check "occupancy, no block size fits: exit 1 with --json too" [ "$rc" -eq 1 ]
check "occupancy, no block size fits: the reason on stderr" has "$err" "cannot run with any block size"
check "occupancy, no block size fits: valid JSON" python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["best_block"] is None' <<<"$out"

# The rule is in every verb's help.
for v in compile inspect occupancy run cache devices version; do
  run "$CUCORE" help "$v"
  check "help $v: says what --json does on failure" has "$(tr '\n' ' ' <<<"$out" | tr -s ' ')" "stdout stays empty"
done
finish
