#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to a running local OrthoFS cluster:
# installs dependencies, builds, and starts N OSDs on loopback (deploy/local-cluster up).
#   deploy/quickstart.sh [local-cluster up flags, e.g. --osds 6 --dir DIR]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
"$here/install-deps.sh"
"$here/build.sh"
exec "$here/local-cluster" up "$@"
