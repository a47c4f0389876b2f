#!/usr/bin/env bash
# Integration test of orthofs-bench on a temporary local directory: the JSON lines of the write,
# read (seq and random) and metadata phases, cleanup of the data files, and the failures of a
# read without files and of a bad --mode.
#
#   bench_tool_test.sh SOURCE_DIR BIN_DIR
#
# Exits non-zero with "FAIL: <check>" on the first failed check; the EXIT trap removes the
# temporary directory whatever happens.
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: $0 SOURCE_DIR BIN_DIR" >&2; exit 2; }
bench=$2/orthofs-bench
[ -x "$bench" ] || { echo "bench_tool_test: no $bench" >&2; exit 1; }

D=$(mktemp -d "${TMPDIR:-/tmp}/orthofs-bench-tool-test.XXXXXX")
W=$D/work  # the benchmarked directory
mkdir "$W"
cleanup() {
  local rc=$?
  rm -rf "$D"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'echo "bench_tool_test: command failed (line $LINENO): $BASH_COMMAND" >&2' ERR

fail() {
  echo "bench_tool_test: FAIL: $*" >&2
  exit 1
}

# check_json FILE EXPECTED_PHASES...: every line of FILE is one JSON object with the keys of
# its kind and sane positive numbers, and the phases appear in the given order.
check_json() {
  python3 - "$@" << 'EOF'
import json, sys

path, expected = sys.argv[1], sys.argv[2:]
throughput = ["phase", "mode", "request_bytes", "runs", "files", "file_bytes", "mb_s_mean",
              "mb_s_median", "mb_s_min", "mb_s_max", "ops_s_median"]
metadata = ["phase", "runs", "files", "files_s_mean", "files_s_median", "files_s_min",
            "files_s_max"]
phases = []
with open(path) as f:
    for number, line in enumerate(f, 1):
        try:
            obj = json.loads(line)
        except ValueError as e:
            sys.exit(f"line {number} is not JSON ({e}): {line!r}")
        if not isinstance(obj, dict):
            sys.exit(f"line {number} is not a JSON object: {line!r}")
        phase = obj.get("phase")
        keys = metadata if phase in ("create", "stat", "list", "unlink") else throughput
        missing = [k for k in keys if k not in obj]
        if missing:
            sys.exit(f"line {number} ({phase}) lacks {missing}: {line!r}")
        for k in keys[2 if keys is throughput else 1:]:
            v = obj[k]
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not v > 0:
                sys.exit(f"line {number} ({phase}): {k} = {v!r} is not a positive number")
        stat = "mb_s" if keys is throughput else "files_s"
        lo, med, mean, hi = (obj[f"{stat}_{s}"] for s in ("min", "median", "mean", "max"))
        if not (lo <= med <= hi and lo <= mean <= hi):
            sys.exit(f"line {number} ({phase}): min/median/mean/max out of order: {line!r}")
        if obj["runs"] != 2:
            sys.exit(f"line {number} ({phase}): runs = {obj['runs']}, expected 2")
        phases.append(phase)
if phases != expected:
    sys.exit(f"phases {phases}, expected {expected}")
EOF
}

no_data_files() {
  ! compgen -G "$W/orthofs-bench.*" > /dev/null
}

small=(--files 2 --size 1M --request 16K --runs 2 --json)

# --- seq: write then read; the files are gone afterwards ---
"$bench" "$W" "${small[@]}" --mode seq --no-drop-caches > "$D/seq.out" 2> "$D/seq.err" ||
  fail "seq run exited $?: $(cat "$D/seq.err")"
check_json "$D/seq.out" write read || fail "seq JSON: $(cat "$D/seq.out")"
grep -q '"mode":"seq"' "$D/seq.out" || fail "seq run does not report mode seq"
grep -q '"request_bytes":16384' "$D/seq.out" || fail "read request_bytes is not 16384"
grep -q '"file_bytes":1048576' "$D/seq.out" || fail "file_bytes is not 1048576"
no_data_files || fail "seq run left files: $(ls "$W")"

# --- random; page caches dropped, or a warning said why not ---
"$bench" "$W" "${small[@]}" --mode random --seed 7 > "$D/random.out" 2> "$D/random.err" ||
  fail "random run exited $?: $(cat "$D/random.err")"
check_json "$D/random.out" write read || fail "random JSON: $(cat "$D/random.out")"
grep -q '"mode":"random"' "$D/random.out" || fail "random run does not report mode random"
grep -q '"page_caches_dropped":true' "$D/random.out" ||
  grep -q "cannot drop page caches" "$D/random.err" ||
  fail "caches neither dropped nor a warning: $(cat "$D/random.err")"
[ "$(grep -c "cannot drop page caches" "$D/random.err" || true)" -le 1 ] ||
  fail "the page-cache warning is printed more than once"
no_data_files || fail "random run left files: $(ls "$W")"

# --- write alone keeps the files, read alone uses and leaves them ---
"$bench" "$W" "${small[@]}" --phase write > "$D/write.out"
check_json "$D/write.out" write || fail "write JSON: $(cat "$D/write.out")"
[ -f "$W/orthofs-bench.0" ] && [ -f "$W/orthofs-bench.1" ] || fail "--phase write removed files"
[ "$(stat -c %s "$W/orthofs-bench.1")" -eq 1048576 ] || fail "file size is not 1 MiB"
[ "$(head -c 4096 "$W/orthofs-bench.0" | tr -d '\0' | wc -c)" -gt 3000 ] ||
  fail "the data file is mostly zeros"
"$bench" "$W" "${small[@]}" --phase read --no-drop-caches > "$D/read.out"
check_json "$D/read.out" read || fail "read JSON: $(cat "$D/read.out")"
[ -f "$W/orthofs-bench.0" ] || fail "--phase read removed the files"
rm -f "$W"/orthofs-bench.*

# --- metadata ---
"$bench" "$W" --phase metadata --metadata-files 50 --runs 2 --json > "$D/meta.out" 2> "$D/meta.err" ||
  fail "metadata run exited $?: $(cat "$D/meta.err")"
check_json "$D/meta.out" create stat list unlink || fail "metadata JSON: $(cat "$D/meta.out")"
grep -q '"files":50' "$D/meta.out" || fail "metadata does not report 50 files"
[ -z "$(ls -A "$W")" ] || fail "metadata left entries: $(ls -A "$W")"

# --- human-readable output: one line per phase ---
"$bench" "$W" --files 2 --size 1M --runs 2 --no-drop-caches > "$D/human.out"
[ "$(wc -l < "$D/human.out")" -eq 2 ] || fail "human output is not 2 lines: $(cat "$D/human.out")"
grep -Eq '^read +seq +16384 B x 2 runs: [0-9.]+ MB/s mean, .* ops/s median$' "$D/human.out" ||
  fail "human read line: $(cat "$D/human.out")"

# --- failures ---
rc=0
"$bench" "$W" "${small[@]}" --phase read > "$D/empty.out" 2> "$D/empty.err" || rc=$?
[ "$rc" -ne 0 ] || fail "--phase read on an empty directory exited 0"
grep -q "orthofs-bench.0" "$D/empty.err" || fail "no message naming the missing file: $(cat "$D/empty.err")"
[ ! -s "$D/empty.out" ] || fail "a failed read printed on stdout: $(cat "$D/empty.out")"

rc=0
"$bench" "$W" --mode bogus > /dev/null 2> "$D/bogus.err" || rc=$?
[ "$rc" -ne 0 ] || fail "--mode bogus exited 0"
grep -q -- "--mode" "$D/bogus.err" || fail "no message about --mode: $(cat "$D/bogus.err")"
rc=0
"$bench" --bogus > /dev/null 2> "$D/flag.err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "unknown flag '--bogus'" "$D/flag.err" ||
  fail "--bogus without DIR: exit $rc, $(cat "$D/flag.err")"

rc=0
"$bench" "$D/missing" "${small[@]}" > /dev/null 2> "$D/missing.err" || rc=$?
[ "$rc" -eq 1 ] || fail "a missing DIR exited $rc, expected 1"
grep -q "No such file or directory" "$D/missing.err" || fail "missing DIR: $(cat "$D/missing.err")"

rc=0
"$bench" "$W" --size 12X > /dev/null 2>&1 || rc=$?
[ "$rc" -ne 0 ] || fail "--size 12X exited 0"

echo "bench_tool_test: OK"
