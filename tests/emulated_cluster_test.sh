#!/usr/bin/env bash
# Integration test of deploy/emulated-cluster: OSDs and a client in network namespaces behind
# shaped links. Checks the links (tbf, no offload), data through the mount, reconfigure and
# cold restarts keeping the data, traffic counters, bad flags, a failed up cleaning up after
# itself, and that down leaves no namespace, process or mount behind.
#
#   emulated_cluster_test.sh SOURCE_DIR BIN_DIR
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: $0 SOURCE_DIR BIN_DIR" >&2; exit 2; }
src=$(cd "$1" && pwd)
export ORTHOFS_BIN=$2
emu=$src/deploy/emulated-cluster
name=ofsect$$
name=${name:0:10}

D=$(mktemp -d "${TMPDIR:-/tmp}/orthofs-emulated-test.XXXXXX")
cluster=$D/cluster mnt=$D/mnt

cleanup() {
  local rc=$? pid ns
  set +e
  "$emu" down --dir "$cluster" --name "$name" --purge > /dev/null 2>&1
  fusermount3 -uz "$mnt" 2> /dev/null
  for pid in $(pgrep -f -- "$D"); do kill -KILL "$pid" 2> /dev/null; done
  for ns in $(ip netns list | awk '{print $1}' | grep "^$name-"); do ip netns delete "$ns"; done
  rm -rf "$D"
  exit $rc
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
namespaces() { ip netns list | awk '{print $1}' | grep -c "^$name-" || true; }

# Bad flags: a clear message and a non-zero exit, nothing made.
out=$("$emu" up --dir "$cluster" --name "$name" --bogus 2>&1) && fail "--bogus accepted"
grep -q "unknown flag '--bogus'" <<< "$out" || fail "no message for --bogus: $out"
out=$("$emu" up --dir "$cluster" --name "$name" --rate fast 2>&1) && fail "--rate fast accepted"
grep -q "not a tc rate" <<< "$out" || fail "no message for --rate fast: $out"
out=$("$emu" up --dir "$cluster" --name "$name" --osds 1 2>&1) && fail "--osds 1 accepted"
out=$("$emu" cold --dir "$cluster" 2>&1) && fail "cold without a cluster succeeded"
grep -q "no emulated cluster" <<< "$out" || fail "no message for cold without cluster: $out"
[ "$(namespaces)" -eq 0 ] || fail "a refused up left namespaces"

# An up whose OSDs cannot start removes everything it made.
"$emu" up --dir "$cluster" --name "$name" --osds 2 --osd-flags "--no-such-osd-flag" \
  > "$D/failed-up.log" 2>&1 && fail "up with a bad OSD flag succeeded"
grep -q "up failed" "$D/failed-up.log" || fail "no failure message: $(cat "$D/failed-up.log")"
[ "$(namespaces)" -eq 0 ] || fail "a failed up left namespaces: $(ip netns list)"
pgrep -f -- "$cluster" > /dev/null && fail "a failed up left processes"

"$emu" up --dir "$cluster" --name "$name" --osds 3 --rate 500mbit --mount "$mnt" \
  --prefetch spa > "$D/up.log" 2>&1 || fail "up: $(cat "$D/up.log")"
[ "$(namespaces)" -eq 5 ] || fail "expected 5 namespaces (switch, client, 3 OSDs): $(ip netns list)"
tc -n "$name-o1" qdisc show dev eth0 | grep -q "tbf.*rate 500Mbit" || fail "OSD link not shaped"
tc -n "$name-sw" qdisc show dev o1 | grep -q "tbf.*rate 500Mbit" || fail "switch port not shaped"
nsenter --net="/run/netns/$name-o1" ethtool -k eth0 | grep -q "tcp-segmentation-offload: off" ||
  fail "segmentation offload still on"
# The OSDs are reachable only inside the emulated network, from the client's namespace.
"$emu" exec --dir "$cluster" -- "$ORTHOFS_BIN/orthofs" status --map "$cluster/cluster.yaml" \
  > "$D/status.txt" || fail "status from the client namespace"
grep -q "3 OSDs, 0 down" "$D/status.txt" || fail "status: $(cat "$D/status.txt")"
"$ORTHOFS_BIN/orthofs" status --map "$cluster/cluster.yaml" --timeout-ms 300 > /dev/null 2>&1 &&
  fail "OSDs reachable from the host's namespace: the cluster is not isolated"

head -c 5000000 /dev/urandom > "$D/data"
cp "$D/data" "$mnt/data"
sync "$mnt/data"
read -r _ tx0 _ < <("$emu" traffic --dir "$cluster" | awk '$1 == 0')

# Reconfigure (prefetch, cache, fixed window) keeps the data; so does a cold restart.
"$emu" reconfigure --dir "$cluster" --prefetch cor --fixed-window 5 --osd-cache-mb 16 \
  --direct-reads --hdd > "$D/reconf.log" 2>&1 || fail "reconfigure: $(cat "$D/reconf.log")"
grep -q "mode: cor" "$cluster/cluster.yaml" && grep -q "fixed_window: true" "$cluster/cluster.yaml" &&
  grep -q "max_window: 5" "$cluster/cluster.yaml" || fail "map not rewritten: $(cat "$cluster/cluster.yaml")"
pgrep -f -- "--data-dir $cluster/osd-0 --cache-mb 16" > /dev/null || fail "OSD 0 not restarted with 16 MiB"
pgrep -f -- "--data-dir $cluster/osd-0 --cache-mb 16 --disk-model hdd --direct-reads" > /dev/null ||
  fail "OSD 0 not restarted with the hdd model and direct reads: $(pgrep -a orthofs-osd)"
out=$("$emu" reconfigure --dir "$cluster" --osds 4 2>&1) && fail "reconfigure --osds accepted"
grep -q "cannot change --osds" <<< "$out" || fail "no message for reconfigure --osds: $out"
"$emu" cold --dir "$cluster" > "$D/cold.log" 2>&1 || fail "cold: $(cat "$D/cold.log")"
cmp "$D/data" "$mnt/data" || fail "data differs after reconfigure and cold restart"
"$emu" traffic --dir "$cluster" > "$D/traffic.txt"
[ "$(wc -l < "$D/traffic.txt")" -eq 4 ] || fail "traffic: $(cat "$D/traffic.txt")"
# Every byte read came over some OSD's link: together they sent at least the file.
sent=$(awk 'NR > 1 {s += $2} END {print s}' "$D/traffic.txt")
[ "$sent" -ge 5000000 ] || fail "OSDs sent only $sent bytes for a 5 MB read"
read -r _ tx1 _ < <(awk '$1 == 0' "$D/traffic.txt")
[ "$tx1" -ge "$tx0" ] || fail "OSD 0's counter went backwards ($tx0 -> $tx1)"

"$emu" down --dir "$cluster" --purge > "$D/down.log" 2>&1 || fail "down: $(cat "$D/down.log")"
[ "$(namespaces)" -eq 0 ] || fail "down left namespaces: $(ip netns list)"
grep -q " $mnt " /proc/mounts && fail "down left the mount"
pgrep -f -- "$cluster" > /dev/null && fail "down left processes"
[ ! -e "$cluster" ] || fail "down --purge left $cluster"
echo "emulated_cluster_test: all checks passed"
