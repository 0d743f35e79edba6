#!/usr/bin/env bash
# The command's outputs: no output is ever an input (through any spelling), a failed write never
# destroys the previous output or leaves a temporary, every write to stdout is checked, and `run`
# refuses a bad --expect or output path before the launch on any machine.
source "$(dirname "$0")/lib.sh"
CUCORE=$(realpath "$CUCORE") # the relative spellings below run from other folders
dir=$(mktemp -d)
# A read-only folder made below is made writable again before it is removed.
trap 'chmod -R u+w "$dir" 2>/dev/null; rm -rf "$dir"' EXIT
NODRIVER=(env CUCORE_LIBCUDA="$dir/no-such-libcuda.so.1")
FAKE="$(cd "$(dirname "$CUCORE")/.." && pwd)/lib/libcucore_fake_driver.so"

cat >"$dir/k.cu" <<'CU'
__device__ float g[4];
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; g[0] = a; }
CU
cp "$dir/k.cu" "$dir/k.cu.orig"
"$CUCORE" compile "$dir/k.cu" --arch sm_90 -o "$dir/k.cubin" >/dev/null 2>&1
check "setup: a cubin" [ -s "$dir/k.cubin" ]
lacks() { ! has "$@"; }
no_temps() { ! ls -A "$1" | grep -Eq '\.[A-Za-z0-9]{6}$'; } # no NAME.XXXXXX left behind

# ---- compile -o: the same file as the input, through every spelling -----------------------
ln -s k.cu "$dir/link.cu"
ln "$dir/k.cu" "$dir/hard.cu"
mkdir "$dir/sub"
for o in "$dir/k.cu" "$dir/sub/../k.cu" "$dir/link.cu" "$dir/hard.cu" "$(realpath "$dir")/k.cu"; do
  run "$CUCORE" compile "$dir/k.cu" --arch sm_90 -o "$o"
  check "compile -o $o (the input): exit 2" [ "$rc" -eq 2 ]
  check "compile -o $o (the input): both named" has "$err" "\`$o\` is the same file as the input \`$dir/k.cu\`"
  check "compile -o $o (the input): the source is intact" cmp -s "$dir/k.cu" "$dir/k.cu.orig"
done
(cd "$dir" && "$CUCORE" compile k.cu --arch sm_90 -o ./k.cu >/dev/null 2>&1; echo $? >"$dir/rc")
check "compile k.cu -o ./k.cu (relative): exit 2" [ "$(cat "$dir/rc")" -eq 2 ]
(cd "$dir/sub" && "$CUCORE" compile ../link.cu --arch sm_90 -o ../k.cu >/dev/null 2>&1; echo $? >"$dir/rc")
check "compile through a symlink to the input: exit 2" [ "$(cat "$dir/rc")" -eq 2 ]
check "compile: the source is still intact" cmp -s "$dir/k.cu" "$dir/k.cu.orig"
run "$CUCORE" compile "$dir/k.cu" --arch sm_90 -o "$dir/both.cubin" --log "$dir/both.cubin"
check "compile -o F --log F: exit 2, each output its own file" eval '[ "$rc" -eq 2 ] && has "$err" "each output needs its own file"'
run "$CUCORE" compile "$dir/k.cu" --arch sm_90 -o "$dir/o.cubin" --log "$dir/k.cu"
check "compile --log onto the input: exit 2" eval '[ "$rc" -eq 2 ] && has "$err" "is the same file as the input"'
"$CUCORE" compile "$dir/k.cu" --arch sm_90 --target ptx -o "$dir/k.ptx" >/dev/null 2>&1
cp "$dir/k.ptx" "$dir/k.ptx.orig"
run "$CUCORE" compile "$dir/k.ptx" --arch sm_90 --target ptx
check "compile k.ptx --target ptx (the default output is the input): exit 2" [ "$rc" -eq 2 ]
check "compile k.ptx --target ptx: the input is intact" cmp -s "$dir/k.ptx" "$dir/k.ptx.orig"

