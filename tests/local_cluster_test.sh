#!/usr/bin/env bash
# Integration test of deploy/local-cluster: up/status/down on a temporary directory, with
# the real orthofs-osd and orthofs binaries.
#
#   local_cluster_test.sh SOURCE_DIR BIN_DIR
#
# Exits non-zero with "FAIL: <check>" on the first failed check. Whatever happens, the EXIT
# trap stops the cluster, kills any process still naming the temporary directory and
# removes it.
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: $0 SOURCE_DIR BIN_DIR" >&2; exit 2; }
src=$(cd "$1" && pwd)
export ORTHOFS_BIN=$2
lc=$src/deploy/local-cluster
cli=$ORTHOFS_BIN/orthofs

D=$(mktemp -d "${TMPDIR:-/tmp}/orthofs-local-cluster-test.XXXXXX")
W=$D/work  # test files, inside D so that cleanup removes them too
cluster=$D/cluster
export ORTHOFS_TLS_DIR=$cluster/tls  # the certificates up makes (mutual TLS by default)

cleanup() {
  local rc=$? pid
  set +e
  "$lc" down --dir "$cluster" --purge > /dev/null 2>&1
  "$lc" down --dir "$D/one" --purge > /dev/null 2>&1
  for pid in $(pgrep -f -- "$D"); do
    echo "local_cluster_test: killing leftover process $pid: $(tr '\0' ' ' < "/proc/$pid/cmdline")" >&2
    kill -KILL "$pid" 2> /dev/null
  done
  rm -rf "$D"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'echo "local_cluster_test: command failed (line $LINENO): $BASH_COMMAND" >&2' ERR

fail() {
  echo "local_cluster_test: FAIL: $*" >&2
  exit 1
}
pass() { echo "local_cluster_test: ok: $*"; }

mkdir -p "$W"

# Live orthofs-osd processes whose command line names the cluster directory (zombies have an
# empty command line and do not count).
osd_pids() { pgrep -f -- "orthofs-osd .*$cluster/" | sort -n || true; }
osd_count() { osd_pids | grep -c . || true; }
pid_of() { cat "$cluster/osd-$1.pid"; }
alive() { [ -r "/proc/$1/cmdline" ] && [ -n "$(tr -d '\0' < "/proc/$1/cmdline" 2> /dev/null)" ]; }

# ---- up ----
"$lc" up --osds 3 --dir "$cluster" --cache-mb 16 || fail "up --osds 3 exited $?"
[ -f "$cluster/cluster.yaml" ] || fail "up did not write $cluster/cluster.yaml"
[ "$(osd_count)" -eq 3 ] || fail "up --osds 3: want 3 orthofs-osd processes, have: $(osd_pids | xargs)"
pass "up --osds 3"

# Whether every OSD's listener uses congestion control $1 (accepted connections inherit it):
# ss prints each listening socket, then a line of its details with the algorithm among them.
listeners_use() {
  local port details
  for port in $(sed -n 's/^    address: "[^"]*:\([0-9]*\)"$/\1/p' "$cluster/cluster.yaml"); do
    details=$(ss -tlniH "sport = :$port" || true)
    grep -qw -- "$1" <<< "$details" || { echo "port $port: $details" >&2; return 1; }
  done
}
if grep -qw cubic /proc/sys/net/ipv4/tcp_available_congestion_control &&
  { [ "$(id -u)" -eq 0 ] || grep -qw cubic /proc/sys/net/ipv4/tcp_allowed_congestion_control; }; then
  grep -qx 'tcp_congestion: cubic' "$cluster/cluster.yaml" ||
    fail "a new loopback map lacks tcp_congestion: cubic: $(cat "$cluster/cluster.yaml")"
  listeners_use cubic || fail "OSD listeners do not use cubic"
  pass "new map: tcp_congestion cubic, and the OSDs listen with it"
else
  ! grep -q '^tcp_congestion:' "$cluster/cluster.yaml" || fail "map sets an algorithm the kernel lacks"
  pass "cubic not usable here: the map sets no tcp_congestion"
fi

out=$("$lc" status --dir "$cluster") || fail "status exited $? after up: $out"
[ "$(grep -c 'running' <<< "$out")" -eq 3 ] || fail "status does not show 3 running OSDs: $out"
pass "status shows 3 running"

out=$("$cli" status --map "$cluster/cluster.yaml") || fail "orthofs status exited $?: $out"
[ "$(grep -c ' up ' <<< "$out")" -eq 3 ] || fail "orthofs status does not list 3 OSDs up: $out"
pass "orthofs status exits 0"

for f in ca.crt osd.0.crt osd.2.key admin.crt client.key; do
  [ -s "$cluster/tls/$f" ] || fail "up made no $cluster/tls/$f"
done
out=$("$cli" status --map "$cluster/cluster.yaml" --insecure --timeout-ms 1000) &&
  fail "a plaintext client was served: $out"
[ "$(grep -c ' down ' <<< "$out")" -eq 3 ] || fail "plaintext status should see 3 OSDs down: $out"
pass "mutual TLS by default: certificates made, plaintext refused"

# ---- put/get round trip (binary, with NUL bytes) ----
{ seq 1 5000; printf 'nul\0bytes\0\377\n'; } > "$W/in"
oid=1/77/3
"$cli" put "$oid" --map "$cluster/cluster.yaml" < "$W/in" > "$W/put.out" ||
  fail "orthofs put exited $?: $(cat "$W/put.out")"
for copy in ORIGINAL REPLICA; do
  "$cli" get "$oid/DATA/$copy" --map "$cluster/cluster.yaml" > "$W/got.$copy" ||
    fail "orthofs get $oid/DATA/$copy exited $?"
  cmp -s "$W/in" "$W/got.$copy" || fail "orthofs get $oid/DATA/$copy returned other bytes"
done
pass "put/get round trip"

# ---- up again is idempotent ----
before=$(osd_pids | xargs)
"$lc" up --osds 3 --dir "$cluster" > "$W/up2.out" 2>&1 || fail "second up exited $?: $(cat "$W/up2.out")"
[ "$(osd_count)" -eq 3 ] || fail "second up: want 3 orthofs-osd processes, have: $(osd_pids | xargs)"
[ "$(osd_pids | xargs)" = "$before" ] || fail "second up replaced running OSDs: $before -> $(osd_pids | xargs)"
grep -q '0 OSD(s) started' "$W/up2.out" || fail "second up started OSDs: $(cat "$W/up2.out")"
pass "up is idempotent"

# ---- kill -9 the OSD holding the original; up restarts only it ----
victim=$("$cli" locate --map "$cluster/cluster.yaml" --fnso 1 --fno 77 --offset 3 --count 1 |
  awk 'NR == 3 { print $2 }')
[[ "$victim" =~ ^[0-2]$ ]] || fail "cannot find the original's OSD with orthofs locate: '$victim'"
declare -A old
for id in 0 1 2; do old[$id]=$(pid_of $id); done
kill -KILL "${old[$victim]}"
for _ in $(seq 1 100); do alive "${old[$victim]}" || break; sleep 0.05; done
alive "${old[$victim]}" && fail "OSD $victim (pid ${old[$victim]}) survived kill -9"
[ "$(osd_count)" -eq 2 ] || fail "after kill -9: want 2 orthofs-osd processes, have: $(osd_pids | xargs)"
out=$("$lc" status --dir "$cluster" 2>&1) && fail "status exited 0 with OSD $victim killed: $out"
grep -q "osd $victim *stopped" <<< "$out" || fail "status does not show OSD $victim stopped: $out"

"$lc" up --osds 3 --dir "$cluster" > "$W/up3.out" 2>&1 || fail "up after kill -9 exited $?: $(cat "$W/up3.out")"
grep -q '1 OSD(s) started' "$W/up3.out" || fail "up after kill -9 did not start exactly 1 OSD: $(cat "$W/up3.out")"
[ "$(osd_count)" -eq 3 ] || fail "up after kill -9: want 3 orthofs-osd processes, have: $(osd_pids | xargs)"
for id in 0 1 2; do
  now=$(pid_of $id)
  alive "$now" || fail "OSD $id (pid $now) is not running after up"
  if [ "$id" = "$victim" ]; then
    [ "$now" != "${old[$id]}" ] || fail "OSD $id was not restarted"
  else
    [ "$now" = "${old[$id]}" ] || fail "OSD $id was restarted although it was running (${old[$id]} -> $now)"
  fi
done
for copy in ORIGINAL REPLICA; do
  "$cli" get "$oid/DATA/$copy" --map "$cluster/cluster.yaml" > "$W/got.$copy" ||
    fail "orthofs get $oid/DATA/$copy after restarting OSD $victim exited $?"
  cmp -s "$W/in" "$W/got.$copy" || fail "$oid/DATA/$copy changed after restarting OSD $victim"
done
pass "kill -9 OSD $victim, up restarts only it, the object survives"

# ---- up with one OSD hung: the others stay, the sick one is named, the wait is real ----
for id in 0 1 2; do old[$id]=$(pid_of $id); done
kill -STOP "${old[$victim]}"
start=$SECONDS
ORTHOFS_HEALTH_WAIT=4 "$lc" up --osds 3 --dir "$cluster" > "$W/up-hung.out" 2>&1 &&
  fail "up with OSD $victim hung exited 0: $(cat "$W/up-hung.out")"
took=$((SECONDS - start))
kill -CONT "${old[$victim]}"
for id in 0 1 2; do
  [ "$(pid_of $id)" = "${old[$id]}" ] && alive "${old[$id]}" ||
    fail "up with OSD $victim hung stopped or replaced OSD $id: $(cat "$W/up-hung.out")"
done
grep -q "OSD $victim .*down" "$W/up-hung.out" ||
  fail "up with OSD $victim hung does not name it: $(cat "$W/up-hung.out")"
grep -q "within [0-9]* s" "$W/up-hung.out" || fail "no wait reported: $(cat "$W/up-hung.out")"
reported=$(sed -n 's/.*within \([0-9]*\) s.*/\1/p' "$W/up-hung.out" | head -1)
[ "$reported" -le "$took" ] && [ "$took" -le 20 ] ||
  fail "up reported $reported s and took $took s for a 4 s wait: $(cat "$W/up-hung.out")"
"$lc" up --osds 3 --dir "$cluster" > "$W/up-after.out" 2>&1 ||
  fail "up after SIGCONT exited $?: $(cat "$W/up-after.out")"
pass "up with an OSD hung leaves the others running and names the sick one"

# ---- down ----
"$lc" down --dir "$cluster" || fail "down exited $?"
left=$(pgrep -af -- "$D" || true)
[ -z "$left" ] || fail "processes still name $D after down: $left"
out=$("$lc" status --dir "$cluster" 2>&1) && fail "status exited 0 after down: $out"
[ "$(grep -c 'stopped' <<< "$out")" -eq 3 ] || fail "status after down does not show 3 stopped: $out"
[ -f "$cluster/cluster.yaml" ] || fail "down without --purge removed the map"
pass "down stops every process"

# ---- up on the existing directory restarts the same cluster with its data ----
# (and --tcp-congestion rewrites the stopped cluster's map; the restarted OSDs use it)
"$lc" up --dir "$cluster" --tcp-congestion reno > "$W/up4.out" 2>&1 ||
  fail "up after down exited $?: $(cat "$W/up4.out")"
[ "$(osd_count)" -eq 3 ] || fail "up after down: want 3 orthofs-osd processes, have: $(osd_pids | xargs)"
grep -qx 'tcp_congestion: reno' "$cluster/cluster.yaml" || fail "map not rewritten to reno"
listeners_use reno || fail "OSD listeners do not use reno after the rewrite"
rc=0
"$lc" up --dir "$cluster" --tcp-congestion default > "$W/cc.out" 2>&1 || rc=$?
[ $rc -ne 0 ] && grep -q "down' first" "$W/cc.out" ||
  fail "changing tcp_congestion of a running cluster: exit $rc: $(cat "$W/cc.out")"
grep -qx 'tcp_congestion: reno' "$cluster/cluster.yaml" || fail "a refused change touched the map"
pass "--tcp-congestion rewrites a stopped cluster's map and is refused while it runs"
"$cli" get "$oid" --map "$cluster/cluster.yaml" > "$W/got.again" || fail "get after down/up exited $?"
cmp -s "$W/in" "$W/got.again" || fail "object changed across down/up"
"$lc" down --dir "$cluster" --purge > /dev/null || fail "down --purge exited $?"
[ ! -e "$cluster" ] || fail "down --purge left $cluster"
left=$(pgrep -af -- "$D" || true)
[ -z "$left" ] || fail "processes still name $D after down --purge: $left"
pass "up after down keeps the data; down --purge removes the directory"

# ---- usage errors ----
rc=0
"$lc" up --osds 1 --dir "$D/one" > "$W/one.out" 2>&1 || rc=$?
[ $rc -ne 0 ] || fail "up --osds 1 succeeded"
grep -q 'at least 2' "$W/one.out" || fail "up --osds 1 does not explain why: $(cat "$W/one.out")"
[ -z "$(pgrep -f -- "$D/one" || true)" ] || fail "up --osds 1 started processes"
pass "up --osds 1 fails (exit $rc)"

rc=0
"$lc" up --bogus --dir "$D/one" > "$W/bogus.out" 2>&1 || rc=$?
[ $rc -eq 2 ] || fail "unknown flag: want exit 2, got $rc: $(cat "$W/bogus.out")"
grep -q -- '--bogus' "$W/bogus.out" || fail "unknown flag not named: $(cat "$W/bogus.out")"
rc=0
"$lc" frobnicate > "$W/cmd.out" 2>&1 || rc=$?
[ $rc -eq 2 ] || fail "unknown command: want exit 2, got $rc: $(cat "$W/cmd.out")"
rc=0
"$lc" status --dir "$D/one" --tcp-congestion reno > "$W/cc.out" 2>&1 || rc=$?
[ $rc -ne 0 ] && grep -q "is for up" "$W/cc.out" || fail "status --tcp-congestion: exit $rc"
rc=0
"$lc" up --dir "$D/one" --tcp-congestion no_such_cc > "$W/cc.out" 2>&1 || rc=$?
[ $rc -ne 0 ] && grep -q "offers" "$W/cc.out" ||
  fail "an algorithm the kernel lacks: exit $rc: $(cat "$W/cc.out")"
pass "unknown flag and command exit 2; an unknown algorithm is refused"

# An OSD that cannot start (a flag it does not know): up says which one and shows its log,
# at once rather than after the 30 s health wait, and leaves nothing running.
rc=0
"$lc" up --osds 2 --dir "$D/broken" --osd-flags "--no-such-osd-flag" > "$W/broken.out" 2>&1 ||
  rc=$?
[ $rc -ne 0 ] || fail "up with OSDs that cannot start succeeded"
grep -q "OSD [01] (pid [0-9]*) exited" "$W/broken.out" || fail "no exited OSD named: $(cat "$W/broken.out")"
grep -q -- "no-such-osd-flag" "$W/broken.out" || fail "the OSD's log not shown: $(cat "$W/broken.out")"
! grep -q "not healthy after" "$W/broken.out" || fail "up waited out the health wait: $(cat "$W/broken.out")"
[ -z "$(pgrep -f -- "$D/broken" || true)" ] || fail "up left processes of the broken cluster"
"$lc" down --dir "$D/broken" --purge > /dev/null 2>&1 || true
pass "up with an OSD that exits at once fails fast with its log"

# An OSD that exited but was not reaped yet (a zombie: its parent, `up`, is gone, and a
# sandbox's init may reap late) is stopped: `down` must not wait 10 s for it nor kill it.
(
  bin=$ORTHOFS_BIN tool_tls=()
  source "$src/deploy/cluster-lib.sh"
  # A parent that never reaps its child, which exits at once. It lives until killed below (or
  # when this subshell fails): a parent that exited on its own under load let init reap the
  # zombie between the checks.
  python3 -c 'import os, time; os.fork() or os._exit(0); time.sleep(120)' &
  parent=$!
  trap 'kill "$parent" 2> /dev/null || true' EXIT
  zombie="" state=""
  for _ in $(seq 1 50); do
    zombie=$(pgrep -P "$parent" || true)
    state=$([ -n "$zombie" ] && sed 's/^.*) //' "/proc/$zombie/stat" | cut -d' ' -f1 || true)
    [ "$state" = Z ] && break
    sleep 0.1
  done
  [ "$state" = Z ] || fail "no zombie to test with (child '$zombie', state '$state')"
  kill -0 "$zombie" || fail "kill -0 fails on a zombie: the check below proves nothing"
  ! cluster_process_alive "$zombie" || fail "a zombie counts as a running process"
  cluster_process_alive "$parent" || fail "a running process does not count"
  kill "$parent"
)
pass "an exited, unreaped OSD counts as stopped"

echo "local_cluster_test: all checks passed"
