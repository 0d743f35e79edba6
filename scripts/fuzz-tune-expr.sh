#!/usr/bin/env bash
# fuzz-tune-expr.sh [SECONDS] -- builds the libFuzzer target of the tune expression language
# (tests/fuzz/fuzz_tune_expr.c; clang, ASan, UBSan) in build-fuzz/, beside the reader's, and
# runs it for SECONDS (default 30) on the seeds of tests/fuzz/tune_expr_seeds.txt (one
# expression a line) with the dictionary tests/fuzz/tune_expr.dict, keeping what it learns in
# build-fuzz/tune-expr-corpus.
# Exit status: 0 when nothing was found; non-zero when the fuzzer found a crash, a leak or a
# time-out, whose input is left in build-fuzz/tune-expr-artifacts/ (replay: fuzz_tune_expr FILE).
# Environment: CUCORE_FUZZ_BUILD (build directory), CUCORE_FUZZ_JOBS (parallel jobs, 1).
set -euo pipefail
secs=${1:-30}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/scripts/fuzz-common.sh"
fuzz_build fuzz-tune-expr fuzz_tune_expr
seeds=$build/tune-expr-seeds
mkdir -p "$seeds"
n=0
while IFS= read -r line; do
  n=$((n + 1))
  printf '%s' "$line" > "$seeds/seed_$n"
done < "$root/tests/fuzz/tune_expr_seeds.txt"
fuzz_run fuzz-tune-expr fuzz_tune_expr tune-expr "$seeds" "$n" 8192 10 \
  "$root/tests/fuzz/tune_expr.dict"
