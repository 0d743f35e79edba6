#!/usr/bin/env bash
# cucore tune's result store on the fake driver (tests/fake): --db never appends to a file that
# is not a store; a read-only store is resumed and the tune goes on keeping nothing (an
# unreadable one: everything measured); two tunes started together on one store measure each
# configuration once between them (group locks); and `cucore cache tune`: list names the
# source, kernel and problem size, key prefixes, show, clear, export (lines and T4) and import.
source "$(dirname "$0")/lib.sh"
fake="$(cd "$(dirname "$CUCORE")/.." && pwd)/lib/libcucore_fake_driver.so"
[ -f "$fake" ] || { echo "skipped: no fake driver at $fake"; exit 77; }
export CUCORE_LIBCUDA="$fake"
dir=$(mktemp -d)
chmod 755 "$dir" # the read-only cases run as nobody when this runs as root
trap 'chmod -R u+rwx "$dir" 2>/dev/null; rm -rf "$dir"' EXIT
export CUCORE_CACHE_DIR="$dir/cache"
mkdir -p "$dir/cache" && chmod 777 "$dir/cache"
cat >"$dir/w.cu" <<'CU'
extern "C" __global__ void work(float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = REPS;
}
CU
counts() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["measured"], d["from_store"])'; }
tune() { run timeout 120 "$CUCORE" tune "$dir/w.cu" --kernel work --problem-size 64 \
  --arg 'out:f32[64]' --arg i32:64 --cache hot --finalists 0 --json "$@"; }
notes() { grep -v 'SM clock\|compared on the host' <<<"$err"; }

# 1. --db naming a source or a space file: refused, the file untouched.
cp "$dir/w.cu" "$dir/w.orig"
tune --param REPS=1,2 --db "$dir/w.cu"
check "--db kernel.cu: refused before any work (an input), exit 2" [ "$rc" -eq 2 ]
check "--db kernel.cu: the source is untouched" cmp -s "$dir/w.cu" "$dir/w.orig"
# A file that is no input of the tune and no store: the library refuses to append to it.
cp "$dir/w.cu" "$dir/notes.txt"
tune --param REPS=1,2 --db "$dir/notes.txt"
check "--db a text file: refused, exit 1" [ "$rc" -eq 1 ]
check "--db a text file: says it is not a store" has "$err" "is not a tune store (its first line is not a store record); refusing to append to it"
check "--db a text file: untouched" cmp -s "$dir/notes.txt" "$dir/w.orig"
printf '{"tune_params": {"REPS": [1, 2]}}\n' >"$dir/space.json"
cp "$dir/space.json" "$dir/space.orig"
tune --param REPS=1,2 --db "$dir/space.json"
{ [ "$rc" -eq 1 ] && cmp -s "$dir/space.json" "$dir/space.orig"; }; checked "--db space.json: refused, untouched" $?

# 2. A read-only store: resumed, the rest measured, nothing kept, said once. chmod does not
# deny root: as root the tunes run as nobody (setpriv), else the checks are skipped.
as_user=()
if [ "$(id -u)" = 0 ]; then
  if setpriv --reuid=65534 --regid=65534 --clear-groups "$CUCORE" --version >/dev/null 2>&1; then
    as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  else
    as_user=(skip)
  fi
fi
mkdir "$dir/ro"
tune --param REPS=1,2 --db "$dir/ro/db.jsonl"
{ [ "$rc" -eq 0 ] && [ "$(counts <<<"$out")" = "2 0" ]; }; checked "read-only: the store made first" $?
if [ "${as_user[0]:-}" = skip ]; then
  echo "note: running as root without setpriv: the read-only checks are skipped"
