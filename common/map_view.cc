#include "common/map_view.h"

#include <string>

#include "common/rebalance_plan.h"

namespace orthofs {

MapView::MapView(const ClusterMap& current, const std::optional<ClusterMap>& previous)
    : current_(current) {
  if (previous) previous_.emplace(*previous);
}

std::optional<uint32_t> MapView::PreviousOwnerOf(const Oid& copy, uint32_t self) const {
  if (!previous_ || current_.OsdFor(copy) != self) return std::nullopt;
  const uint32_t before = previous_->OsdFor(copy);
  if (before == self) return std::nullopt;
  return before;
}

const OsdInfo* MapView::FindOsd(uint32_t id) const {
  if (const OsdInfo* info = current_.map().FindOsd(id)) return info;
  return previous_ ? previous_->map().FindOsd(id) : nullptr;
}

namespace {

std::string EpochText(uint64_t epoch) { return "epoch " + std::to_string(epoch); }

}  // namespace

Status CheckMapInstall(const MapView& now, const ClusterMap& map,
                       const std::optional<ClusterMap>& previous) {
  ORTHOFS_RETURN_IF_ERROR(ValidateClusterMap(map));
  const uint64_t running = now.epoch();
  // Epochs start at 1: 0 stands for "no previous map".
  const uint64_t running_previous = now.previous() ? now.previous()->map().epoch : 0;
  const uint64_t asked_previous = previous ? previous->epoch : 0;
  if (map.epoch == running) {
    if (FormatClusterMap(map) != FormatClusterMap(now.current().map())) {
      return Status::InvalidArgument("a different map with the running " + EpochText(running) +
                                     ": a changed map needs a higher epoch");
    }
    if (!previous) return Status::Ok();
    // An OSD started with the new map (one being added) joins the rebalance to it.
    if (running_previous == 0) return CheckMapChange(*previous, map);
    if (FormatClusterMap(*previous) == FormatClusterMap(now.previous()->map())) return Status::Ok();
    return Status::InvalidArgument("the OSD rebalances from another map (" +
                                   EpochText(running_previous) + ") than the one given (" +
                                   EpochText(asked_previous) + ")");
  }
  if (map.epoch < running) {
    return Status::StaleEpoch("map " + EpochText(map.epoch) + " is older than the running " +
                              EpochText(running));
  }
  ORTHOFS_RETURN_IF_ERROR(CheckMapChange(now.current().map(), map));
  if (!previous) {
    return Status::InvalidArgument("a new map (" + EpochText(map.epoch) +
                                   ") needs the map it replaces as its previous map");
  }
  if (previous->epoch != running ||
      FormatClusterMap(*previous) != FormatClusterMap(now.current().map())) {
    return Status::InvalidArgument("the new map's previous map (" + EpochText(previous->epoch) +
                                   ") is not the one this OSD runs (" + EpochText(running) + ")");
  }
  if (now.rebalancing()) {
    return Status::InvalidArgument("a rebalance to " + EpochText(running) +
                                   " is still running: finish it first (orthofs rebalance)");
  }
  return Status::Ok();
}

Status CheckMapCatchUp(const MapView& now, const ClusterMap& map,
                       const std::optional<ClusterMap>& previous) {
  ORTHOFS_RETURN_IF_ERROR(ValidateClusterMap(map));
  if (previous) ORTHOFS_RETURN_IF_ERROR(ValidateClusterMap(*previous));
  if (map.epoch <= now.epoch()) {
    return Status::StaleEpoch("peer's map " + EpochText(map.epoch) + " is not newer than " +
                              EpochText(now.epoch()));
  }
  if (map.object_size != now.current().map().object_size) {
    return Status::InvalidArgument("peer's map has another object size");
  }
  if (previous && previous->epoch >= map.epoch) {
    return Status::InvalidArgument("peer's previous map is not older than its map");
  }
  return Status::Ok();
}

}  // namespace orthofs
