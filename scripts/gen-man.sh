#!/usr/bin/env bash
# Generates docs/cucore.1 (troff) from the command's own help texts, so the man page and
# `cucore help VERB` never disagree. usage: scripts/gen-man.sh [path/to/cucore] > docs/cucore.1
set -euo pipefail
CUCORE="${1:-build/bin/cucore}"
version=$("$CUCORE" --version | awk '{print $2}')
esc() { sed -e 's/\\/\\e/g' -e 's/^\./\\\&./' -e "s/^'/\\\\\\&'/"; }
cat <<HEAD
.TH CUCORE 1 "" "cucore $version" "User Commands"
.SH NAME
cucore \- compile, load, inspect and launch CUDA kernels safely
.SH SYNOPSIS
.B cucore
.I VERB
[\fIoptions\fR]
.SH DESCRIPTION
HEAD
"$CUCORE" --help | sed -n '3,$p' | esc | sed 's/^$/.PP/' | sed 's/^/ /; s/^ \.PP/.PP/' | awk 'BEGIN{print ".nf"} {print} END{print ".fi"}'
for verb in $("$CUCORE" --help | awk '/^verbs:/{f=1; next} f && NF==0 {exit} f {print $1}'); do
  [ "$verb" = help ] && continue
  echo ".SH \"cucore $verb\""
  echo ".nf"
  "$CUCORE" help "$verb" | esc
  echo ".fi"
done
cat <<'TAIL'
.SH ENVIRONMENT
TAIL
# The environment: README.md's table, the one list of every variable cucore reads.
python3 - "$(dirname "$0")/../README.md" <<'PY'
import re, sys
t = open(sys.argv[1]).read().split("## Environment variables", 1)[1].split("\n## ", 1)[0]
for row in t.splitlines():
    if not row.startswith("| `"):
        continue
    cells = [c.strip() for c in row.strip("|").split("|")]
    names = ", ".join(re.findall(r"`([A-Z][A-Z0-9_]+)`", cells[0]))
    what = re.sub(r"`([^`]*)`", r"\1", cells[2]).replace("\\", "\\e")
    print(".TP\n.B " + names + "\n" + cells[1].capitalize() + ": " + what + ".")
PY
cat <<'TAIL'
.SH EXIT STATUS
0 success; 1 the work failed (the reason is on standard error); 2 the command line was wrong.
.SH SEE ALSO
The library's header, cucore.h (with the parts it includes, cucore/*.h), documents every
function.
TAIL
