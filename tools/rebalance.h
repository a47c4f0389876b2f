// orthofs rebalance: moves a running cluster to a new map (OSDs added or removed) while clients
// keep reading and writing.
//
// 1. Every OSD of both maps adopts the new map, remembering the old one (SetMap). From then on
//    a client's request placed with the old epoch is refused as stale, and the client switches
//    to the new map and sends it again to the OSD the new map names. An OSD asked for a copy
//    it gained takes it over from its previous owner first, so every copy has one
//    authoritative place at every moment.
// 2. For every OSD, the copies it holds but no longer owns (exactly those whose placement
//    changed, originals and replicas) are asked of their new owner (Migrate), which takes each
//    over and has the old holder drop it.
// 3. When no OSD holds a copy it does not own and the removed OSDs have replayed their repair
//    records, every OSD of the new map ends the rebalance (SetMap without a previous map); the
//    removed OSDs hold nothing and may be stopped.
//
// Rerunning it resumes: the cluster's own state says which step is due, and copies already
// moved are no longer on their old holders.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "client/cluster_client.h"
#include "common/cluster_map.h"

namespace orthofs {

struct RebalanceOptions {
  // Called as copies move (done of total), for a progress bar.
  std::function<void(uint64_t done, uint64_t total)> progress;
  uint32_t batch = 64;  // copies per Migrate call
};

struct RebalanceReport {
  uint64_t from_epoch = 0;
  uint64_t to_epoch = 0;
  bool resumed = false;  // a rebalance to this map had begun already
  uint64_t moved = 0;    // copies taken over by their new owner at this run's request
  // Every copy found where the new map does not put it, by kind (moved by this run, moved
  // already on first use, or deleted meanwhile).
  uint64_t originals_moved = 0;
  uint64_t replicas_moved = 0;
  uint64_t already_moved = 0;  // moved on first use by a client meanwhile
  uint64_t gone = 0;           // deleted by clients meanwhile
  // Copies damaged on their old OSD with no intact other copy to stand in for them (both
  // damaged, say), as "OID on OSD N": they stay there (not counted as moved above), and
  // orthofs scrub lists them (misplaced, or unrecoverable when the other copy is in place).
  std::vector<std::string> left_damaged;
  uint64_t bytes_listed = 0;                                // of the copies to move, as listed
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> flows;  // (from, to) -> copies
  // In the old map only and empty now (holding no left_damaged copy): may be stopped.
  std::vector<uint32_t> removed_osds;
  double seconds = 0;
};

// Brings `cluster` to the map the OSDs run (a map file may be older than the cluster) and fails
// (UNAVAILABLE: try again later) while a rebalance runs: tools that judge every copy by its
// placement (fsck, scrub) would take copies still on their way for missing ones.
// It also waits (up to kRecoveryWaitForTools) while an OSD recovers: until its peers have
// replayed what it missed, it refuses listings, and its copies may be old.
Status RequireSettledCluster(ClusterClient* cluster, const std::string& what);
inline constexpr std::chrono::seconds kRecoveryWaitForTools{60};

// Waits until no OSD of `cluster` says it is recovering (an OSD that does not answer is not
// waited for); UNAVAILABLE naming `what` once `limit` has passed.
Status WaitWhileOsdsRecover(ClusterClient* cluster, const std::string& what,
                            std::chrono::milliseconds limit);

// `admin` must carry the admin identity (SetMap and Migrate are admin calls) and may run any
// map of the cluster (it is only used to find the OSDs).
Result<RebalanceReport> Rebalance(ClusterClient* admin, const ClusterMap& new_map,
                                  const RebalanceOptions& options = {});

}  // namespace orthofs
