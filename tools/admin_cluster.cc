// orthofs subcommands about the cluster's OSDs: status, stats, log-level, drop-caches, repair.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/cluster_map.h"
#include "common/prefetch_window.h"
#include "common/thrashing_control.h"
#include "common/usable_space.h"
#include "rpc/wire.h"
#include "tools/admin_commands.h"

namespace orthofs::admin {
namespace {

// Calls `ask` on every OSD of the map, or on those in `only`; `ask` prints one line and returns
// whether the OSD answered. Exit 3 if one did not.
int ForEachChosenOsd(const CommonFlags& common, const std::vector<uint32_t>& only,
                     const std::function<bool(OsdClient*)>& ask) {
  auto cluster = Connect(common);
  if (!cluster.ok()) return Error(cluster.status().message());
  for (uint32_t id : only) {
    if ((*cluster)->Osd(id) == nullptr) {
      return Error("OSD " + std::to_string(id) + " is not in the map");
    }
  }
  int failed = 0;
  for (const auto& osd : (*cluster)->osds()) {
    if (!only.empty() && std::find(only.begin(), only.end(), osd->osd_id()) == only.end()) {
      continue;
    }
    if (!ask(osd)) ++failed;
  }
  return failed == 0 ? kExitOk : kExitDegraded;
}

// The OSDs a map lists, by id and address, as text ("0 127.0.0.1:7000, 1 ...").
std::string OsdList(const ClusterMap& map) {
  std::string list;
  for (const OsdInfo& osd : map.osds) {
    list += (list.empty() ? "" : ", ") + std::to_string(osd.id) + " " + osd.address;
  }
  return list;
}

// Why the map this command was given is not the one the answering OSDs run, or nothing: a map
// listing another set of OSDs at the same epoch would place every object elsewhere than they
// do (a mount with it fails with "belongs on OSD n").
std::optional<std::string> MapDiffersFromCluster(ClusterClient* cluster,
                                                 const std::vector<uint32_t>& answered) {
  for (uint32_t id : answered) {
    Result<wire::MapResponse> running = cluster->Osd(id)->GetMap(wire::GetMapRequest());
    if (!running.ok()) continue;
    Result<ClusterMap> theirs = ParseClusterMap(running->map());
    if (!theirs.ok()) continue;
    const ClusterMap& ours = cluster->map();
    if (theirs->epoch != ours.epoch) return std::nullopt;  // the epoch column says so already
    if (OsdList(*theirs) != OsdList(ours) || theirs->object_size != ours.object_size) {
      return "this map (" + OsdList(ours) + ") is not the one the OSDs run at epoch " +
             std::to_string(ours.epoch) + " (" + OsdList(*theirs) + "): use the cluster's map";
    }
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

// ---- status ----

int RunStatus(const CommonFlags& common, bool json) {
  auto cluster = Connect(common);
  if (!cluster.ok()) return Error(cluster.status().message());
  nlohmann::json out = nlohmann::json::array();
  int down = 0;
  std::vector<std::string> stopped;  // "OSD 3: why", for the lines after the table
  std::vector<uint32_t> answered;
  std::vector<OsdSpace> spaces;
  if (!json) {
    std::printf("%-4s %-22s %-5s %6s %10s %11s %11s %11s\n", "ID", "ADDRESS", "STATE", "EPOCH",
                "OBJECTS", "BYTES", "CAPACITY", "AVAILABLE");
  }
  for (const auto& osd : (*cluster)->osds()) {
    wire::StatsRequest request;
    request.set_epoch((*cluster)->map().epoch);
    Result<wire::StatsResponse> stats = osd->Stats(request);
    nlohmann::json row = {{"id", osd->osd_id()}, {"address", osd->address()}};
    if (!stats.ok()) {
      ++down;
      row["state"] = "down";
      row["error"] = stats.status().message();
      if (!json) {
        std::printf("%-4u %-22s %-5s %s\n", osd->osd_id(), osd->address().c_str(), "down",
                    stats.status().ToString().c_str());
      }
    } else {
      const bool epoch_ok = stats->epoch() == (*cluster)->map().epoch;
      // Up, but refusing writes until it restarts (a disk error stopped its store).
      const bool read_only = !stats->writes_stopped().empty();
      row["state"] = read_only ? "read-only" : "up";
      if (read_only) {
        row["writes_stopped"] = stats->writes_stopped();
        stopped.push_back("OSD " + std::to_string(osd->osd_id()) + ": " + stats->writes_stopped());
      }
      row["epoch"] = stats->epoch();
      row["epoch_matches_map"] = epoch_ok;
      row["objects"] = stats->objects();
      row["bytes"] = stats->bytes();
      row["capacity_bytes"] = stats->capacity_bytes();
      row["available_bytes"] = stats->available_bytes();
      row["reserve_bytes"] = stats->reserve_bytes();
      answered.push_back(osd->osd_id());
      const OsdInfo* info = nullptr;
      for (const OsdInfo& i : (*cluster)->map().osds) {
        if (i.id == osd->osd_id()) info = &i;
      }
      const std::string& address = osd->address();
      spaces.push_back(OsdSpace{osd->osd_id(), info != nullptr ? info->weight : 1.0,
                                stats->capacity_bytes(), stats->available_bytes(),
                                stats->reserve_bytes(), stats->filesystem_id(),
                                address.substr(0, address.rfind(':'))});
      if (!json) {
        std::printf("%-4u %-22s %-5s %6llu%s %10llu %11s %11s %11s\n", osd->osd_id(),
                    osd->address().c_str(), read_only ? "ro" : "up",
                    static_cast<unsigned long long>(stats->epoch()), epoch_ok ? "" : "!",
                    static_cast<unsigned long long>(stats->objects()),
                    HumanBytes(stats->bytes()).c_str(), HumanBytes(stats->capacity_bytes()).c_str(),
                    HumanBytes(stats->available_bytes()).c_str());
      }
    }
    out.push_back(row);
  }
  // What files can still take: two copies, reserves, the fullest OSD by its share.
  const UsableSpace usable = ComputeUsableSpace(spaces);
  const std::optional<std::string> wrong_map = MapDiffersFromCluster(cluster->get(), answered);
  const bool plaintext_refused =
      common.tls.insecure && answered.empty() && !(*cluster)->osds().empty();
  if (json) {
    nlohmann::json report = {{"epoch", (*cluster)->map().epoch},
                             {"osds", out},
                             {"usable_capacity_bytes", usable.capacity_bytes},
                             {"usable_available_bytes", usable.available_bytes}};
    if (wrong_map) report["map_differs"] = *wrong_map;
    std::cout << report.dump() << "\n";
  } else {
    std::printf("map epoch %llu, %zu OSDs, %d down\n",
                static_cast<unsigned long long>((*cluster)->map().epoch), (*cluster)->osds().size(),
                down);
    if (!answered.empty()) {
      std::printf("usable for files: %s of %s free (two copies; bounded by OSD %u)\n",
                  HumanBytes(usable.available_bytes).c_str(),
                  HumanBytes(usable.capacity_bytes).c_str(), usable.bounding_osd);
    }
  }
  if (wrong_map) std::cerr << "orthofs: " << *wrong_map << "\n";
  for (const std::string& line : stopped) std::cerr << "orthofs: " << line << "\n";
  if (plaintext_refused) {
    std::cerr << "orthofs: no OSD answered a plaintext (--insecure) connection; if the cluster "
                 "runs mutual TLS, drop --insecure and give --tls-dir\n";
  }
  return down == 0 && stopped.empty() && !wrong_map ? kExitOk : kExitDegraded;
}

// ---- stats ----

// Every OSD's counters side by side with the cluster total, and the figures the papers judge
// prefetching by.
int RunStats(const CommonFlags& common, bool json, bool reset) {
  auto cluster = Connect(common);
  if (!cluster.ok()) return Error(cluster.status().message());
  std::vector<std::pair<uint32_t, std::optional<std::map<std::string, uint64_t>>>> per_osd;
  std::map<std::string, uint64_t> total;
  int down = 0;
  for (const auto& osd : (*cluster)->osds()) {
    wire::StatsRequest request;
    request.set_epoch((*cluster)->map().epoch);
    request.set_reset(reset);
    Result<wire::StatsResponse> stats = osd->Stats(request);
    if (!stats.ok()) {
      ++down;
      std::cerr << "orthofs: " << stats.status().ToString() << "\n";
      per_osd.emplace_back(osd->osd_id(), std::nullopt);
      continue;
    }
    std::map<std::string, uint64_t> counters(stats->counters().begin(), stats->counters().end());
    for (const auto& [name, value] : counters) total[name] += value;
    per_osd.emplace_back(osd->osd_id(), std::move(counters));
  }
  const uint64_t demand = total["cache_hits"] + total["cache_misses"];
  const double thrashing =
      DegreeOfThrashing(total["cache_prefetch_evicted_unused"], total["cache_prefetch_inserts"]);
  const double synchronous = SynchronousReadRatio(total["cache_misses"], demand);
  if (json) {
    nlohmann::json osds = nlohmann::json::array();
    for (const auto& [id, counters] : per_osd) {
      nlohmann::json row = {{"id", id}, {"state", counters ? "up" : "down"}};
      if (counters) row["counters"] = *counters;
      osds.push_back(row);
    }
    std::cout << nlohmann::json{{"prefetch", PrefetchModeName((*cluster)->map().prefetch.mode)},
                                {"osds", osds},
                                {"cluster", total},
                                {"degree_of_thrashing", thrashing},
                                {"synchronous_read_ratio", synchronous}}
                     .dump()
              << "\n";
    return down == 0 ? kExitOk : kExitDegraded;
  }
  std::printf("%-32s", "COUNTER");
  for (const auto& [id, counters] : per_osd)
    std::printf(" %12s", ("osd." + std::to_string(id)).c_str());
  std::printf(" %14s\n", "CLUSTER");
  for (const auto& [name, sum] : total) {
    std::printf("%-32s", name.c_str());
    for (const auto& [id, counters] : per_osd) {
      if (!counters) {
        std::printf(" %12s", "down");
        continue;
      }
      auto it = counters->find(name);
      std::printf(" %12llu",
                  static_cast<unsigned long long>(it == counters->end() ? 0 : it->second));
    }
    std::printf(" %14llu\n", static_cast<unsigned long long>(sum));
  }
  std::printf(
      "prefetch %s: degree of thrashing %.4f (prefetched objects evicted unused / prefetched), "
      "synchronous read ratio %.4f (cache misses / demand reads)\n",
      std::string(PrefetchModeName((*cluster)->map().prefetch.mode)).c_str(), thrashing,
      synchronous);
  return down == 0 ? kExitOk : kExitDegraded;
}

// ---- log-level, drop-caches ----

int RunLogLevel(const CommonFlags& common, const std::string& level,
                const std::vector<uint32_t>& only) {
  return ForEachChosenOsd(common, only, [&level](OsdClient* osd) {
    wire::LogLevelRequest request;
    request.set_level(level);
    Result<wire::LogLevelResponse> r = osd->SetLogLevel(request);
    if (!r.ok()) {
      std::printf("osd %-3u %s\n", osd->osd_id(), r.status().ToString().c_str());
      return false;
    }
    std::printf("osd %-3u %s -> %s\n", osd->osd_id(), r->previous().c_str(), level.c_str());
    return true;
  });
}

// Every OSD (or those named) empties its caches of object bytes.
int RunDropCaches(const CommonFlags& common, const std::vector<uint32_t>& only) {
  return ForEachChosenOsd(common, only, [](OsdClient* osd) {
    Result<wire::DropCachesResponse> r = osd->DropCaches({});
    if (!r.ok()) {
      std::printf("osd %-3u %s\n", osd->osd_id(), r.status().ToString().c_str());
      return false;
    }
    std::printf("osd %-3u dropped %s\n", osd->osd_id(), HumanBytes(r->dropped_bytes()).c_str());
    return true;
  });
}

// ---- repair ----

// Every OSD replays its repair records now (each also does so in the background). Exit 3 when
// records are left (their other copy's OSD is still down) or an OSD did not answer.
int RunRepair(const CommonFlags& common, bool json) {
  auto cluster = Connect(common);
  if (!cluster.ok()) return Error(cluster.status().message());
  (void)(*cluster)->CatchUpWithCluster();  // none answering: each Repair below says so
  nlohmann::json out = nlohmann::json::array();
  uint64_t repaired = 0, left = 0;
  int unanswered = 0;
  // A copy: following a later map below replaces the client's list.
  const std::vector<OsdClient*> osds = (*cluster)->osds();
  for (OsdClient* osd : osds) {
    wire::RepairRequest request;
    request.set_epoch((*cluster)->map().epoch);
    Result<wire::RepairResponse> r = osd->Repair(request);
    // An OSD still on the older map (a rebalance cut short after some OSDs took the new one)
    // catches up when asked with the later epoch, and one on a later map hands it over.
    for (int attempt = 0; !r.ok() && r.status().Is(StatusCode::kStaleEpoch) &&
                          attempt < ClusterClient::kMaxMapRetries;
         ++attempt) {
      (*cluster)->FollowMapChange(osd, request.epoch());
      request.set_epoch((*cluster)->map().epoch);
      r = osd->Repair(request);
    }
    nlohmann::json row = {{"id", osd->osd_id()}};
    if (!r.ok()) {
      ++unanswered;
      row["error"] = r.status().ToString();
      if (!json) std::printf("osd %-3u %s\n", osd->osd_id(), r.status().ToString().c_str());
    } else {
      repaired += r->repaired();
      left += r->remaining();
      row["records"] = r->records();
      row["repaired"] = r->repaired();
      row["unreachable"] = r->unreachable();
      row["remaining"] = r->remaining();
      if (!json) {
        std::printf("osd %-3u %llu records, %llu copies repaired, %llu left\n", osd->osd_id(),
                    static_cast<unsigned long long>(r->records()),
                    static_cast<unsigned long long>(r->repaired()),
                    static_cast<unsigned long long>(r->remaining()));
      }
    }
    out.push_back(row);
  }
  if (json) {
    std::cout << nlohmann::json{{"repaired", repaired}, {"remaining", left}, {"osds", out}}.dump()
              << "\n";
  } else {
    std::printf("%llu copies repaired, %llu records left, %d OSDs did not answer\n",
                static_cast<unsigned long long>(repaired), static_cast<unsigned long long>(left),
                unanswered);
  }
  return left == 0 && unanswered == 0 ? kExitOk : kExitDegraded;
}

}  // namespace orthofs::admin
