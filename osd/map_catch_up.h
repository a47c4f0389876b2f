// How this OSD's maps follow the cluster's: every request is checked against the map view it
// places by (epoch, placement), a request placed with a later epoch makes this OSD catch up
// from its peers in the background, and a new map (SetMap, or one caught up) is persisted,
// then installed once the requests placed with the old one have answered.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "common/cluster_map.h"
#include "common/map_view.h"
#include "common/placement.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "orthofs.pb.h"
#include "osd/map_holder.h"
#include "osd/object_store.h"
#include "osd/osd_stats.h"
#include "osd/peer_clients.h"

namespace orthofs {

// The current map and the previous one (empty while no rebalance runs) as one value.
std::string EncodeRunningMaps(const ClusterMap& map, const std::optional<ClusterMap>& previous);
Result<std::pair<ClusterMap, std::optional<ClusterMap>>> DecodeRunningMaps(std::string_view value);

// Thread-safe: one map check-and-adopt at a time (adopt_mu_); a catch-up runs on a thread of
// its own, at most one at a time.
class MapCatchUp {
 public:
  // The store meta name under which the maps persist (EncodeRunningMaps; osd/main.cc reads them
  // at start).
  static constexpr const char* kMapsMetaName = "cluster_maps";

  // A map and, while a rebalance runs, the previous one.
  struct RunningMaps {
    ClusterMap map;
    std::optional<ClusterMap> previous;
  };

  // `from_peers` false: never catches up (the request fuzzer's peers do not exist). The
  // pointers outlive the MapCatchUp.
  MapCatchUp(uint32_t osd_id, MapHolder* maps, ObjectStore* store, PeerClients* peers,
             OsdCounters* counters, bool from_peers);
  ~MapCatchUp();  // RequestStop and Join
  MapCatchUp(const MapCatchUp&) = delete;
  MapCatchUp& operator=(const MapCatchUp&) = delete;

  // The epoch check every request placed by the map passes; a request placed with a later
  // epoch than ours also makes this OSD catch up (CatchUp).
  Status CheckEpoch(const MapView& view, uint64_t epoch);
  // OSD-to-OSD rebalance calls (Fetch, Discard) need the caller's epoch to be this OSD's
  // settled one: no request placed with an older map still runs here.
  Status CheckSettledEpoch(uint64_t epoch);
  // The epoch and placement checks every object request passes.
  Result<Oid> CheckObject(const MapView& view, uint64_t epoch, const wire::Oid& wire_oid);

  // SetMap's maps, parsed; refused unless this OSD is in one of them.
  Result<RunningMaps> ParseSetMap(const wire::SetMapRequest& request) const;
  // SetMap: installs `maps` unless they run already (and have settled); the response's epoch
  // once they may be. The caller holds no map view (Install waits for every holder of the old
  // one).
  Status Install(const RunningMaps& maps, wire::SetMapResponse* response)
      ORTHOFS_EXCLUDES(adopt_mu_);

  // No catch-up begins after this; Join waits for one that runs (after the peer calls it may
  // wait for are cancelled).
  void RequestStop() { stopping_ = true; }
  void Join() ORTHOFS_EXCLUDES(catch_up_mu_);

 private:
  // In the background: fetch the map from the peers and adopt the latest (a request showed a
  // later epoch than ours).
  void CatchUp() ORTHOFS_EXCLUDES(catch_up_mu_);
  // The catch-up thread's work.
  void CatchUpFromPeers() ORTHOFS_EXCLUDES(adopt_mu_);
  // Persists and installs a map (SetMap, catch-up).
  Status AdoptMaps(const ClusterMap& map, const std::optional<ClusterMap>& previous,
                   const char* why) ORTHOFS_REQUIRES(adopt_mu_);

  const uint32_t osd_id_;
  MapHolder* const maps_;
  ObjectStore* const store_;
  PeerClients* const peers_;
  OsdCounters* const counters_;
  const bool from_peers_;
  Mutex adopt_mu_;  // one map check-and-adopt at a time (SetMap, CatchUp)
  Mutex catch_up_mu_;
  std::thread catch_up_ ORTHOFS_GUARDED_BY(catch_up_mu_);
  std::atomic<bool> catching_up_{false};             // a CatchUp runs
  std::atomic<int64_t> last_catch_up_ms_{-1000000};  // steady clock
  std::atomic<bool> stopping_{false};
};

}  // namespace orthofs
