# Sourced by the shell integration tests: a 3-OSD local cluster with namespace 1 mounted, in a
# fresh directory that is torn down (unmount, processes, files) however the test ends.
#   source mounted_cluster.sh SOURCE_DIR BIN_DIR NAME
# Sets src, bin, work, cluster, mnt, ORTHOFS_BIN and ORTHOFS_MAP; defines fail and step.
src=$1
export ORTHOFS_BIN=$2
bin=$2
work=$(mktemp -d "/tmp/orthofs-$3-XXXXXX")
cluster=$work/cluster
mnt=$work/mnt
cleanup() {
  jobs -p | xargs -r kill -9 2> /dev/null || true
  "$src/deploy/local-cluster" down --dir "$cluster" > /dev/null 2>&1 || true
  grep -q " $mnt fuse" /proc/mounts && fusermount3 -uz "$mnt"
  pkill -KILL -f "$work" 2> /dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }

"$src/deploy/local-cluster" up --osds 3 --dir "$cluster" --mount "$mnt" > /dev/null
export ORTHOFS_MAP=$cluster/cluster.yaml
