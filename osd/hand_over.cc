#include "osd/hand_over.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>
#include <vector>

#include "common/checksum.h"
#include "common/limits.h"
#include "common/object_record.h"
#include "osd/object_records.h"
#include "rpc/wire.h"

namespace orthofs {
namespace {

// How long a rebalance call waits for the other OSD to reach our epoch (it catches up from its
// peers once it sees our request) before the caller hears UNAVAILABLE.
constexpr auto kPeerCatchUpWait = std::chrono::seconds(5);

// Calls `call` again while the other OSD answers STALE_EPOCH (it is still catching up to our map,
// which our request makes it do), for up to kPeerCatchUpWait.
template <typename Call>
auto RetryWhileCatchingUp(Call call) -> decltype(call()) {
  auto result = call();
  const auto give_up = std::chrono::steady_clock::now() + kPeerCatchUpWait;
  while (!result.ok() && result.status().Is(StatusCode::kStaleEpoch) &&
         std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    result = call();
  }
  return result;
}

}  // namespace

HandOver::HandOver(uint32_t osd_id, ObjectStore* store, ObjectCache* cache, ObjectLocks* locks,
                   PeerClients* peers, MapCatchUp* catch_up, RepairWorker* repair,
                   OsdCounters* counters)
    : osd_id_(osd_id),
      store_(store),
      cache_(cache),
      locks_(locks),
      peers_(peers),
      catch_up_(catch_up),
      repair_(repair),
      counters_(counters) {}

Result<wire::FetchResponse> HandOver::FetchFrom(const MapView& view, uint32_t source,
                                                const Oid& oid) {
  OsdClient* peer = peers_->For(view, source);
  if (peer == nullptr) {
    return Status::Internal("OSD " + std::to_string(source) + " is in neither map");
  }
  wire::FetchRequest fetch;
  fetch.set_epoch(view.epoch());
  *fetch.mutable_oid() = ToWire(oid);
  Result<wire::FetchResponse> fetched = Status::Internal("not fetched");
  // Bytes that fail their checksum on the way are asked for once more.
  for (int attempt = 0; attempt < 2; ++attempt) {
    fetched = RetryWhileCatchingUp([&] { return peer->Fetch(fetch); });
    if (!fetched.ok()) {
      const std::string why = "object " + oid.ToString() + " is moving here from OSD " +
                              std::to_string(source) +
                              ", which did not hand it over: " + fetched.status().message();
      // Neither its bytes nor its summary could be read there.
      if (fetched.status().Is(StatusCode::kCorruption)) return Status::Corruption(why);
      return Status::Unavailable(why);
    }
    if (!fetched->found() || fetched->tombstone() || fetched->damaged() ||
        ObjectChecksum(fetched->data()) == fetched->checksum()) {
      return fetched;
    }
  }
  return Status::Unavailable("object " + oid.ToString() + " from OSD " + std::to_string(source) +
                             " failed its checksum twice on its way here");
}

Result<wire::FetchResponse> HandOver::FetchIntact(const MapView& view, uint32_t source,
                                                  const Oid& oid) {
  Result<wire::FetchResponse> fetched = FetchFrom(view, source, oid);
  if (!fetched.ok()) {
    if (!fetched.status().Is(StatusCode::kCorruption)) return fetched;
    return Status::Corruption(fetched.status().message() +
                              " (its bytes and summary are damaged: nothing tells whether its "
                              "other copy is as new)");
  }
  if (!fetched->damaged()) return fetched;
  const std::string what =
      "object " + oid.ToString() + " on OSD " + std::to_string(source) + " is damaged";
  const uint64_t version = fetched->version();
  if (fetched->tombstone()) {
    // A deletion: its summary is all there is to move.
    wire::FetchResponse deleted = std::move(*fetched);
    deleted.set_damaged(false);
    ++counters_->damaged_copies_replaced;
    return deleted;
  }
  if (fetched->has_repair_version()) {
    return Status::Corruption(what +
                              ", and its other copy missed writes (a repair record to "
                              "version " +
                              std::to_string(fetched->repair_version()) +
                              "): no intact copy of its last version is left");
  }
  // The other copy stands in, read as any client would: its holder verifies it and takes it
  // over first if it is moving too. (Its holder is never this OSD: the layout is orthogonal.)
  const Oid other = oid.OtherCopy();
  const uint32_t holder = view.current().OsdFor(other);
  OsdClient* peer = peers_->For(view, holder);
  if (peer == nullptr) return Status::Internal("OSD " + std::to_string(holder) + " is unknown");
  wire::ReadRequest read;
  read.set_epoch(view.epoch());
  *read.mutable_oid() = ToWire(other);
  read.set_for_stand_in(true);
  Result<wire::ReadResponse> intact = RetryWhileCatchingUp([&] { return peer->Read(read); });
  const std::string where = "; its other copy on OSD " + std::to_string(holder);
  if (!intact.ok()) {
    if (intact.status().Is(StatusCode::kNotFound) || intact.status().Is(StatusCode::kCorruption)) {
      return Status::Corruption(what + where + " cannot stand in: " + intact.status().message());
    }
    return Status::Unavailable(what + where + " cannot be read now: " + intact.status().message());
  }
  if (ObjectChecksum(intact->data()) != intact->meta().checksum()) {
    return Status::Unavailable(what + where + " failed its checksum on its way here");
  }
  if (intact->meta().version() < version) {
    return Status::Corruption(what + where + " is older (version " +
                              std::to_string(intact->meta().version()) + " < " +
                              std::to_string(version) + "): it cannot stand in");
  }
  spdlog::warn("{}; it moves here from its intact other copy on OSD {} (version {})", what, holder,
               intact->meta().version());
  ++counters_->damaged_copies_replaced;
  wire::FetchResponse replaced;
  replaced.set_found(true);
  replaced.set_version(intact->meta().version());
  replaced.set_checksum(intact->meta().checksum());
  replaced.set_data(std::move(*intact->mutable_data()));
  return replaced;
}

std::shared_ptr<const CachedObject> HandOver::StageTakenCopy(const Oid& oid, const std::string& key,
                                                             wire::FetchResponse* fetched,
                                                             ObjectStore::Batch* batch) {
  std::shared_ptr<const CachedObject> object;
  if (fetched->tombstone()) {
    batch->PutTombstone(key, fetched->version(), false, 0);
  } else {
    auto taken = std::make_shared<CachedObject>();
    taken->version = fetched->version();
    taken->checksum = fetched->checksum();
    taken->data = std::move(*fetched->mutable_data());
    batch->Put(key, taken->version, taken->checksum, taken->data, false, 0);
    object = std::move(taken);
  }
  if (fetched->has_repair_version()) {
    batch->PutRepairRecord(OtherCopyKey(oid), fetched->repair_version());
  }
  return object;
}

void HandOver::TakenOver(const std::string& key, bool repair_record) {
  if (repair_record) RepairRecorded(counters_, repair_);
  locks_->Committed(key);
  ++counters_->copies_taken_over;
}

Result<std::shared_ptr<const CachedObject>> HandOver::TakeOver(const MapView& view, const Oid& oid,
                                                               const std::string& key,
                                                               uint32_t source,
                                                               uint64_t* tombstone_version,
                                                               bool stand_in) {
  if (tombstone_version) *tombstone_version = 0;
  Result<wire::FetchResponse> fetched =
      stand_in ? FetchIntact(view, source, oid) : FetchFrom(view, source, oid);
  if (!fetched.ok()) return fetched.status();
  if (fetched->damaged()) {
    return Status::Corruption("object " + oid.ToString() + " on OSD " + std::to_string(source) +
                              " is damaged");
  }
  if (!fetched->found()) return Status::NotFound("object absent");
  ObjectStore::Batch batch;
  std::shared_ptr<const CachedObject> object = StageTakenCopy(oid, key, &*fetched, &batch);
  // Durable here before the source forgets it.
  ORTHOFS_RETURN_IF_ERROR(store_->Commit(&batch, /*sync=*/true));
  TakenOver(key, fetched->has_repair_version());
  ORTHOFS_RETURN_IF_ERROR(DiscardAt(view, source, oid));
  if (!object) {
    if (tombstone_version) *tombstone_version = fetched->version();
    return Status::NotFound("object deleted");
  }
  return object;
}

Status HandOver::DiscardAt(const MapView& view, uint32_t source, const Oid& oid) {
  OsdClient* peer = peers_->For(view, source);
  if (peer == nullptr) return Status::Internal("OSD " + std::to_string(source) + " is unknown");
  wire::DiscardRequest discard;
  discard.set_epoch(view.epoch());
  *discard.mutable_oid() = ToWire(oid);
  Result<wire::DiscardResponse> dropped =
      RetryWhileCatchingUp([&] { return peer->Discard(discard); });
  if (!dropped.ok()) {
    return Status::Unavailable("object " + oid.ToString() + " moved here, but OSD " +
                               std::to_string(source) +
                               " did not drop its old copy: " + dropped.status().message());
  }
  return Status::Ok();
}

Status HandOver::TakeOverFile(const MapView& view, CopyFlag flag, uint32_t fnso, uint64_t fno,
                              std::optional<ObjectType> type) {
  for (const OsdInfo& holder : view.previous()->map().osds) {
    if (holder.id == osd_id_) continue;
    OsdClient* peer = peers_->For(view, holder.id);
    if (peer == nullptr) continue;
    std::string token;
    do {
      wire::ListRequest list;
      list.set_epoch(view.epoch());
      list.set_flag(static_cast<wire::CopyFlag>(flag));
      list.set_fnso(fnso);
      list.set_fno(fno);
      if (type) list.set_type(static_cast<wire::ObjectType>(*type));
      list.set_unowned(true);
      list.set_page_token(token);
      Result<wire::ListResponse> page = RetryWhileCatchingUp([&] { return peer->List(list); });
      if (!page.ok()) {
        return Status::Unavailable("listing a file while it moves: OSD " +
                                   std::to_string(holder.id) +
                                   " did not answer: " + page.status().message());
      }
      ORTHOFS_RETURN_IF_ERROR(TakeOverListed(view, holder.id, *page));
      token = page->next_page_token();
    } while (!token.empty());
  }
  return Status::Ok();
}

Status HandOver::TakeOverListed(const MapView& view, uint32_t holder,
                                const wire::ListResponse& page) {
  // Damaged copies move too (from their other copies, FetchIntact).
  std::vector<const wire::Oid*> listed;
  for (const wire::ObjectMeta& meta : page.objects()) listed.push_back(&meta.oid());
  for (const wire::Oid& damaged : page.corrupt()) listed.push_back(&damaged);
  for (const wire::Oid* wire_oid : listed) {
    Result<Oid> oid = FromWire(*wire_oid);
    if (!oid.ok() || view.current().OsdFor(*oid) != osd_id_) continue;
    const std::string key = EncodeStoreKey(*oid);
    std::lock_guard lock(locks_->For(key));
    uint64_t tombstone = 0;
    Result<std::shared_ptr<const CachedObject>> local =
        LoadLocalLocked(cache_, store_, key, &tombstone);
    if (local.ok() || tombstone != 0) {
      ORTHOFS_RETURN_IF_ERROR(DiscardAt(view, holder, *oid));  // a stale leftover
      continue;
    }
    if (!local.status().Is(StatusCode::kNotFound)) return local.status();
    Result<std::shared_ptr<const CachedObject>> taken = TakeOver(view, *oid, key, holder, nullptr);
    if (!taken.ok() && taken.status().Is(StatusCode::kCorruption)) {
      // Nothing intact to move: it stays there (orthofs rebalance reports it).
      spdlog::error("{}", taken.status().message());
      continue;
    }
    if (!taken.ok() && !taken.status().Is(StatusCode::kNotFound)) return taken.status();
  }
  return Status::Ok();
}

Result<Oid> HandOver::CheckHandOver(const MapView& view, uint64_t epoch,
                                    const wire::Oid& wire_oid) {
  ORTHOFS_RETURN_IF_ERROR(catch_up_->CheckSettledEpoch(epoch));
  Result<Oid> oid = FromWire(wire_oid);
  if (!oid.ok()) return oid.status();
  if (view.current().OsdFor(*oid) == osd_id_) {
    return Status::WrongOsd("OSD " + std::to_string(osd_id_) + " owns " + oid->ToString() +
                            ": it keeps it");
  }
  return oid;
}

Status HandOver::Fetch(const MapView& view, const wire::FetchRequest& request,
                       wire::FetchResponse* response) {
  Result<Oid> oid = CheckHandOver(view, request.epoch(), request.oid());
  if (!oid.ok()) return oid.status();
  // No lock: under the settled map no request changes a copy this OSD does not own.
  const std::string key = EncodeStoreKey(*oid);
  Result<StoredObject> stored = store_->Get(key);
  if (!stored.ok()) {
    if (stored.status().Is(StatusCode::kNotFound)) return Status::Ok();
    if (!stored.status().Is(StatusCode::kCorruption)) return stored.status();
    // Damaged bytes: what the summary says of them, for the new owner to judge the other copy.
    Result<ObjectRecordSummary> summary = store_->GetSummary(key);
    if (!summary.ok()) return stored.status();
    response->set_found(true);
    response->set_damaged(true);
    response->set_tombstone(summary->tombstone);
    response->set_version(summary->version);
    Result<uint64_t> repair = store_->GetRepairRecord(OtherCopyKey(*oid));
    if (repair.ok()) response->set_repair_version(*repair);
    return Status::Ok();
  }
  response->set_found(true);
  response->set_tombstone(stored->tombstone);
  response->set_version(stored->version);
  response->set_checksum(stored->checksum);
  response->set_data(std::move(stored->data));
  Result<uint64_t> repair = store_->GetRepairRecord(OtherCopyKey(*oid));
  if (repair.ok()) response->set_repair_version(*repair);
  counters_->bytes_out += response->data().size();
  return Status::Ok();
}

Status HandOver::Discard(const MapView& view, const wire::DiscardRequest& request,
                         wire::DiscardResponse* response) {
  Result<Oid> oid = CheckHandOver(view, request.epoch(), request.oid());
  if (!oid.ok()) return oid.status();
  const std::string key = EncodeStoreKey(*oid);
  // No lock here: under the settled map no request changes a copy this OSD does not own, and the
  // new owner asks for each key under its own lock. (Taking ours would let two OSDs handing
  // copies to each other wait for each other.)
  uint64_t tombstone = 0;
  Result<std::shared_ptr<const CachedObject>> current =
      LoadLocalLocked(cache_, store_, key, &tombstone);
  const bool live = current.ok();
  if (!live && !current.status().Is(StatusCode::kNotFound) &&
      !current.status().Is(StatusCode::kCorruption)) {
    return current.status();
  }
  const bool corrupt = !live && current.status().Is(StatusCode::kCorruption);
  if (live || tombstone != 0 || corrupt) {
    ObjectStore::Batch batch;
    uint64_t length = live ? (*current)->data.size() : 0;
    if (corrupt) {
      Result<std::string> raw = store_->GetRecordBytes(key);
      if (raw.ok() && raw->size() > kObjectRecordHeaderSize) {
        length = raw->size() - kObjectRecordHeaderSize;
      }
    }
    batch.Delete(key, live || corrupt, length);
    batch.DeleteRepairRecord(OtherCopyKey(*oid));
    ORTHOFS_RETURN_IF_ERROR(store_->Commit(&batch, false));
    cache_->Erase(key);
    locks_->Committed(key);
    ++counters_->copies_discarded;
    response->set_existed(true);
  }
  return Status::Ok();
}

Status HandOver::Migrate(const MapView& view, const wire::MigrateRequest& request,
                         wire::MigrateResponse* response) {
  ORTHOFS_RETURN_IF_ERROR(catch_up_->CheckEpoch(view, request.epoch()));
  const uint32_t source = request.source();
  if (source == osd_id_ || view.FindOsd(source) == nullptr) {
    return Status::InvalidArgument("source OSD " + std::to_string(source) +
                                   " is not another OSD of the maps");
  }
  if (request.oids_size() > static_cast<int>(kMaxListLimit)) {
    return Status::InvalidArgument("too many objects in one migrate");
  }
  std::vector<Oid> oids;
  std::vector<std::string> keys;
  for (const wire::Oid& wire_oid : request.oids()) {
    Result<Oid> oid = catch_up_->CheckObject(view, request.epoch(), wire_oid);
    if (!oid.ok()) return oid.status();
    std::string key = EncodeStoreKey(*oid);
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) {
      return Status::InvalidArgument("object " + oid->ToString() + " twice");
    }
    oids.push_back(*oid);
    keys.push_back(std::move(key));
  }
  // The whole batch under its stripes' locks (ascending, as Transact), committed with one WAL
  // fsync; only then does the source drop its copies.
  std::vector<std::unique_lock<std::mutex>> locks = locks_->LockAll(keys);
  ObjectStore::Batch batch;
  std::vector<std::pair<size_t, bool>> taken;  // index, with a repair record
  std::vector<size_t> leftovers;               // taken over on first use already
  // The staged copies' bytes, which the batch refers to until Commit.
  std::vector<std::shared_ptr<const CachedObject>> staged;
  for (size_t i = 0; i < oids.size(); ++i) {
    uint64_t tombstone = 0;
    Result<std::shared_ptr<const CachedObject>> local =
        LoadLocalLocked(cache_, store_, keys[i], &tombstone);
    if (local.ok() || tombstone != 0) {
      leftovers.push_back(i);
      continue;
    }
    if (!local.status().Is(StatusCode::kNotFound)) return local.status();
    Result<wire::FetchResponse> fetched = FetchIntact(view, source, oids[i]);
    if (!fetched.ok() && fetched.status().Is(StatusCode::kCorruption)) {
      // Nothing intact to move: the damaged copy stays at the source, and the rest moves.
      spdlog::error("{}; it stays on OSD {}", fetched.status().message(), source);
      *response->add_left_damaged() = ToWire(oids[i]);
      continue;
    }
    if (!fetched.ok()) return fetched.status();
    if (!fetched->found()) {
      response->set_absent(response->absent() + 1);
      continue;
    }
    staged.push_back(StageTakenCopy(oids[i], keys[i], &*fetched, &batch));
    taken.emplace_back(i, fetched->has_repair_version());
  }
  if (!batch.empty()) {
    ORTHOFS_RETURN_IF_ERROR(store_->Commit(&batch, /*sync=*/true));
  }
  for (const auto& [i, repair_record] : taken) TakenOver(keys[i], repair_record);
  for (const auto& [i, repair_record] : taken) {
    ORTHOFS_RETURN_IF_ERROR(DiscardAt(view, source, oids[i]));
  }
  for (size_t i : leftovers) {
    ORTHOFS_RETURN_IF_ERROR(DiscardAt(view, source, oids[i]));
  }
  response->set_moved(static_cast<uint32_t>(taken.size()));
  response->set_present(static_cast<uint32_t>(leftovers.size()));
  return Status::Ok();
}

}  // namespace orthofs
