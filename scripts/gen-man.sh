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
.TP
.B CUCORE_LIBCUDA, CUCORE_NVRTC, CUCORE_NVJITLINK, CUCORE_NVVM
Full path of the driver or of a toolkit library to load instead of searching for it.
.TP
.B CUCORE_LIBNVML
Full path of NVML (libnvidia-ml.so.1), whose live clocks, temperature, power and throttle
reasons `cucore devices` shows and `cucore run` records.
.TP
.B CUDA_HOME, CUDA_PATH
The CUDA toolkit to search first (then /usr/local/cuda, then the loader path).
.TP
.B CUCORE_CACHE_DIR, CUCORE_CACHE_DISABLE, CUCORE_CACHE_MAX_BYTES
Where the compile cache lives (else $XDG_CACHE_HOME/cucore, else ~/.cache/cucore), turning it
off (=1), and its size cap (bytes, or with a K, M or G suffix; default 1G).
.SH EXIT STATUS
0 success; 1 the work failed (the reason is on standard error); 2 the command line was wrong.
.SH SEE ALSO
The library's header, cucore.h (with the parts it includes, cucore/*.h), documents every
function.
TAIL
