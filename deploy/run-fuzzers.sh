#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with Clang, ASan and UBSan into build-fuzz/ and runs
# each for SECONDS on a copy of its seed corpus; fails if any fuzzer finds a crash, leak, UB or
# hang (a crashing input is left as crash-*/leak-*/timeout-* in the work directory, printed).
#   deploy/run-fuzzers.sh [SECONDS]   (default 60)
# The mutation seed is fixed (ORTHOFS_FUZZ_SEED, default 1) so that CI explores the same inputs
# on every run and a red build is reproducible; for a longer exploratory run pick other seeds.
set -euo pipefail
seconds=${1:-60}
seed=${ORTHOFS_FUZZ_SEED:-1}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
build="$top/build-fuzz"
fuzzers=(osd_request_fuzzer cluster_map_fuzzer)
declare -A corpus=([osd_request_fuzzer]=osd_request [cluster_map_fuzzer]=cluster_map)

start=$(date +%s)
CC=clang CXX=clang++ cmake -S "$top" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DORTHOFS_FUZZ=ON >/dev/null
cmake --build "$build" -j "${ORTHOFS_JOBS:-2}" --target "${fuzzers[@]}"
echo "run-fuzzers: built in $(($(date +%s) - start)) s"

# New corpus entries, crash inputs and the OSD fuzzer's stores stay out of the repository.
work=$(mktemp -d "${TMPDIR:-/tmp}/orthofs-fuzz.XXXXXX")
failed=0
passed=0
keep_work=0
symbolizer=$(command -v llvm-symbolizer || echo /usr/lib/llvm-14/bin/llvm-symbolizer)
for f in "${fuzzers[@]}"; do
  dir="$work/$f"
  mkdir -p "$dir/corpus" "$dir/tmp"
  cp "$top/tests/fuzz/corpus/${corpus[$f]}"/* "$dir/corpus/"
  echo "run-fuzzers: $f for ${seconds} s (seed $seed)"
  status=0
  (cd "$dir" && TMPDIR="$dir/tmp" ASAN_SYMBOLIZER_PATH="$symbolizer" \
    "$build/bin/$f" -max_total_time="$seconds" -seed="$seed" -timeout=10 -rss_limit_mb=4096 \
    -print_final_stats=1 corpus >"$dir/log" 2>&1) || status=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -1)
  # A report from another thread can lose the race with a clean exit(0): read the log too.
  if [ "$status" -eq 0 ] &&
    grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:' "$dir/log"; then
    status=99
  fi
  if [ "$status" -ne 0 ]; then
    echo "run-fuzzers: $f FAILED (exit $status); its log:" >&2
    pattern='ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|deadly signal'
    if grep -qE "$pattern" "$dir/log"; then
      # From a little before the report: the target's own message comes first.
      first=$(grep -nE "$pattern" "$dir/log" | head -1 | cut -d: -f1)
      sed -n "$((first > 15 ? first - 15 : 1)),+135p" "$dir/log" >&2
    else
      tail -n 80 "$dir/log" >&2
    fi
    for input in "$dir"/crash-* "$dir"/leak-* "$dir"/timeout-* "$dir"/oom-*; do
      [ -e "$input" ] && echo "run-fuzzers: reproduce with $build/bin/$f $input" >&2
    done
    failed=$((failed + 1))
    keep_work=1
  else
    passed=$((passed + 1))
    echo "run-fuzzers: $f passed: ${execs:-?} executions in ${seconds} s" \
      "($(ls "$dir/corpus" | wc -l) corpus inputs)"
  fi
done
if [ "$keep_work" -eq 0 ]; then rm -rf "$work"; else echo "run-fuzzers: inputs kept in $work" >&2; fi
echo "run-fuzzers: $(($(date +%s) - start)) s in all"
echo "fuzzers: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
