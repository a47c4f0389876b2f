#!/usr/bin/env bash
# The deployment kit without systemd: the units pass systemd-analyze verify, deploy/install.sh
# installs a node (binaries, units, map, only that node's certificates) and refuses bad input,
# and deploy/run-unit starts three OSDs from their installed unit on loopback over mutual TLS,
# which then serve, and stop cleanly on SIGTERM as systemd would stop them.
#   deploy_units_test.sh SOURCE_DIR BIN_DIR
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 SOURCE_DIR BIN_DIR" >&2; exit 2; }
src=$(cd "$1" && pwd)
bin=$(cd "$2" && pwd)
D=$(mktemp -d "${TMPDIR:-/tmp}/orthofs-units-test.XXXXXX")
pids=()
cleanup() {
  local rc=$? pid
  set +e
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2> /dev/null; done
  rm -rf "$D"
  exit $rc
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }

step "the units pass systemd-analyze verify"
mkdir -p "$D/verify"
# verify checks that ExecStart's program exists: point it at the build.
sed "s|/usr/local/bin/orthofs-osd|$bin/orthofs-osd|" "$src/deploy/systemd/orthofs-osd@.service" \
  > "$D/verify/orthofs-osd@.service"
cp "$src/deploy/systemd/mnt-orthofs.mount" "$D/verify/"
for unit in "$D/verify/orthofs-osd@.service" "$D/verify/mnt-orthofs.mount"; do
  out=$(cd "$D/verify" && systemd-analyze verify "$unit" 2>&1) || fail "verify $unit: $out"
  [ -z "$out" ] || fail "verify $unit complains: $out"
done

