#!/usr/bin/env bash
# The main job: what cucore is for, on the bundled example kernels, in one screen.
set -uo pipefail
CUCORE="${1:-build/bin/cucore}"
cd "$(dirname "$0")/.."
echo "== cucore version: what was loaded, from where"
"$CUCORE" version
echo
echo "== cucore devices"
if ! "$CUCORE" devices; then
  echo "(no GPU here: compiling, inspecting and the occupancy model still work; launching needs a GPU)"
fi
