#include "osd/repair_worker.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "common/oid.h"
#include "rpc/wire.h"

namespace orthofs {
namespace {

// Between asks of a peer whose pushes to us failed: its channel to us reconnects meanwhile.
constexpr std::chrono::milliseconds kRecoveryPause{100};
constexpr std::chrono::milliseconds kMaxRecoveryPause{1000};
constexpr std::chrono::milliseconds kMinPassGap{100};
// How long a recovering OSD keeps asking a peer again for records made during its replays.
constexpr std::chrono::seconds kChaseNewRecords{2};
// Pushes made durable by one sync of their OSD (their records removed after it).
constexpr size_t kPushesPerSync = 256;

}  // namespace

RepairWorker::RepairWorker(uint32_t osd_id, const MapHolder* maps, ObjectStore* store,
                           ObjectLocks* locks, const RepairWorkerOptions& options)
    : osd_id_(osd_id), maps_(maps), store_(store), locks_(locks), options_(options) {
  thread_ = std::thread([this] { Loop(); });
}

RepairWorker::~RepairWorker() { Stop(); }

void RepairWorker::Stop() {
  {
    std::lock_guard lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void RepairWorker::AskPeersToReplay(bool until_none_left, bool fence) {
  std::vector<std::thread> asks;
  const std::shared_ptr<const MapView> view = maps_->Current();
  for (const OsdInfo& osd : view->current().map().osds) {
    if (osd.id == osd_id_) continue;
    asks.emplace_back([this, osd, epoch = view->epoch(), until_none_left, fence] {
      // Not the pushing clients (they wait for a reconnecting OSD): a peer that is down now
      // holds nothing it could send us, so asking it fails at once.
      RpcOptions once;
      once.deadline = options_.rpc.deadline * 2;
      once.tls = options_.rpc.tls;
      once.canceller = options_.rpc.canceller;
      OsdClient peer(osd, once);
      const uint32_t id = osd.id;
      wire::RepairRequest r;
      r.set_epoch(epoch);
      r.set_for_osd(osd_id_);
      r.set_fence(fence);
      // Our copies the peer holds records for are stale until it has pushed them, so we ask
      // until it has, within a limit: past it we serve reads (a peer that never gets through
      // would keep our copies unreadable for ever).
      const auto give_up_at = std::chrono::steady_clock::now() + options_.recovery_limit;
      const auto chase_until = std::chrono::steady_clock::now() + kChaseNewRecords;
      for (int ask = 1;; ++ask) {
        Result<wire::RepairResponse> answer = peer.Repair(r);
        if (answer.ok()) {
          if (answer->repaired() > 0 || answer->remaining() > 0) {
            spdlog::info("recovery: OSD {} repaired {} copies, {} records left", id,
                         answer->repaired(), answer->remaining());
          }
          // Records for us made during its pass (a change that passed the fence check just
          // before it): our copies are stale until it pushes them too, so ask again at once,
          // for a while. Not unfenced: busy clients' changes would be chased for ever.
          const bool more = until_none_left && answer->remaining_for_osd() > 0 &&
                            std::chrono::steady_clock::now() < chase_until;
          if (answer->unreachable() == 0 && !more) return;
          // Its pushes to us failed (its channel to us still in its reconnect backoff, or our
          // store slow to answer): the pass stopped at the first, so ask again after a pause.
        } else {
          // A long replay to us outlasts one call: the peer's pass goes on, and the next ask
          // waits for it to end. So we ask again while the peer answers its health check; a
          // peer down or hung holds nothing it can send us now.
          const bool busy = answer.status().Is(StatusCode::kDeadlineExceeded) &&
                            peer.Health(wire::HealthRequest{}).ok();
          if (!busy) {
            spdlog::info("recovery: OSD {} did not answer ({}); it replays its records when it can",
                         id, answer.status().ToString());
            return;
          }
        }
        if (std::chrono::steady_clock::now() >= give_up_at) {
          ++recovery_limits_reached_;
          spdlog::warn(
              "recovery: OSD {} has not replayed all it holds for us after {} s; serving reads "
              "(those copies stay stale until it does)",
              id, options_.recovery_limit.count());
          return;
        }
        ++recovery_asks_repeated_;
        spdlog::info("recovery: OSD {} still replaying to us ({} asks)", id, ask);
        if (answer.ok() && answer->unreachable() > 0)
          std::this_thread::sleep_for(std::min(ask * kRecoveryPause, kMaxRecoveryPause));
      }
    });
  }
  for (auto& t : asks) t.join();
}

void RepairWorker::Loop() {
  std::unique_lock lock(stop_mu_);
  // The first pass (records from before a restart) comes an interval after the start, as
  // before records woke the loop.
  stop_cv_.wait_for(lock, options_.interval, [&] { return stopping_; });
  while (!stopping_) {
    // A new record wakes the loop at once; records left (their other copy's OSD down) are
    // tried again every interval.
    if (!pending_.load()) {
      stop_cv_.wait_for(lock, options_.interval, [&] { return stopping_ || pending_.load(); });
    }
    if (stopping_) break;
    if (!pending_.exchange(false) && records_left_.load() == 0) continue;
    lock.unlock();
    RunPass();
    lock.lock();
    // However fast records come, passes start at most this often (a pass waits on a push to
    // an OSD that is down).
    stop_cv_.wait_for(lock, kMinPassGap, [&] { return stopping_; });
  }
}

void RepairWorker::PeerRestarted(uint32_t osd_id) {
  // A pass under way may be waiting on a push to it: that push goes now, too.
  if (OsdClient* peer = Peer(osd_id)) peer->ReconnectNow();
}

OsdClient* RepairWorker::Peer(uint32_t osd_id) {
  if (osd_id == osd_id_) return nullptr;
  std::lock_guard lock(peers_mu_);
  auto it = peers_.find(osd_id);
  if (it != peers_.end()) return it->second.get();
  const OsdInfo* info = maps_->Current()->FindOsd(osd_id);
  if (info == nullptr) return nullptr;
  return peers_.emplace(osd_id, std::make_unique<OsdClient>(*info, options_.rpc))
      .first->second.get();
}

Result<RepairWorker::CopyState> RepairWorker::ReadOurCopy(const std::string& key, bool with_data) {
  CopyState state;
  Result<ObjectRecordSummary> summary = Status::NotFound("");
  if (with_data) {
    Result<StoredObject> stored = store_->Get(key);
    summary = stored.ok() ? Result<ObjectRecordSummary>(stored->summary()) : stored.status();
    if (stored.ok()) state.data = std::move(stored->data);
  } else {
    summary = store_->GetSummary(key);
  }
  if (!summary.ok()) {
    if (summary.status().Is(StatusCode::kNotFound)) return state;
    return summary.status();
  }
  state.exists = !summary->tombstone;
  state.tombstone = summary->tombstone;
  state.version = summary->version;
  return state;
}

Status RepairWorker::Push(const Oid& other, const CopyState& ours, uint64_t recorded_version) {
  const std::shared_ptr<const MapView> view = maps_->Current();
  OsdClient* peer = Peer(view->current().OsdFor(other));
  if (peer == nullptr) return Status::InvalidArgument("no other OSD holds " + other.ToString());
  const uint64_t epoch = view->epoch();
  if (ours.exists) {
    wire::WriteRequest r;
    r.set_epoch(epoch);
    *r.mutable_oid() = ToWire(other);
    r.set_data(ours.data);
    r.set_replace(true);
    r.set_set_version(ours.version);
    return peer->Write(r).status();
  }
  // Our copy's deletion reaches the other copy only where that is older. A data copy absent
  // here with no tombstone was deleted by a delete of both copies (a record asked for
  // afterwards holds the version it found, 0): the other copy may since hold a newer write of
  // its own. A metadata copy's delete that found it absent records at 0 as well (it keeps no
  // tombstone: see Delete), and the other copy must go, unconditionally as that delete was.
  // A data record above 0 was taken while our copy existed at that version: the deletion came
  // after it, and a push of that version may have reached the other copy after the deletion
  // did (a push crossing a delete). So the other copy goes up to that version, included; a
  // newer write of its own, at a later floor, stays.
  uint64_t deleted_at = ours.tombstone ? ours.version : recorded_version;
  if (deleted_at == 0 && other.type == ObjectType::kData) return Status::Ok();
  if (!ours.tombstone && other.type == ObjectType::kData) ++deleted_at;
  wire::DeleteRequest r;
  r.set_epoch(epoch);
  *r.mutable_oid() = ToWire(other);
  if (deleted_at > 0) r.set_set_version(deleted_at);
  return peer->Delete(r).status();
}

Status RepairWorker::SyncPeer(uint32_t osd_id) {
  OsdClient* peer = Peer(osd_id);
  if (peer == nullptr) return Status::InvalidArgument("no OSD " + std::to_string(osd_id));
  wire::SyncRequest r;
  r.set_epoch(maps_->Current()->epoch());
  return peer->Sync(r).status();
}

void RepairWorker::SettlePushed(std::vector<Pushed>* pushed, std::set<uint32_t>* unreachable,
                                wire::RepairResponse* result) {
  std::map<uint32_t, Status> synced;
  for (const Pushed& p : *pushed) {
    if (!synced.count(p.other_osd)) synced.emplace(p.other_osd, SyncPeer(p.other_osd));
  }
  for (const Pushed& p : *pushed) {
    const Status& sync = synced.at(p.other_osd);
    if (!sync.ok()) {
      // The pushes may be lost with its page cache: the records stay, and go again.
      if (unreachable->insert(p.other_osd).second) {
        spdlog::warn("repair: OSD {} did not sync what was pushed to it: {}", p.other_osd,
                     sync.ToString());
      }
      result->set_unreachable(result->unreachable() + 1);
      continue;
    }
    // Done unless our copy changed since we read it (a newer record then covers it).
    std::lock_guard lock(locks_->For(p.our_key));
    Result<CopyState> now = ReadOurCopy(p.our_key, /*with_data=*/false);
    if (!now.ok() || !now->SameAs(p.ours)) continue;
    ObjectStore::Batch batch;
    batch.DeleteRepairRecord(p.other_key);
    if (Status st = store_->Commit(&batch, false); !st.ok()) {
      spdlog::error("repair: cannot remove the record of {}: {}", p.other_key, st.ToString());
      continue;
    }
    result->set_repaired(result->repaired() + 1);
  }
  pushed->clear();
}

wire::RepairResponse RepairWorker::RunPass(std::optional<uint32_t> only_osd) {
  std::lock_guard pass(pass_mu_);
  wire::RepairResponse result;
  Result<std::vector<std::pair<std::string, uint64_t>>> records = store_->RepairRecords();
  if (!records.ok()) {
    spdlog::error("repair: cannot list repair records: {}", records.status().ToString());
    return result;
  }
  result.set_records(records->size());
  std::set<uint32_t> unreachable;  // one failed push per OSD per pass is enough to wait
  std::vector<Pushed> pushed;
  for (const auto& [other_key, recorded_version] : *records) {
    Result<Oid> other = DecodeStoreKey(other_key);
    if (!other.ok()) continue;
    const uint32_t other_osd = maps_->Current()->current().OsdFor(*other);
    if (only_osd && other_osd != *only_osd) continue;
    if (unreachable.count(other_osd)) {
      result.set_unreachable(result.unreachable() + 1);
      continue;
    }
    const std::string our_key = EncodeStoreKey(other->OtherCopy());
    Result<CopyState> ours = [&] {
      std::lock_guard lock(locks_->For(our_key));
      return ReadOurCopy(our_key);
    }();
    if (!ours.ok()) {
      spdlog::error("repair: cannot read {}: {}", our_key, ours.status().ToString());
      continue;
    }
    // Read after our copy: if a rebalance handed the copy to its new owner meanwhile (which
    // removes copy and record in one commit), the record is gone and "our copy is absent" must
    // not be pushed as a delete.
    if (!store_->GetRepairRecord(other_key).ok()) continue;
    if (Status st = Push(*other, *ours, recorded_version); !st.ok()) {
      if (st.Is(StatusCode::kUnavailable) || st.Is(StatusCode::kDeadlineExceeded)) {
        unreachable.insert(other_osd);
        result.set_unreachable(result.unreachable() + 1);
      } else if (st.Is(StatusCode::kNoSpace)) {
        if (refusing_full_.insert(other_osd).second) {
          spdlog::warn("repair: OSD {} refuses pushes as full, its records wait: {}", other_osd,
                       st.ToString());
        }
      } else {
        spdlog::warn("repair: {} on OSD {} refused: {}", other->ToString(), other_osd,
                     st.ToString());
      }
      continue;
    }
    // A full OSD still takes deletes: only a written copy ends the episode.
    if (ours->exists && refusing_full_.erase(other_osd) > 0) {
      spdlog::info("repair: OSD {} takes pushes again", other_osd);
    }
    // One sync per OSD for a batch of pushes, not one per push: a pass of hundreds of records
    // (an OSD's restart under load) took 5 ms a record, and the restarted OSD refuses
    // clients' changes until its peers' passes end.
    ours->data.clear();
    pushed.push_back(Pushed{other_key, our_key, other_osd, std::move(*ours)});
    if (pushed.size() >= kPushesPerSync) SettlePushed(&pushed, &unreachable, &result);
  }
  SettlePushed(&pushed, &unreachable, &result);
  Result<std::vector<std::pair<std::string, uint64_t>>> left = store_->RepairRecords();
  result.set_remaining(left.ok() ? left->size() : result.records() - result.repaired());
  if (only_osd && left.ok()) {
    const std::shared_ptr<const MapView> view = maps_->Current();
    result.set_remaining_for_osd(std::count_if(left->begin(), left->end(), [&](const auto& record) {
      Result<Oid> other = DecodeStoreKey(record.first);
      return other.ok() && view->current().OsdFor(*other) == *only_osd;
    }));
  }
  records_left_ = result.remaining();
  repaired_total_ += result.repaired();
  if (result.records() > 0) {
    spdlog::info("repair pass: {} records, {} copies repaired, {} waiting for their OSD, {} left",
                 result.records(), result.repaired(), result.unreachable(), result.remaining());
  }
  return result;
}

}  // namespace orthofs
