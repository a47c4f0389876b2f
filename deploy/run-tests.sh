#!/usr/bin/env bash
# Installs dependencies, builds, and runs the whole test suite (CTest).
#   deploy/run-tests.sh              all tests
#   deploy/run-tests.sh -L unit      only unit tests (seconds); other ctest flags work too
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
"$here/install-deps.sh"
"$here/build.sh"
cd "$top/build"
exec ctest --output-on-failure -j "${ORTHOFS_TEST_JOBS:-2}" "$@"
