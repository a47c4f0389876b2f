// Command line of orthofs-mount in all the forms it is called with:
//   orthofs-mount --map FILE [--fnso N] MOUNTPOINT [-f] [-o opts]      (by hand)
//   mount.orthofs FILE MOUNTPOINT -o rw,fnso=N,...                    (mount -t fuse.orthofs,
//                                                                     an /etc/fstab line)
// Our options inside -o (map=, fnso=, log_level=, cache_mb=, flush_threads=, read_ahead=,
// negative_timeout=, lock_lease=, local_locks, private, prefetch=, metrics=, tls_dir=, tls_ca=,
// tls_cert=, tls_key=, insecure) are taken out; fstab-only words are dropped; the rest goes to
// libfuse.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "rpc/tls.h"

namespace orthofs {

struct MountArgs {
  std::string map_path;
  uint32_t fnso = 1;
  std::string log_level = "info";
  uint64_t cache_mb = 0;       // the client object cache (write-back and reads); 0: DefaultCacheMb
  uint32_t flush_threads = 4;  // write-back threads
  uint32_t read_ahead = 16;    // objects fetched ahead of a sequential reader at most; 0: off
  // Seconds the kernel may remember that a name does not exist (another client's new file stays
  // unseen that long); 0: it asks every time.
  double negative_timeout = 0;
  // Seconds a client's lock session may stay silent before other clients take its fcntl and
  // flock locks (client/lock_manager.h): how long a killed client's locks block others.
  double lock_lease = 15;
  // fcntl and flock locks held by the kernel, within this mount only (NFS's local_lock=all):
  // for a namespace one client writes, whose programs lock a lot (a lock costs no round trip).
  bool local_locks = false;
  // A mount started by root serves every local user (FUSE's allow_other), as GlusterFS and
  // MooseFS root mounts do; -o private (--private) keeps it to root, FUSE's own default.
  bool private_mount = false;
  std::string expected_prefetch;  // refuse a map that prefetches otherwise; empty: any
  std::string metrics;            // serve Prometheus text at http://HOST:PORT/metrics
  TlsFlags tls;                   // identity "client" by default
  std::string mountpoint;
  bool foreground = false;
  bool help = false;
  std::vector<std::string> fuse_options;  // for -o, comma-joined by the caller
  std::vector<std::string> fuse_flags;    // -d, -s, ... passed through
};

// The client cache when --cache-mb is not given: 1/16 of the machine's memory, at least 256 MiB
// (but not over a quarter of a small machine) and at most 4 GiB. A read that misses costs a
// network round trip (~1 ms) and one that hits ~40 us, so a cache that holds a working set of
// a few hundred MB pays for itself; the kernel's page cache would take that memory anyway.
uint64_t DefaultCacheMb(uint64_t physical_memory_bytes);

// argv without the program name. kInvalidArgument with a one-line reason.
Result<MountArgs> ParseMountArgs(const std::vector<std::string>& argv);

// The options libfuse mounts with: default_permissions (the kernel checks mode bits against
// the attributes OrthoFS answers), the file system's name, allow_other when `as_root` unless
// the mount is private (or the user gave allow_other or allow_root), then the user's own.
std::string FuseMountOptions(const MountArgs& args, bool as_root);

}  // namespace orthofs
