#!/usr/bin/env bash
# A disk filled to the last byte by something else (the reserve no help): OSD 0's data dir is a
# small tmpfs that a ballast fills completely. The store's next flush fails; OSD 0 stays up
# (RocksDB would abort it on its next write: osd/store_write_stop.h), refuses writes with
# ENOSPC, serves reads; once the ballast is gone it restarts in place (same pid), and writes,
# repair and scrub succeed.
#   osd_disk_full_test.sh SOURCE_DIR BIN_DIR
set -euo pipefail
before_cluster_up() {
  mkdir -p "$cluster/osd-0"
  mount -t tmpfs -o size=512m orthofs-test-full-disk "$cluster/osd-0"
}
cluster_osd_flags="--reserve-mb 160"
source "$(dirname "${BASH_SOURCE[0]}")/mounted_cluster.sh" "$1" "$2" diskfull
disk=$cluster/osd-0
log=$cluster/osd-0.log
pid=$(cat "$cluster/osd-0.pid")
# wait_for SECONDS COMMAND...: polls COMMAND every 0.2 s; non-zero when it never succeeded.
wait_for() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.2
  done
}
osd0_alive() { kill -0 "$pid" 2> /dev/null || fail "OSD 0 died: $(tail -n 20 "$log")"; }

step "data written while there is room"
: > "$work/removed"
head -c $((16 << 20)) /dev/urandom > "$work/before"
cp "$work/before" "$mnt/before"
mkdir "$mnt/small"
for i in $(seq 1 40); do echo "small file $i" > "$mnt/small/f$i"; done
sync

step "a ballast fills OSD 0's disk to the last byte"
fallocate -l $(($(df -B1 --output=avail "$disk" | tail -1))) "$disk/ballast" || true
dd if=/dev/zero of="$disk/ballast-rest" bs=4k 2> /dev/null || true
[ "$(df -B1 --output=avail "$disk" | tail -1 | tr -d ' ')" -lt 65536 ] ||
  fail "the ballast left room: $(df -h "$disk" | tail -1)"

step "writes fail with ENOSPC; deletes make the store flush, which fails and stops its writes"
expect_enospc_write "$mnt/refused" 8
# That write met the full disk in the data log, or the free-space guard once it looked again
# (at least every second). A write the guard refuses marks OSD 0 full; a delete (it takes no
# space of its own) on a full OSD asks for a flush and compaction, and the flush meets the full
# disk.
sleep 1.5
dd if=/dev/urandom of="$mnt/refused" bs=1M count=8 conv=fsync 2> /dev/null &&
  fail "8 MiB fit on a full disk"
rm -f "$mnt/refused"
# Each delete succeeds, or fails with ENOSPC once the store has stopped: never half done.
for i in $(seq 1 20); do
  if rm "$mnt/small/f$i" 2>> "$work/rm.err"; then echo "f$i" >> "$work/removed"; fi
done
[ ! -s "$work/rm.err" ] || ! grep -v "No space left on device" "$work/rm.err" ||
  fail "a delete failed otherwise"
wait_for 30 grep -q "writes stopped until the OSD restarts" "$log" ||
  fail "the store never stopped writing: $(tail -n 20 "$log")"
osd0_alive

step "OSD 0 up: status says read-only and why, reads served, writes refused with ENOSPC"
set +e
"$bin/orthofs" status --json > "$work/status.out" 2> "$work/status.err"
status=$?
set -e
[ "$status" -eq 3 ] || fail "status exit $status, not 3 (degraded): $(cat "$work/status.out")"
python3 - "$work/status.out" << 'PY' || fail "status: $(cat "$work/status.out")"
import json, sys
osds = {o["id"]: o for o in json.load(open(sys.argv[1]))["osds"]}
ok = (osds[0]["state"] == "read-only" and "No space left" in osds[0]["writes_stopped"] and
      all(o["state"] == "up" for i, o in osds.items() if i != 0))
sys.exit(0 if ok else 1)
PY
grep -q "OSD 0: OSD store stopped writing" "$work/status.err" ||
  fail "status did not say why: $(cat "$work/status.err")"
echo 3 > /proc/sys/vm/drop_caches 2> /dev/null || true
cmp "$work/before" "$mnt/before" || fail "data written before the disk filled reads back wrong"
for i in $(seq 21 40); do
  [ "$(cat "$mnt/small/f$i")" = "small file $i" ] || fail "small/f$i reads back wrong"
done
expect_enospc_write "$mnt/refused2" 8
rm -f "$mnt/refused2" || true
osd0_alive

step "the ballast goes: OSD 0 restarts in place and takes writes again"
rm "$disk/ballast" "$disk/ballast-rest"
wait_for 60 grep -q "restarting in place to reopen the store" "$log" ||
  fail "OSD 0 never restarted: $(tail -n 20 "$log")"
wait_for 60 "$bin/orthofs" status > "$work/status.out" 2>&1 ||
  fail "OSD 0 not back after its restart: $(cat "$work/status.out"; tail -n 20 "$log")"
[ "$(grep -c "OSD 0 serving" "$log")" -ge 2 ] || fail "no second start: $(tail -n 20 "$log")"
osd0_alive
head -c $((16 << 20)) /dev/urandom > "$work/after"
dd if="$work/after" of="$mnt/after" bs=1M conv=fsync 2> "$work/dd.err" ||
  fail "write after freeing space failed: $(cat "$work/dd.err")"
rm -f "$mnt"/small/f{21..30}
fusermount3 -u "$mnt"
"$bin/orthofs-mount" --map "$ORTHOFS_MAP" "$mnt"
cmp "$work/after" "$mnt/after" || fail "data written after the restart reads back wrong"
cmp "$work/before" "$mnt/before" || fail "data written before reads back wrong"
# A delete that failed may still have changed the copy that took it (its repair record then
# brings the other along, as for any write a full OSD refused): such a file is gone or intact.
for i in $(seq 1 40); do
  if grep -qx "f$i" "$work/removed" || [ "$i" -ge 21 -a "$i" -le 30 ]; then
    [ ! -e "$mnt/small/f$i" ] || fail "small/f$i, deleted, came back"
  elif [ "$i" -gt 20 ] || [ -e "$mnt/small/f$i" ]; then
    [ "$(cat "$mnt/small/f$i")" = "small file $i" ] || fail "small/f$i reads back wrong"
  fi
done

# The peers' pushes to OSD 0 waited while it was full: one line each, not one per record.
for id in 1 2; do
  [ "$(grep -c "on OSD 0 refused: NO_SPACE" "$cluster/osd-$id.log")" -eq 0 ] &&
    [ "$(grep -c "OSD 0 refuses pushes as full" "$cluster/osd-$id.log")" -le 1 ] ||
    fail "OSD $id logged every refused push: $(grep -c "OSD 0" "$cluster/osd-$id.log") lines"
done

step "repair and scrub: two matching copies of everything"
expect_repaired_and_scrubbed
echo "osd_disk_full_test: all checks passed"
