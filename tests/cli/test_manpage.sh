#!/usr/bin/env bash
# docs/cucore.1 is generated from the command's help (scripts/gen-man.sh): it must be current.
source "$(dirname "$0")/lib.sh"
top="$(cd "$(dirname "$0")/../.." && pwd)"
fresh=$(mktemp)
trap 'rm -f "$fresh"' EXIT
"$top/scripts/gen-man.sh" "$CUCORE" >"$fresh"
check "docs/cucore.1 matches the help texts (run scripts/gen-man.sh build/bin/cucore > docs/cucore.1)" \
  diff -q "$fresh" "$top/docs/cucore.1"
check "the man page has a section per verb" grep -q '^.SH "cucore run"' "$fresh"
finish
