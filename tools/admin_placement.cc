// orthofs subcommands on placement: locate, plan-rebalance, rebalance, placement-report.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "common/placement.h"
#include "common/placement_report.h"
#include "common/rebalance_plan.h"
#include "rpc/map_file.h"
#include "rpc/wire.h"
#include "tools/admin_commands.h"
#include "tools/rebalance.h"

namespace orthofs::admin {

// ---- locate ----

int RunLocate(const CommonFlags& common, uint32_t fnso, uint64_t fno, uint64_t first,
              uint64_t count, const std::string& type_name, bool json) {
  Result<ClusterMap> map = LoadClusterMapFile(common.map_path);
  if (!map.ok()) return Error(map.status().message());
  Result<Oid> typed = ParseOid("0/0/0/" + type_name);
  if (!typed.ok()) return Error(typed.status().message());
  Placement placement(*map);
  const uint32_t replica = placement.ReplicaOsdFor(fnso, fno);
  if (!json) {
    std::printf("file %u/%llu: replica OSD %u (%s)\n", fnso, static_cast<unsigned long long>(fno),
                replica, map->FindOsd(replica)->address.c_str());
    std::printf("%-12s %-9s %-8s\n", "OFFSET", "ORIGINAL", "REPLICA");
  }
  for (uint64_t offset = first; offset < first + count; ++offset) {
    Oid oid{fnso, fno, offset, typed->type, CopyFlag::kOriginal};
    const uint32_t original = placement.OriginalOsdFor(oid);
    if (json) {
      std::cout << nlohmann::json{{"oid", oid.ToString()},
                                  {"original_osd", original},
                                  {"replica_osd", replica}}
                       .dump()
                << "\n";
    } else {
      std::printf("%-12llu %-9u %-8u\n", static_cast<unsigned long long>(offset), original,
                  replica);
    }
  }
  return kExitOk;
}

// ---- plan-rebalance ----

// Lists every copy on every OSD and counts what a move to `new_map_path` would move: the
// moved fraction against the least any placement could move, originals and replicas, and the
// flows between OSDs. Changes nothing. Exit 3 when an OSD could not be listed (incomplete).
int RunPlanRebalance(const CommonFlags& common, const std::string& new_map_path, bool json) {
  auto cluster = Connect(common);
  if (!cluster.ok()) return Error(cluster.status().message());
  Result<ClusterMap> new_map = LoadClusterMapFile(new_map_path);
  if (!new_map.ok()) return Error(new_map.status().message());
  const ClusterMap& old_map = (*cluster)->map();
  if (Status st = CheckMapChange(old_map, *new_map); !st.ok()) {
    return Error(new_map_path + ": " + st.message());
  }
  RebalancePlan plan(old_map, *new_map);
  int unlisted = 0;
  for (const auto& osd : (*cluster)->osds()) {
    Status listed = Status::Ok();
    for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
      wire::ListRequest request;
      request.set_epoch(old_map.epoch);
      request.set_flag(static_cast<wire::CopyFlag>(flag));
      listed = osd->ListEveryPage(request, [&](const wire::ListResponse& page) {
        for (const wire::ObjectMeta& meta : page.objects()) {
          if (Result<Oid> oid = FromWire(meta.oid()); oid.ok()) plan.Count(*oid, osd->osd_id());
        }
      });
      if (!listed.ok()) break;
    }
    if (!listed.ok()) {
      ++unlisted;
      std::cerr << "orthofs: " << listed.ToString() << "\n";
    }
  }
  const RebalanceSummary& s = plan.summary();
  const double ideal = IdealMovedFraction(old_map, *new_map);
  if (json) {
    nlohmann::json flows = nlohmann::json::array();
    for (const auto& [edge, n] : s.flows) {
      flows.push_back({{"from", edge.first}, {"to", edge.second}, {"copies", n}});
    }
    std::cout << nlohmann::json{{"old_epoch", old_map.epoch},
                                {"new_epoch", new_map->epoch},
                                {"old_osds", old_map.osds.size()},
                                {"new_osds", new_map->osds.size()},
                                {"copies", s.copies},
                                {"moved", s.moved},
                                {"originals_moved", s.originals_moved},
                                {"replicas_moved", s.replicas_moved},
                                {"moved_fraction", s.moved_fraction()},
                                {"ideal_fraction", ideal},
                                {"misplaced", s.misplaced},
                                {"unlisted_osds", unlisted},
                                {"flows", flows}}
                     .dump()
              << "\n";
  } else {
    std::printf(
        "epoch %llu -> %llu, %zu -> %zu OSDs: %llu of %llu copies move (%.1f%%; the least "
        "any placement could move: %.1f%%)\n",
        static_cast<unsigned long long>(old_map.epoch),
        static_cast<unsigned long long>(new_map->epoch), old_map.osds.size(), new_map->osds.size(),
        static_cast<unsigned long long>(s.moved), static_cast<unsigned long long>(s.copies),
        100 * s.moved_fraction(), 100 * ideal);
    std::printf("originals moved %llu, replicas moved %llu, misplaced now %llu\n",
                static_cast<unsigned long long>(s.originals_moved),
                static_cast<unsigned long long>(s.replicas_moved),
                static_cast<unsigned long long>(s.misplaced));
    for (const auto& [edge, n] : s.flows) {
      std::printf("  osd %u -> osd %u: %llu copies\n", edge.first, edge.second,
                  static_cast<unsigned long long>(n));
    }
    if (unlisted > 0)
      std::printf("%d OSDs could not be listed: the plan is incomplete\n", unlisted);
  }
  return unlisted == 0 ? kExitOk : kExitDegraded;
}

