#!/usr/bin/env bash
# Real fio, bonnie++ and dbench on an OrthoFS mount and a local directory (or any two directories:
# a GlusterFS or MooseFS mount works the same) in the same run, printed as one table.
#   deploy/compare-fs.sh MOUNT_DIR LOCAL_DIR [--files 5] [--size-mb 100] [--remount MAP]
#                        [--mount-flags "..."] [--admin-flags "..."]
#                        [--bonnie-mb 1024] [--bonnie-files 16]
#                        [--no-fio] [--no-bonnie] [--repeat 1]
#                        [--dbench SECONDS] [--dbench-clients 4] [--names "orthofs local"]
# fio: F files x S MiB (the paper's workload), synchronous I/O, round-robin across the files:
# sequential and random, read and write, 16 KiB and 1 MiB requests; caches dropped before
# every read job. bonnie++ -s BONNIE_MB (-r half of it) -n BONNIE_FILES x 1024: block write,
# rewrite, block read, random seeks, and file creates/stats/deletes per second (-f: without
# the per-character tests, which measure the C library more than the file system).
# --dbench S also runs dbench (a file server's mix of creates, renames, unlinks, listings,
# locks, small reads and writes, fsync) for S seconds with --dbench-clients processes: MB/s and
# the mean latency of its most frequent operations, in ms.
# --remount MAP remounts MOUNT_DIR (orthofs-mount --map MAP) before each read job and empties
# the OSDs' caches (orthofs drop-caches --map MAP), so the client's object cache and the OSDs'
# are cold too, not only the kernel's page cache; --mount-flags are more orthofs-mount flags
# for it (e.g. --insecure for a plaintext cluster), --admin-flags more orthofs flags (the admin
# certificate: --tls-dir DIR; default $ORTHOFS_TLS_DIR or /etc/orthofs/tls; or --insecure). --repeat N runs
# every fio job N times per directory and prints the median, then the lowest and highest run:
# on a small machine one run of a job can differ from the next by 15 %. The two directories
# take turns run by run (ABBA...), so that a machine whose speed drifts during the benchmark
# drifts for both alike; the share of this machine's CPU time its host took for other guests
# during each side's fio runs (steal, from /proc/stat) is printed under the table: CPU-bound
# file systems (FUSE, replication over loopback) lose more to it than a local directory does.
# Needs root to drop caches (says so otherwise). "+++++" is bonnie++'s "too fast to measure".
set -euo pipefail
usage() { sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; }
[ "${1:-}" != -h ] && [ "${1:-}" != --help ] || { usage; exit 0; }
[ $# -ge 2 ] || { usage >&2; exit 2; }
mount_dir=$1 local_dir=$2; shift 2
files=5 size_mb=100 remount_map="" mount_flags="" admin_flags="" bonnie_mb=1024 bonnie_files=16 do_fio=1 do_bonnie=1
repeat=1 dbench_seconds=0 dbench_clients=4
names="orthofs local"
bin=${ORTHOFS_BIN:-$(cd "$(dirname "$0")/.." && pwd)/build/bin}
die() { echo "compare-fs: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
  case "$1" in
    --files) files=${2:?}; shift 2 ;;
    --size-mb) size_mb=${2:?}; shift 2 ;;
    --remount) remount_map=${2:?}; shift 2 ;;
    --mount-flags) mount_flags=${2?}; shift 2 ;;
    --admin-flags) admin_flags=${2?}; shift 2 ;;
    --bonnie-mb) bonnie_mb=${2:?}; shift 2 ;;
    --bonnie-files) bonnie_files=${2:?}; shift 2 ;;
    --no-fio) do_fio=0; shift ;;
    --no-bonnie) do_bonnie=0; shift ;;
    --repeat) repeat=${2:?}; shift 2 ;;
    --dbench) dbench_seconds=${2:?}; shift 2 ;;
    --dbench-clients) dbench_clients=${2:?}; shift 2 ;;
    --names) names=${2:?}; shift 2 ;;
    *) echo "compare-fs: unknown flag '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ -z "$mount_flags" ] || [ -n "$remount_map" ] || die "--mount-flags is for the remount: give --remount MAP too"
