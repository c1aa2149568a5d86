#!/usr/bin/env bash
# Installs every Debian package scenert needs. Idempotent: does nothing when all are present.
set -euo pipefail

packages=(
  cmake ninja-build g++ clang libclang-rt-14-dev  # toolchain; clang for libFuzzer
  libtbb-dev libfmt-dev nlohmann-json3-dev        # libraries
  libcli11-dev libspdlog-dev
  libboost-dev libprotobuf-dev protobuf-compiler  # the network front: Asio + Beast, protobuf
  libgtest-dev libgmock-dev libbenchmark-dev      # tests and benches
  python3 python3-jsonschema prometheus           # schema check, promtool
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
