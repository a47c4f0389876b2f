#!/usr/bin/env bash
# Growing and shrinking a cluster while it serves: 4 -> 6 -> 5 OSDs (local-cluster resize, i.e.
# a new map, new OSDs started, `orthofs rebalance`, the removed OSD stopped) under a running
# `fio --verify=md5` workload on one mount, whose files a second mount (4 MiB cache, so its
# reads go to the OSDs) checks byte for byte. The grow's rebalance is killed once and resumed.
# Afterwards: no fio or checksum failure, a tree copied in before is intact, `orthofs scrub`
# finds every object with two matching copies where the new map puts them (none misplaced), a
# rerun of the rebalance moves nothing, and the removed OSD is stopped.
#   rebalance_test.sh SOURCE_DIR BIN_DIR
set -euo pipefail
cluster_osds=4
source "$(dirname "${BASH_SOURCE[0]}")/mounted_cluster.sh" "$1" "$2" rebalance
command -v fio > /dev/null || fail "fio is not installed"
mnt2=$work/mnt2
mkdir -p "$mnt2"
cleanup_second_mount() {
  grep -q " $mnt2 fuse" /proc/mounts && fusermount3 -uz "$mnt2"
  cleanup
}
trap cleanup_second_mount EXIT
metrics_port=$((20000 + RANDOM % 12000))  # below the ephemeral ports (32768..)
while ss -Htln "sport = :$metrics_port" | grep -q .; do metrics_port=$((metrics_port + 1)); done
"$bin/orthofs-mount" --map "$ORTHOFS_MAP" --cache-mb 4 --metrics "127.0.0.1:$metrics_port" \
  "$mnt2" 2> "$work/mount2.log" ||
  fail "second mount failed: $(cat "$work/mount2.log")"

step "a tree copied in before any change"
tree=/usr/include/linux
cp -r "$tree" "$mnt/tree"

# One round: a new 16 MiB file written by fio with an md5 header per 64 KiB block (verified
# by fio on the writing mount), then read whole through the second mount and compared; the file
# of two rounds ago is deleted (metadata changes during the rebalance too).
workload() {
  local n=0 sum1 sum2
  while [ $n -lt 2 ] || [ ! -e "$work/stop" ]; do
    fio --name=rebalance --filename="$mnt/fio.$n" --rw=randwrite --bs=64k --size=16m \
      --randseed=$((n + 1)) --verify=md5 --verify_fatal=1 --do_verify=1 --end_fsync=1 \
      --verify_state_save=0 --output="$work/fio.out" > /dev/null 2>&1 ||
      { echo "round $n: fio failed: $(tail -n 20 "$work/fio.out")"; return 1; }
    grep -q "err= 0" "$work/fio.out" || { echo "round $n: fio: $(cat "$work/fio.out")"; return 1; }
    sum1=$(md5sum < "$mnt/fio.$n")
    sum2=$(md5sum < "$mnt2/fio.$n") || { echo "round $n: second mount cannot read"; return 1; }
    [ "$sum1" = "$sum2" ] || { echo "round $n: the second mount reads other bytes"; return 1; }
    [ $n -lt 2 ] || rm "$mnt/fio.$((n - 2))"
    n=$((n + 1))
  done
  echo "$n" > "$work/rounds"
}
workload > "$work/workload.log" 2>&1 &
workload_pid=$!
sleep 2

step "grow 4 -> 6 OSDs, the first rebalance killed midway and resumed"
"$src/deploy/local-cluster" resize --osds 6 --dir "$cluster" > "$work/grow1.log" 2>&1 &
resize_pid=$!
for _ in $(seq 1 200); do
  pgrep -f "orthofs rebalance --map $cluster/" > /dev/null && break
  sleep 0.05
done
sleep 0.5
pkill -KILL -f "orthofs rebalance --map $cluster/" || true  # may have finished already
wait "$resize_pid" || echo "(interrupted as intended)"
"$src/deploy/local-cluster" resize --osds 6 --dir "$cluster" > "$work/grow2.log" 2>&1 ||
  fail "resuming the grow failed: $(cat "$work/grow2.log")"
