#!/usr/bin/env bash
# Installs every Debian 12 package OrthoFS needs to build, run and test.
# Usage: deploy/install-deps.sh [--peers]   (as root, or with sudo available)
#   --peers also installs GlusterFS and MooseFS, for deploy/peers/ and deploy/compare-peers.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config ccache clang-format git
  libfuse3-dev fuse3
  librocksdb-dev
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  libssl-dev openssl libspdlog-dev libfmt-dev
  libyaml-cpp-dev libcli11-dev libxxhash-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev
  clang libclang-rt-14-dev llvm-14
  iproute2 procps psmisc fio bonnie++ dbench ethtool gnuplot-nox python3 systemd curl
)

if [ "${1:-}" = "--peers" ]; then
  packages+=(glusterfs-server glusterfs-client moosefs-master moosefs-chunkserver moosefs-client git)
elif [ $# -gt 0 ]; then
  echo "install-deps: unknown argument '$1' (--peers)" >&2
  exit 2
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: run as root or install sudo" >&2; exit 1; }
  SUDO=sudo
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
