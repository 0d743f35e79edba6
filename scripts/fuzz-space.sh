#!/usr/bin/env bash
# fuzz-space.sh [SECONDS] -- builds the search-space files' libFuzzer target (clang, ASan,
# UBSan) in build-fuzz/ (beside fuzz_reader) and runs it for SECONDS (default 30) on the seeds
# of tests/fuzz/space-seeds (Kernel Tuner's examples and T1 files written as JSON), keeping
# what it learns in build-fuzz/space-corpus.
# Exit status: 0 when nothing was found; non-zero when the fuzzer found a crash, a leak or a
# time-out, whose input is left in build-fuzz/space-artifacts/ (replay: fuzz_tune_space FILE).
# Environment: CUCORE_FUZZ_BUILD (build directory), CUCORE_FUZZ_JOBS (parallel jobs, 1).
set -euo pipefail
secs=${1:-30}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CUCORE_FUZZ_BUILD:-$root/build-fuzz}
jobs=${CUCORE_FUZZ_JOBS:-1}
if ! command -v clang >/dev/null; then
  echo "fuzz-space: clang is needed (apt-get install clang; scripts/fuzz-reader.sh installs it)" >&2
  exit 1
fi
CC=clang cmake -S "$root" -B "$build" -DCUCORE_FUZZ=ON -DCUCORE_BUILD_EXAMPLES=OFF \
  -DCUCORE_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target fuzz_tune_space -j"$(nproc)" >/dev/null
seeds=$root/tests/fuzz/space-seeds
corpus=$build/space-corpus
artifacts=$build/space-artifacts
mkdir -p "$corpus" "$artifacts"
echo "fuzz-space: running for ${secs}s ($(ls "$seeds" | wc -l) seeds, $(ls "$corpus" | wc -l) corpus files)"
parallel=()
[ "$jobs" -gt 1 ] && parallel=(-jobs="$jobs" -workers="$jobs")
cd "$build"
# -max_len: a space file of 16 KiB holds thousands of values, enough to reach every path; the
# timeout leaves room for spaces of 100000 configurations counted under the sanitizers.
exec "$build/bin/fuzz_tune_space" -max_total_time="$secs" -max_len=16384 -timeout=25 \
  -rss_limit_mb=2048 -dict="$root/tests/fuzz/space.dict" -artifact_prefix="$artifacts/" \
  -print_final_stats=1 "${parallel[@]}" "$corpus" "$seeds"
