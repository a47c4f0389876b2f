#!/usr/bin/env bash
# Real programs on a real mount of a 3-OSD local cluster: tar + diff -r of a source tree,
# random files of random sizes, git, fio --verify, bonnie++, dbench, SQLite, cc and make,
# remount, and both copies of a sample of objects where placement says they are.
#   fuse_programs_test.sh SOURCE_DIR BIN_DIR
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/mounted_cluster.sh" "$1" "$2" programs

step "tar of /usr/include/linux extracted into the mount, diff -r against the source"
tar -C /usr/include -cf "$work/tree.tar" linux
mkdir "$mnt/tree"
tar -C "$mnt/tree" -xf "$work/tree.tar"
diff -r /usr/include/linux "$mnt/tree/linux" || fail "extracted tree differs"
n=$(find "$mnt/tree" -type f | wc -l)
[ "$n" -eq "$(find /usr/include/linux -type f | wc -l)" ] || fail "file count differs"
echo "   $n files identical"

step "random files of random sizes (0 B .. 40 MiB, unaligned) copied in and compared"
mkdir "$work/random" "$mnt/random"
RANDOM=42
sizes="0 1 4095 131071 131072 131073 1000001 $((40 * 1024 * 1024 + 17))"
for i in $(seq 1 6); do sizes="$sizes $(( (RANDOM * 32768 + RANDOM) % (3 * 1024 * 1024) ))"; done
for s in $sizes; do
  head -c "$s" /dev/urandom > "$work/random/f$s"
  cp "$work/random/f$s" "$mnt/random/f$s"
done
for s in $sizes; do
  cmp "$work/random/f$s" "$mnt/random/f$s" || fail "file of $s bytes differs"
  [ "$(stat -c %s "$mnt/random/f$s")" -eq "$s" ] || fail "size of f$s"
done
echo "   sizes: $sizes"

step "the mount's connections to the OSDs use the map's TCP congestion control"
want=$(sed -n 's/^tcp_congestion: //p' "$ORTHOFS_MAP")
if [ -z "$want" ]; then
  echo "   the map sets none (cubic not offered to this user here): skipped"
else
  mount_pid=$(pgrep -f -- "orthofs-mount .*$mnt" | head -1 || true)
  [ -n "$mount_pid" ] || fail "no orthofs-mount process for $mnt"
  # ss prints each socket's process, then a line of its details, the algorithm among them.
  details=$(ss -tinpH state established |
    awk -v p="pid=$mount_pid," 'index($0, p) { getline; print }' || true)
  connections=$(grep -c . <<< "$details" || true)
  [ "$connections" -ge 3 ] || fail "the mount has $connections connections, want 3 or more: $details"
  [ "$(grep -cw -- "$want" <<< "$details" || true)" -eq "$connections" ] ||
    fail "mount connections not all $want: $details"
  echo "   $connections connections, all $want"
fi

step "git init, commit, fsck inside the mount"
(
  cd "$mnt" && mkdir repo && cd repo
  git init -q . && git config user.email t@t && git config user.name t
  cp -r "$mnt/tree/linux/netfilter" . && git add . && git commit -qm one
  echo change >> netfilter/x_tables.h && git commit -qam two
  git fsck --strict 2>&1 | tee "$work/fsck.log"
  [ "$(git rev-list --count HEAD)" -eq 2 ]
) || fail "git"

step "fio --verify=md5: sequential and random write, then verify"
if command -v fio > /dev/null; then
  for rw in write randwrite; do
    fio --name=v --directory="$mnt" --rw=$rw --bs=16k --size=24m --verify=md5 \
      --do_verify=1 --verify_fatal=1 --ioengine=psync --output="$work/fio.$rw" > /dev/null ||
      { cat "$work/fio.$rw"; fail "fio $rw"; }
    rm -f "$mnt"/v.*
  done
  echo "   verified"
else
  fail "fio not installed (deploy/install-deps.sh installs it)"
fi

step "bonnie++ small run"
if command -v bonnie++ > /dev/null; then
  mkdir "$mnt/bonnie"
  # -f: no per-character phases (a million one-byte FUSE writes measure FUSE, not OrthoFS).
  bonnie++ -d "$mnt/bonnie" -s 64m -r 32 -n 1:0:0:4 -f -u root -q > "$work/bonnie.csv" 2> "$work/bonnie.err" ||
    { cat "$work/bonnie.err"; fail "bonnie++"; }
  echo "   completed"
else
  fail "bonnie++ not installed (deploy/install-deps.sh installs it)"
fi

