#!/usr/bin/env bash
# The `cucore tune` commands the README's worked example and `cucore help tune` show run as
# written from examples/tune/ (the files they name are there): each command read from the text
# itself (continued lines joined), a measured one run as a dry run for sm_90 (no GPU here; the
# GPU check runs them measured), each must exit 0.
source "$(dirname "$0")/lib.sh"
top="$(cd "$(dirname "$0")/../.." && pwd)"
CUCORE="$(cd "$(dirname "$CUCORE")" && pwd)/$(basename "$CUCORE")"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export CUCORE_CACHE_DIR="$dir/cache"
# commands FILE: every `cucore tune ...` command of the text, one a line (continuations joined).
commands() {
  python3 - "$1" <<'PY'
import re, sys
text = open(sys.argv[1]).read().replace("\\\n", " ")
for line in text.splitlines():
    line = line.strip()
    if line.startswith("cucore tune "):
        print(re.sub(r"\s+", " ", line))
PY
}
"$CUCORE" help tune >"$dir/help.txt"
awk '/^examples:/ {on = 1} on' "$dir/help.txt" >"$dir/help_examples.txt"
awk '/^### A worked example: `cucore tune`/ {on = 1} /^## / && on && !/worked/ {on = 0} on' \
  "$top/README.md" >"$dir/readme_tune.md"
n=0
while IFS= read -r cmd; do
  n=$((n + 1))
  case "$cmd" in
    *--dry-run*) extra=() ;;
    *) extra=(--dry-run --arch sm_90) ;;
  esac
  (cd "$top/examples/tune" && eval "timeout 300 \"$CUCORE\" ${cmd#cucore } ${extra[*]}") \
    >"$dir/out" 2>"$dir/err"
  rc=$?
  err=$(cat "$dir/err")
  check "runs as written (exit 0): $cmd" [ "$rc" -eq 0 ]
done < <(commands "$dir/help_examples.txt"; commands "$dir/readme_tune.md")
check "found the help's 3 examples and the README's worked example" [ "$n" -ge 4 ]
finish
