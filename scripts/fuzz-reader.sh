#!/usr/bin/env bash
# fuzz-reader.sh [SECONDS] -- builds the offline reader's libFuzzer target (clang, ASan,
# UBSan) in build-fuzz/ and runs it for SECONDS (default 60) on the seed corpus that
# tests/fuzz/make_seeds.sh writes, keeping what it learns in build-fuzz/fuzz-corpus.
# Exit status: 0 when nothing was found; non-zero when the fuzzer found a crash, a leak or a
# time-out, whose input is left in build-fuzz/fuzz-artifacts/ (replay: fuzz_reader FILE).
# Environment: CUCORE_FUZZ_BUILD (build directory), CUCORE_FUZZ_JOBS (parallel jobs, 1).
set -euo pipefail
secs=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/scripts/fuzz-common.sh"
fuzz_build fuzz-reader fuzz_reader
seeds=$build/fuzz-seeds
if [ ! -d "$seeds" ] || [ -z "$(ls -A "$seeds")" ]; then
  "$root/tests/fuzz/make_seeds.sh" "$seeds"
fi
fuzz_run fuzz-reader fuzz_reader fuzz "$seeds" "$(ls "$seeds" | wc -l)" 131072 10 \
  "$root/tests/fuzz/reader.dict"