grep -q "every copy is where map epoch 2 puts it" "$work/grow2.log" ||
  fail "grow did not end at epoch 2: $(cat "$work/grow2.log")"
kill -0 "$workload_pid" 2> /dev/null || fail "the workload ended during the grow: $(cat "$work/workload.log")"

step "shrink 6 -> 5 OSDs"
"$src/deploy/local-cluster" resize --osds 5 --dir "$cluster" > "$work/shrink.log" 2>&1 ||
  fail "shrink failed: $(cat "$work/shrink.log")"
grep -q "OSD 5 holds nothing any more" "$work/shrink.log" || fail "$(cat "$work/shrink.log")"
grep -q "stopped 1 OSD" "$work/shrink.log" || fail "OSD 5 not stopped: $(cat "$work/shrink.log")"

step "the workload verifies throughout"
touch "$work/stop"
wait "$workload_pid" || fail "workload failed: $(cat "$work/workload.log")"
echo "   $(cat "$work/rounds") rounds of fio write + verify + cross-mount compare"

step "every object where map epoch 3 puts it, with two matching copies"
[ "$(grep -c '^  - id:' "$ORTHOFS_MAP")" = 5 ] || fail "the map does not have 5 OSDs"
grep -q '^epoch: 3$' "$ORTHOFS_MAP" || fail "the map is not at epoch 3"
[ ! -e "$cluster/osd-5" ] || fail "the removed OSD's data dir is still there"
! pgrep -f "orthofs-osd --id 5 --map $cluster/" > /dev/null || fail "OSD 5 still runs"
"$bin/orthofs" status > "$work/status.out" || fail "status: $(cat "$work/status.out")"
[ "$(grep -c ' up  *3 ' "$work/status.out")" = 5 ] || fail "not every OSD at epoch 3: $(cat "$work/status.out")"
diff -r "$tree" "$mnt2/tree" > /dev/null || fail "the tree changed (second mount)"
diff -r "$tree" "$mnt/tree" > /dev/null || fail "the tree changed"
"$bin/orthofs" scrub --fnso 1 > "$work/scrub.out" || fail "scrub: $(cat "$work/scrub.out")"
objects=$(sed -n 's/^namespace 1: \([0-9]*\) objects checked.*/\1/p' "$work/scrub.out")
matched=$(sed -n 's/.*copies), \([0-9]*\) with two matching copies$/\1/p' "$work/scrub.out")
[ -n "$objects" ] && [ "$objects" -gt 0 ] && [ "$objects" = "$matched" ] ||
  fail "not every object has two matching copies: $(cat "$work/scrub.out")"
grep -q "repaired 0 copies" "$work/scrub.out" || fail "scrub had to repair: $(cat "$work/scrub.out")"
grep -q "misplaced: 0; unrecoverable: 0" "$work/scrub.out" ||
  fail "copies not where the map says: $(cat "$work/scrub.out")"
"$bin/orthofs" rebalance --new-map "$ORTHOFS_MAP" > "$work/again.out" ||
  fail "rerun: $(cat "$work/again.out")"
grep -q "epoch 3 -> 3: 0 copies to move" "$work/again.out" || fail "rerun moved: $(cat "$work/again.out")"
curl -sf "http://127.0.0.1:$metrics_port/metrics" > "$work/metrics.txt" ||
  fail "cannot scrape the second mount's metrics"
grep -q '^orthofs_client_map_epoch{fnso="1"} 3$' "$work/metrics.txt" ||
  fail "the second mount does not place by epoch 3: $(grep map_ "$work/metrics.txt")"
grep -Eq '^orthofs_client_map_changes_total\{fnso="1"\} [12]$' "$work/metrics.txt" ||
  fail "the second mount did not follow the map changes: $(grep map_ "$work/metrics.txt")"

step "a daemonized mount's log sent to a file stays there (local-cluster's mount.log)"
"$src/deploy/local-cluster" down --dir "$cluster" > /dev/null
for _ in $(seq 1 100); do grep -q "client cache:" "$cluster/mount.log" && break; sleep 0.1; done
grep -q "client cache:" "$cluster/mount.log" ||
  fail "no unmount statistics in mount.log: $(tail -5 "$cluster/mount.log")"
echo "PASS"
