#include "osd/map_catch_up.h"

#include <spdlog/spdlog.h>

#include <charconv>
#include <chrono>
#include <vector>

#include "rpc/wire.h"

namespace orthofs {
namespace {

// How long SetMap waits for the requests placed with the old map.
constexpr auto kSettleTimeout = std::chrono::seconds(30);

Result<std::optional<ClusterMap>> ParseOptionalMap(const std::string& yaml, const char* what) {
  if (yaml.empty()) return std::optional<ClusterMap>();
  Result<ClusterMap> map = ParseClusterMap(yaml);
  if (!map.ok()) {
    return Status::InvalidArgument(std::string(what) + ": " + map.status().message());
  }
  return std::optional<ClusterMap>(*map);
}

}  // namespace

std::string EncodeRunningMaps(const ClusterMap& map, const std::optional<ClusterMap>& previous) {
  // "<length of the map's YAML>\n<map YAML><previous map's YAML, if any>"
  const std::string text = FormatClusterMap(map);
  return std::to_string(text.size()) + "\n" + text + (previous ? FormatClusterMap(*previous) : "");
}

Result<std::pair<ClusterMap, std::optional<ClusterMap>>> DecodeRunningMaps(std::string_view value) {
  const size_t newline = value.find('\n');
  size_t length = 0;
  if (newline == std::string_view::npos ||
      std::from_chars(value.data(), value.data() + newline, length).ec != std::errc() ||
      length > value.size() - newline - 1) {
    return Status::Corruption("stored cluster maps are malformed");
  }
  Result<ClusterMap> map = ParseClusterMap(value.substr(newline + 1, length));
  if (!map.ok()) return Status::Corruption("stored cluster map: " + map.status().message());
  std::optional<ClusterMap> previous;
  const std::string_view rest = value.substr(newline + 1 + length);
  if (!rest.empty()) {
    Result<ClusterMap> parsed = ParseClusterMap(rest);
    if (!parsed.ok()) {
      return Status::Corruption("stored previous map: " + parsed.status().message());
    }
    previous = *parsed;
  }
  return std::make_pair(*map, previous);
}

MapCatchUp::MapCatchUp(uint32_t osd_id, MapHolder* maps, ObjectStore* store, PeerClients* peers,
                       OsdCounters* counters, bool from_peers)
    : osd_id_(osd_id),
      maps_(maps),
      store_(store),
      peers_(peers),
      counters_(counters),
      from_peers_(from_peers) {}

MapCatchUp::~MapCatchUp() {
  RequestStop();
  Join();
}

void MapCatchUp::Join() {
  MutexLock lock(&catch_up_mu_);
  if (catch_up_.joinable()) catch_up_.join();
}

Status MapCatchUp::CheckEpoch(const MapView& view, uint64_t epoch) {
  if (epoch != view.epoch()) {
    if (epoch > view.epoch()) CatchUp();
    return Status::StaleEpoch("request placed with map epoch " + std::to_string(epoch) + ", OSD " +
                              std::to_string(osd_id_) + " has epoch " +
                              std::to_string(view.epoch()));
  }
  return Status::Ok();
}

Status MapCatchUp::CheckSettledEpoch(uint64_t epoch) {
  const uint64_t settled = maps_->settled_epoch();
  if (epoch == settled) return Status::Ok();
  if (epoch > settled) CatchUp();
  return Status::StaleEpoch("rebalance call with map epoch " + std::to_string(epoch) + ", OSD " +
                            std::to_string(osd_id_) + " has settled epoch " +
                            std::to_string(settled));
}

Result<Oid> MapCatchUp::CheckObject(const MapView& view, uint64_t epoch,
                                    const wire::Oid& wire_oid) {
  ORTHOFS_RETURN_IF_ERROR(CheckEpoch(view, epoch));
  Result<Oid> oid = FromWire(wire_oid);
  if (!oid.ok()) return oid.status();
  uint32_t owner = view.current().OsdFor(*oid);
  if (owner != osd_id_) {
    return Status::WrongOsd("object " + oid->ToString() + " belongs on OSD " +
                            std::to_string(owner) + ", not OSD " + std::to_string(osd_id_));
  }
  return oid;
}

Result<MapCatchUp::RunningMaps> MapCatchUp::ParseSetMap(const wire::SetMapRequest& request) const {
  Result<std::optional<ClusterMap>> map = ParseOptionalMap(request.map(), "map");
  if (!map.ok()) return map.status();
  if (!map->has_value()) return Status::InvalidArgument("no map given");
  Result<std::optional<ClusterMap>> previous =
      ParseOptionalMap(request.previous_map(), "previous_map");
  if (!previous.ok()) return previous.status();
  if ((*map)->FindOsd(osd_id_) == nullptr &&
      (!*previous || (*previous)->FindOsd(osd_id_) == nullptr)) {
    return Status::InvalidArgument("OSD " + std::to_string(osd_id_) + " is in neither map");
  }
  return RunningMaps{std::move(**map), std::move(*previous)};
}

Status MapCatchUp::Install(const RunningMaps& maps, wire::SetMapResponse* response) {
  const ClusterMap& next = maps.map;
  MutexLock adopting(&adopt_mu_);
  bool unchanged = false;
  {
    const std::shared_ptr<const MapView> running = maps_->Current();
    ORTHOFS_RETURN_IF_ERROR(CheckMapInstall(*running, next, maps.previous));
    unchanged =
        next.epoch == running->epoch() && maps.previous.has_value() == running->rebalancing();
  }
  Status st = Status::Ok();
  if (!unchanged || maps_->settled_epoch() != next.epoch) {
    st = AdoptMaps(next, maps.previous, maps.previous ? "rebalance begins" : "rebalance ends");
  }
  response->set_epoch(next.epoch);
  return st;
}

Status MapCatchUp::AdoptMaps(const ClusterMap& map, const std::optional<ClusterMap>& previous,
                             const char* why) {
  // Persisted first (both in one write): a restart resumes with the maps the cluster may
  // already place by.
  ORTHOFS_RETURN_IF_ERROR(store_->PutMeta(kMapsMetaName, EncodeRunningMaps(map, previous)));
  ORTHOFS_RETURN_IF_ERROR(store_->SyncWal());
  const uint64_t before = maps_->Current()->epoch();
  const bool settled =
      maps_->Install(std::make_shared<const MapView>(map, previous), kSettleTimeout);
  ++counters_->map_changes;
  if (previous) {
    spdlog::info("map epoch {} -> {} ({}): rebalancing from epoch {}, {} OSDs", before, map.epoch,
                 why, previous->epoch, map.osds.size());
  } else {
    spdlog::info("map epoch {} -> {} ({}), {} OSDs", before, map.epoch, why, map.osds.size());
  }
  if (!settled) {
    return Status::Unavailable("map epoch " + std::to_string(map.epoch) +
                               " installed, but requests placed with the old map still run; "
                               "retry");
  }
  return Status::Ok();
}

void MapCatchUp::CatchUp() {
  // At most one at a time, and not more often than every 200 ms: a client placing with a later
  // epoch sends many requests before this OSD has it.
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::steady_clock::now().time_since_epoch())
                             .count();
  if (!from_peers_ || stopping_.load() || now_ms - last_catch_up_ms_.load() < 200) return;
  if (catching_up_.exchange(true)) return;
  last_catch_up_ms_ = now_ms;
  MutexLock lock(&catch_up_mu_);
  if (stopping_.load()) {  // Join may have run already
    catching_up_ = false;
    return;
  }
  if (catch_up_.joinable()) catch_up_.join();  // the previous one, finished
  catch_up_ = std::thread([this] { CatchUpFromPeers(); });
}

