#!/usr/bin/env bash
# deploy/chaos-run: bad flags exit 2 with a message; a short run of its file churn on two mounts
# without kills ends with every process's tree intact through the other mount and no dangling
# entry, and the run's directory is left as it was given (logs, expected trees).
#   chaos_run_test.sh SOURCE_DIR BIN_DIR
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 SOURCE_DIR BIN_DIR" >&2; exit 2; }
src=$(cd "$1" && pwd)
export ORTHOFS_BIN=$2
work=$(mktemp -d "/tmp/orthofs-chaos-test-XXXXXX")
cleanup() {
  set +e
  for m in "$work/run/mount-a" "$work/run/mount-b"; do
    grep -q " $m fuse" /proc/mounts && fusermount3 -uz "$m"
  done
  "$src/deploy/local-cluster" down --dir "$work/run/cluster" > /dev/null 2>&1
  pkill -KILL -f "$work" 2> /dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
chaos=$src/deploy/chaos-run

for bad in "--bogus" "--osds 2" "--seconds x" "--seconds 1"; do
  rc=0
  # shellcheck disable=SC2086  # the flags split on purpose
  "$chaos" $bad > "$work/bad.out" 2>&1 || rc=$?
  [ "$rc" -eq 2 ] || fail "'chaos-run $bad' exited $rc, not 2"
  grep -q "^chaos-run: " "$work/bad.out" || fail "'chaos-run $bad' said: $(cat "$work/bad.out")"
done

"$chaos" --seconds 12 --kill-every 0 --dir "$work/run" > "$work/run.out" 2>&1 ||
  fail "chaos-run failed: $(tail -n 30 "$work/run.out")"
grep -q "chaos-run: no error, nothing lost" "$work/run.out" || fail "no verdict: $(cat "$work/run.out")"
for w in wa wb wc; do
  grep -q "$w: verified [1-9][0-9]* files, 0 problems" "$work/run.out" ||
    fail "$w verified nothing: $(cat "$work/run.out")"
  [ -s "$work/run/out/$w.json" ] || fail "$w's expected tree is gone"
done
grep -q "^dangling entries: 0$" "$work/run.out" || fail "fsck: $(cat "$work/run.out")"
grep -q " $work/run/mount-a fuse" /proc/mounts && fail "mount A left mounted"
grep -q " $work/run/mount-b fuse" /proc/mounts && fail "mount B left mounted"
# A mount's process exits a moment after its unmount (it writes back and closes its channels).
for _ in $(seq 1 100); do pgrep -f "$work/run/cluster" > /dev/null || break; sleep 0.1; done
pgrep -f "$work/run/cluster" > /dev/null &&
  fail "cluster processes left running: $(pgrep -af "$work/run/cluster")"
echo "chaos_run_test: passed"
