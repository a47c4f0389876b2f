// What a mount tells Prometheus (orthofs-mount --metrics): its object cache, write-back
// flushes, memory-pressure (thrashing) episodes, where reads were served from, and OSD
// failovers, each labelled with the namespace (fnso).
#pragma once

#include <cstdint>
#include <string>

#include "client/file_io.h"
#include "client/osd_client.h"

namespace orthofs {

std::string RenderMountMetrics(uint32_t fnso, uint64_t cache_capacity_bytes, const FileIoStats& io,
                               const ClusterClient& cluster);

}  // namespace orthofs
