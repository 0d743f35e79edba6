#!/usr/bin/env bash
# Builds cucore's API reference from the public header (include/cucore.h and its parts,
# include/cucore/*.h) with doxygen and docs/Doxyfile.
#
#   scripts/api-docs.sh [--include DIR] [--xml] OUT_DIR
#
# Writes OUT_DIR/html (and OUT_DIR/xml with --xml, for the api_docs test) and the warnings to
# OUT_DIR/warnings.log. Any warning -- an undocumented declaration, a broken doc comment --
# fails the run (exit 1) and is printed. --include documents another copy of the include
# directory, DIR/cucore.h and DIR/cucore/*.h (the test's self-checks). `make docs` runs it with
# OUT_DIR = build/docs.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
inc="$root/include"
xml=NO
out=""
while (($#)); do
  case "$1" in
    --include) inc="$(cd "$2" && pwd)"; shift 2 ;;
    --xml) xml=YES; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    -*) echo "api-docs: unknown option $1" >&2; exit 2 ;;
    *) out="$1"; shift ;;
  esac
done
if [ -z "$out" ]; then
  echo "usage: scripts/api-docs.sh [--include DIR] [--xml] OUT_DIR" >&2
  exit 2
fi
if [ ! -f "$inc/cucore.h" ] || [ ! -d "$inc/cucore" ]; then
  echo "api-docs: $inc holds no cucore.h and cucore/ (the header and its parts)" >&2
  exit 2
fi
if ! command -v doxygen >/dev/null 2>&1; then
  echo "api-docs: doxygen is not installed; run scripts/install-deps.sh (it installs Debian's" \
       "doxygen package)" >&2
  exit 2
fi

mkdir -p "$out"
out="$(cd "$out" && pwd)"
rm -rf "$out/html" "$out/xml" "$out/warnings.log"
version="$(sed -n 's/^#define CUCORE_VERSION_STRING "\([^"]*\)".*/\1/p' "$inc/cucore.h" \
  "$inc"/cucore/*.h)"

# docs/Doxyfile, then what differs for this run (later settings win): the umbrella and every
# part (FILE_PATTERNS picks the .h files of the folder).
rc=0
{
  cat "$root/docs/Doxyfile"
  echo "INPUT = \"$inc/cucore.h\" \"$inc/cucore\""
  echo "OUTPUT_DIRECTORY = \"$out\""
  echo "WARN_LOGFILE = \"$out/warnings.log\""
  echo "STRIP_FROM_PATH = \"$inc\""
  echo "PROJECT_NUMBER = \"$version\""
  echo "GENERATE_XML = $xml"
} | (cd "$root" && doxygen - 2>"$out/doxygen.stderr") || rc=$?
# Doxygen writes problems with the configuration itself to stderr, not to the log.
cat "$out/doxygen.stderr" >>"$out/warnings.log"
rm -f "$out/doxygen.stderr"

if [ -s "$out/warnings.log" ] || [ "$rc" -ne 0 ]; then
  cat "$out/warnings.log" >&2 2>/dev/null || true
  n="$(grep -c . "$out/warnings.log" 2>/dev/null || true)"
  echo "api-docs: doxygen reported ${n:-0} warning(s) (exit status $rc) for $inc/cucore.h and" \
       "its parts: every public declaration needs a correct Doxygen comment" >&2
  exit 1
fi
echo "API reference: $out/html/index.html"
