#!/usr/bin/env bash
# kill -9 of the client in the middle of metadata churn: afterwards orthofs fsck finds no
# dangling entry and collects the orphans, and a remount shows every settled byte intact.
#   fuse_crash_test.sh SOURCE_DIR BIN_DIR
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/mounted_cluster.sh" "$1" "$2" crash

# Settled data: written and closed before the crash.
mkdir "$mnt/settled"
for i in $(seq 1 20); do head -c $((i * 7919)) /dev/urandom > "$work/s$i"; cp "$work/s$i" "$mnt/settled/s$i"; done

churn() {
  local d=$mnt/churn$1 i=0
  mkdir -p "$d/a" "$d/b" 2> /dev/null || return 0
  while true; do
    i=$((i + 1))
    echo "$i" > "$d/a/f$i" 2> /dev/null || return 0
    mkdir "$d/a/d$i" 2> /dev/null || return 0
    mv "$d/a/f$i" "$d/b/f$i" 2> /dev/null || return 0
    mv "$d/a/d$i" "$d/b/d$i" 2> /dev/null || return 0
    ln "$d/b/f$i" "$d/a/h$i" 2> /dev/null || return 0
    [ $((i % 3)) -eq 0 ] && { rm -f "$d/b/f$i" "$d/a/h$i" 2> /dev/null || return 0; }
    [ $((i % 4)) -eq 0 ] && { rmdir "$d/b/d$i" 2> /dev/null || return 0; }
  done
}
# A tree removed right before the crash: its unlinks answered, but the deletion of the files'
# data objects runs in the background (client/deferred_releases.h), and the crash cuts it
# short. Those objects are orphans, which fsck collects.
mkdir "$mnt/doomed"
for i in $(seq 1 300); do head -c 9000 /dev/urandom > "$mnt/doomed/f$i"; done
for c in 1 2 3 4; do churn $c & done
sleep 3
rm -rf "$mnt/doomed" || fail "rm -rf of a tree failed"
# fsync'd data: written, fsync'd and never closed (perl-base holds the descriptor open), then
# the client dies at once: the bytes must survive although the write-back cache would have
# held the last, partly written object for seconds more.
head -c 1500001 /dev/urandom > "$work/synced"
perl -MIO::Handle -e 'open(my $in, "<", $ARGV[0]) or die; open(my $out, ">", $ARGV[1]) or die;
  local $/; my $data = <$in>; print {$out} $data; $out->flush; $out->sync or die "fsync: $!"; print "synced\n";
  STDOUT->flush; sleep 60' "$work/synced" "$mnt/synced" > "$work/synced.out" &
holder=$!
for _ in $(seq 1 100); do grep -q synced "$work/synced.out" && break; sleep 0.1; done
grep -q synced "$work/synced.out" || fail "fsync through the mount did not return"
pid=$(pgrep -f "orthofs-mount.* $mnt" | head -1)
[ -n "$pid" ] || fail "no mount daemon found"
kill -9 "$pid"
kill -9 "$holder" 2> /dev/null || true
wait 2> /dev/null || true
fusermount3 -uz "$mnt"
echo "killed the client (pid $pid) during churn, right after an rm -rf"

out=$("$bin/orthofs" fsck --fnso 1 --grace 0) || { echo "$out"; fail "fsck found dangling entries"; }
echo "$out"
grep -q "^dangling entries: 0$" <<< "$out" || fail "dangling entries"
again=$("$bin/orthofs" fsck --fnso 1 --grace 0 --dry-run)
echo "$again"
grep -q "^orphans: 0 inodes, 0 objects" <<< "$again" || fail "orphans left after collection"
grep -q "^link counts wrong: 0; too high, held .*: 0$" <<< "$again" || fail "link counts still wrong"
grep -q "^directory renames cut short found: 0$" <<< "$again" || fail "a directory rename left unfinished"
grep -q "^deletions cut short between an object's copies found: 0$" <<< "$again" ||
  fail "a deletion cut short between the copies left unfinished"

"$bin/orthofs-mount" --map "$ORTHOFS_MAP" "$mnt"
for i in $(seq 1 20); do cmp "$work/s$i" "$mnt/settled/s$i" || fail "settled file s$i"; done
cmp "$work/synced" "$mnt/synced" || fail "fsync'd file lost bytes in the client crash"
# Every name resolves (no dangling entries seen through the mount either).
find "$mnt" -mindepth 1 > "$work/names"
while read -r name; do stat "$name" > /dev/null || fail "cannot stat $name"; done < "$work/names"
echo "$(wc -l < "$work/names") names resolve after remount"
# And no name the churn may have made resolves unless its directory lists it (an unlink cut
# short between its bucket's two copies used to leave such a name).
python3 - "$mnt" << 'EOF' || fail "a name resolves that its directory does not list"
import os, re, sys
mnt = sys.argv[1]
for c in range(1, 5):
    dirs = [os.path.join(mnt, f"churn{c}", s) for s in ("a", "b")]
    listed = {d: set(os.listdir(d)) if os.path.isdir(d) else set() for d in dirs}
    numbers = [int(m.group(1)) for names in listed.values() for n in names
               if (m := re.fullmatch(r"[fdh](\d+)", n))]
    for d in dirs:
        if not os.path.isdir(d):
            continue
        for i in range(1, max(numbers, default=0) + 2):
            for name in (f"f{i}", f"d{i}", f"h{i}"):
                if name in listed[d]:
                    continue
                try:
                    os.lstat(os.path.join(d, name))
                except FileNotFoundError:
                    continue
                sys.exit(f"{d}/{name} resolves but its directory does not list it")
print("no name resolves that its directory does not list")
EOF
echo "$mnt" > "$cluster/mountpoint"
echo "fuse_crash_test: all checks passed"
