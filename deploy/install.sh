#!/usr/bin/env bash
# Installs OrthoFS on a node: the binaries, the systemd units and /etc/orthofs.
#
#   deploy/install.sh [--root DIR] [--bin-dir DIR] [--config-only] [--map FILE]
#                     [--certs DIR NAME...] [--osd-flags "..."]
#                     [--mount-at DIR [--fnso N] [--mount-options OPTS]]
#
#   --root DIR      install under DIR instead of / (a package build, or an emulated host)
#   --bin-dir DIR   where the built binaries are (default build/bin of this tree)
#   --config-only   only what the other flags name (binaries and units stay as they are)
#   --map FILE      copy the cluster map to /etc/orthofs/cluster.yaml
#   --certs DIR NAME...   copy DIR/ca.crt and each NAME.crt/NAME.key (deploy/make-certs.sh
#                   output; NAME: osd.ID for each OSD of the node, client, admin) to
#                   /etc/orthofs/tls; the CA's key is never copied
#   --osd-flags "..."     ORTHOFS_OSD_FLAGS for every OSD of the node (/etc/orthofs/osd.env)
#   --mount-at DIR  also a mount unit for namespace --fnso N (default 1) at DIR, with
#                   --mount-options added to its options (e.g. cache_mb=1024)
#
# Binaries go to /usr/local/bin (orthofs-osd, orthofs, orthofs-mount, orthofs-bench, and
# mount.orthofs), /sbin/mount.fuse.orthofs links to orthofs-mount (mount -t fuse.orthofs and
# fstab), units to /etc/systemd/system, data dirs live in /var/lib/orthofs. Existing
# configuration files are kept (only --map, --certs and --osd-flags replace theirs). Then, on
# a real node: systemctl daemon-reload && systemctl enable --now orthofs-osd@ID (docs/DEPLOY.md).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
root=""
bin_dir=$top/build/bin
map=""
certs=""
cert_names=()
osd_flags=""
osd_flags_given=0
mount_at=""
mount_options=""
fnso=1
config_only=0

die() { echo "install.sh: $*" >&2; exit 1; }
usage() { sed -n '2,24p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
  case "$1" in
    --root) root=${2:?--root needs a directory}; shift 2 ;;
    --bin-dir) bin_dir=${2:?--bin-dir needs a directory}; shift 2 ;;
    --map) map=${2:?--map needs a file}; shift 2 ;;
    --certs)
      certs=${2:?--certs needs a directory and names}
      shift 2
      while [ $# -gt 0 ] && [[ "$1" != -* ]]; do cert_names+=("$1"); shift; done
      [ ${#cert_names[@]} -gt 0 ] || die "--certs $certs: name the certificates to copy"
      ;;
    --osd-flags) osd_flags=$2; osd_flags_given=1; shift 2 ;;
    --mount-at) mount_at=${2:?--mount-at needs a directory}; shift 2 ;;
    --fnso) fnso=${2:?--fnso needs a number}; shift 2 ;;
    --mount-options) mount_options=${2:?--mount-options needs options}; shift 2 ;;
    --config-only) config_only=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "install.sh: unknown flag '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$fnso" =~ ^[0-9]+$ ]] || die "--fnso must be a number"
[[ "$mount_options" =~ ^[A-Za-z0-9_=,./:-]*$ ]] || die "--mount-options '$mount_options': one comma-separated list"
if [ $config_only -eq 0 ]; then
  for b in orthofs-osd orthofs orthofs-mount orthofs-bench; do
    [ -x "$bin_dir/$b" ] || die "no $bin_dir/$b: build first (deploy/build.sh)"
  done
fi
[ -z "$map" ] || [ -r "$map" ] || die "cannot read the map $map"
[ -z "$mount_at" ] || [[ "$mount_at" = /* ]] || die "--mount-at needs an absolute path"
if [ -n "$certs" ]; then
  [ -r "$certs/ca.crt" ] || die "no CA certificate $certs/ca.crt"
  for n in "${cert_names[@]}"; do
    [ -r "$certs/$n.crt" ] && [ -r "$certs/$n.key" ] || die "no $certs/$n.crt and .key"
  done
fi

etc=$root/etc/orthofs
install -d -m 755 "$root/usr/local/bin" "$root/sbin" "$root/etc/systemd/system" "$etc"
install -d -m 700 "$etc/tls" "$root/var/lib/orthofs"
if [ $config_only -eq 0 ]; then
  for b in orthofs-osd orthofs orthofs-mount orthofs-bench; do
    install -m 755 "$bin_dir/$b" "$root/usr/local/bin/$b"
  done
  ln -sf orthofs-mount "$root/usr/local/bin/mount.orthofs"
  ln -sf /usr/local/bin/orthofs-mount "$root/sbin/mount.fuse.orthofs"
  install -m 644 "$here/systemd/orthofs-osd@.service" "$root/etc/systemd/system/"
fi

[ -z "$map" ] || install -m 644 "$map" "$etc/cluster.yaml"
if [ -n "$certs" ]; then
  install -m 644 "$certs/ca.crt" "$etc/tls/ca.crt"
  for n in "${cert_names[@]}"; do
    install -m 644 "$certs/$n.crt" "$etc/tls/$n.crt"
    install -m 600 "$certs/$n.key" "$etc/tls/$n.key"
  done
fi
if [ $osd_flags_given -eq 1 ] || { [ $config_only -eq 0 ] && [ ! -f "$etc/osd.env" ]; }; then
  {
    echo "# Extra orthofs-osd flags for every OSD of this node (orthofs-osd --help), e.g."
    echo "# ORTHOFS_OSD_FLAGS=\"--cache-mb 1024 --metrics 0.0.0.0:9101\""
    echo "ORTHOFS_OSD_FLAGS=\"$osd_flags\""
  } > "$etc/osd.env"
fi

if [ -n "$mount_at" ]; then
  unit=$(systemd-escape -p --suffix=mount "$mount_at")
  sed -e "s|/mnt/orthofs|$mount_at|g" -e "s|fnso=1|fnso=$fnso|; s|namespace 1|namespace $fnso|" \
    -e "s|^Options=.*|&${mount_options:+,$mount_options}|" \
    "$here/systemd/mnt-orthofs.mount" > "$root/etc/systemd/system/$unit"
  echo "install.sh: mount unit $unit"
fi
echo "install.sh: installed into ${root:-/}"
