#!/usr/bin/env bash
# CPU time each process spends while a command runs: user + system seconds of every process
# whose command line matches REGEX (default: every orthofs-osd and orthofs-mount), read from
# /proc/PID/stat before and after the command, beside its wall time. Shows where a benchmark's
# CPU goes (docs/BENCHMARKS.md "Where the time goes").
#   deploy/cpu-usage.sh [--match REGEX] -- COMMAND [ARGS...]
# The command's own output comes first, then one line per process (PID, CPU seconds, cores:
# CPU seconds per wall second, command line) and the total. A process started during the
# command counts from its start; one that exits before the end is not counted. Exits with the
# command's status.
set -euo pipefail
usage() { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; }
[ "${1:-}" != -h ] && [ "${1:-}" != --help ] || { usage; exit 0; }
match='orthofs-(osd|mount)'
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  case "$1" in
    --match) match=${2:?--match needs a regular expression}; shift 2 ;;
    *) echo "cpu-usage: unknown flag '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ "${1:-}" = -- ] && [ $# -ge 2 ] || { echo "cpu-usage: no command (usage: $0 [--match REGEX] -- COMMAND ...)" >&2; exit 2; }
shift
ticks_per_second=$(getconf CLK_TCK)

# "PID TICKS" of every matching process (not this script's own subshells).
snapshot() {
  local pid stat rest
  for pid in $(pgrep -f -- "$match" || true); do
    { grep -q cpu-usage "/proc/$pid/cmdline"; } 2> /dev/null && continue
    stat=$(cat "/proc/$pid/stat" 2> /dev/null) || continue
    rest=${stat##*) }  # the fields after the command name, which may hold spaces
    read -ra f <<< "$rest"
    echo "$pid $((f[11] + f[12]))"
  done
}

declare -A before
while read -r pid ticks; do before[$pid]=$ticks; done < <(snapshot)
start=$(date +%s.%N)
rc=0
"$@" || rc=$?
end=$(date +%s.%N)
wall=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }')
echo "cpu-usage: CPU seconds while '$*' ran ($wall s wall):"
total=0
while read -r pid ticks; do
  cmd=$({ tr '\0' ' ' < "/proc/$pid/cmdline"; } 2> /dev/null | cut -c1-100) || true
  [ -n "$cmd" ] || continue  # exited just now
  used=$((ticks - ${before[$pid]:-0}))
  total=$((total + used))
  awk -v p="$pid" -v t="$used" -v hz="$ticks_per_second" -v w="$wall" -v c="$cmd" \
    'BEGIN { printf "  %-8s %8.2f s %6.2f cores  %s\n", p, t / hz, (w > 0 ? t / hz / w : 0), c }'
done < <(snapshot | sort -n)
awk -v t="$total" -v hz="$ticks_per_second" -v w="$wall" \
  'BEGIN { printf "  total    %8.2f s %6.2f cores\n", t / hz, (w > 0 ? t / hz / w : 0) }'
exit $rc
