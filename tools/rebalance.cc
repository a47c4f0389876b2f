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

// One run of Rebalance, step by step (Run), over connections of its own to every OSD of both
// maps.
class RebalanceRun {
 public:
  RebalanceRun(ClusterClient* admin, const ClusterMap& new_map, const RebalanceOptions& options)
      : admin_(admin), new_map_(new_map), options_(options) {}

  Result<RebalanceReport> Run() {
    const auto start = std::chrono::steady_clock::now();
    ORTHOFS_RETURN_IF_ERROR(ValidateClusterMap(new_map_));
    ORTHOFS_RETURN_IF_ERROR(ChooseOldMap());
    ORTHOFS_RETURN_IF_ERROR(ConnectToEveryOsd());
    ORTHOFS_RETURN_IF_ERROR(AdoptNewMap());
    ORTHOFS_RETURN_IF_ERROR(MoveUnownedCopies());
    ORTHOFS_RETURN_IF_ERROR(ReplayRemovedOsdsRepairs());
    ORTHOFS_RETURN_IF_ERROR(EndRebalance());
    report_.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return std::move(report_);
  }

 private:
  // The map to move from, by what the cluster runs: a new rebalance, one to resume, or one
  // done already.
  Status ChooseOldMap() {
    auto maps = ClusterMaps(admin_);
    if (!maps.ok()) return maps.status();
    const auto& [running, running_previous] = *maps;
    report_.to_epoch = new_map_.epoch;
    if (SameMap(running, new_map_)) {
      if (!running_previous) {
        // Done before (or never needed): still end it on any OSD a crash left behind.
        report_.from_epoch = new_map_.epoch;
        old_map_ = new_map_;
      } else {
        report_.resumed = true;
        old_map_ = *running_previous;
      }
    } else {
      if (running_previous) {
        return Status::InvalidArgument("the cluster is still rebalancing to epoch " +
                                       std::to_string(running.epoch) +
                                       ": finish that first (orthofs rebalance with that map)");
      }
      ORTHOFS_RETURN_IF_ERROR(CheckMapChange(running, new_map_));
      old_map_ = running;
    }
    report_.from_epoch = old_map_.epoch;
    return Status::Ok();
  }

