# Shell functions shared by deploy/local-cluster and deploy/emulated-cluster (sourced; they
# expect $bin, the directory of the OrthoFS binaries, and the array tool_tls: the security
# flags of `orthofs` commands, (--tls-dir DIR) or (--insecure)). A cluster directory DIR holds the map
# (DIR/cluster.yaml), one data dir per OSD (DIR/osd-ID), its log (DIR/osd-ID.log) and the pid
# file of the process we started (DIR/osd-ID.pid).

# cluster_write_map MAP MODE WINDOW INITIAL_WINDOW MAX_WINDOW FIXED(true|false) TCP_CONGESTION
#                   ADDRESS...   (TCP_CONGESTION "": each host's default)
# Writes a map with one OSD per address (ids 0, 1, ...), atomically.
cluster_write_map() {
  local map=$1 mode=$2 window=$3 initial=$4 max=$5 fixed=$6 tcp_congestion=$7 id=0 address
  shift 7
  {
    echo "# OrthoFS cluster map written by deploy/$(basename "$0")"
    echo "epoch: 1"
    echo "object_size: 131072"
    echo "placement: migration"
    echo "prefetch:"
    echo "  mode: $mode"
    echo "  window: $window"
    echo "  initial_window: $initial"
    echo "  max_window: $max"
    [ "$fixed" = false ] || echo "  fixed_window: true"
    [ -z "$tcp_congestion" ] || echo "tcp_congestion: $tcp_congestion"
    echo "osds:"
    for address in "$@"; do
      echo "  - id: $id"
      echo "    address: \"$address\""
      echo "    weight: 1"
      id=$((id + 1))
    done
  } > "$map.tmp"
  mv "$map.tmp" "$map"
}

cluster_osd_ids() { sed -n 's/^  - id: \([0-9]*\)$/\1/p' "$1"; }

# cluster_osd_pid DIR ID: the pid of OSD ID if the process we started is still alive.
cluster_osd_pid() {
  local pidfile=$1/osd-$2.pid pid cmd
  [ -f "$pidfile" ] || return 0
  pid=$(cat "$pidfile")
  [ -r "/proc/$pid/cmdline" ] || return 0
  cmd=$(tr '\0' ' ' < "/proc/$pid/cmdline")
  # Only our process: an orthofs-osd using this directory's map, or one started from its unit
  # on host DIR/hosts/oID: deploy/run-unit, then the stages it execs on the way (ip netns exec,
  # unshare, sh -c ... run-unit ROOT ...), then the OSD it marked with ORTHOFS_UNIT_ROOT (the
  # same pid throughout).
  if grep -q -- "orthofs-osd .*--map $1/cluster.yaml" <<< "$cmd" ||
    grep -q -- "run-unit --root $1/hosts/o$2 " <<< "$cmd" ||
    grep -q -- "run-unit $1/hosts/o$2 " <<< "$cmd" ||
    { grep -q -- "orthofs-osd --id $2 " <<< "$cmd" &&
      tr '\0' '\n' < "/proc/$pid/environ" 2> /dev/null | grep -qx "ORTHOFS_UNIT_ROOT=$1/hosts/o$2"; }; then
    echo "$pid"
  fi
}

# cluster_process_alive PID: the process runs (an exited one its parent has not reaped yet, a
# zombie, does not count: `kill -0` succeeds on it, and a sandbox's init may reap late). A
# leader that is a zombie while other threads still exit (one in the middle of an fsync) still
# holds the process's files and ports: alive until it is the only task left.
cluster_process_alive() {
  local state tasks
  state=$(sed 's/^.*) //' "/proc/$1/stat" 2> /dev/null | cut -d' ' -f1) || return 1
  [ -n "$state" ] || return 1
  [ "$state" = Z ] || return 0
  tasks=$(ls "/proc/$1/task" 2> /dev/null | wc -l)
  [ "$tasks" -gt 1 ]
}

