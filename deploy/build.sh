#!/usr/bin/env bash
# Configures and builds OrthoFS into build/ (binaries in build/bin). Sized for small machines.
#   deploy/build.sh [extra cmake -D options]
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jobs=${ORTHOFS_JOBS:-$(nproc 2>/dev/null || echo 2)}
cmake -S "$top" -B "$top/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
cmake --build "$top/build" -j "$jobs"