# ---- compile -o: not a file, or a folder that cannot take one ------------------------------
run "$CUCORE" compile "$dir/k.cu" --arch sm_90 -o "$dir/sub"
check "compile -o FOLDER: exit 2, said" eval '[ "$rc" -eq 2 ] && has "$err" "is a folder"'
run "$CUCORE" compile "$dir/k.cu" --arch sm_90 -o "$dir/missing/k.cubin"
check "compile -o into a missing folder: exit 2, said" eval '[ "$rc" -eq 2 ] && has "$err" "does not exist"'
check "compile -o into a missing folder: nothing made" [ ! -e "$dir/missing" ]

# ---- writes that fail: exit 1, no crash, the previous output intact ------------------------
run timeout 20 "$CUCORE" compile "$dir/k.cu" --arch sm_90 -o /dev/full
check "compile -o /dev/full: exit 1 (no abort)" [ "$rc" -eq 1 ]
check "compile -o /dev/full: the reason" has "$err" "writing \`/dev/full\`: No space left on device"
check "compile -o /dev/full: no double free" lacks "$err" "double free"
run "$CUCORE" compile "$dir/k.cu" --arch sm_90 -o /dev/null
check "compile -o /dev/null: exit 0 (written in place)" [ "$rc" -eq 0 ]
cp "$dir/k.cubin" "$dir/good.cubin"
# A file size limit of 1 KiB (SIGXFSZ ignored, so the write fails with EFBIG) makes the write
# of a ~4 KiB cubin fail part-way.
run bash -c "trap '' XFSZ; ulimit -f 1; exec \"\$0\" compile \"\$1\" --arch sm_90 -o \"\$2\"" \
  "$CUCORE" "$dir/k.cu" "$dir/k.cubin"
check "compile, the write fails part-way: exit 1" [ "$rc" -eq 1 ]
check "compile, the write fails part-way: the reason" has "$err" "File too large"
check "compile, the write fails part-way: the previous output intact" cmp -s "$dir/k.cubin" "$dir/good.cubin"
check "compile, the write fails part-way: no temporary left" no_temps "$dir"
mkdir "$dir/ro"
cp "$dir/good.cubin" "$dir/ro/k.cubin"
chmod a-w "$dir/ro"
if touch "$dir/ro/probe" 2>/dev/null; then
  rm -f "$dir/ro/probe" # root: a read-only folder is writable all the same
else
  run "$CUCORE" compile "$dir/k.cu" --arch sm_90 -o "$dir/ro/k.cubin"
  check "compile -o into a read-only folder: exit 2 before compiling" [ "$rc" -eq 2 ]
  check "compile -o into a read-only folder: said" has "$err" "cannot create files in the folder"
  check "compile -o into a read-only folder: the previous output intact" cmp -s "$dir/ro/k.cubin" "$dir/good.cubin"
fi
chmod u+w "$dir/ro"

# ---- what is written: a new file's mode follows the umask, a replaced file keeps its mode,
# a symlink stays one, a FIFO is written in place -----------------------------------------------
(umask 027 && "$CUCORE" compile "$dir/k.cu" --arch sm_90 -o "$dir/new.cubin" >/dev/null 2>&1)
check "a new output: mode 640 under umask 027" [ "$(stat -c %a "$dir/new.cubin")" = 640 ]
chmod 600 "$dir/good.cubin"
"$CUCORE" compile "$dir/k.cu" --arch sm_90 -o "$dir/good.cubin" >/dev/null 2>&1
check "a replaced output keeps its mode" [ "$(stat -c %a "$dir/good.cubin")" = 600 ]
ln -s good.cubin "$dir/alias.cubin"
run "$CUCORE" compile "$dir/k.cu" --arch sm_90 -o "$dir/alias.cubin"
check "-o a symlink: exit 0, still a symlink" eval '[ "$rc" -eq 0 ] && [ -L "$dir/alias.cubin" ]'
check "-o a symlink: its target written" cmp -s "$dir/good.cubin" "$dir/k.cubin"
mkfifo "$dir/fifo"
timeout 20 cat "$dir/fifo" >"$dir/from_fifo" &
reader=$!
run timeout 20 "$CUCORE" compile "$dir/k.cu" --arch sm_90 -o "$dir/fifo"
wait "$reader"
check "-o a FIFO: exit 0, written in place" eval '[ "$rc" -eq 0 ] && cmp -s "$dir/from_fifo" "$dir/k.cubin"'
check "-o a FIFO: still a FIFO" [ -p "$dir/fifo" ]
check "no temporary left in the folder" no_temps "$dir"