// ---- rebalance ----

// Moves the cluster to `new_map_path` while it serves (tools/rebalance.h), with a progress
// line on stderr. A rerun resumes an interrupted one.
int RunRebalance(const CommonFlags& common, const std::string& new_map_path, bool json) {
  auto cluster = Connect(common);
  if (!cluster.ok()) return Error(cluster.status().message());
  Result<ClusterMap> new_map = LoadClusterMapFile(new_map_path);
  if (!new_map.ok()) return Error(new_map.status().message());
  RebalanceOptions options;
  int last_percent = -1;
  options.progress = [&](uint64_t done, uint64_t total) {
    const int percent = total == 0 ? 100 : static_cast<int>(100 * done / total);
    if (percent / 10 == last_percent / 10 && done != total) return;
    last_percent = percent;
    std::fprintf(stderr, "rebalance: %llu of %llu copies moved (%d%%)\n",
                 static_cast<unsigned long long>(done), static_cast<unsigned long long>(total),
                 percent);
  };
  Result<RebalanceReport> r = Rebalance(cluster->get(), *new_map, options);
  if (!r.ok()) {
    return Error(r.status().message() +
                 "\nThe cluster keeps serving; rerun orthofs rebalance to resume.");
  }
  if (json) {
    nlohmann::json flows = nlohmann::json::array();
    for (const auto& [edge, n] : r->flows) {
      flows.push_back({{"from", edge.first}, {"to", edge.second}, {"copies", n}});
    }
    std::cout << nlohmann::json{{"from_epoch", r->from_epoch},
                                {"to_epoch", r->to_epoch},
                                {"resumed", r->resumed},
                                {"moved", r->moved},
                                {"originals_moved", r->originals_moved},
                                {"replicas_moved", r->replicas_moved},
                                {"already_moved", r->already_moved},
                                {"gone", r->gone},
                                {"left_damaged", r->left_damaged},
                                {"bytes", r->bytes_listed},
                                {"seconds", r->seconds},
                                {"removed_osds", r->removed_osds},
                                {"flows", flows}}
                     .dump()
              << "\n";
    return kExitOk;
  }
  std::printf(
      "epoch %llu -> %llu%s: %llu copies to move (%llu originals, %llu replicas, %s): %llu moved "
      "now, %llu on first use by clients, %llu deleted meanwhile; %.1f s\n",
      static_cast<unsigned long long>(r->from_epoch), static_cast<unsigned long long>(r->to_epoch),
      r->resumed ? " (resumed)" : "",
      static_cast<unsigned long long>(r->originals_moved + r->replicas_moved),
      static_cast<unsigned long long>(r->originals_moved),
      static_cast<unsigned long long>(r->replicas_moved), HumanBytes(r->bytes_listed).c_str(),
      static_cast<unsigned long long>(r->moved), static_cast<unsigned long long>(r->already_moved),
      static_cast<unsigned long long>(r->gone), r->seconds);
  for (const auto& [edge, n] : r->flows) {
    std::printf("  osd %u -> osd %u: %llu copies\n", edge.first, edge.second,
                static_cast<unsigned long long>(n));
  }
  for (uint32_t id : r->removed_osds) {
    std::printf("OSD %u holds nothing any more and may be stopped\n", id);
  }
  if (!r->left_damaged.empty()) {
    // The rebalance is over all the same: nothing intact of these is left to move.
    std::printf(
        "%zu damaged copies had no intact other copy to stand in for them and stay where they "
        "were (orthofs scrub lists them too):\n",
        r->left_damaged.size());
    for (const std::string& copy : r->left_damaged) std::printf("  %s\n", copy.c_str());
    std::printf(
        "every other copy is where map epoch %llu puts it; give every node and client "
        "that map file\n",
        static_cast<unsigned long long>(r->to_epoch));
    return kExitOk;
  }
  std::printf(
      "every copy is where map epoch %llu puts it; give every node and client that map "
      "file\n",
      static_cast<unsigned long long>(r->to_epoch));
  return kExitOk;
}

