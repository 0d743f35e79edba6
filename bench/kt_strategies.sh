#!/bin/bash
# kt_strategies.sh -- sets up and runs Kernel Tuner's side of the search-strategy comparison
# (bench/kt_strategies.py) on a CPU machine, without PyPI:
#   1. installs Debian's python3-numpy, -scipy, -sklearn (and -jsonschema, -packaging,
#      -xmltodict, which Kernel Tuner imports) with apt-get, only those missing;
#   2. copies Kernel Tuner's kernel_tuner/ package and python-constraint2's constraint/ package
#      (its .py files: pure Python, no Cython build) from their sources into --prefix, with a
#      minimal .dist-info each so importlib.metadata finds their versions (Kernel Tuner asks for
#      its own at import); a source is a checked-out tree or a git directory (bare or a mirror;
#      then --kt-ref / --constraint-ref pick the tag or commit, default 1.4.0 and 2.6.0);
#   3. runs bench/kt_strategies.py with Debian's /usr/bin/python3, PYTHONHASHSEED=0, under
#      `nice -n ${NICE:-19}`, passing on every other argument.
# usage: bench/kt_strategies.sh --kt-src DIR --constraint-src DIR [--kt-ref REF]
#            [--constraint-ref REF] [--prefix DIR] [kt_strategies.py arguments...]
# e.g.   bench/kt_strategies.sh --kt-src ~/src/kernel_tuner/.git --constraint-src \
#            ~/src/python-constraint/.git --out /tmp/kt_side/results.json --table /tmp/kt_side/table.txt
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kt_src= kt_ref=1.4.0 pc_src= pc_ref=2.6.0 prefix=/tmp/kt_side/site
args=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --kt-src) kt_src=$2; shift 2 ;;
    --kt-ref) kt_ref=$2; shift 2 ;;
    --constraint-src) pc_src=$2; shift 2 ;;
    --constraint-ref) pc_ref=$2; shift 2 ;;
    --prefix) prefix=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
[[ -n "$kt_src" && -n "$pc_src" ]] || { sed -n '2,18p' "$0"; exit 2; }

# 1. Debian packages
pkgs=(python3-numpy python3-scipy python3-sklearn python3-jsonschema python3-packaging python3-xmltodict)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "kt_strategies.sh: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# 2. Kernel Tuner and python-constraint2 from source
is_git_dir() { [[ -f "$1/HEAD" && -d "$1/objects" ]]; }
# prepare SRC REF PACKAGE DIST_NAME MARKER: copy SRC's PACKAGE/ into $prefix, write the dist-info
prepare() {
  local src=$1 ref=$2 pkg=$3 dist=$4 marker=$5 commit version
  rm -rf "${prefix:?}/$pkg" "$prefix/${dist//-/_}"-*.dist-info
  if is_git_dir "$src"; then
    commit=$(git --git-dir="$src" rev-parse "$ref^{commit}")
    git --git-dir="$src" archive "$commit" "$pkg" | tar -x -C "$prefix"
    version=$(git --git-dir="$src" show "$commit:pyproject.toml" | sed -n 's/^version = "\([^"]*\)".*/\1/p' | head -1)
  else
    commit=$(git -C "$src" rev-parse HEAD 2>/dev/null || echo "not a git checkout")
    cp -r "$src/$pkg" "$prefix/"
    version=$(sed -n 's/^version = "\([^"]*\)".*/\1/p' "$src/pyproject.toml" | head -1)
  fi
  find "$prefix/$pkg" \( -name '*.c' -o -name '*.so' -o -name '*.pyx' -o -name __pycache__ \) -prune -exec rm -rf {} +
  mkdir -p "$prefix/${dist//-/_}-$version.dist-info"
  printf 'Metadata-Version: 2.1\nName: %s\nVersion: %s\n' "$dist" "$version" \
    > "$prefix/${dist//-/_}-$version.dist-info/METADATA"
  echo "commit $commit from $src" > "$prefix/$marker"
  echo "kt_strategies.sh: $dist $version, commit $commit" >&2
}
mkdir -p "$prefix"
prepare "$kt_src" "$kt_ref" kernel_tuner kernel_tuner KT_SOURCE
prepare "$pc_src" "$pc_ref" constraint python-constraint2 CONSTRAINT_SOURCE

# 3. the comparison
exec env PYTHONHASHSEED=0 nice -n "${NICE:-19}" /usr/bin/python3 "$here/kt_strategies.py" \
  --kt-src "$prefix" "${args[@]}"