step "dbench: a file server's mix (creates, renames, unlinks, listings, locks, fsync)"
if command -v dbench > /dev/null; then
  mkdir "$mnt/dbench"
  # Exits non-zero at the first operation whose outcome differs from the load file's.
  dbench -D "$mnt/dbench" -t 10 2 > "$work/dbench.log" 2>&1 ||
    { tail -20 "$work/dbench.log"; fail "dbench"; }
  ! grep -q ERROR "$work/dbench.log" || { grep ERROR "$work/dbench.log" | head; fail "dbench errors"; }
  grep -q '^Throughput' "$work/dbench.log" || { tail -20 "$work/dbench.log"; fail "dbench did not finish"; }
  echo "   $(grep '^Throughput' "$work/dbench.log")"
else
  fail "dbench not installed (deploy/install-deps.sh installs it)"
fi

step "a database's files: SQLite (rollback journal and WAL, fsync per commit) as on a local dir"
mkdir "$mnt/db" "$work/db"
python3 "$src/tests/sqlite_workload.py" "$work/db" > "$work/db.local" || fail "sqlite on the local dir"
python3 "$src/tests/sqlite_workload.py" "$mnt/db" > "$work/db.mount" || fail "sqlite on the mount"
[ "$(grep -c ' ok ' "$work/db.mount")" -eq 2 ] || { cat "$work/db.mount"; fail "integrity check"; }
diff "$work/db.local" "$work/db.mount" || fail "the databases differ from the local dir's"
cat "$work/db.mount" | sed 's/^/   /'

step "a compiler and make: build, nothing to redo, one changed source rebuilt"
mkdir "$mnt/cc"
printf '#include "util.h"\nint main(void) { return print_answer(); }\n' > "$mnt/cc/main.c"
printf 'int print_answer(void);\n' > "$mnt/cc/util.h"
printf '#include <stdio.h>\n#include "util.h"\nint print_answer(void) { puts("one"); return 0; }\n' \
  > "$mnt/cc/util.c"
printf 'prog: main.o util.o\n\tcc -o $@ $^\n%%.o: %%.c util.h\n\tcc -O2 -c $<\n' > "$mnt/cc/Makefile"
make -s -C "$mnt/cc" -j2 || fail "make"
[ "$("$mnt/cc/prog")" = one ] || fail "the built program"
make -q -C "$mnt/cc" || fail "make after a build wants to redo something (mtimes)"
sleep 1  # the change a second after the build: newer than the objects at any timestamp granularity
sed -i 's/"one"/"two"/' "$mnt/cc/util.c"
out=$(make -C "$mnt/cc" 2>&1) || fail "make after a change: $out"
grep -q "util.c" <<< "$out" && ! grep -q "main.c" <<< "$out" || fail "not only util.c rebuilt: $out"
[ "$("$mnt/cc/prog")" = two ] || fail "the rebuilt program"

step "placement: object 0 of a file is on the OSDs locate names, both copies equal"
f=$mnt/random/f1000001
fno=$(stat -c %i "$f")
line=$("$bin/orthofs" locate --fno "$fno" --count 1 | tail -1)
"$bin/orthofs" stat "1/$fno/0" > "$work/stat.txt"
orig_osd=$(awk '{print $2}' <<< "$line")
repl_osd=$(awk '{print $3}' <<< "$line")
grep -q "ORIGINAL on OSD $orig_osd:" "$work/stat.txt" || fail "original not on OSD $orig_osd"
grep -q "REPLICA on OSD $repl_osd:" "$work/stat.txt" || fail "replica not on OSD $repl_osd"
"$bin/orthofs" get "1/$fno/0/DATA/ORIGINAL" > "$work/o0"
"$bin/orthofs" get "1/$fno/0/DATA/REPLICA" > "$work/r0"
cmp "$work/o0" "$work/r0" || fail "copies differ"
head -c 131072 "$f" | cmp - "$work/o0" || fail "object 0 differs from the file's first 128 KiB"

step "unmount, remount the way mount(8) runs the helper: every byte intact"
fusermount3 -u "$mnt"
"$bin/mount.fuse.orthofs" "$ORTHOFS_MAP" "$mnt" -o rw,fnso=1,_netdev
diff -r /usr/include/linux "$mnt/tree/linux" || fail "tree differs after remount"
for s in $sizes; do cmp "$work/random/f$s" "$mnt/random/f$s" || fail "f$s after remount"; done
python3 "$src/tests/sqlite_workload.py" "$mnt/db" --check > "$work/db.again" || fail "sqlite after remount"
diff "$work/db.local" "$work/db.again" || fail "the databases differ after remount"
[ "$("$mnt/cc/prog")" = two ] || fail "the program built in the mount, after remount"
echo "$mnt" > "$cluster/mountpoint"

echo "fuse_programs_test: all checks passed"
