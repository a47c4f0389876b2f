#!/usr/bin/env bash
# deploy/peers/ and deploy/compare-peers at tiny size: GlusterFS and MooseFS come up, the same
# workloads run on OrthoFS, both peers and a local directory, every row of the table has a
# number for each, bad input is refused, and nothing is left behind (mounts, daemons,
# glusterd's state in /var/lib/glusterd).
#   peers_test.sh SOURCE_DIR BIN_DIR
set -euo pipefail
src=$1
export ORTHOFS_BIN=$2
work=$(mktemp -d /tmp/orthofs-peers-XXXXXX)
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }
cleanup() {
  "$src/deploy/peers/glusterfs" down --dir "$work/g" > /dev/null 2>&1 || true
  "$src/deploy/peers/moosefs" down --dir "$work/m" > /dev/null 2>&1 || true
  "$src/deploy/local-cluster" down --dir "$work/cp/orthofs" --purge > /dev/null 2>&1 || true
  awk -v w="$work/" 'index($2, w) == 1 {print $2}' /proc/mounts | sort -r | xargs -r umount -l
  rm -rf "$work"
}
trap cleanup EXIT
for p in glusterd mfsmaster mfschunkserver mfsmount bonnie++; do
  command -v "$p" > /dev/null || fail "$p is not installed (deploy/install-deps.sh --peers)"
done
# Both peers refuse loopback addresses: the scripts need one other IPv4 address on this host.
hostname -I | tr ' ' '\n' | grep -Eq '^[0-9.]+$' || fail "this host has no IPv4 address but loopback"

step "bad input"
out=$("$src/deploy/compare-peers" --bogus 2>&1) && fail "--bogus accepted"
grep -q "unknown flag '--bogus'" <<< "$out" || fail "no message: $out"
out=$("$src/deploy/compare-peers" --targets "orthofs cephfs" 2>&1) && fail "target cephfs accepted"
grep -q "unknown target 'cephfs'" <<< "$out" || fail "no message: $out"
out=$("$src/deploy/compare-peers" --repeat 0 2>&1) && fail "--repeat 0 accepted"
out=$("$src/deploy/peers/glusterfs" up 2>&1) && fail "glusterfs up without --dir accepted"
grep -q -- "--dir is required" <<< "$out" || fail "no message: $out"
out=$("$src/deploy/peers/glusterfs" up --dir "$work/g" --bricks 3 2>&1) && fail "3 bricks accepted"
out=$("$src/deploy/peers/moosefs" sideways --dir "$work/m" 2>&1) && fail "moosefs sideways accepted"

glusterd_state() { find /var/lib/glusterd -type f 2> /dev/null | sort | xargs -r md5sum; }
glusterd_state > "$work/glusterd.before"

step "each peer up and down on its own"
"$src/deploy/peers/glusterfs" up --dir "$work/g" --bricks 2 > "$work/g.log" 2>&1 ||
  fail "glusterfs up: $(tail -n 5 "$work/g.log")"
echo hello > "$work/g/mnt/hello" || fail "cannot write to the GlusterFS mount"
[ "$(cat "$work/g/mnt/hello")" = hello ] || fail "GlusterFS read back wrong"
"$src/deploy/peers/glusterfs" down --dir "$work/g" > /dev/null || fail "glusterfs down"
"$src/deploy/peers/moosefs" up --dir "$work/m" --chunkservers 2 > "$work/m.log" 2>&1 ||
  fail "moosefs up: $(tail -n 5 "$work/m.log")"
echo hello > "$work/m/mnt/hello" || fail "cannot write to the MooseFS mount"
[ "$(cat "$work/m/mnt/hello")" = hello ] || fail "MooseFS read back wrong"
"$src/deploy/peers/moosefs" down --dir "$work/m" > /dev/null || fail "moosefs down"

step "compare-peers on all four, tiny"
mkdir -p "$work/tree/sub"
for i in $(seq 1 40); do head -c $((i * 97)) /dev/urandom > "$work/tree/sub/f$i"; done
"$src/deploy/compare-peers" --quick --files 16 --tree "$work/tree" --dir "$work/cp" \
  > "$work/table.md" 2> "$work/compare.err" || {
  cat "$work/table.md" "$work/compare.err"
  fail "compare-peers failed"
}
cat "$work/table.md"
for row in "untar + sync (s)" "cold ls -lR (s)" "cold tar -c, every byte (s)" "rm -rf (s)" \
  "git clone (s)" "cold git status (s)" "create, 1 proc, shared dir (ops/s)" \
  "unlink, 4 proc, separate dir (ops/s)"; do
  grep -Fq "| $row |" "$work/table.md" || fail "no row '$row'"
  grep -F "| $row |" "$work/table.md" |
    grep -Eq '^\| [^|]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+x \| [0-9.]+x \|$' ||
    fail "row '$row' lacks a number: $(grep -F "| $row |" "$work/table.md")"
done
grep -q "OrthoFS mutual TLS" "$work/table.md" || fail "the table does not say how OrthoFS ran"

step "nothing left behind"
! grep -E "glusterfs|fuse.mfs|fuse.orthofs" /proc/mounts | grep -q "$work" ||
  fail "a mount stays: $(grep "$work" /proc/mounts)"
for p in glusterd glusterfsd mfsmaster mfschunkserver mfsmount; do
  ! pgrep -x "$p" > /dev/null || fail "$p still runs"
done
! pgrep -f "orthofs-(osd|mount).*$work" > /dev/null || fail "an OrthoFS daemon still runs"
glusterd_state > "$work/glusterd.after"
cmp -s "$work/glusterd.before" "$work/glusterd.after" || fail "/var/lib/glusterd was not put back"
echo "peers_test: ok"
