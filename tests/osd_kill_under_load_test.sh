#!/usr/bin/env bash
# A storage engineer kills an OSD in the middle of a benchmark: for each of the 3 OSDs in
# turn, kill -9 during `fio --verify=md5` (write, then verify) and during bonnie++ on the mount.
# Both runs complete without an I/O error; after the OSD restarts, `orthofs repair` leaves no
# record, `orthofs scrub` finds two matching copies of every object, and the fio data verifies
# again through a fresh mount (cold client cache).
#   osd_kill_under_load_test.sh SOURCE_DIR BIN_DIR
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/mounted_cluster.sh" "$1" "$2" osdkill
command -v fio > /dev/null || fail "fio is not installed"
command -v bonnie++ > /dev/null || fail "bonnie++ is not installed"

osd_pid() { cat "$cluster/osd-$1.pid"; }
fio_job() {  # fio_job DIR extra-args...: 32 MiB written in 256 KiB requests, md5 per block
  local dir=$1
  shift
  fio --name=verify --directory="$dir" --filename=data --rw=write --bs=256k --size=32m \
    --ioengine=psync --verify=md5 --verify_fatal=1 --verify_state_save=0 --end_fsync=1 "$@" \
    --output="$work/fio.out" > /dev/null 2>&1
}

for victim in 0 1 2; do
  step "OSD $victim killed during fio --verify=md5"
  mkdir -p "$mnt/fio$victim"
  fio_job "$mnt/fio$victim" &
  job=$!
  sleep 1
  kill -KILL "$(osd_pid "$victim")"
  wait "$job" || fail "fio failed with OSD $victim killed: $(tail -n 20 "$work/fio.out")"
  grep -q "err= 0" "$work/fio.out" || fail "fio reported errors: $(cat "$work/fio.out")"

  step "OSD $victim killed during bonnie++"
  "$src/deploy/local-cluster" up --dir "$cluster" > /dev/null  # the previous victim back
  mkdir -p "$mnt/bonnie$victim"
  bonnie++ -d "$mnt/bonnie$victim" -u root -s 64 -r 32 -n 1 -f -q > "$work/bonnie.out" \
    2> "$work/bonnie.err" &
  job=$!
  sleep 2
  kill -KILL "$(osd_pid "$victim")"
  wait "$job" || fail "bonnie++ failed with OSD $victim killed: $(cat "$work/bonnie.err")"

  step "OSD $victim restarted: repair, verify"
  "$src/deploy/local-cluster" up --dir "$cluster" > /dev/null
  # A pass pushes every record with a synced write: allow it time on a loaded machine.
  "$bin/orthofs" repair --timeout-ms 120000 > "$work/repair.out" ||
    fail "records left: $(cat "$work/repair.out")"
  # Nothing for scrub to do: the records brought every copy back.
  "$bin/orthofs" scrub --fnso 1 --json --timeout-ms 60000 > "$work/scrub.out" ||
    fail "scrub failed: $(cat "$work/scrub.out")"
  python3 - "$work/scrub.out" <<'PY' || fail "copies differ after repair: $(cat "$work/scrub.out")"
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if r["objects"] > 0 and r["matched"] == r["objects"] else 1)
PY
  fusermount3 -u "$mnt"
  "$bin/orthofs-mount" --map "$ORTHOFS_MAP" "$mnt"
  fio_job "$mnt/fio$victim" --verify_only ||
    fail "fio data of round $victim does not verify after repair: $(tail -n 20 "$work/fio.out")"
done
repaired=$("$bin/orthofs" stats --json | python3 -c '
import json, sys
print(json.load(sys.stdin)["cluster"].get("repair_copies_repaired", 0))')
[ "$repaired" -gt 0 ] || fail "no copy was repaired: the kills did not degrade any write"
echo "osd_kill_under_load_test: all checks passed ($repaired copies repaired)"
