#!/usr/bin/env bash
# deploy/compare-fs.sh against a real mount and a local directory at tiny size: every fio job
# and bonnie++ line has a number for both, --remount remounts the client (with --mount-flags),
# --dbench adds dbench's throughput and latencies, bad input is refused;
# deploy/cpu-usage.sh reports the CPU seconds of the mount and each OSD during a write.
#   compare_fs_test.sh SOURCE_DIR BIN_DIR
set -euo pipefail
cluster_mount_options=read_ahead=8,cache_mb=64
source "$(dirname "${BASH_SOURCE[0]}")/mounted_cluster.sh" "$1" "$2" compare
local_dir=$work/local
mkdir -p "$local_dir"

step "local-cluster --mount-options reach the mount"
mount_pid=$(pgrep -f "orthofs-mount .*$mnt" | head -1)
tr '\0' ' ' < "/proc/$mount_pid/cmdline" | grep -q -- "-o read_ahead=8,cache_mb=64" ||
  fail "mount options not passed: $(tr '\0' ' ' < "/proc/$mount_pid/cmdline")"

step "bad input"
out=$("$src/deploy/compare-fs.sh" "$mnt" "$work/missing" 2>&1) && fail "missing dir accepted"
grep -q "not a writable directory" <<< "$out" || fail "no message: $out"
out=$("$src/deploy/compare-fs.sh" "$mnt" "$local_dir" --files 0 2>&1) && fail "--files 0 accepted"
out=$("$src/deploy/compare-fs.sh" "$mnt" "$local_dir" --bogus 2>&1) && fail "--bogus accepted"
out=$("$src/deploy/compare-fs.sh" "$mnt" "$local_dir" --mount-flags 2>&1) &&
  fail "--mount-flags without a value accepted"
out=$("$src/deploy/compare-fs.sh" "$mnt" "$local_dir" --mount-flags --insecure 2>&1) &&
  fail "--mount-flags without --remount accepted"
grep -q "give --remount" <<< "$out" || fail "no message: $out"
out=$("$src/deploy/compare-fs.sh" "$mnt" "$local_dir" --admin-flags --insecure 2>&1) &&
  fail "--admin-flags without --remount accepted"
grep -q "give --remount" <<< "$out" || fail "no message: $out"

step "fio and bonnie++ on both (with --remount: the OSDs' caches emptied before each read)"
"$src/deploy/compare-fs.sh" "$mnt" "$local_dir" --files 2 --size-mb 4 --bonnie-mb 32 \
  --bonnie-files 1 --remount "$ORTHOFS_MAP" --mount-flags "-o read_ahead=8,cache_mb=64" \
  > "$work/table.txt" || fail "compare-fs failed"
cat "$work/table.txt"
for job in "write 1m" "write 16k" "randwrite 1m" "randwrite 16k" "read 16k" "read 1m" \
           "randread 16k" "randread 1m"; do
  grep -Eq "^  $job +[0-9.]+ +[0-9.]+ +[0-9.]+x$" "$work/table.txt" || fail "no numbers for fio $job"
done
grep -Eq "^  CPU time taken by the host \(steal\) +[0-9]+[.][0-9]% +[0-9]+[.][0-9]%$" \
  "$work/table.txt" || fail "no CPU steal of each side"
for label in "block write MB/s" "block read MB/s" "seq create /s" "random delete /s"; do
  grep -Eq "^  $label +([0-9.]+|\+{5}) +([0-9.]+|\+{5})" "$work/table.txt" ||
    fail "no bonnie++ line '$label'"
done
grep -q " $mnt fuse.orthofs " /proc/mounts || fail "the mount is gone after --remount"
mount_pid=$(pgrep -f "orthofs-mount .*$mnt" | head -1)
tr '\0' ' ' < "/proc/$mount_pid/cmdline" | grep -q -- "-o read_ahead=8,cache_mb=64" ||
  fail "--mount-flags not passed: $(tr '\0' ' ' < "/proc/$mount_pid/cmdline")"
[ -z "$(ls "$mnt")" ] && [ -z "$(ls "$local_dir")" ] || fail "benchmark files left behind"
for log in "$cluster"/osd-*.log; do
  # One drop per read job (four) and one before bonnie++.
  [ "$(grep -c "caches dropped" "$log")" -ge 5 ] || fail "the OSD caches were not emptied: $log"
