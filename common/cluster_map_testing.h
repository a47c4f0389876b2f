// Test helper: cluster maps for the map-change tests (rebalance_plan_test, map_view_test).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/cluster_map.h"

namespace orthofs {

// A map of equally weighted OSDs with these ids, OSD i at 10.0.0.(i+1):7000.
inline ClusterMap EqualMap(uint64_t epoch, const std::vector<uint32_t>& ids) {
  ClusterMap map;
  map.epoch = epoch;
  for (uint32_t id : ids) map.osds.push_back({id, "10.0.0." + std::to_string(id + 1) + ":7000", 1});
  return map;
}

}  // namespace orthofs
