// What a cluster map change moves. Placement is a pure function of the map, so for every
// stored copy (an OID and the OSD holding it) the new map names the OSD it must live on; the
// copies whose OSD changes are the moves, originals and replicas alike, and nothing else moves.
// The new map's placement keeps the orthogonal layout by construction (Placement never puts an
// original on its file's replica OSD), which the plan checks for every file it sees.
//
// Namespace splitting gives each OSD one contiguous segment of the hash space, so adding or
// removing OSDs shifts segment borders and moves more than the minimum; IdealMovedFraction is
// that minimum (how much of the weight changed hands), to compare against.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>

#include "common/cluster_map.h"
#include "common/oid.h"
#include "common/placement.h"
#include "common/status.h"

namespace orthofs {

// The new map may follow the old one: a higher epoch, the same object size (objects are cut
// by it), and OSD ids that keep their meaning (an id in both maps is the same daemon).
Status CheckMapChange(const ClusterMap& old_map, const ClusterMap& new_map);

// The least fraction of objects any placement must move from old to new: half the total
// change of each OSD id's weight share (0.333... for 4 -> 6 equal OSDs, 0.1666... for 6 -> 5).
double IdealMovedFraction(const ClusterMap& old_map, const ClusterMap& new_map);

struct RebalanceSummary {
  uint64_t copies = 0;           // counted copies
  uint64_t moved = 0;            // copies whose OSD changes
  uint64_t originals_moved = 0;  // of them, originals
  uint64_t replicas_moved = 0;   // and replicas
  uint64_t misplaced = 0;        // copies not where the old map puts them (counted, not moved)
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> flows;  // (from, to) -> copies
  double moved_fraction() const { return copies ? double(moved) / double(copies) : 0; }
};

class RebalancePlan {
 public:
  // The maps must pass CheckMapChange.
  RebalancePlan(const ClusterMap& old_map, const ClusterMap& new_map);

  // The OSD the new map puts this copy on (oid.flag says which copy).
  uint32_t DestinationOf(const Oid& copy) const { return new_placement_.OsdFor(copy); }
  // Where the copy goes if it moves: nullopt if `holder` keeps it.
  std::optional<uint32_t> MoveFor(const Oid& copy, uint32_t holder) const;
  // Counts one stored copy found on `holder`.
  void Count(const Oid& copy, uint32_t holder);

  const RebalanceSummary& summary() const { return summary_; }
  const Placement& old_placement() const { return old_placement_; }
  const Placement& new_placement() const { return new_placement_; }

 private:
  Placement old_placement_;
  Placement new_placement_;
  RebalanceSummary summary_;
};

}  // namespace orthofs
