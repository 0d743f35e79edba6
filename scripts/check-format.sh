#!/usr/bin/env bash
# check-format.sh [--fix] [FILE...] -- the C sources and headers of the repository's own folders
# (src tools tests include examples bench) against the committed .clang-format (docs/STYLE.md).
# Without --fix it changes nothing and prints each file that is not in the format, with the
# command that fixes it; with --fix it rewrites those files in place. FILEs limit it to those.
# It also prints each line over the column limit that clang-format leaves (a comment).
# CUDA kernels (.cu) are inputs the tests and examples compile, laid out by hand: not checked.
# clang-format 14 (Debian bookworm's) defines the format; as root, a missing clang-format is
# installed from Debian. CLANG_FORMAT=PATH picks another binary.
# Exit status: 0 when every file is in the format (or was rewritten) and no line is too long,
# 1 otherwise, 2 when clang-format is missing.

set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
folders=(src tools tests include examples bench)
want_major=14

fix=0
if [ "${1:-}" = "--fix" ]; then fix=1; shift; fi
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then sed -n '2,/^$/p' "$0" | cut -c3-; exit 0; fi

find_tool() {
  if [ -n "${CLANG_FORMAT:-}" ]; then echo "$CLANG_FORMAT"; return; fi
  command -v "clang-format-$want_major" || command -v clang-format || true
}
tool=$(find_tool)
if [ -z "$tool" ] && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  echo "check-format: installing clang-format (Debian's package)" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends clang-format \
    >/dev/null ||
    { apt-get update -qq || true; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends clang-format >/dev/null; }
  tool=$(find_tool)
fi
if [ -z "$tool" ]; then
  echo "check-format: clang-format is needed (apt-get install clang-format)" >&2
  exit 2
fi
version=$("$tool" --version | sed -n 's/.*version \([0-9][0-9]*\)\..*/\1/p' | head -n1)
if [ "${version:-0}" != "$want_major" ]; then
  echo "check-format: note: $tool is version ${version:-unknown}; the format is defined by" \
    "clang-format $want_major, so other versions may differ on a few lines" >&2
fi

files=()
if [ $# -gt 0 ]; then
  files=("$@")
elif git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  while IFS= read -r f; do [ -f "$f" ] && files+=("$f"); done < <(
    git ls-files -- "${folders[@]}" | grep -E '\.(c|h|cc|cpp|hpp)$')
else
  present=()
  for d in "${folders[@]}"; do [ -d "$d" ] && present+=("$d"); done
  while IFS= read -r f; do files+=("$f"); done < <(
    find "${present[@]}" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cc' -o -name '*.cpp' \
      -o -name '*.hpp' \) | sort)
fi

bad=()
for f in "${files[@]}"; do
  if ! "$tool" --style=file --dry-run --Werror "$f" >/dev/null 2>&1; then bad+=("$f"); fi
done
if [ "$fix" -eq 1 ] && [ ${#bad[@]} -gt 0 ]; then
  "$tool" --style=file -i "${bad[@]}"
  echo "check-format: rewrote ${#bad[@]} of ${#files[@]} files in the format of .clang-format"
  bad=()
fi
for f in "${bad[@]}"; do
  lines=$("$tool" --style=file "$f" | diff "$f" - | grep -c '^<' || true)
  echo "$f: $lines lines not in the format; fix: scripts/check-format.sh --fix $f"
done

# clang-format leaves comments as written (ReflowComments: false keeps hand-made tables and
# rules), so a comment line over the column limit is found here, in the files clang-format
# accepts, and wrapped by hand.
limit=$(sed -n 's/^ColumnLimit: *\([0-9][0-9]*\).*/\1/p' .clang-format)
long=0
formatted=()
for f in "${files[@]}"; do
  case " ${bad[*]} " in *" $f "*) ;; *) formatted+=("$f") ;; esac
done
if [ ${#formatted[@]} -gt 0 ]; then
  while IFS= read -r hit; do
    rest=${hit#*:}
    echo "${hit%%:*}:${rest%%:*}: over $limit columns (clang-format does not rewrap comments);" \
      "wrap it by hand"
    long=$((long + 1))
  done < <(LC_ALL=C.UTF-8 grep -nE "^.{$((limit + 1)),}\$" "${formatted[@]}" /dev/null || true)
fi

if [ ${#bad[@]} -eq 0 ] && [ "$long" -eq 0 ]; then
  echo "check-format: ${#files[@]} files in the format of .clang-format ($tool, version" \
    "${version:-?})"
  exit 0
fi
[ ${#bad[@]} -eq 0 ] ||
  echo "check-format: ${#bad[@]} of ${#files[@]} files are not in the format of .clang-format;" \
    "scripts/check-format.sh --fix rewrites them (make format), docs/STYLE.md says why"
[ "$long" -eq 0 ] || echo "check-format: $long lines over $limit columns"
exit 1
