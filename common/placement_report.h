// How evenly a placement spreads a synthetic namespace: per-OSD originals, replicas and
// totals, the max/mean imbalance, and orthogonality violations (must be 0).
#pragma once

#include <cstdint>
#include <vector>

#include "common/placement.h"

namespace orthofs {

struct OsdLoad {
  uint32_t osd_id = 0;
  uint64_t originals = 0;
  uint64_t replicas = 0;
  uint64_t total() const { return originals + replicas; }
};

struct PlacementReport {
  std::vector<OsdLoad> osds;  // in map order
  uint64_t objects = 0;       // originals placed (each also has a replica)
  uint64_t conflicts = 0;     // objects whose original shares an OSD with its replica
  uint64_t migrated = 0;      // originals not on their first choice (migration only)
  // max / mean over OSDs, of originals, replicas and totals; 1.0 = perfectly even.
  double originals_imbalance = 0;
  double replicas_imbalance = 0;
  double total_imbalance = 0;
};

// Files fno = 1..files of namespace fnso, each with `objects` DATA objects.
PlacementReport ComputePlacementReport(const Placement& placement, uint32_t fnso, uint64_t files,
                                       uint64_t objects_per_file);

}  // namespace orthofs
