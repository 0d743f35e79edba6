#!/usr/bin/env bash
# `cucore cache` and the cache seen from the command line: the directory comes from the
# environment, a second compile of a file is a hit with the same bytes as an uncached compile,
# clear empties it, CUCORE_CACHE_DISABLE=1 bypasses it, an include path makes the compile
# uncacheable, and usage errors exit 2. An unusable configuration is named and exits 1; a clear
# that cannot remove everything says what stayed and exits 1.
source "$(dirname "$0")/lib.sh"

work=$(mktemp -d /tmp/cucore-cli-cache-XXXXXX)
# Folders made unwritable below are made writable again first (chattr -i for root).
writable() { chattr -i "$@" 2>/dev/null; chmod u+w "$@" 2>/dev/null; true; }
unwritable() { # unwritable DIR -> 0 when files in DIR can no longer be made or removed
  chmod a-w "$1"
  [ "$(id -u)" = 0 ] && chattr +i "$1" 2>/dev/null
  ! touch "$1/.probe" 2>/dev/null
}
cleanup() { [ -d "$work" ] && find "$work" -type d -exec chattr -i {} + 2>/dev/null; chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
export CUCORE_CACHE_DIR="$work/cache"
cat >"$work/k.cu" <<'EOF'
template <typename T> __global__ void scale(T *x, T a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
EOF
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print(d$1)" <<<"$out"; }

run "$CUCORE" cache path
check "path: exit 0" [ "$rc" -eq 0 ]
check "path: CUCORE_CACHE_DIR" [ "$out" = "$work/cache" ]
run env -u CUCORE_CACHE_DIR XDG_CACHE_HOME="$work/xdg" "$CUCORE" cache path
check "path: XDG_CACHE_HOME/cucore" [ "$out" = "$work/xdg/cucore" ]
run env -u CUCORE_CACHE_DIR -u XDG_CACHE_HOME HOME="$work/home" "$CUCORE" cache path --json
check "path --json: ~/.cache/cucore" [ "$(json "['dir']")" = "$work/home/.cache/cucore" ]

run "$CUCORE" cache stats --json
check "stats of a cache not yet made: exit 0" [ "$rc" -eq 0 ]
check "stats: no entries yet" [ "$(json "['entries']")" = "0" ]

# The reference: an uncached compile.
run env CUCORE_CACHE_DISABLE=1 "$CUCORE" compile "$work/k.cu" --arch sm_90 --name-expr 'scale<float>' -o "$work/ref.cubin"
check "uncached compile: exit 0" [ "$rc" -eq 0 ]
run "$CUCORE" cache stats --json
check "CUCORE_CACHE_DISABLE=1 wrote nothing" [ "$(json "['entries']")" = "0" ]

for i in 1 2; do
  run "$CUCORE" compile "$work/k.cu" --arch sm_90 --name-expr 'scale<float>' -o "$work/c$i.cubin"
  check "cached compile $i: exit 0" [ "$rc" -eq 0 ]
  check "cached compile $i: same bytes as the uncached one" cmp -s "$work/ref.cubin" "$work/c$i.cubin"
  check "cached compile $i: lowered name printed" has "$out" "_Z5scaleIfEvPT_S0_i"
done
run "$CUCORE" cache stats --json
check "stats: one entry" [ "$(json "['entries']")" = "1" ]
check "stats: one miss" [ "$(json "['misses']")" = "1" ]
check "stats: one hit" [ "$(json "['hits']")" = "1" ]
check "stats: one store" [ "$(json "['stores']")" = "1" ]
check "stats: bytes is the entry's size" [ "$(json "['bytes']")" = "$(find "$work/cache" -type f -name '??????????????????????????????????????????????????????????????' -printf '%s')" ]
check "stats: enabled" [ "$(json "['enabled']")" = "True" ]

run env CUCORE_CACHE_MAX_BYTES=64M "$CUCORE" cache stats --json
check "CUCORE_CACHE_MAX_BYTES=64M" [ "$(json "['max_bytes']")" = "67108864" ]
run env CUCORE_CACHE_DISABLE=1 "$CUCORE" cache
check "stats text: says disabled" has "$out" "enabled      no"

# A header beside the source: the compile reads a file the key cannot see.
mkdir -p "$work/inc"
echo '#define FACTOR 3' >"$work/inc/factor.h"
printf '#include "factor.h"\n__global__ void k(int *p) { *p = FACTOR; }\n' >"$work/inc/k2.cu"
run "$CUCORE" compile "$work/inc/k2.cu" --arch sm_90 -o "$work/k2.cubin"
check "uncacheable compile: exit 0" [ "$rc" -eq 0 ]
run "$CUCORE" cache stats --json
check "uncacheable compile: counted" [ "$(json "['uncacheable']")" = "1" ]
check "uncacheable compile: stored nothing" [ "$(json "['entries']")" = "1" ]

run "$CUCORE" cache clear
check "clear: exit 0" [ "$rc" -eq 0 ]
check "clear: says what it removed" has "$out" "removed 1 entry"
run "$CUCORE" cache stats --json
check "clear: no entries left" [ "$(json "['entries']")" = "0" ]
check "clear: counters reset" [ "$(json "['hits']")" = "0" ]
run "$CUCORE" cache clear --json
check "clear --json of an empty cache" [ "$(json "['removed_entries']")" = "0" ]

# An unusable configuration is named on stderr; stats and path exit 1 and print nothing.
touch "$work/file"
for bad in "CUCORE_CACHE_DIR=$work/file:CUCORE_CACHE_DIR=$work/file: it is not a directory" \
           "CUCORE_CACHE_DIR=$work/file/sub:cannot be created" \
           "CUCORE_CACHE_MAX_BYTES=abc:CUCORE_CACHE_MAX_BYTES=abc is not a size" \
           "CUCORE_CACHE_MAX_BYTES=12x:CUCORE_CACHE_MAX_BYTES=12x is not a size" \
           "CUCORE_CACHE_MAX_BYTES=-1:CUCORE_CACHE_MAX_BYTES=-1 is not a size" \
           "CUCORE_CACHE_MAX_BYTES=99999999999999999999:does not fit in 64 bits" \
           "CUCORE_CACHE_DISABLE=yes:CUCORE_CACHE_DISABLE=yes is neither"; do
  setting=${bad%%:*} says=${bad#*:}
  for verb in stats path; do
    run env "$setting" "$CUCORE" cache $verb
    check "$setting: cache $verb exits 1" [ "$rc" -eq 1 ]
    check "$setting: cache $verb says why" has "$err" "$says"
    check "$setting: cache $verb prints nothing" [ -z "$out" ]
  done
done
run env CUCORE_CACHE_DIR="$work/file" "$CUCORE" cache stats --json
check "unusable cache: stats --json exits 1 with nothing on stdout" [ "$rc" -eq 1 -a -z "$out" ]
mkdir "$work/ro"
if unwritable "$work/ro"; then
  run env CUCORE_CACHE_DIR="$work/ro" "$CUCORE" cache path
  check "read-only folder: cache path exits 1" [ "$rc" -eq 1 ]
  check "read-only folder: named with the reason" has "$err" "CUCORE_CACHE_DIR=$work/ro: the directory cannot be written"
  run env CUCORE_CACHE_DIR="$work/ro/new" "$CUCORE" cache stats
  check "below a read-only folder: cannot be created" has "$err" "cannot be created: \`$work/ro\` cannot be written"
else
  echo "note: cannot make a folder read-only here; that case is skipped"
fi
writable "$work/ro"
run env CUCORE_CACHE_MAX_BYTES=abc "$CUCORE" compile "$work/k.cu" --arch sm_90 --name-expr 'scale<float>' -o "$work/c3.cubin"
check "a malformed variable: the compile still works" [ "$rc" -eq 0 ]
check "a malformed variable: the compile still works, same bytes" cmp -s "$work/ref.cubin" "$work/c3.cubin"

# A clear that cannot remove an entry says what and exits 1.
run "$CUCORE" compile "$work/k.cu" --arch sm_90 --name-expr 'scale<float>' -o "$work/c4.cubin"
shard=$(find "$work/cache" -mindepth 1 -maxdepth 1 -type d -name '??' | head -1)
if [ -n "$shard" ] && unwritable "$shard"; then
  run "$CUCORE" cache clear
  check "clear of an unwritable folder: exit 1" [ "$rc" -eq 1 ]
  check "clear of an unwritable folder: counts what stayed" has "$err" "1 file could not be removed"
  check "clear of an unwritable folder: names the first" has "$err" "$shard/"
  check "clear of an unwritable folder: no 'removed' on stdout" [ -z "$out" ]
  writable "$shard"
  run "$CUCORE" cache clear
  check "clear once writable again: exit 0" [ "$rc" -eq 0 ]
  check "clear once writable again: removed it" has "$out" "removed 1 entry"
else
  writable "$shard"
  echo "note: cannot make a folder read-only here; the clear case is skipped"
fi
if [ -w /dev/full ]; then # unfiltered output: the stream filter's own check is main's
  run sh -c 'CUCORE_RAW_OUTPUT=1 "$1" cache path >/dev/full' _ "$CUCORE"
  check "cache path to a full disk: exit 1" [ "$rc" -eq 1 ]
  check "cache path to a full disk: says so" has "$err" "cannot write"
fi

run "$CUCORE" cache frobnicate
check "unknown action: exit 2" [ "$rc" -eq 2 ]
check "unknown action: named" has "$err" "frobnicate"
run "$CUCORE" cache --bogus
check "unknown option: exit 2" [ "$rc" -eq 2 ]
# `cache key`: the key a compile would use, computed without compiling, equal to the one the
# compile then reports; none (exit 1, the reason on stderr) for a compile that cannot be cached.
run "$CUCORE" cache key "$work/k.cu" --arch sm_90 -DKEYTEST=1
check "cache key: exit 0, 64 hex digits" eval '[ "$rc" -eq 0 ] && [[ "$out" =~ ^[0-9a-f]{64}$ ]]'
key=$out
run "$CUCORE" compile "$work/k.cu" --arch sm_90 -DKEYTEST=1 -o "$work/key.cubin" --json
check "cache key: the compile's own key" python3 -c '
import json,sys; d=json.load(sys.stdin); assert d["cache_key"]==sys.argv[1], d' "$key" <<<"$out"
run "$CUCORE" cache key "$work/k.cu" --arch sm_90 -DKEYTEST=1 --target ptx --json
check "cache key --json --target ptx: another key" python3 -c '
import json,sys; d=json.load(sys.stdin); assert d["target"]=="ptx" and len(d["key"])==64 and d["key"]!=sys.argv[1], d' "$key" <<<"$out"
run "$CUCORE" cache key "$work/k.cu" --arch sm_90 -I "$work"
check "cache key of an uncacheable compile: exit 1, the reason" eval '[ "$rc" -eq 1 ] && [ -z "$out" ] && has "$err" "cannot be cached" && has "$err" "$work"'
run "$CUCORE" cache key
check "cache key without a file: usage" [ "$rc" -eq 2 ]
run "$CUCORE" help cache
check "help cache: usage" has "$out" "usage: cucore cache"
check "help cache: names the variables" has "$out" "CUCORE_CACHE_DISABLE"
run "$CUCORE" --help
check "overview lists cache" has "$out" "cache"
finish
