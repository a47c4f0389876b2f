#!/usr/bin/env bash
# A dead mount remounts: after kill -9 of orthofs-mount the mount point answers ENOTCONN, and
# both the mount command and `local-cluster up --mount` replace the dead mount instead of
# failing with libfuse's "Transport endpoint is not connected". The mount command refuses a
# regular file and a second OrthoFS mount stacked on a live one, each with one clear line.
#   mount_point_test.sh SOURCE_DIR BIN_DIR
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/mounted_cluster.sh" "$1" "$2" remount
mount_pid() { pgrep -f "orthofs-mount .* $mnt\$" | head -1; }
# kill -9 of the mount process, then until it is gone (a zombie at most): until then its
# threads may still answer, and the mount is not dead yet.
kill_mount() {
  local pid
  pid=$(mount_pid)
  [ -n "$pid" ] || fail "no mount process for $mnt"
  kill -KILL "$pid"
  for _ in $(seq 1 100); do
    state=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$pid/status" 2> /dev/null || true)
    [ -z "$state" ] || [ "$state" = Z ] && break
    sleep 0.05
  done
}
mount_cmd=("$bin/orthofs-mount" --map "$ORTHOFS_MAP" --tls-dir "$ORTHOFS_TLS_DIR" --fnso 1)

echo kept > "$mnt/kept"
step "kill -9 of the mount, then the mount command at the same place"
kill_mount
if ls "$mnt" > "$work/ls.out" 2>&1; then fail "the mount answers after kill -9"; fi
grep -q "not connected" "$work/ls.out" || fail "no ENOTCONN from the dead mount: $(cat "$work/ls.out")"
"${mount_cmd[@]}" "$mnt" 2> "$work/remount.err" || fail "remount failed: $(cat "$work/remount.err")"
grep -q "replaced the dead OrthoFS mount" "$work/remount.err" ||
  fail "remount did not say it replaced the dead mount: $(cat "$work/remount.err")"
[ "$(cat "$mnt/kept")" = kept ] || fail "the file is not there after the remount"

step "a second mount on a live one, and one on a regular file, are refused"
rc=0
"${mount_cmd[@]}" "$mnt" 2> "$work/stacked.err" || rc=$?
[ "$rc" -eq 1 ] && grep -q "is an OrthoFS mount already" "$work/stacked.err" ||
  fail "stacking: exit $rc, $(cat "$work/stacked.err")"
[ "$(grep -c " $mnt fuse.orthofs " /proc/mounts)" -eq 1 ] || fail "two mounts at $mnt"
touch "$work/plain-file"
rc=0
"${mount_cmd[@]}" "$work/plain-file" 2> "$work/file.err" || rc=$?
[ "$rc" -eq 1 ] && grep -q "is not a directory" "$work/file.err" ||
  fail "a regular file: exit $rc, $(cat "$work/file.err")"

step "kill -9 again, then local-cluster up --mount"
kill_mount
"$src/deploy/local-cluster" up --dir "$cluster" --mount "$mnt" > "$work/up.out" 2>&1 ||
  fail "local-cluster up --mount over a dead mount failed: $(cat "$work/up.out"); mount.log: $(tail -n 5 "$cluster/mount.log")"
[ "$(cat "$mnt/kept")" = kept ] || fail "the file is not there after local-cluster up --mount"
echo "mount_remount_test: all checks passed"

