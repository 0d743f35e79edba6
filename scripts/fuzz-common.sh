# fuzz-common.sh -- sourced by the fuzzing scripts (fuzz-reader.sh, fuzz-tune-expr.sh), not run:
# fuzz_build NAME TARGET finds clang (installing Debian's package when run as root), configures
# the fuzzing build (-DCUCORE_FUZZ=ON, clang, ASan, UBSan) in $build and builds TARGET there.
# The caller sets root (the repository); build is CUCORE_FUZZ_BUILD, else $root/build-fuzz,
# shared by the targets, so the instrumented library is compiled once for all of them.
fuzz_build() {
  local name=$1 target=$2
  build=${CUCORE_FUZZ_BUILD:-$root/build-fuzz}
  if ! command -v clang >/dev/null && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    echo "$name: installing clang (Debian's package)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends clang >/dev/null ||
      { apt-get update -qq || true; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
          --no-install-recommends clang >/dev/null; }
  fi
  if ! command -v clang >/dev/null; then
    echo "$name: clang is needed (apt-get install clang)" >&2
    exit 1
  fi
  CC=clang cmake -S "$root" -B "$build" -DCUCORE_FUZZ=ON -DCUCORE_BUILD_EXAMPLES=OFF \
    -DCUCORE_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$build" --target "$target" -j"$(nproc)" >/dev/null
}