else
  chmod 555 "$dir/ro" && chmod 444 "$dir/ro/db.jsonl"
  before=$(cat "$dir/ro/db.jsonl")
  run timeout 120 "${as_user[@]}" "$CUCORE" tune "$dir/w.cu" --kernel work --problem-size 64 \
    --arg 'out:f32[64]' --arg i32:64 --cache hot --finalists 0 --json --param REPS=1,2,3 \
    --db "$dir/ro/db.jsonl"
  { [ "$rc" -eq 0 ] && [ "$(counts <<<"$out")" = "1 2" ]; }; checked "read-only store: exit 0, 2 resumed and the new one measured" $?
  check "read-only store: said once that the results are not kept, and why" \
    [ "$(grep -c 'the results of this tune are not kept: .*Permission denied (what the store holds is resumed)' <<<"$err")" -eq 1 ]
  check "read-only store: nothing appended" [ "$(cat "$dir/ro/db.jsonl")" = "$before" ]
  chmod 000 "$dir/ro/db.jsonl"
  run timeout 120 "${as_user[@]}" "$CUCORE" tune "$dir/w.cu" --kernel work --problem-size 64 \
    --arg 'out:f32[64]' --arg i32:64 --cache hot --finalists 0 --json --param REPS=1,2,3 \
    --db "$dir/ro/db.jsonl"
  { [ "$rc" -eq 0 ] && [ "$(counts <<<"$out")" = "3 0" ]; }; checked "unreadable store: exit 0, everything measured" $?
  check "unreadable store: said so" has "$err" "not kept and none is resumed (every configuration is measured)"
  chmod 666 "$dir/ro/db.jsonl" && rm -f "$dir/ro/db.jsonl.lock"
  run timeout 120 "${as_user[@]}" "$CUCORE" tune "$dir/w.cu" --kernel work --problem-size 64 \
    --arg 'out:f32[64]' --arg i32:64 --cache hot --finalists 0 --json --param REPS=1,2,3 \
    --db "$dir/ro/db.jsonl"
  { [ "$rc" -eq 0 ] && [ "$(counts <<<"$out")" = "1 2" ]; }; checked "no lock file in a read-only folder: measured without locks, kept" $?
  check "no lock file: said so" has "$err" "measuring without locks"
  chmod 755 "$dir/ro"
fi

# 3. Two tunes started together on one store: 4 groups (REPS) of 2 configurations, each launch
# 20 ms (CUCORE_FAKE_LAUNCH_US): each configuration is measured once between them, and what one
# measured is the other's resumed.
share=(--param REPS=1,2,3,4 --param block_size_x=128,256 --launch-mode single --db "$dir/share.jsonl")
one() { CUCORE_FAKE_LAUNCH_US=20000 timeout 120 "$CUCORE" tune "$dir/w.cu" --kernel work \
  --problem-size 64 --arg 'out:f32[64]' --arg i32:64 --cache hot --finalists 0 --json \
  "${share[@]}" >"$1" 2>"$1.err"; }
one "$dir/a.json" & pa=$!
one "$dir/b.json" & pb=$!
wait $pa; ra=$?; wait $pb; rb=$?
{ [ "$ra" -eq 0 ] && [ "$rb" -eq 0 ]; }; checked "shared store: both tunes exit 0" $?
check "shared store: each configuration measured once, the rest resumed" python3 -c '
import json, sys, collections
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["measured"] + b["measured"] == 8, (a["measured"], b["measured"])
assert a["measured"] + a["from_store"] == 8 and b["measured"] + b["from_store"] == 8, (a, b)
assert a["measured"] > 0 and b["measured"] > 0, (a["measured"], b["measured"])
n = collections.Counter(json.dumps(json.loads(l)["config"], sort_keys=True) for l in open(sys.argv[3]))
assert len(n) == 8 and set(n.values()) == {1}, n
' "$dir/a.json" "$dir/b.json" "$dir/share.jsonl"

