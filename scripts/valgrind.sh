#!/usr/bin/env bash
# Runs the CPU unit tests under valgrind memcheck: no invalid access, no definite leak.
#   usage: scripts/valgrind.sh [build-dir]     (make valgrind)
set -uo pipefail
build="${1:-build}"
cd "$(dirname "$0")/.."
if ! command -v valgrind >/dev/null && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  echo "valgrind: installing Debian's package" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends valgrind >/dev/null ||
    { apt-get update -qq || true; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends valgrind >/dev/null; }
fi
command -v valgrind >/dev/null || { echo "valgrind not installed: apt-get install valgrind"; exit 1; }
tests=(test_errors test_loader test_options test_sha256 test_args test_program test_graph
       test_occupancy_model test_occupancy_model_table test_asym_fence test_misuse test_link_stages
       test_link_version
       test_diagnostics)
for t in "$build"/bin/test_cache* "$build"/bin/test_memory_*; do
  [ -x "$t" ] && tests+=("$(basename "$t")")
done
# Tests shorten their thread-stress loops under valgrind, which runs threads one at a time.
export CUCORE_UNDER_VALGRIND=1
# One test under valgrind: its verdict line, and its log's tail on failure.
run_one() {
  local t=$1 exe="$build/bin/$1" log
  [ -x "$exe" ] || { echo "missing $exe (build first)"; return 1; }
  log=$(mktemp)
  if valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
       --suppressions=tests/valgrind.supp --quiet "$exe" >"$log" 2>&1; then
    echo "valgrind $t: clean"
  else
    echo "valgrind $t: FAILED"
    tail -40 "$log"
  fi
  rm -f "$log"
}
export -f run_one
export build
# The tests run side by side, one per core (valgrind runs each test's threads on one core).
out=$(printf '%s\n' "${tests[@]}" | xargs -P "$(nproc)" -I{} bash -c 'run_one "$1"' _ {})
echo "$out"
passes=$(grep -c ': clean$' <<<"$out")
fails=$((${#tests[@]} - passes))
echo "valgrind: $passes passed, $fails failed"
[ $fails -eq 0 ]
