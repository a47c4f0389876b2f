#!/usr/bin/env bash
# A full disk: OSD 0's data dir is a small tmpfs, filled up by a ballast file. A write through
# the mount then fails with ENOSPC (not EIO, no hang), OSD 0 stays up, data written before
# stays readable, deleting a file still works, and once the ballast is gone writes succeed
# again; repair and scrub end with two matching copies of everything.
#   osd_full_test.sh SOURCE_DIR BIN_DIR
set -euo pipefail
disk_mb=512
reserve_mb=160  # at least twice the store's 64 MiB write buffer (README, The OSD)
before_cluster_up() {
  mkdir -p "$cluster/osd-0"
  mount -t tmpfs -o size=${disk_mb}m orthofs-test-disk "$cluster/osd-0"
}
cluster_osd_flags="--reserve-mb $reserve_mb"
source "$(dirname "${BASH_SOURCE[0]}")/mounted_cluster.sh" "$1" "$2" osdfull
disk=$cluster/osd-0
free_mb() { df -m --output=avail "$disk" | tail -1 | tr -d ' '; }
counter() {  # counter NAME: OSD 0's value
  "$bin/orthofs" stats --json | python3 -c '
import json, sys
for osd in json.load(sys.stdin)["osds"]:
    if osd["id"] == 0: print(osd["counters"].get(sys.argv[1], 0))' "$1"
}

step "data written while there is room"
head -c $((16 << 20)) /dev/urandom > "$work/before"
cp "$work/before" "$mnt/before"

step "ballast leaves 40 MiB above the reserve; a 200 MiB write fails with ENOSPC"
fallocate -l $((($(free_mb) - reserve_mb - 40) << 20)) "$disk/ballast"
expect_enospc_write "$mnt/big" 200
[ "$(counter writes_refused_full)" -gt 0 ] || fail "OSD 0 counted no refused write"

step "OSD 0 stays up, old data reads back, deleting works"
"$bin/orthofs" status > "$work/status.out" || fail "an OSD is down: $(cat "$work/status.out")"
cmp "$work/before" "$mnt/before" || fail "data written before the disk filled is damaged"
rm "$mnt/big" || fail "cannot delete a file on a full cluster: $(df -m "$disk" | tail -1);
  OSD 0 log: $(tail -n 3 "$cluster/osd-0.log")"

step "space freed: writes succeed again"
rm "$disk/ballast"
sleep 1.5  # the OSD looks at its free space at least every second
head -c $((64 << 20)) /dev/urandom > "$work/after"
dd if="$work/after" of="$mnt/after" bs=1M conv=fsync 2> "$work/dd.err" ||
  fail "write after freeing space failed: $(cat "$work/dd.err")"
fusermount3 -u "$mnt"
"$bin/orthofs-mount" --map "$ORTHOFS_MAP" "$mnt"
cmp "$work/after" "$mnt/after" || fail "data written after freeing space reads back wrong"
cmp "$work/before" "$mnt/before" || fail "data written before reads back wrong"

step "repair and scrub: two matching copies of everything"
expect_repaired_and_scrubbed
echo "osd_full_test: all checks passed ($(counter writes_refused_full) writes refused while full)"
