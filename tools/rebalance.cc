#include "tools/rebalance.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <set>
#include <thread>

#include "common/map_view.h"
#include "common/rebalance_plan.h"
#include "rpc/wire.h"

namespace orthofs {
namespace {

// The cluster's own view of its maps, from the first OSD that answers.
Result<std::pair<ClusterMap, std::optional<ClusterMap>>> ClusterMaps(ClusterClient* admin) {
  Status last = Status::Unavailable("no OSD in the map");
  for (OsdClient* osd : admin->osds()) {
    Result<wire::MapResponse> answer = osd->GetMap(wire::GetMapRequest());
    if (!answer.ok()) {
      last = answer.status();
      continue;
    }
    Result<ClusterMap> map = ParseClusterMap(answer->map());
    if (!map.ok()) return map.status();
    std::optional<ClusterMap> previous;
    if (!answer->previous_map().empty()) {
      Result<ClusterMap> parsed = ParseClusterMap(answer->previous_map());
      if (!parsed.ok()) return parsed.status();
      previous = *parsed;
    }
    return std::make_pair(*map, previous);
  }
  return last;
}

bool SameMap(const ClusterMap& a, const ClusterMap& b) {
  return FormatClusterMap(a) == FormatClusterMap(b);
}

// Every OSD of both maps, new ones first: they must run the new map before any client is sent
// to them.
std::vector<OsdInfo> OsdsOfBoth(const ClusterMap& old_map, const ClusterMap& new_map) {
  std::vector<OsdInfo> out;
  for (const OsdInfo& osd : new_map.osds) {
    if (old_map.FindOsd(osd.id) == nullptr) out.push_back(osd);
  }
  for (const OsdInfo& osd : new_map.osds) {
    if (old_map.FindOsd(osd.id) != nullptr) out.push_back(osd);
  }
  for (const OsdInfo& osd : old_map.osds) {
    if (new_map.FindOsd(osd.id) == nullptr) out.push_back(osd);
  }
  return out;
}

Status SetMapOn(OsdClient* osd, const ClusterMap& map, const std::optional<ClusterMap>& previous) {
  wire::SetMapRequest request;
  request.set_map(FormatClusterMap(map));
  if (previous) request.set_previous_map(FormatClusterMap(*previous));
  Result<wire::SetMapResponse> answer = osd->SetMap(request);
  // UNAVAILABLE here may also mean "installed, but old requests still ran": asking again waits.
  for (int attempt = 0; !answer.ok() && attempt < 3 && answer.status().Is(StatusCode::kUnavailable);
       ++attempt) {
    answer = osd->SetMap(request);
  }
  if (!answer.ok()) {
    return answer.status().WithContext(osd->name() + ": ");
  }
  return Status::Ok();
}

struct Move {
  Oid copy;
  uint32_t from;
  uint32_t to;
  uint64_t length;
};

// The copies `osd` holds but does not own under its (new) map.
Status ListUnowned(OsdClient* osd, uint32_t osd_id, const Placement& placement, uint64_t epoch,
                   std::vector<Move>* out) {
  for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
    wire::ListRequest request;
    request.set_epoch(epoch);
    request.set_flag(static_cast<wire::CopyFlag>(flag));
    request.set_unowned(true);
    Status listed = osd->ListEveryPage(request, [&](const wire::ListResponse& page) {
      for (const wire::ObjectMeta& meta : page.objects()) {
        Result<Oid> copy = FromWire(meta.oid());
        if (!copy.ok()) continue;
        out->push_back(Move{*copy, osd_id, placement.OsdFor(*copy), meta.length()});
      }
      // A damaged copy moves too: its new owner takes the other copy's bytes instead.
      for (const wire::Oid& damaged : page.corrupt()) {
        Result<Oid> copy = FromWire(damaged);
        if (!copy.ok() || placement.OsdFor(*copy) == osd_id) continue;
        out->push_back(Move{*copy, osd_id, placement.OsdFor(*copy), 0});
      }
      if (page.corrupt_size() > 0) {
        spdlog::warn(
            "{} holds {} damaged copies it no longer owns: they move from their other "
            "copies",
            osd->name(), page.corrupt_size());
      }
    });
    if (!listed.ok()) {
      return listed.WithContext("listing " + osd->name() + ": ");
    }
  }
  return Status::Ok();
}

}  // namespace

