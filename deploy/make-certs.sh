#!/usr/bin/env bash
# Makes the certificates of an OrthoFS cluster: a cluster CA and one key + certificate per
# identity, signed by it. The certificate's name (CN and DNS subjectAltName) is the identity:
#   osd.<id>   an OSD daemon (clients check they reach the OSD the map names)
#   admin      operators' tools (orthofs repair, stats --reset, log-level, ...)
#   client     a mount (or client.<host>, any other name: the same rights)
# Idempotent: an existing CA and existing certificates are kept, missing ones are made.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: deploy/make-certs.sh [--dir DIR] [--osds N] [--days N] [NAME...]
  Creates DIR/ca.crt + ca.key (the cluster CA) unless they exist, and NAME.crt + NAME.key for
  each NAME that has none. --osds N adds osd.0 .. osd.N-1. With no NAME and no --osds: admin
  and client. Default DIR: /etc/orthofs/tls. Default validity: 3650 days.
  Copy to each node only ca.crt and that node's own NAME.crt/NAME.key; keep ca.key offline.
USAGE
}

dir=/etc/orthofs/tls
days=3650
names=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --dir) dir="${2:?--dir needs a value}"; shift 2 ;;
    --days) days="${2:?--days needs a value}"; shift 2 ;;
    --osds)
      n="${2:?--osds needs a value}"
      [[ "$n" =~ ^[0-9]+$ ]] || { echo "make-certs: --osds '$n' is not a number" >&2; exit 2; }
      for ((i = 0; i < n; i++)); do names+=("osd.$i"); done
      shift 2 ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "make-certs: unknown flag $1 (see --help)" >&2; exit 2 ;;
    *) names+=("$1"); shift ;;
  esac
done
[[ "$days" =~ ^[1-9][0-9]*$ ]] || { echo "make-certs: --days '$days' is not a number" >&2; exit 2; }
[[ ${#names[@]} -gt 0 ]] || names=(admin client)
command -v openssl >/dev/null || { echo "make-certs: openssl is not installed" >&2; exit 1; }
for name in "${names[@]}"; do
  # A DNS name of letters, digits, '.', '-' (it goes into subjectAltName).
  [[ "$name" =~ ^[A-Za-z0-9]([A-Za-z0-9.-]{0,62})$ && "$name" != ca ]] ||
    { echo "make-certs: '$name' is not a valid certificate name" >&2; exit 2; }
done

mkdir -p "$dir"
umask 077
if [[ ! -s "$dir/ca.crt" || ! -s "$dir/ca.key" ]]; then
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$dir/ca.key" 2>/dev/null
  openssl req -x509 -new -key "$dir/ca.key" -sha256 -days "$days" \
    -subj "/O=OrthoFS/CN=OrthoFS cluster CA" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" -out "$dir/ca.crt"
  chmod 644 "$dir/ca.crt"
  echo "made the cluster CA: $dir/ca.crt"
fi

ext=$(mktemp)
trap 'rm -f "$ext"' EXIT
for name in "${names[@]}"; do
  if [[ -s "$dir/$name.crt" && -s "$dir/$name.key" ]]; then continue; fi
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$dir/$name.key" 2>/dev/null
  printf '%s\n' "basicConstraints=critical,CA:FALSE" \
    "keyUsage=critical,digitalSignature,keyEncipherment" \
    "extendedKeyUsage=serverAuth,clientAuth" "subjectAltName=DNS:$name" >"$ext"
  openssl req -new -key "$dir/$name.key" -subj "/O=OrthoFS/CN=$name" |
    openssl x509 -req -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -sha256 -days "$days" \
      -set_serial "0x$(openssl rand -hex 16)" -extfile "$ext" -out "$dir/$name.crt" 2>/dev/null
  chmod 644 "$dir/$name.crt"
  echo "made $dir/$name.crt"
done
