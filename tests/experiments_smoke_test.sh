#!/usr/bin/env bash
# Smoke run of deploy/run-experiments ([Sui 2010] Figures 8-12 at tiny size on the emulated
# cluster): every figure's CSV has its rows with positive throughputs, the plots exist, and
# nothing is left behind (namespaces, mounts, processes).
#
#   experiments_smoke_test.sh SOURCE_DIR BIN_DIR
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: $0 SOURCE_DIR BIN_DIR" >&2; exit 2; }
src=$(cd "$1" && pwd)
export ORTHOFS_BIN=$2
name=ofsxs$$
name=${name:0:10}
D=$(mktemp -d "${TMPDIR:-/tmp}/orthofs-experiments-test.XXXXXX")
cleanup() {
  local rc=$? pid ns log
  set +e
  if [ $rc -ne 0 ]; then
    # What failed, while the cluster's own logs still exist.
    echo "--- run.log:" >&2
    tail -n 30 "$D/out/run.log" >&2
    for log in "$D"/work/cluster/mount.log "$D"/work/cluster/osd-*.log; do
      [ -s "$log" ] && { echo "--- $log:" >&2; tail -n 15 "$log" >&2; }
    done
  fi
  "$src/deploy/emulated-cluster" down --dir "$D/work/cluster" --name "$name" --purge \
    > /dev/null 2>&1
  for pid in $(pgrep -f -- "$D"); do kill -KILL "$pid" 2> /dev/null; done
  for ns in $(ip netns list | awk '{print $1}' | grep "^$name-"); do ip netns delete "$ns"; done
  rm -rf "$D"
  exit $rc
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$src/deploy/run-experiments" --scale smoke --out "$D/out" --work "$D/work" --name "$name" \
  || fail "run-experiments failed"

# rows FILE N: N data rows whose third column (MB/s or packets) is a positive number.
rows() {
  local file=$D/out/$1 want=$2 got
  [ -f "$file" ] || fail "no $1"
  got=$(tail -n +2 "$file" | wc -l)
  [ "$got" -eq "$want" ] || fail "$1 has $got rows, want $want: $(cat "$file")"
  tail -n +2 "$file" | awk -F, -v f="$1" '!($3 > 0) { print "FAIL: " f ": " $0; bad = 1 }
                                          END { exit bad }' >&2 || exit 1
}
rows fig8.csv 4            # {spa, cor} x {serial, multi}
rows fig9.csv 6            # 2 cache sizes x {none, spa, cor}
rows fig10.csv 4           # 2 windows x {seq, random}
rows fig11.csv 6           # 2 cluster sizes x {none, spa, cor}
# {spa, cor} x 6 OSDs; an OSD holding nothing of the two small files may send nothing, but the
# OSDs together must have sent the files.
[ "$(tail -n +2 "$D/out/fig12-totals.csv" | wc -l)" -eq 12 ] ||
  fail "fig12-totals.csv: $(cat "$D/out/fig12-totals.csv")"
for mode in spa cor; do
  sent=$(awk -F, -v m=$mode '$1 == m { s += $4 } END { print s + 0 }' "$D/out/fig12-totals.csv")
  [ "$sent" -ge 2097152 ] || fail "fig12-totals.csv: the $mode OSDs sent only $sent bytes"
done
grep -q '^spa,1,' "$D/out/fig12.csv" && grep -q '^cor,1,' "$D/out/fig12.csv" ||
  fail "fig12.csv has no per-second samples: $(cat "$D/out/fig12.csv")"
for png in fig8 fig9 fig10 fig11 fig12-packets fig12-bytes; do
  [ -s "$D/out/$png.png" ] || fail "no plot $png.png"
  [ "$(head -c 4 "$D/out/$png.png" | tail -c 3)" = PNG ] || fail "$png.png is not a PNG"
done

[ -z "$(ip netns list | awk '{print $1}' | grep "^$name-")" ] || fail "namespaces left: $(ip netns list)"
grep -q " $D/work/mnt " /proc/mounts && fail "mount left behind"
pgrep -f -- "$D/work" > /dev/null && fail "processes left behind"
echo "experiments_smoke_test: all checks passed"
