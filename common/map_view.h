// The maps an OSD places by: the current one and, while a rebalance runs, the one before it.
// During a rebalance a copy the current map gives this OSD may still sit on its previous owner;
// the OSD asks there before it treats the copy as absent (and takes it over), so every copy has
// exactly one authoritative place at any moment. Pure logic: the OSD does the I/O.
#pragma once

#include <cstdint>
#include <optional>

#include "common/cluster_map.h"
#include "common/oid.h"
#include "common/placement.h"
#include "common/status.h"

namespace orthofs {

class MapView {
 public:
  // Both maps must be valid; previous (if any) must have a lower epoch.
  explicit MapView(const ClusterMap& current,
                   const std::optional<ClusterMap>& previous = std::nullopt);

  const Placement& current() const { return current_; }
  // nullptr outside a rebalance.
  const Placement* previous() const { return previous_ ? &*previous_ : nullptr; }
  uint64_t epoch() const { return current_.map().epoch; }
  bool rebalancing() const { return previous_.has_value(); }

  // Where `self` must look for `copy` before treating it as absent: the copy's owner under the
  // previous map, when `self` owns it now and did not then. nullopt otherwise.
  std::optional<uint32_t> PreviousOwnerOf(const Oid& copy, uint32_t self) const;
  // An OSD of either map (an OSD being removed is in the previous map only).
  const OsdInfo* FindOsd(uint32_t id) const;

 private:
  Placement current_;
  std::optional<Placement> previous_;
};

// Whether an OSD running `now` may adopt `map` with `previous` (SetMap):
// - a new map (higher epoch, CheckMapChange against the current one) starting a rebalance,
//   whose previous map is the current one (same epoch);
// - the current map again without a previous map: the rebalance is over;
// - the current map with a previous one while it has none: an OSD started with the new map
//   (being added) joins the rebalance;
// - exactly what it runs already (a retried SetMap).
Status CheckMapInstall(const MapView& now, const ClusterMap& map,
                       const std::optional<ClusterMap>& previous);

// Whether an OSD running `now` may take `map` and `previous` from a peer that runs a later
// epoch (it missed one or more SetMaps, e.g. while down): only forward, same object size.
Status CheckMapCatchUp(const MapView& now, const ClusterMap& map,
                       const std::optional<ClusterMap>& previous);

}  // namespace orthofs