# ---- every verb's standard output is checked ------------------------------------------------
full() { # full CMD... -> $rc, $err of CMD with stdout on /dev/full
  local e
  e=$(mktemp)
  timeout 20 "$@" >/dev/full 2>"$e"; rc=$?
  err=$(cat "$e"); rm -f "$e"
}
verbs=("version" "version --json" "--version" "--help" "help" "help run" "compile --help"
       "cache path" "cache stats" "inspect $dir/k.cubin" "inspect --json $dir/k.cubin"
       "occupancy $dir/k.cubin --kernel saxpy --arch sm_90 --block 256"
       "occupancy $dir/k.cubin --kernel saxpy --arch sm_90 --json"
       "compile $dir/k.cu --arch sm_90 -o $dir/k2.cubin --json")
[ -f "$FAKE" ] && verbs+=("devices" "devices --json") # the fake driver's one device
for v in "${verbs[@]}"; do
  driver="$dir/no-such-libcuda.so.1"
  [ "${v%% *}" = devices ] && driver="$FAKE"
  # shellcheck disable=SC2086
  CUCORE_LIBCUDA="$driver" timeout 20 "$CUCORE" $v >/dev/null 2>&1
  check "$v > /dev/null: exit 0" [ "$?" -eq 0 ]
  # shellcheck disable=SC2086
  CUCORE_LIBCUDA="$driver" full "$CUCORE" $v
  check "$v > /dev/full: exit 1" [ "$rc" -eq 1 ]
  check "$v > /dev/full: the reason" has "$err" "writing standard output: No space left on device"
done
full "$CUCORE" inspect --json "$dir/k.cubin"
check "inspect --json > /dev/full: the verb named" has "$err" "cucore inspect: writing standard output:"
run bash -c 'exec "$0" version >&-' "$CUCORE"
check "version with stdout closed: exit 1" [ "$rc" -eq 1 ]

# ---- run: everything that can be checked is, before the launch, without a GPU --------------
python3 -c 'import struct,sys; open(sys.argv[1],"wb").write(struct.pack("<8f",*range(8)))' "$dir/x.bin"
python3 -c 'import sys; open(sys.argv[1],"wb").write(bytes(16))' "$dir/x4.bin"
echo '{"old": true}' >"$dir/old.json"
cp "$dir/old.json" "$dir/old.json.orig"
base=(run "$dir/k.cubin" --kernel saxpy --grid 1 --block 8 --arg f32:2 --arg "buf:f32[8]=@$dir/x.bin")
ok=("${base[@]}" --arg "out:f32[8]" --arg i32:8)
run "${NODRIVER[@]}" "$CUCORE" "${ok[@]}" --json-out "$dir/old.json"
check "run, no driver, all well: exit 1, nothing launched" eval '[ "$rc" -eq 1 ] && has "$err" "nothing was launched"'
check "run, no driver: --json-out not created or truncated" cmp -s "$dir/old.json" "$dir/old.json.orig"
bad() { # bad DESCRIPTION TEXT-IN-ERR RUN-ARGS...
  local what="$1" text="$2"; shift 2
  run "${NODRIVER[@]}" "$CUCORE" "$@" --json-out "$dir/r.json"
  check "run, $what: exit 2 before the launch" [ "$rc" -eq 2 ]
  check "run, $what: said" has "$err" "$text"
  check "run, $what: --json-out not created" [ ! -e "$dir/r.json" ]
}
bad "--expect of a missing file" "cannot open \`$dir/nope.bin\`" "${ok[@]}" --expect "2=@$dir/nope.bin"
bad "--expect of a folder" "$dir/sub" "${ok[@]}" --expect "2=@$dir/sub"
bad "a malformed --expect value" "\`abc\` is not a f32 value" "${ok[@]}" --expect 2=abc
bad "--expect list of the wrong count" "the list has 3 values; [8] were declared" "${ok[@]}" --expect '2={1,2,3}'
bad "--expect file of the wrong count" "is 16 bytes; 8 elements of f32 are 32 bytes" "${ok[@]}" --expect "2=@$dir/x4.bin"
bad "an out buffer into a missing folder" "the folder \`$dir/missing\` does not exist" \
  "${base[@]}" --arg "out:f32[8]>$dir/missing/y.bin" --arg i32:8