  // Connections to every OSD of both maps, once each answers.
  Status ConnectToEveryOsd() {
    everyone_ = OsdsOfBoth(old_map_, new_map_);
    RpcOptions rpc;
    rpc.deadline = std::chrono::minutes(2);  // a Migrate batch fsyncs each copy it takes
    rpc.tls = admin_->rpc_options().tls;
    for (const OsdInfo& osd : everyone_) osds_[osd.id] = std::make_unique<OsdClient>(osd, rpc);
    // Every OSD must answer, an added one too (it may have just been started).
    for (const OsdInfo& osd : everyone_) {
      Result<wire::HealthResponse> health = osds_[osd.id]->Health(wire::HealthRequest());
      for (int attempt = 0; !health.ok() && attempt < 100; ++attempt) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        health = osds_[osd.id]->Health(wire::HealthRequest());
      }
      if (!health.ok()) {
        return Status(health.status().code(),
                      osds_[osd.id]->name() +
                          " does not answer (start it first): " + health.status().message());
      }
    }
    return Status::Ok();
  }

  // 1. Every OSD runs the new map and knows the old one.
  Status AdoptNewMap() {
    if (report_.from_epoch == report_.to_epoch) return Status::Ok();
    for (const OsdInfo& osd : everyone_) {
      ORTHOFS_RETURN_IF_ERROR(SetMapOn(osds_[osd.id].get(), new_map_, old_map_));
    }
    spdlog::info("every OSD runs map epoch {} (from {})", new_map_.epoch, old_map_.epoch);
    return Status::Ok();
  }

  // 2. Move what no longer belongs where it is, until nothing is left (clients taking copies
  // over meanwhile only shorten the list).
  Status MoveUnownedCopies() {
    const Placement placement(new_map_);
    for (int round = 0;; ++round) {
      std::vector<Move> moves;
      for (const OsdInfo& osd : everyone_) {
        ORTHOFS_RETURN_IF_ERROR(
            ListUnowned(osds_[osd.id].get(), osd.id, placement, new_map_.epoch, &moves));
      }
      std::erase_if(moves,
                    [&](const Move& m) { return left_damaged_.contains(m.copy.ToString()); });
      if (moves.empty()) return Status::Ok();
      if (round >= 3) {
        return Status::Unavailable(std::to_string(moves.size()) +
                                   " copies are still not where the new map puts them after " +
                                   std::to_string(round) + " rounds; run orthofs rebalance again");
      }
      ORTHOFS_RETURN_IF_ERROR(MoveRound(moves));
    }
  }

  // Asks each copy's new owner to take it over, in batches by flow (from, to).
  Status MoveRound(const std::vector<Move>& moves) {
    std::map<std::pair<uint32_t, uint32_t>, std::vector<const Move*>> by_flow;
    for (const Move& m : moves) by_flow[{m.from, m.to}].push_back(&m);
    uint64_t done = 0;
    if (options_.progress) options_.progress(0, moves.size());
    for (const auto& [flow, list] : by_flow) {
      for (size_t i = 0; i < list.size(); i += options_.batch) {
        const size_t end = std::min(list.size(), i + options_.batch);
        ORTHOFS_RETURN_IF_ERROR(MigrateBatch(flow, list, i, end));
        done += end - i;
        if (options_.progress) options_.progress(done, moves.size());
      }
    }
    return Status::Ok();
  }

  // list[begin, end) of `flow`, in one Migrate call to the destination; counted in the report.
  Status MigrateBatch(const std::pair<uint32_t, uint32_t>& flow,
                      const std::vector<const Move*>& list, size_t begin, size_t end) {
    OsdClient* destination = osds_[flow.second].get();
    wire::MigrateRequest request;
    request.set_epoch(new_map_.epoch);
    request.set_source(flow.first);
    for (size_t j = begin; j < end; ++j) *request.add_oids() = ToWire(list[j]->copy);
    Result<wire::MigrateResponse> answer = destination->Migrate(request);
    if (!answer.ok()) {
      return Status(answer.status().code(), "moving copies from OSD " + std::to_string(flow.first) +
                                                " to " + destination->name() + ": " +
                                                answer.status().message());
    }
    report_.moved += answer->moved();
    report_.already_moved += answer->present();
    report_.gone += answer->absent();
    for (const wire::Oid& damaged : answer->left_damaged()) {
      Result<Oid> copy = FromWire(damaged);
      if (copy.ok() && left_damaged_.insert(copy->ToString()).second) {
        report_.left_damaged.push_back(copy->ToString() + " on OSD " + std::to_string(flow.first));
        holding_damaged_.insert(flow.first);
      }
    }
    for (size_t j = begin; j < end; ++j) {
      if (left_damaged_.contains(list[j]->copy.ToString())) continue;  // not moved
      ++report_.flows[flow];
      report_.bytes_listed += list[j]->length;
      if (list[j]->copy.flag == CopyFlag::kOriginal) {
        ++report_.originals_moved;
      } else {
        ++report_.replicas_moved;
      }
    }
    return Status::Ok();
  }

  // 3. A removed OSD may still hold repair records without a copy (a delete made while the
  // other copy's OSD was down): they are replayed now, or the OSD must not go away yet.
  Status ReplayRemovedOsdsRepairs() {
    for (const OsdInfo& osd : old_map_.osds) {
      if (new_map_.FindOsd(osd.id) != nullptr) continue;
      wire::RepairRequest repair;
      repair.set_epoch(new_map_.epoch);
      Result<wire::RepairResponse> replayed = osds_[osd.id]->Repair(repair);
      if (!replayed.ok()) {
        return Status(replayed.status().code(), "replaying the repair records of removed " +
                                                    osds_[osd.id]->name() + ": " +
                                                    replayed.status().message());
      }
      if (replayed->remaining() > 0) {
        return Status::Unavailable(osds_[osd.id]->name() + " still holds " +
                                   std::to_string(replayed->remaining()) +
                                   " repair records for copies on OSDs that do not answer; bring "
                                   "them back and rerun before removing it");
      }
    }
    return Status::Ok();
  }

  // 4. Nothing left on an old holder: end the rebalance.
  Status EndRebalance() {
    for (const OsdInfo& osd : new_map_.osds) {
      ORTHOFS_RETURN_IF_ERROR(SetMapOn(osds_[osd.id].get(), new_map_, std::nullopt));
    }
    for (const OsdInfo& osd : old_map_.osds) {
      if (new_map_.FindOsd(osd.id) == nullptr && !holding_damaged_.contains(osd.id)) {
        report_.removed_osds.push_back(osd.id);
      }
    }
    return Status::Ok();
  }

  ClusterClient* const admin_;
  const ClusterMap& new_map_;
  const RebalanceOptions& options_;
  RebalanceReport report_;
  ClusterMap old_map_;
  std::vector<OsdInfo> everyone_;  // OsdsOfBoth
  std::map<uint32_t, std::unique_ptr<OsdClient>> osds_;
  // Damaged copies with nothing intact to stand in, by their key: they stay where they are.
  std::set<std::string> left_damaged_;
  std::set<uint32_t> holding_damaged_;  // the OSDs they stay on
};

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
  return RebalanceRun(admin, new_map, options).Run();
}

}  // namespace orthofs