[ -z "$admin_flags" ] || [ -n "$remount_map" ] || die "--admin-flags is for the remount: give --remount MAP too"
for n in "$files" "$size_mb" "$bonnie_mb" "$bonnie_files" "$repeat" "$dbench_clients"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || die "sizes and counts must be positive numbers (got '$n')"
done
for d in "$mount_dir" "$local_dir"; do [ -d "$d" ] && [ -w "$d" ] || die "$d: not a writable directory"; done
[[ "$dbench_seconds" =~ ^[0-9]+$ ]] || die "--dbench takes seconds (got '$dbench_seconds')"
[ $do_fio -eq 0 ] || command -v fio > /dev/null || die "fio is not installed"
[ "$dbench_seconds" -eq 0 ] || command -v dbench > /dev/null || die "dbench is not installed"
[ $do_bonnie -eq 0 ] || command -v bonnie++ > /dev/null || die "bonnie++ is not installed"
read -r name_a name_b <<< "$names"
[ -w /proc/sys/vm/drop_caches ] ||
  echo "compare-fs: not root: page caches are NOT dropped, reads may come from them" >&2

# Empties every cache before a read: the kernel's, and with --remount the client's and the OSDs'.
drop_caches() {
  if [ -n "$remount_map" ] && [ "$1" = "$mount_dir" ]; then
    fusermount3 -u "$mount_dir"
    local -a flags admin
    read -r -a flags <<< "$mount_flags"
    "$bin/orthofs-mount" --map "$remount_map" "${flags[@]}" "$mount_dir"
    # The OSDs' caches too: a read job that found its objects there would not read cold.
    read -r -a admin <<< "$admin_flags"
    "$bin/orthofs" drop-caches --map "$remount_map" "${admin[@]}" > /dev/null ||
      die "cannot empty the OSDs' caches (orthofs drop-caches needs the admin certificate: --admin-flags)"
  fi
  sync
  [ ! -w /proc/sys/vm/drop_caches ] || echo 3 > /proc/sys/vm/drop_caches
}

source "$(dirname "$0")/fio-job.sh"
# The middle value of the numbers given (the mean of the two middle ones for an even count).
median() {
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 }
    END { printf "%.1f\n", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
jobs=(write:write:1m write:write:16k randwrite:randwrite:1m randwrite:randwrite:16k
      read:read:16k read:read:1m randread:randread:16k randread:randread:1m)
# The machine's CPU time so far in jiffies: all of it, and what its host took (steal).
cpu_ticks() { awk '/^cpu / { t = 0; for (i = 2; i <= 9; ++i) t += $i; print t, $9 }' /proc/stat; }
declare -A result spread runs_of total_ticks steal_ticks
if [ $do_fio -eq 1 ]; then
  for job in "${jobs[@]}"; do
    IFS=: read -r name rw bs <<< "$job"
    runs_of=()
    for ((run = 0; run < repeat; ++run)); do
      # Either goes first in every other run: work one side leaves behind (write-back,
      # compaction) does not always land in the other's run.
      order=("$mount_dir" "$local_dir")
      ((run % 2 == 0)) || order=("$local_dir" "$mount_dir")
      for dir in "${order[@]}"; do
        # Every run of the first job creates the files, as its first run did.
        [ "$job" != "${jobs[0]}" ] || rm -f "$dir"/bench.*
        case "$rw" in *read) drop_caches "$dir" ;; esac
        read -r total0 steal0 < <(cpu_ticks)
        runs_of[$dir]+="$(fio_job "$dir" "$name" "$rw" "$bs" "$files" "$size_mb") "
        read -r total1 steal1 < <(cpu_ticks)
        total_ticks[$dir]=$((${total_ticks[$dir]:-0} + total1 - total0))
        steal_ticks[$dir]=$((${steal_ticks[$dir]:-0} + steal1 - steal0))
      done
    done
    for dir in "$mount_dir" "$local_dir"; do
      read -r -a runs <<< "${runs_of[$dir]}"
      result[$dir,$rw,$bs]=$(median "${runs[@]}")
      spread[$dir,$rw,$bs]=$(printf '%s\n' "${runs[@]}" | sort -g | sed -n '1p;$p' | paste -sd-)
    done
  done
  rm -f "$mount_dir"/bench.* "$local_dir"/bench.*
fi