bad "an out buffer into a folder" "is a folder" "${base[@]}" --arg "out:f32[8]>$dir/sub" --arg i32:8
bad "an out buffer onto its input" "is the same file as the input \`$dir/x.bin\`" \
  "${base[@]}" --arg "out:f32[8]>$dir/x.bin" --arg i32:8
bad "bf16 into .npy" "NumPy has no bfloat16 dtype" "${base[@]}" --arg "out:bf16[8]>$dir/y.npy" --arg i32:8
bad "--read-global onto an input" "is the same file as the input \`$dir/x.bin\`" \
  "${ok[@]}" --read-global "g:f32[4]>$dir/x.bin"
bad "two outputs in one file (an out buffer and --json-out)" "each output needs its own file" \
  "${base[@]}" --arg "out:f32[8]>$dir/r.json" --arg i32:8
bad "two outputs in one file (an out buffer and --read-global)" "each output needs its own file" \
  "${base[@]}" --arg "out:f32[8]>$dir/y2.bin" --arg i32:8 --read-global "g:f32[4]>$dir/./y2.bin"
ln -s x.bin "$dir/link.bin"
bad "--read-global onto an input through a symlink" "is the same file as the input \`$dir/x.bin\`" \
  "${ok[@]}" --read-global "g:f32[4]>$dir/link.bin"
bad "--read-global into a missing folder" "does not exist" "${ok[@]}" --read-global "g:f32[4]>$dir/missing/g.bin"
for j in "$dir/k.cubin" "$dir/x.bin" "$dir/x4.bin" "$dir/sub" "$dir/missing/r.json"; do
  run "${NODRIVER[@]}" "$CUCORE" "${ok[@]}" --expect "2=@$dir/x4.bin" --json-out "$j"
  check "run --json-out $j: exit 2 before the launch" [ "$rc" -eq 2 ]
done
check "run: the inputs are intact" cmp -s "$dir/k.cubin" "$dir/good.cubin"
check "run: no temporary left" no_temps "$dir"

# ---- run, after the launch (the fake driver): files, comparisons and the report each done ---
if [ -f "$FAKE" ]; then
  rm -f "$dir/r.json"
  kcu=(run "$dir/k.cu" --kernel saxpy --grid 1 --block 8 --arg f32:2 --arg "buf:f32[8]=@$dir/x.bin")
  run env CUCORE_LIBCUDA="$FAKE" "$CUCORE" "${kcu[@]}" --arg "out:f32[8]>/dev/full" --arg i32:8 \
    --expect 2=12345 --json-out "$dir/r.json"
  check "run (fake driver), an output write fails: exit 1" [ "$rc" -eq 1 ]
  check "run (fake driver), an output write fails: said" has "$err" "writing \`/dev/full\`: No space left on device"
  check "run (fake driver): the timing JSON kept" python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert "ms_per_launch" in d, d' "$dir/r.json"
  check "run (fake driver): the output not written is saved: null" python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["outputs"][0]["saved"] is None, d' "$dir/r.json"
  run env CUCORE_LIBCUDA="$FAKE" "$CUCORE" "${kcu[@]}" --arg "out:f32[8]>$dir/y.npy" --arg i32:8
  check "run (fake driver): exit 0, the .npy written" eval '[ "$rc" -eq 0 ] && [ -s "$dir/y.npy" ]'
  full env CUCORE_LIBCUDA="$FAKE" "$CUCORE" "${kcu[@]}" --arg "out:f32[8]" --arg i32:8 --json
  check "run --json > /dev/full: exit 1" eval '[ "$rc" -eq 1 ] && has "$err" "writing standard output"'
fi
check "nothing left behind" no_temps "$dir"
finish