// ---- placement-report ----

int RunPlacementReport(const std::string& map_path, int osd_count, uint64_t files, uint64_t objects,
                       const std::string& strategy_name, uint32_t fnso, bool json) {
  ClusterMap map;
  if (!map_path.empty()) {
    Result<ClusterMap> loaded = LoadClusterMapFile(map_path);
    if (!loaded.ok()) return Error(loaded.status().message());
    map = *loaded;
  } else {
    for (int i = 0; i < osd_count; ++i) {
      map.osds.push_back(
          OsdInfo{static_cast<uint32_t>(i), "127.0.0.1:" + std::to_string(7000 + i), 1.0});
    }
  }
  if (!strategy_name.empty()) {
    Result<PlacementStrategy> strategy = ParsePlacementStrategy(strategy_name);
    if (!strategy.ok()) return Error(strategy.status().message());
    map.strategy = *strategy;
  }
  if (Status st = ValidateClusterMap(map); !st.ok()) return Error(st.message());
  Placement placement(map);
  PlacementReport report = ComputePlacementReport(placement, fnso, files, objects);
  if (json) {
    nlohmann::json osds = nlohmann::json::array();
    for (const auto& o : report.osds) {
      osds.push_back({{"id", o.osd_id},
                      {"originals", o.originals},
                      {"replicas", o.replicas},
                      {"total", o.total()}});
    }
    std::cout << nlohmann::json{{"strategy", PlacementStrategyName(map.strategy)},
                                {"files", files},
                                {"objects_per_file", objects},
                                {"osds", osds},
                                {"originals_imbalance", report.originals_imbalance},
                                {"replicas_imbalance", report.replicas_imbalance},
                                {"total_imbalance", report.total_imbalance},
                                {"migrated", report.migrated},
                                {"conflicts", report.conflicts}}
                     .dump()
              << "\n";
  } else {
    std::printf(
        "strategy %s, %zu OSDs, %llu files x %llu objects = %llu originals + %llu "
        "replicas\n",
        std::string(PlacementStrategyName(map.strategy)).c_str(), map.osds.size(),
        static_cast<unsigned long long>(files), static_cast<unsigned long long>(objects),
        static_cast<unsigned long long>(report.objects),
        static_cast<unsigned long long>(report.objects));
    std::printf("%-6s %12s %12s %12s\n", "OSD", "ORIGINALS", "REPLICAS", "TOTAL");
    for (const auto& o : report.osds) {
      std::printf(
          "%-6u %12llu %12llu %12llu\n", o.osd_id, static_cast<unsigned long long>(o.originals),
          static_cast<unsigned long long>(o.replicas), static_cast<unsigned long long>(o.total()));
    }
    std::printf("imbalance (max/mean): originals %.4f, replicas %.4f, total %.4f\n",
                report.originals_imbalance, report.replicas_imbalance, report.total_imbalance);
    if (map.strategy == PlacementStrategy::kMigration) {
      std::printf("migrated off the replica OSD: %llu (%.2f%%)\n",
                  static_cast<unsigned long long>(report.migrated),
                  report.objects ? 100.0 * report.migrated / report.objects : 0.0);
    }
    std::printf("original/replica conflicts: %llu\n",
                static_cast<unsigned long long>(report.conflicts));
  }
  return report.conflicts == 0 ? kExitOk : kExitError;
}

}  // namespace orthofs::admin
