# fuzz-common.sh -- sourced by the fuzzing scripts (fuzz-reader.sh, fuzz-space.sh,
# fuzz-tune-expr.sh), not run:
# fuzz_build NAME TARGET finds clang (installing Debian's package when run as root), configures
# the fuzzing build (-DCUCORE_FUZZ=ON, clang, ASan, UBSan) in $build and builds TARGET there.
# fuzz_run runs a built target (below).
# The caller sets root (the repository) and secs; jobs is CUCORE_FUZZ_JOBS, else 1; build is
# CUCORE_FUZZ_BUILD, else $root/build-fuzz, shared by the targets, so the instrumented library
# is compiled once for all of them.
jobs=${CUCORE_FUZZ_JOBS:-1}
fuzz_build() {
  local name=$1 target=$2
  build=${CUCORE_FUZZ_BUILD:-$root/build-fuzz}
  if ! command -v clang >/dev/null && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    echo "$name: installing clang (Debian's package)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends clang >/dev/null ||
      { apt-get update -qq || true; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
          --no-install-recommends clang >/dev/null; }
  fi
  if ! command -v clang >/dev/null; then
    echo "$name: clang is needed (apt-get install clang)" >&2
    exit 1
  fi
  CC=clang cmake -S "$root" -B "$build" -DCUCORE_FUZZ=ON -DCUCORE_BUILD_EXAMPLES=OFF \
    -DCUCORE_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$build" --target "$target" -j"$(nproc)" >/dev/null
}

# fuzz_run NAME TARGET PREFIX SEEDS NSEEDS MAX_LEN TIMEOUT DICT -- runs $build/bin/TARGET for
# $secs seconds ($jobs jobs) on the folder SEEDS (NSEEDS inputs, for the line it prints) with the
# dictionary DICT, inputs up to MAX_LEN bytes and TIMEOUT seconds each, keeping what it learns
# in $build/PREFIX-corpus and what it finds in $build/PREFIX-artifacts. It does not return: the
# fuzzer's exit status is the script's.
fuzz_run() {
  local name=$1 target=$2 prefix=$3 seeds=$4 nseeds=$5 max_len=$6 timeout=$7 dict=$8
  local corpus=$build/$prefix-corpus artifacts=$build/$prefix-artifacts
  mkdir -p "$corpus" "$artifacts"
  echo "$name: running for ${secs}s ($nseeds seeds, $(ls "$corpus" | wc -l) corpus files)"
  local parallel=()
  [ "$jobs" -gt 1 ] && parallel=(-jobs="$jobs" -workers="$jobs")
  cd "$build"
  exec "$build/bin/$target" -max_total_time="$secs" -max_len="$max_len" -timeout="$timeout" \
    -rss_limit_mb=2048 -dict="$dict" -artifact_prefix="$artifacts/" \
    -print_final_stats=1 "${parallel[@]}" "$corpus" "$seeds"
}