done
step "--repeat: the median of the runs, then the lowest and highest of each side"
"$src/deploy/compare-fs.sh" "$mnt" "$local_dir" --files 2 --size-mb 2 --no-bonnie --repeat 3 \
  > "$work/repeat.txt" || fail "compare-fs --repeat failed"
cat "$work/repeat.txt"
grep -q "median of 3 runs" "$work/repeat.txt" || fail "no word of the median"
n='[0-9]+[.][0-9]'
awk -v n="^$n\$" '/^  (read|write|randread|randwrite) / {
    split($6, a, "-"); split($7, b, "-"); sub(/^[(]/, "", a[1]); sub(/,$/, "", a[2])
    sub(/[)]$/, "", b[2])
    if ($3 !~ n || a[1] !~ n || a[2] !~ n || b[1] !~ n || b[2] !~ n) { print "bad: " $0; bad = 1 }
    if (a[1] + 0 > $3 + 0 || $3 + 0 > a[2] + 0 || b[1] + 0 > $4 + 0 || $4 + 0 > b[2] + 0) {
      print "median outside its runs: " $0; bad = 1 }
    ++rows }
  END { exit bad || rows != 8 }' "$work/repeat.txt" || fail "not 8 rows of median (low-high)"
out=$("$src/deploy/compare-fs.sh" "$mnt" "$local_dir" --repeat 0 2>&1) && fail "--repeat 0 accepted"
grep -q "positive numbers" <<< "$out" || fail "no message: $out"
[ -z "$(ls "$mnt")" ] && [ -z "$(ls "$local_dir")" ] || fail "benchmark files left behind"

step "--dbench: throughput and latencies of both"
"$src/deploy/compare-fs.sh" "$mnt" "$local_dir" --no-fio --no-bonnie --dbench 3 \
  --dbench-clients 2 > "$work/dbench.txt" || fail "compare-fs --dbench failed"
cat "$work/dbench.txt"
grep -q "^dbench, 2 clients, 3 s" "$work/dbench.txt" || fail "no dbench heading"
# A local latency dbench prints as 0.000 leaves no ratio ("-").
for label in "throughput MB/s" "ntcreatex ms" "find ms" "qpathinfo ms" "unlink ms"; do
  grep -Eq "^  $label +[0-9.]+ +[0-9.]+ +([0-9.]+x|-)$" "$work/dbench.txt" ||
    fail "no dbench numbers for '$label'"
done
[ -z "$(ls "$mnt")" ] && [ -z "$(ls "$local_dir")" ] || fail "dbench files left behind"
out=$("$src/deploy/compare-fs.sh" "$mnt" "$local_dir" --dbench x 2>&1) && fail "--dbench x accepted"
grep -q "takes seconds" <<< "$out" || fail "no message: $out"

step "cpu-usage.sh: CPU seconds of this cluster's processes during a write"
out=$("$src/deploy/cpu-usage.sh" --match "$cluster/" -- \
  dd if=/dev/zero of="$mnt/cpu" bs=1M count=64 conv=fsync status=none 2>&1) ||
  fail "cpu-usage.sh failed: $out"
echo "$out"
mount_cpu=$(awk '/orthofs-mount/ && $1 ~ /^[0-9]+$/ { print $2 }' <<< "$out")
[ -n "$mount_cpu" ] && awk -v c="$mount_cpu" 'BEGIN { exit !(c > 0) }' ||
  fail "no CPU time for the mount: $out"
[ "$(grep -Ec '^  [0-9]+ +[0-9.]+ s +[0-9.]+ cores  .*orthofs-osd' <<< "$out")" -eq 3 ] ||
  fail "not one line per OSD: $out"
grep -Eq '^  total +[0-9.]+ s' <<< "$out" || fail "no total: $out"
rm -f "$mnt/cpu"
"$src/deploy/cpu-usage.sh" -- false && fail "the command's status is not passed on"
out=$("$src/deploy/cpu-usage.sh" 2>&1) && fail "no command accepted"
grep -q "no command" <<< "$out" || fail "no message: $out"
"$src/deploy/cpu-usage.sh" --bogus -- true 2> /dev/null && fail "--bogus accepted"

echo "compare_fs_test: all checks passed"