Status RequireSettledCluster(ClusterClient* cluster, const std::string& what) {
  Result<wire::MapResponse> answer = cluster->CatchUpWithCluster();
  if (!answer.ok()) return Status::Ok();  // nobody answers: the tool's own calls will say so
  Result<ClusterMap> map = ParseClusterMap(answer->map());
  if (!map.ok()) return map.status();
  if (!answer->previous_map().empty()) {
    return Status::Unavailable(what +
                               " cannot judge copies while the cluster rebalances to "
                               "map epoch " +
                               std::to_string(map->epoch) +
                               ": run it after orthofs rebalance has finished");
  }
  return WaitWhileOsdsRecover(cluster, what, kRecoveryWaitForTools);
}

Status WaitWhileOsdsRecover(ClusterClient* cluster, const std::string& what,
                            std::chrono::milliseconds limit) {
  const auto give_up_at = std::chrono::steady_clock::now() + limit;
  for (OsdClient* osd : cluster->osds()) {
    bool said = false;
    for (;;) {
      Result<wire::HealthResponse> health = osd->Health(wire::HealthRequest());
      if (!health.ok() || !health->recovering()) break;  // one down: the tool's calls say so
      if (std::chrono::steady_clock::now() >= give_up_at) {
        return Status::Unavailable(what + ": " + osd->name() +
                                   " is still recovering (its peers replay what it missed): "
                                   "run it again when that has finished");
      }
      if (!said) {
        spdlog::info("{}: waiting for {} to finish its recovery", what, osd->name());
        said = true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  return Status::Ok();
}

Result<RebalanceReport> Rebalance(ClusterClient* admin, const ClusterMap& new_map,
                                  const RebalanceOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  ORTHOFS_RETURN_IF_ERROR(ValidateClusterMap(new_map));
  auto maps = ClusterMaps(admin);
  if (!maps.ok()) return maps.status();
  const auto& [running, running_previous] = *maps;
  RebalanceReport report;
  report.to_epoch = new_map.epoch;
  ClusterMap old_map;
  if (SameMap(running, new_map)) {
    if (!running_previous) {
      // Done before (or never needed): still end it on any OSD a crash left behind.
      report.from_epoch = new_map.epoch;
      old_map = new_map;
    } else {
      report.resumed = true;
      old_map = *running_previous;
    }
  } else {
    if (running_previous) {
      return Status::InvalidArgument("the cluster is still rebalancing to epoch " +
                                     std::to_string(running.epoch) +
                                     ": finish that first (orthofs rebalance with that map)");
    }
    ORTHOFS_RETURN_IF_ERROR(CheckMapChange(running, new_map));
    old_map = running;
  }
  report.from_epoch = old_map.epoch;

  // Connections to every OSD of both maps.
  std::map<uint32_t, std::unique_ptr<OsdClient>> osds;
  const std::vector<OsdInfo> everyone = OsdsOfBoth(old_map, new_map);
  RpcOptions rpc;
  rpc.deadline = std::chrono::minutes(2);  // a Migrate batch fsyncs each copy it takes
  rpc.tls = admin->rpc_options().tls;
  for (const OsdInfo& osd : everyone) osds[osd.id] = std::make_unique<OsdClient>(osd, rpc);
  // Every OSD must answer, an added one too (it may have just been started).
  for (const OsdInfo& osd : everyone) {
    Result<wire::HealthResponse> health = osds[osd.id]->Health(wire::HealthRequest());
    for (int attempt = 0; !health.ok() && attempt < 100; ++attempt) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      health = osds[osd.id]->Health(wire::HealthRequest());
    }
    if (!health.ok()) {
      return Status(
          health.status().code(),
          osds[osd.id]->name() + " does not answer (start it first): " + health.status().message());
    }
  }

  // 1. Every OSD runs the new map and knows the old one.
  if (report.from_epoch != report.to_epoch) {
    for (const OsdInfo& osd : everyone) {
      ORTHOFS_RETURN_IF_ERROR(SetMapOn(osds[osd.id].get(), new_map, old_map));
    }
    spdlog::info("every OSD runs map epoch {} (from {})", new_map.epoch, old_map.epoch);
  }

  // 2. Move what no longer belongs where it is, until nothing is left (clients taking copies
  // over meanwhile only shorten the list).
  const Placement placement(new_map);
  // Damaged copies with nothing intact to stand in, by their key: they stay where they are.
  std::set<std::string> left_damaged;
  std::set<uint32_t> holding_damaged;  // the OSDs they stay on
  for (int round = 0;; ++round) {
    std::vector<Move> moves;
    for (const OsdInfo& osd : everyone) {
      ORTHOFS_RETURN_IF_ERROR(
          ListUnowned(osds[osd.id].get(), osd.id, placement, new_map.epoch, &moves));
    }
    std::erase_if(moves, [&](const Move& m) { return left_damaged.contains(m.copy.ToString()); });
    if (moves.empty()) break;
    if (round >= 3) {
      return Status::Unavailable(std::to_string(moves.size()) +
                                 " copies are still not where the new map puts them after " +
                                 std::to_string(round) + " rounds; run orthofs rebalance again");
    }
    std::map<std::pair<uint32_t, uint32_t>, std::vector<const Move*>> by_flow;
    for (const Move& m : moves) by_flow[{m.from, m.to}].push_back(&m);
    uint64_t done = 0;
    if (options.progress) options.progress(0, moves.size());
    for (const auto& [flow, list] : by_flow) {
      OsdClient* destination = osds[flow.second].get();
      for (size_t i = 0; i < list.size(); i += options.batch) {
        wire::MigrateRequest request;
        request.set_epoch(new_map.epoch);
        request.set_source(flow.first);
        const size_t end = std::min(list.size(), i + options.batch);
        for (size_t j = i; j < end; ++j) *request.add_oids() = ToWire(list[j]->copy);
        Result<wire::MigrateResponse> answer = destination->Migrate(request);
        if (!answer.ok()) {
          return Status(answer.status().code(),
                        "moving copies from OSD " + std::to_string(flow.first) + " to " +
                            destination->name() + ": " + answer.status().message());
        }
        report.moved += answer->moved();
        report.already_moved += answer->present();
        report.gone += answer->absent();
        for (const wire::Oid& damaged : answer->left_damaged()) {
          Result<Oid> copy = FromWire(damaged);
          if (copy.ok() && left_damaged.insert(copy->ToString()).second) {
            report.left_damaged.push_back(copy->ToString() + " on OSD " +
                                          std::to_string(flow.first));
            holding_damaged.insert(flow.first);
          }
        }
        for (size_t j = i; j < end; ++j) {
          if (left_damaged.contains(list[j]->copy.ToString())) continue;  // not moved
          ++report.flows[flow];
          report.bytes_listed += list[j]->length;
          if (list[j]->copy.flag == CopyFlag::kOriginal) {
            ++report.originals_moved;
          } else {
            ++report.replicas_moved;
          }
        }
        done += end - i;
        if (options.progress) options.progress(done, moves.size());
      }
    }
  }

  // 3. A removed OSD may still hold repair records without a copy (a delete made while the
  // other copy's OSD was down): they are replayed now, or the OSD must not go away yet.
  for (const OsdInfo& osd : old_map.osds) {
    if (new_map.FindOsd(osd.id) != nullptr) continue;
    wire::RepairRequest repair;
    repair.set_epoch(new_map.epoch);
    Result<wire::RepairResponse> replayed = osds[osd.id]->Repair(repair);
    if (!replayed.ok()) {
      return Status(replayed.status().code(), "replaying the repair records of removed " +
                                                  osds[osd.id]->name() + ": " +
                                                  replayed.status().message());
    }
    if (replayed->remaining() > 0) {
      return Status::Unavailable(osds[osd.id]->name() + " still holds " +
                                 std::to_string(replayed->remaining()) +
                                 " repair records for copies on OSDs that do not answer; bring "
                                 "them back and rerun before removing it");
    }
  }

  // 4. Nothing left on an old holder: end the rebalance.
  for (const OsdInfo& osd : new_map.osds) {
    ORTHOFS_RETURN_IF_ERROR(SetMapOn(osds[osd.id].get(), new_map, std::nullopt));
  }
  for (const OsdInfo& osd : old_map.osds) {
    if (new_map.FindOsd(osd.id) == nullptr && !holding_damaged.contains(osd.id)) {
      report.removed_osds.push_back(osd.id);
    }
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace orthofs
