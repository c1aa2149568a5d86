#!/usr/bin/env bash
# Builds scenert (release) and runs the main job.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
bash "$here/setup.sh"
build_tree "$root/build/release" -DCMAKE_BUILD_TYPE=Release -DSCENERT_TESTS=OFF -DSCENERT_BENCH=OFF >&2
exec "$root/build/release/apps/runtime_demo" "$@"
