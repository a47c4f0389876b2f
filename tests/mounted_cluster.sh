# Sourced by the shell integration tests: a 3-OSD local cluster with namespace 1 mounted, in a
# fresh directory that is torn down (unmount, processes, files) however the test ends.
#   source mounted_cluster.sh SOURCE_DIR BIN_DIR NAME
# Sets src, bin, work, cluster, mnt, ORTHOFS_BIN, ORTHOFS_MAP and ORTHOFS_TLS_DIR (the cluster
# runs mutual TLS, as local-cluster does by default); defines fail and step.
# Optional, set before sourcing: before_cluster_up (a function run before the cluster starts,
# e.g. to mount a small file system as an OSD's data dir), cluster_osd_flags, cluster_osds
# (default 3) and cluster_mount_options (orthofs-mount -o, through local-cluster).
src=$1
export ORTHOFS_BIN=$2
bin=$2
work=$(mktemp -d "/tmp/orthofs-$3-XXXXXX")
cluster=$work/cluster
mnt=$work/mnt
cleanup() {
  jobs -p | xargs -r kill -9 2> /dev/null || true
  "$src/deploy/local-cluster" down --dir "$cluster" > /dev/null 2>&1 || true
  grep -q " $mnt fuse" /proc/mounts && fusermount3 -uz "$mnt"
  pkill -KILL -f "$work" 2> /dev/null || true
  # File systems a test mounted under its directory (deepest first).
  awk -v w="$work/" 'index($2, w) == 1 {print $2}' /proc/mounts | sort -r | xargs -r umount -l
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }
# expect_enospc_write FILE MIB: writing MIB MiB to FILE (fsynced) fails with ENOSPC, within
# 120 s (not a hang, not another error).
expect_enospc_write() {
  local status=0
  timeout 120 dd if=/dev/urandom of="$1" bs=1M count="$2" conv=fsync 2> "$work/dd.err" ||
    status=$?
  [ "$status" -ne 124 ] || fail "a write of $2 MiB to $1 hung on a full disk"
  [ "$status" -ne 0 ] || fail "$2 MiB fit in $1 on a full disk"
  grep -q "No space left on device" "$work/dd.err" || fail "not ENOSPC: $(cat "$work/dd.err")"
}
# `orthofs repair` leaves no record, then `orthofs scrub` finds two matching copies of every
# object of namespace 1 (it names the copies it had to rewrite when not).
expect_repaired_and_scrubbed() {
  "$bin/orthofs" repair --timeout-ms 120000 > "$work/repair.out" ||
    fail "records left: $(cat "$work/repair.out")"
  "$bin/orthofs" scrub --fnso 1 --json --timeout-ms 60000 > "$work/scrub.out" \
    2> "$work/scrub.log" || fail "scrub failed: $(cat "$work/scrub.out" "$work/scrub.log")"
  python3 - "$work/scrub.out" << 'EOF' || fail "copies differ after repair: $(cat "$work/scrub.out")"
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if r["objects"] > 0 and r["matched"] == r["objects"] else 1)
EOF
}

if declare -F before_cluster_up > /dev/null; then before_cluster_up; fi
"$src/deploy/local-cluster" up --osds "${cluster_osds:-3}" --dir "$cluster" --mount "$mnt" \
  ${cluster_osd_flags:+--osd-flags "$cluster_osd_flags"} \
  ${cluster_mount_options:+--mount-options "$cluster_mount_options"} > /dev/null
export ORTHOFS_MAP=$cluster/cluster.yaml
export ORTHOFS_TLS_DIR=$cluster/tls
