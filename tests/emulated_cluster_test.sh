#!/usr/bin/env bash
# Integration test of deploy/emulated-cluster: OSDs and a client in network namespaces behind
# shaped links, each host installed by deploy/install.sh and its daemons started from the
# installed systemd units (deploy/run-unit), over mutual TLS. Checks the links (tbf, no
# offload), the units' command lines, data through the mount, reconfigure and cold restarts
# keeping the data, traffic counters, bad flags, a failed up cleaning up after itself, and that
# down leaves no namespace, process or mount behind.
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
  for pid in $(ours); do kill -KILL "$pid" 2> /dev/null; done
  for ns in $(ip netns list | awk '{print $1}' | grep "^$name-"); do ip netns delete "$ns"; done
  rm -rf "$D"
  exit $rc
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# Our processes: their command line names $D, or run-unit started them on one of our hosts.
ours() {
  local pid
  pgrep -f -- "$D" || true
  for pid in $(pgrep orthofs || true); do
    tr '\0' '\n' < "/proc/$pid/environ" 2> /dev/null | grep -q "^ORTHOFS_UNIT_ROOT=$D/" &&
      echo "$pid"
  done
}
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
[ -z "$(ours)" ] || fail "a failed up left processes: $(ours | xargs)"

"$emu" up --dir "$cluster" --name "$name" --osds 3 --rate 500mbit --mount "$mnt" \
  --prefetch spa > "$D/up.log" 2>&1 || fail "up: $(cat "$D/up.log")"
[ "$(namespaces)" -eq 5 ] || fail "expected 5 namespaces (switch, client, 3 OSDs): $(ip netns list)"
# Each OSD host is an installed node running its unit's command line over TLS.
for id in 0 1 2; do
  h=$cluster/hosts/o$id
  [ -x "$h/usr/local/bin/orthofs-osd" ] && [ -s "$h/etc/orthofs/tls/osd.$id.key" ] &&
    [ -f "$h/etc/systemd/system/orthofs-osd@.service" ] || fail "host o$id is not installed"
  [ ! -e "$h/etc/orthofs/tls/ca.key" ] || fail "the CA key was installed on host o$id"
  cmdline=$(tr '\0' ' ' < "/proc/$(cat "$cluster/osd-$id.pid")/cmdline")
  [[ "$cmdline" == "/usr/local/bin/orthofs-osd --id $id --map /etc/orthofs/cluster.yaml --data-dir /var/lib/orthofs/osd-$id --tls-dir /etc/orthofs/tls "* ]] ||
    fail "OSD $id was not started by its unit: $cmdline"
  [ -d "$h/var/lib/orthofs/osd-$id" ] || fail "OSD $id's data is not on its host"
done
grep -q "fuse.orthofs" <(grep " $mnt " /proc/mounts) || fail "the client's mount unit did not mount $mnt"
tc -n "$name-o1" qdisc show dev eth0 | grep -q "tbf.*rate 500Mbit" || fail "OSD link not shaped"
tc -n "$name-sw" qdisc show dev o1 | grep -q "tbf.*rate 500Mbit" || fail "switch port not shaped"
nsenter --net="/run/netns/$name-o1" ethtool -k eth0 | grep -q "tcp-segmentation-offload: off" ||
  fail "segmentation offload still on"
# The OSDs are reachable only inside the emulated network, from the client's namespace.
"$emu" exec --dir "$cluster" -- "$ORTHOFS_BIN/orthofs" status --map "$cluster/cluster.yaml" \
  --tls-dir "$cluster/tls" > "$D/status.txt" || fail "status from the client namespace"
grep -q "3 OSDs, 0 down" "$D/status.txt" || fail "status: $(cat "$D/status.txt")"
"$ORTHOFS_BIN/orthofs" status --map "$cluster/cluster.yaml" --tls-dir "$cluster/tls" \
  --timeout-ms 300 > /dev/null 2>&1 &&
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
osd0=$(tr '\0' ' ' < "/proc/$(cat "$cluster/osd-0.pid")/cmdline")
[ "$osd0" = "/usr/local/bin/orthofs-osd --id 0 --map /etc/orthofs/cluster.yaml --data-dir /var/lib/orthofs/osd-0 --tls-dir /etc/orthofs/tls --cache-mb 16 --disk-model hdd --direct-reads " ] ||
  fail "OSD 0 not restarted by its unit with 16 MiB, the hdd model and direct reads: $osd0"
grep -q '^ORTHOFS_OSD_FLAGS="--cache-mb 16 --disk-model hdd --direct-reads"$' \
  "$cluster/hosts/o0/etc/orthofs/osd.env" || fail "osd.env: $(cat "$cluster/hosts/o0/etc/orthofs/osd.env")"
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
[ -z "$(ours)" ] || fail "down left processes: $(ours | xargs)"
[ ! -e "$cluster" ] || fail "down --purge left $cluster"
echo "emulated_cluster_test: all checks passed"
