// What a mount tells Prometheus (orthofs-mount --metrics): its object cache, write-back
// flushes, memory-pressure (thrashing) episodes, where reads were served from, OSD failovers
// and the FUSE requests it answered, each labelled with the namespace (fnso).
#pragma once

#include <cstdint>
#include <string>

#include "client/cluster_client.h"
#include "client/deferred_releases.h"
#include "client/file_io.h"
#include "client/lock_manager.h"
#include "mount/fuse_requests.h"

namespace orthofs {

// tls_not_after: the mount's certificate expiry (Unix seconds), 0 without TLS.
// drops_set_id_bits: the kernel leaves clearing set-ID bits to the mount (KillPrivV2).
// metadata_conflicts: Namespace::conflicts(). releases: the unlinked files freed in the
// background (OpenFiles::release_counts).
std::string RenderMountMetrics(uint32_t fnso, uint64_t cache_capacity_bytes, int64_t tls_not_after,
                               bool drops_set_id_bits, const FileIoStats& io,
                               const ClusterClient& cluster, const FuseRequestCounts& requests,
                               uint64_t metadata_conflicts, const LockStats& locks,
                               const DeferredReleases::Counts& releases);

}  // namespace orthofs