step "install.sh refuses bad input"
set +e
out=$("$src/deploy/install.sh" --root "$D/bad" --bogus 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "unknown flag '--bogus'" <<< "$out" || fail "--bogus: $rc $out"
out=$("$src/deploy/install.sh" --root "$D/bad" --bin-dir "$D/nowhere" 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "build first" <<< "$out" || fail "no binaries: $rc $out"
out=$("$src/deploy/install.sh" --root "$D/bad" --bin-dir "$bin" --certs "$D/nocerts" osd.0 2>&1)
rc=$?
[ $rc -eq 1 ] && grep -q "no CA certificate" <<< "$out" || fail "missing certificates: $rc $out"
set -e
[ ! -e "$D/bad" ] || fail "a refused install wrote $D/bad"

step "install three OSD hosts and a client host"
port=$((21000 + RANDOM % 11000))  # below the ephemeral ports (32768..)
{
  echo "epoch: 1"
  echo "osds:"
  for id in 0 1 2; do
    while ss -Htln "sport = :$((port + id))" | grep -q .; do port=$((port + 10)); done
    echo "  - id: $id"
    echo "    address: \"127.0.0.1:$((port + id))\""
  done
} > "$D/cluster.yaml"
"$src/deploy/make-certs.sh" --dir "$D/certs" --osds 3 admin client > /dev/null
for id in 0 1 2; do
  "$src/deploy/install.sh" --root "$D/o$id" --bin-dir "$bin" --map "$D/cluster.yaml" \
    --certs "$D/certs" "osd.$id" --osd-flags "--cache-mb 16 --log-level info" > /dev/null
  h=$D/o$id
  for f in usr/local/bin/orthofs-osd usr/local/bin/orthofs usr/local/bin/mount.orthofs \
    sbin/mount.fuse.orthofs etc/systemd/system/orthofs-osd@.service etc/orthofs/cluster.yaml \
    etc/orthofs/tls/ca.crt "etc/orthofs/tls/osd.$id.crt" "etc/orthofs/tls/osd.$id.key"; do
    [ -e "$h/$f" ] || [ -L "$h/$f" ] || fail "host o$id: no /$f"
  done
  [ "$(readlink "$h/sbin/mount.fuse.orthofs")" = /usr/local/bin/orthofs-mount ] ||
    fail "mount.fuse.orthofs does not link to the installed orthofs-mount"
  [ "$(stat -c %a "$h/etc/orthofs/tls/osd.$id.key")" = 600 ] || fail "key readable by others"
  [ ! -e "$h/etc/orthofs/tls/ca.key" ] || fail "the CA key was installed"
  [ "$(ls "$h/etc/orthofs/tls" | wc -l)" -eq 3 ] || fail "other certificates installed on o$id"
done
"$src/deploy/install.sh" --root "$D/c" --bin-dir "$bin" --map "$D/cluster.yaml" \
  --certs "$D/certs" client --mount-at /srv/ofs --fnso 2 --mount-options cache_mb=64 > /dev/null
unit=$D/c/etc/systemd/system/srv-ofs.mount
grep -qx "Where=/srv/ofs" "$unit" && grep -qx "Options=fnso=2,allow_other,_netdev,tls_dir=/etc/orthofs/tls,cache_mb=64" "$unit" ||
  fail "mount unit: $(cat "$unit")"
# --config-only changes the configuration, not the binaries.
touch -d @0 "$D/o0/usr/local/bin/orthofs-osd"
"$src/deploy/install.sh" --root "$D/o0" --config-only --osd-flags "--cache-mb 8" > /dev/null
[ "$(stat -c %Y "$D/o0/usr/local/bin/orthofs-osd")" = 0 ] || fail "--config-only replaced a binary"
grep -qx 'ORTHOFS_OSD_FLAGS="--cache-mb 8"' "$D/o0/etc/orthofs/osd.env" || fail "osd.env not rewritten"
"$src/deploy/install.sh" --root "$D/o0" --config-only --osd-flags "--cache-mb 16" > /dev/null

step "run-unit starts each OSD the way its unit does"
for id in 0 1 2; do
  "$src/deploy/run-unit" --root "$D/o$id" "$D/o$id/etc/systemd/system/orthofs-osd@.service" "$id" \
    > "$D/osd-$id.log" 2>&1 &
  pids+=($!)
done
up=0
for _ in $(seq 1 100); do
  if "$bin/orthofs" status --map "$D/cluster.yaml" --tls-dir "$D/certs" --timeout-ms 500 \
    > "$D/status.out" 2>&1; then
    up=1
    break
  fi
  sleep 0.2
done
[ $up -eq 1 ] || fail "OSDs not up: $(cat "$D/status.out" "$D"/osd-*.log)"
cmdline=$(tr '\0' ' ' < "/proc/${pids[1]}/cmdline")
[ "$cmdline" = "/usr/local/bin/orthofs-osd --id 1 --map /etc/orthofs/cluster.yaml --data-dir /var/lib/orthofs/osd-1 --tls-dir /etc/orthofs/tls --cache-mb 16 --log-level info " ] ||
  fail "OSD 1's command line is not its unit's: $cmdline"
grep -q "mutual TLS" "$D/osd-1.log" || fail "OSD 1 is not serving TLS: $(cat "$D/osd-1.log")"
[ -d "$D/o1/var/lib/orthofs/osd-1" ] || fail "OSD 1's data is not in its host's /var/lib/orthofs"
echo hello | "$bin/orthofs" put 1/7/0 --map "$D/cluster.yaml" --tls-dir "$D/certs" ||
  fail "put through the unit-started OSDs"
[ "$("$bin/orthofs" get 1/7/0/DATA/REPLICA --map "$D/cluster.yaml" --tls-dir "$D/certs")" = hello ] ||
  fail "get of the replica"

step "SIGTERM, as systemctl stop sends, stops every OSD cleanly"
kill -TERM "${pids[@]}"
for pid in "${pids[@]}"; do
  rc=0
  wait "$pid" || rc=$?
  [ $rc -eq 0 ] || fail "an OSD exited $rc on SIGTERM"
done
pids=()
grep -q "stopped cleanly" "$D/osd-2.log" || fail "OSD 2 did not stop cleanly: $(cat "$D/osd-2.log")"

step "run-unit refuses what it cannot do"
set +e
printf '[Service]\nEnvironmentFile=/etc/orthofs/missing.env\nExecStart=/bin/true\n' > "$D/x.service"
out=$("$src/deploy/run-unit" "$D/x.service" 2>&1); rc=$?
[ $rc -ne 0 ] && grep -q "EnvironmentFile /etc/orthofs/missing.env is missing" <<< "$out" ||
  fail "missing EnvironmentFile: $rc $out"
out=$("$src/deploy/run-unit" --root "$D/nowhere" "$D/x.service" 2>&1); rc=$?
[ $rc -ne 0 ] || fail "a missing root was accepted"
set -e
echo "deploy_units_test: all checks passed"
