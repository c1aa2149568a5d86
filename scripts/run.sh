#!/usr/bin/env bash
# Builds scenert (release) and runs the main job: a load test of examples/mmo.json.
# Extra arguments go to `scenert loadtest` (e.g. --players 20000 --report out.json).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
bash "$here/setup.sh"
build_tree "$root/build/release" -DCMAKE_BUILD_TYPE=Release -DSCENERT_TESTS=OFF -DSCENERT_BENCH=OFF >&2
exec "$root/build/release/apps/scenert" loadtest "$root/examples/mmo.json" --players 5000 --seconds 10 --seed 1 --idle-grace 2000 "$@"
