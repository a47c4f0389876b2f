#include "common/rebalance_plan.h"

#include <cmath>
#include <set>

namespace orthofs {
namespace {

// Each OSD id's share of the total weight.
std::map<uint32_t, double> Shares(const ClusterMap& map) {
  double total = 0;
  for (const OsdInfo& osd : map.osds) total += osd.weight;
  std::map<uint32_t, double> shares;
  for (const OsdInfo& osd : map.osds) shares[osd.id] = osd.weight / total;
  return shares;
}

}  // namespace

Status CheckMapChange(const ClusterMap& old_map, const ClusterMap& new_map) {
  ORTHOFS_RETURN_IF_ERROR(ValidateClusterMap(old_map));
  ORTHOFS_RETURN_IF_ERROR(ValidateClusterMap(new_map));
  if (new_map.epoch <= old_map.epoch) {
    return Status::InvalidArgument("the new map's epoch " + std::to_string(new_map.epoch) +
                                   " must be above the current " + std::to_string(old_map.epoch));
  }
  if (new_map.object_size != old_map.object_size) {
    return Status::InvalidArgument(
        "the object size cannot change (" + std::to_string(old_map.object_size) + " -> " +
        std::to_string(new_map.object_size) + "): every stored object is cut by it");
  }
  return Status::Ok();
}

double IdealMovedFraction(const ClusterMap& old_map, const ClusterMap& new_map) {
  const std::map<uint32_t, double> before = Shares(old_map);
  const std::map<uint32_t, double> after = Shares(new_map);
  std::set<uint32_t> ids;
  for (const auto& [id, share] : before) ids.insert(id);
  for (const auto& [id, share] : after) ids.insert(id);
  double change = 0;
  for (uint32_t id : ids) {
    const auto b = before.find(id);
    const auto a = after.find(id);
    change += std::fabs((a == after.end() ? 0 : a->second) - (b == before.end() ? 0 : b->second));
  }
  return change / 2;
}

RebalancePlan::RebalancePlan(const ClusterMap& old_map, const ClusterMap& new_map)
    : old_placement_(old_map), new_placement_(new_map) {}

std::optional<uint32_t> RebalancePlan::MoveFor(const Oid& copy, uint32_t holder) const {
  const uint32_t destination = DestinationOf(copy);
  if (destination == holder) return std::nullopt;
  return destination;
}

void RebalancePlan::Count(const Oid& copy, uint32_t holder) {
  ++summary_.copies;
  if (old_placement_.OsdFor(copy) != holder) ++summary_.misplaced;
  const std::optional<uint32_t> to = MoveFor(copy, holder);
  if (!to) return;
  ++summary_.moved;
  ++(copy.flag == CopyFlag::kReplica ? summary_.replicas_moved : summary_.originals_moved);
  ++summary_.flows[{holder, *to}];
}

}  // namespace orthofs
