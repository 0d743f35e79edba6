# Shared helpers for the CLI behaviour tests (sourced, not a test itself).
CUCORE="$1"
fails=0
passes=0
CUDA_ROOT="${CUDA_HOME:-/usr/local/cuda}"
check() { # check DESCRIPTION CONDITION...
  local what="$1"; shift
  if "$@"; then passes=$((passes + 1)); return; fi
  echo "FAIL: $what"
  fails=$((fails + 1))
  # What the last command said, to diagnose a failure from the log alone.
  [ -n "${rc:-}" ] && echo "  (last command: exit $rc)"
  [ -n "${err:-}" ] && printf '%s\n' "$err" | tail -n 8 | sed 's/^/  stderr: /'
  return 0
}
checked() { # checked DESCRIPTION STATUS: a condition of several commands run just before, as
  # `{ A && B; }; checked "what" $?` (check's arguments are one command, so a `&& B` after
  # them would be outside the check)
  local what="$1"
  check "$what" [ "$2" -eq 0 ]
}
run() { # run CMD... -> sets $out, $err, $rc
  local o e
  o=$(mktemp); e=$(mktemp)
  "$@" >"$o" 2>"$e"; rc=$?
  out=$(cat "$o"); err=$(cat "$e"); rm -f "$o" "$e"
}
has() { grep -qF -- "$2" <<<"$1"; }
lines() { printf '%s' "$1" | grep -c ''; }
finish() {
  echo "$passes passed, $fails failed"
  [ "$fails" -eq 0 ]
}
nvml_state() { # `cucore devices --json` on stdin -> yes (NVML answered for device 0), absent
  # (NVML could not be loaded: GPU scripts skip their NVML checks with a note) or "error: WHY"
  python3 -c '
import json, sys
s = json.load(sys.stdin)["devices"][0]["system"]
print("yes" if s["available"] else ("absent" if "could not be loaded" in s.get("error", "") else
      "error: " + s.get("error", "")))
'
}
