#!/usr/bin/env bash
# Installs every Debian package scenert needs, and the web pages' npm packages. Idempotent: does
# nothing when all are present.
set -euo pipefail

packages=(
  cmake ninja-build g++ clang libclang-rt-14-dev  # toolchain; clang for libFuzzer
  libtbb-dev libfmt-dev nlohmann-json3-dev        # libraries
  libcli11-dev libspdlog-dev
  libboost-dev libprotobuf-dev protobuf-compiler  # the network front: Asio + Beast, protobuf
  nats-server libnats-dev                         # the cluster: NATS with JetStream, nats.c
  libsqlite3-dev sqlite3                          # the player store (sqlite3: operators' backups)
  libgtest-dev libgmock-dev libbenchmark-dev      # tests and benches
  python3 python3-jsonschema prometheus           # schema check, promtool
  python3-protobuf                                # the e2e tests build their messages from net/proto
  chromium chromium-driver python3-selenium       # the web pages' tests in a real browser
)

missing=()
sudo_cmd=()
[[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# The web pages' scripts (protobufjs, Chart.js) from the npm registry, as web/package-lock.json pins
# them; Debian's Node.js when the machine has none. `npm ci` runs only when the lock file changed.
if ! command -v npm >/dev/null; then
  echo "setup: installing nodejs npm" >&2
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends nodejs npm >&2
fi
web=$(cd "$(dirname "$0")/../web" && pwd)
if ! cmp -s "$web/package-lock.json" "$web/node_modules/.scenert-lock.json"; then
  echo "setup: npm ci in web/" >&2
  (cd "$web" && npm ci --no-audit --no-fund --loglevel=error >&2)
  cp "$web/package-lock.json" "$web/node_modules/.scenert-lock.json"
fi
