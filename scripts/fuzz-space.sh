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
. "$root/scripts/fuzz-common.sh"
fuzz_build fuzz-space fuzz_tune_space
seeds=$root/tests/fuzz/space-seeds
# max_len: a space file of 16 KiB holds thousands of values, enough to reach every path; the
# timeout leaves room for spaces of 100000 configurations counted under the sanitizers.
fuzz_run fuzz-space fuzz_tune_space space "$seeds" "$(ls "$seeds" | wc -l)" 16384 25 \
  "$root/tests/fuzz/space.dict"
