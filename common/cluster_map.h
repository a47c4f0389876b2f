// The cluster map: the one file every OSD and client shares (epoch, object size, placement
// strategy, prefetch configuration, OSDs). Parsed from YAML and validated here; reading the file is
// the caller's job.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/prefetch_window.h"
#include "common/status.h"

namespace orthofs {

enum class PlacementStrategy {
  kMigration,    // first choice by h over all OSDs; objects landing on R move by h2
  kRepartition,  // originals split by h over the N-1 OSDs other than R
};

std::string_view PlacementStrategyName(PlacementStrategy s);
Result<PlacementStrategy> ParsePlacementStrategy(std::string_view name);

struct OsdInfo {
  uint32_t id = 0;
  std::string address;  // host:port or [v6]:port
  double weight = 1.0;  // share of the hash space, relative to the other OSDs
};

inline constexpr uint32_t kDefaultObjectSize = 128 * 1024;
inline constexpr uint32_t kMinObjectSize = 4 * 1024;
inline constexpr uint32_t kMaxObjectSize = 16 * 1024 * 1024;

struct ClusterMap {
  uint64_t epoch = 1;
  uint32_t object_size = kDefaultObjectSize;
  PlacementStrategy strategy = PlacementStrategy::kMigration;
  PrefetchConfig prefetch;  // the whole cluster prefetches the same way
  // The TCP congestion control of every OrthoFS connection (e.g. "cubic"), applied by each
  // process at its start; empty: each host's default.
  std::string tcp_congestion;
  std::vector<OsdInfo> osds;  // order is placement order: segment i belongs to osds[i]

  // nullptr when no OSD has this id.
  const OsdInfo* FindOsd(uint32_t id) const;
};

// Parses and validates a map. Errors name the offending field, e.g.
// "osds[2].id: duplicate id 3 (also osds[0])".
Result<ClusterMap> ParseClusterMap(std::string_view yaml_text);

// Every rule a map must satisfy (ParseClusterMap applies it too).
Status ValidateClusterMap(const ClusterMap& map);

// A congestion control's name as the kernel takes it: 1..15 letters, digits, '_' or '-',
// starting with a letter or digit, and not YAML's null.
Status ValidateTcpCongestionName(std::string_view name);

// Checks "host:port" / "[v6addr]:port" with a port in 1..65535.
Status ValidateAddress(std::string_view address);

// YAML text that ParseClusterMap reads back to an equal map.
std::string FormatClusterMap(const ClusterMap& map);

}  // namespace orthofs
