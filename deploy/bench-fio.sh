#!/usr/bin/env bash
# The paper's workload with fio, on an OrthoFS mount and a local directory in the same run:
# F files x S written with 1 MiB requests, caches dropped, then read sequentially with
# 16 KiB requests round-robin across the files, then random 16 KiB reads.
#   deploy/bench-fio.sh MOUNT_DIR LOCAL_DIR [--files 5] [--size-mb 100] [--remount MAP]
# Prints one table: MB/s per job and the ratio mount/local. Needs root to drop caches.
# --remount MAP remounts MOUNT_DIR (orthofs-mount --map MAP) before each read job, so the
# client's own object cache is cold too, not only the kernel's page cache.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
mount_dir=$1 local_dir=$2; shift 2
files=5 size_mb=100 remount_map=""
bin=${ORTHOFS_BIN:-$(cd "$(dirname "$0")/.." && pwd)/build/bin}
while [ $# -gt 0 ]; do
  case "$1" in
    --files) files=$2; shift 2 ;;
    --size-mb) size_mb=$2; shift 2 ;;
    --remount) remount_map=$2; shift 2 ;;
    *) echo "bench-fio: unknown flag $1" >&2; exit 2 ;;
  esac
done
command -v fio > /dev/null || { echo "bench-fio: fio is not installed" >&2; exit 1; }

# Empties every cache between phases: the kernel's, and with --remount the client's.
drop_caches() {
  if [ -n "$remount_map" ] && [ "${target:-}" = mount ]; then
    fusermount3 -u "$mount_dir"
    "$bin/orthofs-mount" --map "$remount_map" "$mount_dir"
  fi
  sync
  if [ -w /proc/sys/vm/drop_caches ]; then
    echo 3 > /proc/sys/vm/drop_caches
  else
    echo "bench-fio: not root: page caches NOT dropped, reads may be cached" >&2
  fi
}

source "$(dirname "$0")/fio-job.sh"
run() { fio_job "$1" "$2" "$3" "$4" "$files" "$size_mb"; }

declare -A result
for target in mount local; do
  dir=$mount_dir; [ $target = local ] && dir=$local_dir
  rm -f "$dir"/bench.*
  result[$target,write]=$(run "$dir" seqwrite write 1m)
  drop_caches
  result[$target,read]=$(run "$dir" seqread read 16k)
  drop_caches
  result[$target,randread]=$(run "$dir" randread randread 16k)
  rm -f "$dir"/bench.*
done
printf '%-34s %10s %10s %7s\n' "job ($files x $size_mb MiB)" "orthofs" "local" "ratio"
for job in write read randread; do
  case $job in
    write) label="sequential write, 1 MiB" ;;
    read) label="round-robin seq read, 16 KiB" ;;
    randread) label="random read, 16 KiB" ;;
  esac
  m=${result[mount,$job]} l=${result[local,$job]}
  printf '%-34s %8s MB/s %8s MB/s %6.2fx\n' "$label" "$m" "$l" "$(awk -v m="$m" -v l="$l" 'BEGIN { print (l > 0 ? m / l : 0) }')"
done