# bonnie++'s CSV line (format 1.98) -> "label value" lines: KiB/s turned into MB/s.
bonnie_fields() {
  python3 -c '
import sys
f = sys.argv[1].split(",")
def rate(i):  # KiB/s -> MB/s
    return f[i] if not f[i].isdigit() else "%.1f" % (int(f[i]) * 1024 / 1e6)
for label, i, conv in [("block write MB/s", 11, rate), ("rewrite MB/s", 13, rate),
                       ("block read MB/s", 17, rate), ("random seeks /s", 19, str),
                       ("seq create /s", 26, str), ("seq stat /s", 28, str),
                       ("seq delete /s", 30, str), ("random create /s", 32, str),
                       ("random stat /s", 34, str), ("random delete /s", 36, str)]:
    print(label.replace(" ", "_"), conv(i) if conv is rate else (f[i] or "-"))' "$1"
}
declare -A bonnie
if [ $do_bonnie -eq 1 ]; then
  for dir in "$mount_dir" "$local_dir"; do
    drop_caches "$dir"
    line=$(bonnie++ -f -d "$dir" -u root -s "$bonnie_mb" -r "$((bonnie_mb / 2))" \
      -n "$bonnie_files" -q 2> /dev/null | tail -n 1) || die "bonnie++ failed in $dir"
    while read -r label value; do bonnie[$dir,$label]=$value; done < <(bonnie_fields "$line")
  done
fi

# dbench's report -> "label value" lines: throughput, then the mean latency of some operations.
dbench_fields() {
  awk '/^Throughput/ { print "throughput_MB/s", $2 }
       $1 ~ /^(NTCreateX|Find|Qpathinfo|Rename|Unlink|Flush)$/ && NF == 4 {
         print tolower($1) "_ms", $3 }' "$1"
}
declare -A dbench
if [ "$dbench_seconds" -gt 0 ]; then
  for dir in "$mount_dir" "$local_dir"; do
    rm -rf "$dir/dbench" && mkdir "$dir/dbench"
    log=$(mktemp)
    dbench -D "$dir/dbench" -t "$dbench_seconds" "$dbench_clients" > "$log" 2>&1 ||
      { tail -5 "$log" >&2; rm -f "$log"; die "dbench failed in $dir"; }
    while read -r label value; do dbench[$dir,$label]=$value; done < <(dbench_fields "$log")
    rm -rf "$log" "$dir/dbench"
  done
fi

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2fx", a / b; else print "-" }'; }
printf '%-40s %12s %12s %7s\n' "" "$name_a" "$name_b" "ratio"
if [ $do_fio -eq 1 ]; then
  if [ "$repeat" -eq 1 ]; then
    echo "fio, $files x $size_mb MiB, round-robin, MB/s"
  else
    echo "fio, $files x $size_mb MiB, round-robin, MB/s: median of $repeat runs (lowest-highest)"
  fi
  for job in "${jobs[@]}"; do
    IFS=: read -r name rw bs <<< "$job"
    a=${result[$mount_dir,$rw,$bs]} b=${result[$local_dir,$rw,$bs]}
    printf '  %-38s %12s %12s %7s' "$rw $bs" "$a" "$b" "$(ratio "$a" "$b")"
    [ "$repeat" -eq 1 ] || printf '  (%s, %s)' "${spread[$mount_dir,$rw,$bs]}" \
      "${spread[$local_dir,$rw,$bs]}"
    echo
  done
  steal_share() {
    awk -v s="${steal_ticks[$1]}" -v t="${total_ticks[$1]}" \
      'BEGIN { printf "%.1f%%", (t > 0 ? 100 * s / t : 0) }'
  }
  printf '  %-38s %12s %12s\n' "CPU time taken by the host (steal)" "$(steal_share "$mount_dir")" \
    "$(steal_share "$local_dir")"
fi
if [ $do_bonnie -eq 1 ]; then
  echo "bonnie++ -s $bonnie_mb MiB -n $bonnie_files"
  for label in block_write_MB/s rewrite_MB/s block_read_MB/s random_seeks_/s seq_create_/s \
               seq_stat_/s seq_delete_/s random_create_/s random_stat_/s random_delete_/s; do
    a=${bonnie[$mount_dir,$label]} b=${bonnie[$local_dir,$label]}
    printf '  %-38s %12s %12s %7s\n' "${label//_/ }" "$a" "$b" "$(ratio "$a" "$b")"
  done
fi
if [ "$dbench_seconds" -gt 0 ]; then
  echo "dbench, $dbench_clients clients, $dbench_seconds s (latencies: mean, ms)"
  for label in throughput_MB/s ntcreatex_ms find_ms qpathinfo_ms rename_ms unlink_ms flush_ms; do
    a=${dbench[$mount_dir,$label]:--} b=${dbench[$local_dir,$label]:--}
    printf '  %-38s %12s %12s %7s\n' "${label//_/ }" "$a" "$b" "$(ratio "$a" "$b")"
  done
fi