# 4. cucore cache tune over the cache folder (the default --db).
run "$CUCORE" cache tune list
{ [ "$rc" -eq 0 ] && has "$out" "no tune stores in $dir/cache/tune"; }; checked "cache tune list, no folder yet: exit 0, says so" $?
run "$CUCORE" cache tune clear
{ [ "$rc" -eq 1 ] && has "$err" "nothing removed"; }; checked "cache tune clear, nothing to remove: exit 1, says so" $?
tune --param REPS=1,2
run "$CUCORE" cache tune list
key=$(awk '{print $1}' <<<"$out" | head -1)
{ [ "$rc" -eq 0 ] && [ ${#key} -eq 64 ] && has "$out" "$key  $dir/w.cu  work  problem 64  2 records, 2 verified, best {\"REPS\":"; }; checked "cache tune list: the source, the kernel, the problem size" $?
run "$CUCORE" cache tune show "${key:0:5}"
{ [ "$rc" -eq 0 ] && [ "$(lines "$out")" -eq 2 ] && has "$out" '{"REPS":1}  ok  '; }; checked "cache tune show PREFIX: a line per record" $?
run "$CUCORE" cache tune show "${key:0:5}" --json
check "cache tune show --json: whole records" python3 -c '
import json, sys
d = json.load(sys.stdin)["stores"][0]
assert d["records"] == 2 and d["source"].endswith("w.cu") and d["kernel"] == "work", d
e = d["entries"][0]
assert e["result"]["status"] == "ok" and "median_ms" in e["result"] and e["config"]["REPS"] in (1, 2), e
' <<<"$out"
run "$CUCORE" cache tune show abc
{ [ "$rc" -eq 2 ] && has "$err" "at least 4"; }; checked "cache tune show: 3 digits are not a key: exit 2" $?
run "$CUCORE" cache tune show zzzz1234
check "cache tune show: not hexadecimal: exit 2" [ "$rc" -eq 2 ]
twin="${key:0:6}$(printf '%058d' 0)"
[ "$twin" = "$key" ] && twin="${key:0:6}$(printf '%058d' 1)"
cp "$dir/cache/tune/$key.jsonl" "$dir/cache/tune/$twin.jsonl"
run "$CUCORE" cache tune show "${key:0:6}"
{ [ "$rc" -eq 2 ] && has "$err" "$key" && has "$err" "$twin"; }; checked "ambiguous prefix: exit 2, both candidates named" $?
run "$CUCORE" cache tune clear "${key:0:7}"
{ [ "$rc" -eq 0 ] && has "$out" "removed 1 tune store" && [ ! -f "$dir/cache/tune/$key.jsonl" ] && [ -f "$dir/cache/tune/$twin.jsonl" ]; }; checked "clear PREFIX: the one store removed" $?
run "$CUCORE" cache tune clear "${key:0:7}"
{ [ "$rc" -eq 1 ] && has "$err" "no tune store matching"; }; checked "clear PREFIX again: none matches, exit 1" $?
rm -f "$dir/cache/tune/$twin.jsonl"

# export and import: the lines out, merged back, duplicates skipped; T4.
tune --param REPS=1,2
run "$CUCORE" cache tune export "${key:0:8}"
printf '%s\n' "$out" >"$dir/export.jsonl"
{ [ "$rc" -eq 0 ] && [ "$(lines "$out")" -eq 2 ]; }; checked "export: the store's lines" $?
run "$CUCORE" cache tune export "${key:0:8}" --t4 "$dir/t4.json"
check "export --t4: TuningSchema T4, one result per configuration" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema_version"] and len(d["results"]) == 2, d
r = d["results"][0]
assert r["configuration"] in ({"REPS": 1}, {"REPS": 2}) and r["invalidity"] == "correct" and r["correctness"] == 1
assert r["measurements"][0]["unit"] == "ms" and len(r["times"]["runtimes"]) == 1
' "$dir/t4.json"
run "$CUCORE" cache tune export "${key:0:8}" --t4 "$dir/cache/tune/$key.jsonl"
{ [ "$rc" -eq 2 ] && has "$err" "input"; }; checked "export --t4 may not overwrite the store: exit 2" $?
run "$CUCORE" cache tune clear
run "$CUCORE" cache tune import "$dir/export.jsonl"
{ [ "$rc" -eq 0 ] && has "$out" "imported 2 records" && [ "$(wc -l <"$dir/cache/tune/$key.jsonl")" -eq 2 ]; }; checked "import: the records back in the store of their key" $?
run "$CUCORE" cache tune import "$dir/export.jsonl" --json
{ [ "$rc" -eq 0 ] && python3 -c '
import json, sys; d = json.load(sys.stdin); assert d["imported"] == 0 and d["duplicates"] == 2, d' <<<"$out"; }; checked "import again: duplicates skipped" $?
run "$CUCORE" cache tune import "$dir/w.cu"
{ [ "$rc" -eq 1 ] && has "$err" "is not a tune store"; }; checked "import of a source: exit 1, named" $?
tune --param REPS=1,2
check "the imported store resumes the tune" [ "$(counts <<<"$out")" = "0 2" ]

# Old records (no source or kernel) still read and resume.
sed -i 's/,"source":"[^"]*","kernel":"work"//' "$dir/cache/tune/$key.jsonl"
run "$CUCORE" cache tune list
check "old records: listed without names" has "$out" "(source not recorded)  (kernel not recorded)  problem 64"
tune --param REPS=1,2
check "old records: the tune resumes them" [ "$(counts <<<"$out")" = "0 2" ]

# An unusable cache folder: named, exit 1.
printf 'x' >"$dir/afile"
CUCORE_CACHE_DIR="$dir/afile" run "$CUCORE" cache tune list
{ [ "$rc" -eq 1 ] && has "$err" "$dir/afile"; }; checked "cache tune list on a cache folder that is a file: exit 1, named" $?
run "$CUCORE" cache tune frobnicate
{ [ "$rc" -eq 2 ] && has "$err" "tune import FILE"; }; checked "unknown action: exit 2, the actions named" $?
finish
