#!/usr/bin/env bash
# Installs dependencies, builds, and runs the whole test suite (CTest).
#   deploy/run-tests.sh              all tests
#   deploy/run-tests.sh -L unit      only unit tests (seconds); other ctest flags work too
# A full run (no arguments) also checks the thread-safety annotations with clang
# (deploy/check-thread-safety.sh) and then runs each fuzzer (deploy/run-fuzzers.sh) for
# ORTHOFS_FUZZ_SECONDS (default 60; 0 skips them).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
# The peers too: tests/peers_test.sh runs GlusterFS and MooseFS beside OrthoFS.
"$here/install-deps.sh" --peers
"$here/build.sh"
[ $# -ne 0 ] || "$here/check-thread-safety.sh" "$top/build"
cd "$top/build"
ctest --output-on-failure -j "${ORTHOFS_TEST_JOBS:-2}" "$@"
fuzz_seconds=${ORTHOFS_FUZZ_SECONDS:-60}
if [ $# -eq 0 ] && [ "$fuzz_seconds" != 0 ]; then
  "$here/run-fuzzers.sh" "$fuzz_seconds"
fi
