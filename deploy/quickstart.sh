#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to a running local OrthoFS cluster:
# installs dependencies, builds, starts 6 OSDs on loopback and mounts namespace 1 at
# /mnt/orthofs (deploy/local-cluster up --mount /mnt/orthofs).
#   deploy/quickstart.sh [local-cluster up flags, e.g. --osds 6 --dir DIR]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
"$here/install-deps.sh"
"$here/build.sh"
# Default: 6 OSDs with namespace 1 mounted at /mnt/orthofs (override with local-cluster flags).
if [ $# -eq 0 ]; then set -- --mount "${ORTHOFS_MOUNT:-/mnt/orthofs}"; fi
exec "$here/local-cluster" up "$@"
