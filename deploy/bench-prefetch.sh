#!/usr/bin/env bash
# The paper's read experiment ([Sui 2010] §4) for each prefetch mode, on loopback: per mode a
# fresh cluster (local-cluster up --prefetch MODE), F files x S MiB written with 1 MiB
# requests, then with every cache cold (client remounted, OSDs restarted, kernel caches
# dropped) the files read round-robin with 16 KiB requests, sequentially and randomly.
#   deploy/bench-prefetch.sh [--osds 6] [--files 5] [--size-mb 100] [--modes "none spa cor"]
#                            [--dir DIR] [--osd-flags "--disk-model hdd ..."]
# Prints MB/s per mode and job, and the OSD-to-OSD messages each read job caused. The client
# is the paper's (read_ahead=0: each object fetched when the reader asks), so the modes differ
# by what the OSDs do alone. Needs root (drop caches) and a built tree.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${ORTHOFS_BIN:-$(dirname "$here")/build/bin}
osds=6 files=5 size_mb=100 modes="none spa cor" dir=/tmp/orthofs-bench-prefetch osd_flags="" 
while [ $# -gt 0 ]; do
  case "$1" in
    --osds) osds=$2; shift 2 ;;
    --files) files=$2; shift 2 ;;
    --size-mb) size_mb=$2; shift 2 ;;
    --modes) modes=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --osd-flags) osd_flags=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-prefetch: unknown flag $1 (see --help)" >&2; exit 2 ;;
  esac
done
command -v fio > /dev/null || { echo "bench-prefetch: fio is not installed" >&2; exit 1; }
[ -w /proc/sys/vm/drop_caches ] || { echo "bench-prefetch: needs root to drop caches" >&2; exit 1; }
source "$here/fio-job.sh"
cluster=$dir/cluster mnt=$dir/mnt
cleanup() { "$here/local-cluster" down --dir "$cluster" --purge > /dev/null 2>&1 || true; }
trap cleanup EXIT

# Every cache cold: the client's (remount), the OSDs' (restart), the kernel's.
cold_start() {
  "$here/local-cluster" down --dir "$cluster" > /dev/null
  sync
  echo 3 > /proc/sys/vm/drop_caches
  "$here/local-cluster" up --dir "$cluster" --mount "$mnt" --mount-options read_ahead=0 > /dev/null
}

osd_messages() {
  "$bin/orthofs" stats --map "$cluster/cluster.yaml" --tls-dir "$cluster/tls" --json |
    grep -o '"cluster":{[^}]*}' | grep -o '"osd_messages_out":[0-9]*' | cut -d: -f2
}

declare -A result
for mode in $modes; do
  cleanup
  "$here/local-cluster" up --osds "$osds" --dir "$cluster" --mount "$mnt" --prefetch "$mode" \
    --mount-options read_ahead=0 --osd-flags "$osd_flags" > /dev/null
  result[$mode,write]=$(fio_job "$mnt" seqwrite write 1m "$files" "$size_mb")
  for job in read randread; do
    cold_start
    result[$mode,$job]=$(fio_job "$mnt" "$job" "$job" 16k "$files" "$size_mb")
    result[$mode,$job,osd]=$(osd_messages)
  done
done
printf '%-6s %14s %22s %14s %22s\n' "mode" "write MB/s" "seq read MB/s (OSD msgs)" \
  "" "random read MB/s (OSD msgs)"
for mode in $modes; do
  printf '%-6s %14s %14s %7s %14s %7s\n' "$mode" "${result[$mode,write]}" \
    "${result[$mode,read]}" "(${result[$mode,read,osd]})" \
    "${result[$mode,randread]}" "(${result[$mode,randread,osd]})"
done
