#!/usr/bin/env bash
# A hung OSD, not a dead one: for each of 4 OSDs in turn, SIGSTOP for 3 s and SIGCONT, while a
# small-file loop (create, 300 KiB write, fsync, read back, unlink), `ls -l` of a 200-entry
# directory and a sequential read of a 48 MiB file run on the mount. Every operation completes
# with the right bytes; the mount finds the stopped OSD silent (not at a deadline); after it goes
# on, `orthofs repair` leaves no record and `orthofs scrub` finds two matching copies of every
# object.
#   osd_stall_test.sh SOURCE_DIR BIN_DIR
set -euo pipefail
cluster_osds=4
source "$(dirname "${BASH_SOURCE[0]}")/mounted_cluster.sh" "$1" "$2" osdstall
worker=$src/deploy/stall_worker.py
stopped=""
resume() { [ -z "$stopped" ] || kill -CONT "$stopped" 2> /dev/null || true; stopped=""; }
trap 'resume; cleanup' EXIT

osd_pid() { cat "$cluster/osd-$1.pid"; }
# No failed operation, at least `min` done, in worker output $1.
check_ops() {
  python3 - "$1" "$2" << 'EOF' || fail "$1: $(head -c 2000 "$1")"
import json, sys
r = json.load(open(sys.argv[1]))
ok = not r["errors"] and sum(1 for o in r["ops"] if o[2]) >= int(sys.argv[2])
sys.exit(0 if ok else 1)
EOF
}

mkdir -p "$mnt/loop" "$mnt/listing"
python3 - "$mnt/listing" << 'EOF'
import os, sys
for i in range(200):
    open(os.path.join(sys.argv[1], f"entry-{i:03d}"), "w").close()
EOF
python3 "$worker" fill "$mnt/big" 48

for victim in 0 1 2 3; do
  step "OSD $victim stopped for 3 s under the loop, ls -l and a sequential read"
  sync
  echo 3 > /proc/sys/vm/drop_caches 2> /dev/null || true
  python3 "$worker" loop "$mnt/loop" 6 "$work/loop$victim.json" &
  loop=$!
  python3 "$worker" list "$mnt/listing" 6 "$work/list$victim.json" &
  list=$!
  python3 "$worker" read "$mnt/big" "$work/read$victim.json" &
  read=$!
  sleep 1.5
  stopped=$(osd_pid "$victim")
  kill -STOP "$stopped"
  sleep 3
  resume
  wait "$loop" "$list" "$read" || fail "a worker failed"
  check_ops "$work/loop$victim.json" 5
  check_ops "$work/list$victim.json" 5
  python3 - "$work/read$victim.json" $((48 << 20)) << 'EOF' || fail "read: $(head -c 2000 "$work/read$victim.json")"
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if not r["errors"] and r["bytes"] == int(sys.argv[2]) else 1)
EOF
  # The loop writes to every OSD within the stall: the mount must have found this one silent.
  grep -q "OSD $victim (.*) marked down (no answer for .* nor to a ping)" "$cluster/mount.log" ||
    fail "the mount never found OSD $victim silent: $(tail -n 20 "$cluster/mount.log")"

  step "OSD $victim going on: repair, scrub"
  expect_repaired_and_scrubbed
done
echo "PASS"