# cluster_stop_osds DIR "ID...": SIGTERM (drains), SIGKILL after 10 s.
cluster_stop_osds() {
  local dir=$1 id pid pids=()
  for id in $2; do
    pid=$(cluster_osd_pid "$dir" "$id")
    [ -n "$pid" ] && { kill -TERM "$pid" 2>/dev/null || true; pids+=("$pid"); }
  done
  for _ in $(seq 1 100); do
    local alive=0
    for pid in "${pids[@]}"; do cluster_process_alive "$pid" && alive=1; done
    [ $alive -eq 0 ] && break
    sleep 0.1
  done
  # One that ignored TERM for 10 s is killed, and waited for: until it is gone it holds its
  # port and its store's lock, and an OSD started in its place would fail.
  for pid in "${pids[@]}"; do
    cluster_process_alive "$pid" || continue
    echo "$(basename "$0"): OSD process $pid did not stop within 10 s; killing it" >&2
    kill -KILL "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do cluster_process_alive "$pid" || break; sleep 0.1; done
  done
  for id in $2; do rm -f "$dir/osd-$id.pid"; done
  echo "$(basename "$0"): stopped ${#pids[@]} OSD(s) in $dir"
}

# cluster_wait_healthy DIR [PREFIX...]: waits up to $ORTHOFS_HEALTH_WAIT seconds (default 30,
# by the clock) until every OSD of the map answers (`orthofs status`, run under PREFIX, e.g. a
# network namespace). Fails early, showing its log, when an OSD process exits; at the end it
# names the OSDs that do not answer and says how long it waited.
cluster_wait_healthy() {
  local dir=$1 id pid start=$SECONDS wait=${ORTHOFS_HEALTH_WAIT:-30}
  shift
  while :; do
    if "$@" "$bin/orthofs" status --map "$dir/cluster.yaml" "${tool_tls[@]}" --timeout-ms 500 \
      > /dev/null 2>&1; then
      return 0
    fi
    for id in $(cluster_osd_ids "$dir/cluster.yaml"); do
      # The process just started from this pid file, alive or not. (Not cluster_osd_pid: while
      # a unit's process is still on its way to exec the OSD, its command line is no OSD's.)
      pid=$(cat "$dir/osd-$id.pid" 2> /dev/null || true)
      if [ -z "$pid" ] || ! cluster_process_alive "$pid"; then
        echo "$(basename "$0"): OSD $id (pid ${pid:-none}) exited; its log ($dir/osd-$id.log) ends:" >&2
        tail -n 20 "$dir/osd-$id.log" >&2
        return 1
      fi
    done
    [ $((SECONDS - start)) -lt "$wait" ] || break
    sleep 0.2
  done
  local sick
  sick=$("$@" "$bin/orthofs" status --map "$dir/cluster.yaml" "${tool_tls[@]}" --timeout-ms 1000 \
    2>&1 | grep -i 'down' || true)
  echo "$(basename "$0"): not every OSD answered within $((SECONDS - start)) s:" >&2
  echo "${sick:-  (orthofs status reports nothing down now)}" >&2
  return 1
}

cluster_is_mounted() { grep -q " $1 fuse.orthofs " /proc/mounts 2>/dev/null; }

# cluster_mkfs_once MAP [PREFIX...]: creates namespace 1 unless it exists.
cluster_mkfs_once() {
  local map=$1 out
  shift
  if ! out=$("$@" "$bin/orthofs" mkfs --map "$map" "${tool_tls[@]}" --fnso 1 2>&1); then
    case "$out" in
      *"already exists"*) ;;
      *) echo "$out" >&2; echo "$(basename "$0"): mkfs failed" >&2; return 1 ;;
    esac
  fi
}

# cluster_make_certs TLS_DIR OSD_COUNT: the cluster CA and certificates for every OSD, admin
# and client, made on first use (kept afterwards).
cluster_make_certs() {
  "$here/make-certs.sh" --dir "$1" --osds "$2" admin client > /dev/null ||
    { echo "$(basename "$0"): making certificates in $1 failed" >&2; return 1; }
}