void MapCatchUp::CatchUpFromPeers() {
  std::shared_ptr<const MapView> view = maps_->Current();
  std::optional<RunningMaps> best;
  std::vector<uint32_t> peers;
  for (const OsdInfo& osd : view->current().map().osds) peers.push_back(osd.id);
  if (view->previous()) {
    for (const OsdInfo& osd : view->previous()->map().osds) peers.push_back(osd.id);
  }
  for (uint32_t id : peers) {
    if (id == osd_id_ || stopping_.load()) continue;
    OsdClient* peer = peers_->For(*view, id);
    if (peer == nullptr) continue;
    Result<wire::MapResponse> answer = peer->GetMap(wire::GetMapRequest());
    if (!answer.ok()) continue;
    Result<std::optional<ClusterMap>> map = ParseOptionalMap(answer->map(), "map");
    Result<std::optional<ClusterMap>> previous =
        ParseOptionalMap(answer->previous_map(), "previous_map");
    if (!map.ok() || !previous.ok() || !map->has_value()) continue;
    if (!CheckMapCatchUp(*view, **map, *previous).ok()) continue;
    if (!best || (*map)->epoch > best->map.epoch) best.emplace(RunningMaps{**map, *previous});
  }
  view.reset();  // AdoptMaps waits for every holder of the old view
  MutexLock adopting(&adopt_mu_);
  if (best && best->map.epoch > maps_->Current()->epoch()) {
    if (Status st = AdoptMaps(best->map, best->previous, "caught up from a peer"); !st.ok()) {
      spdlog::warn("catching up to map epoch {}: {}", best->map.epoch, st.ToString());
    }
  }
  catching_up_ = false;
}

}  // namespace orthofs
