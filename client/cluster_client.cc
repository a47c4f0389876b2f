// ClusterClient: routing by placement, map following, single-copy calls and listings. The
// two-copy protocol is in two_copies.cc.
#include "client/cluster_client.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <deque>
#include <future>
#include <latch>
#include <map>
#include <optional>
#include <system_error>
#include <thread>

#include "common/await_all.h"
#include "common/checksum.h"
#include "common/limits.h"
#include "common/object_version.h"
#include "common/peer_role.h"
#include "rpc/wire.h"

namespace orthofs {

ClusterClient::ClusterClient(const ClusterMap& map, const RpcOptions& options) : options_(options) {
  InstallMap(map);
  silence_watch_ = std::thread([this] { WatchForSilence(); });
}

ClusterClient::~ClusterClient() {
  {
    std::lock_guard lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  silence_watch_.join();
  while (resends_in_flight_.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

void ClusterClient::WatchForSilence() {
  std::unique_lock lock(stop_mu_);
  while (!stop_cv_.wait_for(lock, OsdClient::kSilenceTick, [this] { return stopping_; })) {
    // The current map's OSDs: a connection to an OSD no longer in the map carries no calls.
    for (OsdClient* osd : state()->osds) osd->WatchSilence();
  }
}

OsdClient* ClusterClient::MapState::Osd(uint32_t osd_id) const {
  for (OsdClient* c : osds) {
    if (c->osd_id() == osd_id) return c;
  }
  return nullptr;
}

void ClusterClient::InstallMap(const ClusterMap& map) {
  auto next = std::make_unique<MapState>(map);
  for (const OsdInfo& osd : map.osds) {
    // An OSD keeps its connection across maps unless its address changed.
    OsdClient* existing = nullptr;
    for (const auto& c : connections_) {
      if (c->osd_id() == osd.id && c->address() == osd.address) existing = c.get();
    }
    if (existing == nullptr) {
      connections_.push_back(std::make_unique<OsdClient>(osd, options_));
      connections_.back()->set_health(&health_);
      existing = connections_.back().get();
    }
    next->osds.push_back(existing);
  }
  states_.push_back(std::move(next));
  state_.store(states_.back().get(), std::memory_order_release);
}

void ClusterClient::FollowMapChange(OsdClient* from, uint64_t seen_epoch) {
  std::lock_guard lock(map_mu_);
  const uint64_t running = state()->placement.map().epoch;
  if (running > seen_epoch) return;  // another call switched already
  Result<wire::MapResponse> answer = from->GetMap(wire::GetMapRequest());
  Result<ClusterMap> map = answer.ok() ? ParseClusterMap(answer->map()) : answer.status();
  if (map.ok() && map->epoch > running &&
      map->object_size == state()->placement.map().object_size) {
    spdlog::info("cluster map epoch {} -> {} (from {}), {} OSDs", running, map->epoch, from->name(),
                 map->osds.size());
    InstallMap(*map);
    ++map_changes_;
    if (on_map_change_) on_map_change_();
    return;
  }
  if (!map.ok()) {
    spdlog::warn("{} refused epoch {} as stale but gave no map: {}", from->name(), running,
                 map.status().ToString());
  }
  // The OSD runs an older map than ours: it catches up from its peers in a moment.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

Result<wire::MapResponse> ClusterClient::CatchUpWithCluster() {
  // Every OSD is asked: one restarted during a map change may still run the older map.
  std::optional<wire::MapResponse> latest;
  OsdClient* latest_osd = nullptr;
  uint64_t latest_epoch = 0;
  for (OsdClient* osd : osds()) {
    Result<wire::MapResponse> answer = osd->GetMap(wire::GetMapRequest());
    if (!answer.ok()) continue;  // a down OSD: the others tell
    Result<ClusterMap> running = ParseClusterMap(answer->map());
    const uint64_t epoch = running.ok() ? running->epoch : 0;
    if (!latest || epoch > latest_epoch) {
      latest = std::move(*answer);
      latest_osd = osd;
      latest_epoch = epoch;
    }
  }
  if (!latest) {
    return Status::Unavailable("no OSD of map epoch " + std::to_string(map().epoch) + " answered");
  }
  if (latest_epoch > map().epoch) FollowMapChange(latest_osd, map().epoch);
  return *latest;
}

template <typename Request, typename Response>
Result<Response> ClusterClient::SendForCopy(const Oid& oid, Request request,
                                            Result<Response> (OsdClient::*call)(const Request&)) {
  for (int attempt = 0;; ++attempt) {
    const MapState* s = state();
    request.set_epoch(s->placement.map().epoch);
    OsdClient* osd = s->Osd(s->placement.OsdFor(oid));
    Result<Response> result = (osd->*call)(request);
    if (result.ok() || !result.status().Is(StatusCode::kStaleEpoch) || attempt >= kMaxMapRetries) {
      return result;
    }
    FollowMapChange(osd, s->placement.map().epoch);
  }
}

template <typename Request, typename Response>
void ClusterClient::SendForCopyAsync(const Oid& oid, std::shared_ptr<Request> request,
                                     void (OsdClient::*call)(std::shared_ptr<const Request>,
                                                             std::function<void(Result<Response>)>),
                                     std::function<void(Result<Response>)> done, int attempt) {
  const MapState* s = state();
  const uint64_t epoch = s->placement.map().epoch;
  request->set_epoch(epoch);
  OsdClient* osd = s->Osd(s->placement.OsdFor(oid));
  // The request stays for a resend: a map change is rare, but must not fail a write.
  (osd->*call)(request, [this, oid, request, call, done = std::move(done), osd, epoch,
                         attempt](Result<Response> result) mutable {
    if (result.ok() || !result.status().Is(StatusCode::kStaleEpoch) || attempt >= kMaxMapRetries) {
      return done(std::move(result));
    }
    // Not on the gRPC callback thread: fetching the map is a blocking call.
    ++resends_in_flight_;
    std::thread([this, oid, request = std::move(request), call, done = std::move(done), osd, epoch,
                 attempt]() mutable {
      FollowMapChange(osd, epoch);
      SendForCopyAsync(oid, std::move(request), call, std::move(done), attempt + 1);
      --resends_in_flight_;
    }).detach();
  });
}

// The two-copy protocol (two_copies.cc) sends through these too.
template Result<wire::WriteResponse> ClusterClient::SendForCopy(
    const Oid& oid, wire::WriteRequest request,
    Result<wire::WriteResponse> (OsdClient::*call)(const wire::WriteRequest&));
template void ClusterClient::SendForCopyAsync(
    const Oid& oid, std::shared_ptr<wire::WriteRequest> request,
    void (OsdClient::*call)(std::shared_ptr<const wire::WriteRequest>,
                            std::function<void(Result<wire::WriteResponse>)>),
    std::function<void(Result<wire::WriteResponse>)> done, int attempt);
template void ClusterClient::SendForCopyAsync(
    const Oid& oid, std::shared_ptr<wire::DeleteRequest> request,
    void (OsdClient::*call)(std::shared_ptr<const wire::DeleteRequest>,
                            std::function<void(Result<wire::DeleteResponse>)>),
    std::function<void(Result<wire::DeleteResponse>)> done, int attempt);

namespace {

// Hands each of a batched call's `count` results on, in order: to answer(k, response or
// refusal), or to alone(k) when it should go again as a single call (an OSD from before the
// batched call: a rolling upgrade, which the OSD's client remembers; or a stale epoch: the
// single call follows the map change). An answered call reports the OSD's health from its
// items (OsdClient::ObserveBatch).
template <typename ManyResponse, typename Answer, typename Alone>
void HandOutResults(OsdClient& osd, OsdClient::BatchedCall call, Result<ManyResponse>& r,
                    size_t count, const Answer& answer, const Alone& alone) {
  const bool old_osd = !r.ok() && r.status().Is(StatusReason::kNotImplemented);
  if (old_osd) osd.NoteUnknown(call);
  std::optional<std::string> recovering;
  for (size_t k = 0; r.ok() && k < std::min<size_t>(count, r->results_size()); ++k) {
    const auto& result = r->results(static_cast<int>(k));
    if (!recovering && RefusalOf(result, osd.name()).Is(StatusReason::kRecovering)) {
      recovering = result.error_message();
    }
  }
  if (r.ok()) osd.ObserveBatch(recovering);
  for (size_t k = 0; k < count; ++k) {
    if (old_osd) {
      alone(k);
      continue;
    }
    if (!r.ok()) {
      answer(k, r.status());
      continue;
    }
    if (static_cast<int>(k) >= r->results_size()) {
      answer(k,
             Status::Internal(osd.name() + ": " + OsdClient::BatchedCallName(call) + " answered " +
                              std::to_string(r->results_size()) + " of " + std::to_string(count)));
      continue;
    }
    auto* result = r->mutable_results(static_cast<int>(k));
    const Status refusal = RefusalOf(*result, osd.name());
    if (refusal.ok()) {
      answer(k, std::move(*result->mutable_response()));
    } else if (refusal.Is(StatusCode::kStaleEpoch)) {
      alone(k);
    } else {
      answer(k, refusal);
    }
  }
}

// The client checks what the OSD sent (the OSD checked what it read from its disk): a whole
// object against the object's checksum, a range (truncation's kept head, `orthofs get` ranges)
// against the checksum the OSD computed for it. Bytes that do not match were corrupted in transit
// or memory.
Status VerifyReadBytes(const Oid& oid, const wire::ReadResponse& read) {
  if (ReadBytesIntact(
          read.data(), read.meta().length(), read.meta().checksum(),
          read.has_range_checksum() ? std::optional(read.range_checksum()) : std::nullopt)) {
    return Status::Ok();
  }
  return Status::Corruption("object " + oid.ToString() + ": bytes received fail their checksum");
}

}  // namespace

Result<wire::ReadResponse> ClusterClient::Read(const Oid& oid, uint64_t offset, uint64_t length) {
  wire::ReadRequest r;
  r.set_epoch(map().epoch);
  *r.mutable_oid() = ToWire(oid);
  if (!client_id_.empty()) r.set_client_id(client_id_);
  r.set_offset(offset);
  r.set_length(length);
  Result<wire::ReadResponse> read = SendForCopy(oid, std::move(r), &OsdClient::Read);
  if (read.ok()) ORTHOFS_RETURN_IF_ERROR(VerifyReadBytes(oid, *read));
  if (read.ok() && test_hooks_.after_reading) test_hooks_.after_reading(oid);
  return read;
}

std::vector<Result<wire::ReadResponse>> ClusterClient::ReadManyAndWait(
    const std::vector<Oid>& oids) {
  std::vector<std::optional<Result<wire::ReadResponse>>> answers(oids.size());
  if (!oids.empty()) {
    std::latch answered(static_cast<std::ptrdiff_t>(oids.size()));
    ReadManyAsync(oids, [&answers, &answered](size_t i, Result<wire::ReadResponse> read) {
      answers[i].emplace(std::move(read));
      answered.count_down();
    });
    answered.wait();
  }
  std::vector<Result<wire::ReadResponse>> reads;
  reads.reserve(oids.size());
  for (std::optional<Result<wire::ReadResponse>>& answer : answers) {
    reads.push_back(std::move(*answer));
  }
  return reads;
}

namespace {

// A data change one copy takes alone (with a repair record) carries this client's clock as
// its version's floor (common/object_version.h): a double outage then cannot leave the two
// copies at one version with different bytes. So does every data deletion (one floor for both
// copies: a tombstone kept on either has it). Data changes both copies take count up by one,
// which keeps them equal. Metadata never gets a floor: its changes commit on the original
// first and the replica follows at the original's version, so a floor on a change the replica
// took alone would outrank every later change the original takes at version + 1 (the caller
// holds the version it got as the next expected one).
bool NeedsVersionFloor(const Oid& oid) { return oid.type == ObjectType::kData; }

uint64_t VersionFloor() { return VersionFloorAt(std::chrono::system_clock::now()); }

}  // namespace

wire::WriteRequest ClusterClient::MakeWrite(const Oid& oid, std::string_view data,
                                            const ObjectWrite& how, bool with_data) const {
  wire::WriteRequest r;
  r.set_epoch(map().epoch);
  *r.mutable_oid() = ToWire(oid);
  r.set_offset(how.offset);
  if (with_data) r.set_data(std::string(data));
  r.set_replace(how.replace);
  // A whole object's checksum, taken here once for both copies (end to end: see the proto).
  if (how.replace) r.set_checksum(ObjectChecksum(data));
  if (how.expected_version) r.set_expected_version(*how.expected_version);
  r.set_sync(how.sync);
  r.set_record_repair(how.record_repair);
  r.set_other_recovering(how.record_repair && how.other_recovering);
  if (how.record_repair) ++degraded_writes_;
  if (how.record_repair && NeedsVersionFloor(oid)) r.set_min_version(VersionFloor());
  return r;
}

wire::WriteRequest ClusterClient::RecordRepairRequest(const Oid& oid, uint64_t version,
                                                      bool sync) const {
  wire::WriteRequest r;
  r.set_epoch(map().epoch);
  *r.mutable_oid() = ToWire(oid);
  r.set_set_version(version);  // not newer than what is stored: changes no bytes
  r.set_record_repair(true);
  r.set_sync(sync);
  // A data copy still at `version` moves up to the floor it would have had as a write taken
  // alone.
  if (NeedsVersionFloor(oid)) r.set_min_version(VersionFloor());
  ++degraded_writes_;
  return r;
}

Result<wire::ObjectMeta> ClusterClient::Write(const Oid& oid, std::string_view data,
                                              const ObjectWrite& how) {
  Result<wire::WriteResponse> response =
      SendForCopy(oid, MakeWrite(oid, data, how), &OsdClient::Write);
  if (!response.ok()) return response.status();
  return response->meta();
}

void ClusterClient::SendWrites(CopyWriteBatch batch) {
  const MapState* s = state();
  const uint64_t epoch = s->placement.map().epoch;
  std::map<uint32_t, std::vector<CopyWriteBatch::Item>> by_osd;
  for (CopyWriteBatch::Item& item : batch.items_) {
    by_osd[s->placement.OsdFor(item.oid)].push_back(std::move(item));
  }
  for (auto& [osd_id, items] : by_osd) {
    OsdClient* osd = s->Osd(osd_id);
    size_t begin = 0;
    while (begin < items.size()) {
      // As many writes as fit one call's size limit.
      size_t end = begin;
      uint64_t bytes = 0;
      while (end < items.size() && end - begin < kMaxWriteManyWrites &&
             (end == begin || bytes + items[end].write.data.size() <= kMaxWriteManyBytes)) {
        bytes += items[end++].write.data.size();
      }
      if (end - begin == 1 || !osd->MayCall(OsdClient::BatchedCall::kWriteMany)) {
        for (; begin < end; ++begin) {
          CopyWriteBatch::Item& item = items[begin];
          SendForCopyAsync<wire::WriteRequest, wire::WriteResponse>(
              item.oid, item.write.WithData(), &OsdClient::WriteAsync, std::move(item.done));
        }
        continue;
      }
      std::vector<CopyWriteBatch::Item> group;
      std::vector<const SharedWrite*> writes;
      for (size_t k = begin; k < end; ++k) {
        items[k].write.request->set_epoch(epoch);
        group.push_back(std::move(items[k]));
      }
      for (const CopyWriteBatch::Item& item : group) writes.push_back(&item.write);
      begin = end;
      // The bytes go out without a copy: the encoded request refers to them.
      auto encoded = std::make_shared<const grpc::ByteBuffer>(EncodeWriteMany(writes));
      osd->WriteManyEncodedAsync(encoded, [this, group = std::move(group),
                                           osd](Result<wire::WriteManyResponse> r) mutable {
        HandOutResults(
            *osd, OsdClient::BatchedCall::kWriteMany, r, group.size(),
            [&](size_t k, Result<wire::WriteResponse> written) {
              group[k].done(std::move(written));
            },
            [&](size_t k) {
              SendForCopyAsync<wire::WriteRequest, wire::WriteResponse>(
                  group[k].oid, group[k].write.WithData(), &OsdClient::WriteAsync,
                  std::move(group[k].done));
            });
      });
    }
  }
}

void ClusterClient::ReadAsync(const Oid& oid, uint64_t offset, uint64_t length,
                              std::function<void(Result<wire::ReadResponse>)> done, bool windowed) {
  wire::ReadRequest r;
  r.set_epoch(map().epoch);
  *r.mutable_oid() = ToWire(oid);
  if (windowed && !client_id_.empty()) r.set_client_id(client_id_);
  r.set_offset(offset);
  r.set_length(length);
  SendForCopyAsync<wire::ReadRequest, wire::ReadResponse>(
      oid, std::make_shared<wire::ReadRequest>(std::move(r)), &OsdClient::ReadAsync,
      [this, oid, done = std::move(done)](Result<wire::ReadResponse> read) {
        if (test_hooks_.after_reading) test_hooks_.after_reading(oid);
        if (read.ok()) {
          if (Status st = VerifyReadBytes(oid, *read); !st.ok()) return done(st);
        }
        done(std::move(read));
      });
}

void ClusterClient::ReadManyAsync(const std::vector<Oid>& oids,
                                  std::function<void(size_t, Result<wire::ReadResponse>)> done,
                                  bool windowed) {
  using Done = std::function<void(size_t, Result<wire::ReadResponse>)>;
  auto shared_done = std::make_shared<const Done>(std::move(done));
  auto read_alone = [this, shared_done, windowed](const Oid& oid, size_t index) {
    ReadAsync(
        oid, 0, 0,
        [shared_done, index](Result<wire::ReadResponse> r) { (*shared_done)(index, std::move(r)); },
        windowed);
  };
  const MapState* s = state();
  const uint64_t epoch = s->placement.map().epoch;
  static_assert(kReadManyBytes <= kMaxReadManyBytes, "inside what an OSD accepts");
  const size_t data_per_call =
      std::clamp<uint64_t>(kReadManyBytes / s->placement.map().object_size, 1, kMaxReadManyReads);
  const size_t metadata_per_call = std::clamp<uint64_t>(
      kMaxReadManyBytes / s->placement.map().object_size, 1, kMaxReadManyReads);
  std::map<uint32_t, std::vector<size_t>> by_osd;  // oid indexes, in order
  for (size_t i = 0; i < oids.size(); ++i) by_osd[s->placement.OsdFor(oids[i])].push_back(i);
  for (const auto& [osd_id, indexes] : by_osd) {
    OsdClient* osd = s->Osd(osd_id);
    // Metadata objects (INODE, DIRENT) are small: as many as an OSD takes in one call.
    const bool any_data = std::any_of(indexes.begin(), indexes.end(),
                                      [&](size_t i) { return oids[i].type == ObjectType::kData; });
    const size_t per_call = any_data ? data_per_call : metadata_per_call;
    for (size_t begin = 0; begin < indexes.size(); begin += per_call) {
      const size_t end = std::min(indexes.size(), begin + per_call);
      if (end - begin == 1 || !osd->MayCall(OsdClient::BatchedCall::kReadMany)) {
        for (size_t k = begin; k < end; ++k) read_alone(oids[indexes[k]], indexes[k]);
        continue;
      }
      auto request = std::make_shared<wire::ReadManyRequest>();
      std::vector<std::pair<Oid, size_t>> group;
      for (size_t k = begin; k < end; ++k) {
        const Oid& oid = oids[indexes[k]];
        wire::ReadRequest* read = request->add_reads();
        read->set_epoch(epoch);
        *read->mutable_oid() = ToWire(oid);
        if (windowed && !client_id_.empty()) read->set_client_id(client_id_);
        group.emplace_back(oid, indexes[k]);
      }
      osd->ReadManyAsync(std::move(request), [this, group = std::move(group), shared_done,
                                              read_alone, osd](Result<wire::ReadManyResponse> r) {
        HandOutResults(
            *osd, OsdClient::BatchedCall::kReadMany, r, group.size(),
            [&](size_t k, Result<wire::ReadResponse> read) {
              const auto& [oid, index] = group[k];
              if (test_hooks_.after_reading) test_hooks_.after_reading(oid);
              if (read.ok()) {
                if (Status st = VerifyReadBytes(oid, *read); !st.ok()) read = st;
              }
              (*shared_done)(index, std::move(read));
            },
            [&](size_t k) { read_alone(group[k].first, group[k].second); });
      });
    }
  }
}

std::vector<Result<wire::DeleteResponse>> ClusterClient::DeleteManyAndWait(
    const std::vector<Oid>& copies, uint64_t version_floor) {
  std::vector<std::optional<Result<wire::DeleteResponse>>> answers(copies.size());
  std::latch answered(static_cast<std::ptrdiff_t>(copies.size()));
  auto answer = [&answers, &answered](size_t i, Result<wire::DeleteResponse> r) {
    answers[i].emplace(std::move(r));
    answered.count_down();
  };
  auto request_for = [&](size_t i) {
    return DeleteRequestFor(copies[i], std::nullopt, std::nullopt, false, version_floor, false);
  };
  auto alone = [&](size_t i) {
    SendForCopyAsync<wire::DeleteRequest, wire::DeleteResponse>(
        copies[i], std::make_shared<wire::DeleteRequest>(request_for(i)), &OsdClient::DeleteAsync,
        [answer, i](Result<wire::DeleteResponse> r) { answer(i, std::move(r)); });
  };
  const MapState* s = state();
  std::map<uint32_t, std::vector<size_t>> by_osd;
  for (size_t i = 0; i < copies.size(); ++i) by_osd[s->placement.OsdFor(copies[i])].push_back(i);
  for (const auto& [osd_id, indexes] : by_osd) {
    OsdClient* osd = s->Osd(osd_id);
    for (size_t begin = 0; begin < indexes.size(); begin += kMaxDeleteManyDeletes) {
      const size_t end = std::min(indexes.size(), begin + size_t{kMaxDeleteManyDeletes});
      if (end - begin == 1 || !osd->MayCall(OsdClient::BatchedCall::kDeleteMany)) {
        for (size_t k = begin; k < end; ++k) alone(indexes[k]);
        continue;
      }
      auto request = std::make_shared<wire::DeleteManyRequest>();
      std::vector<size_t> group(indexes.begin() + begin, indexes.begin() + end);
      for (size_t i : group) *request->add_deletes() = request_for(i);
      osd->DeleteManyAsync(std::move(request),
                           [osd, group, answer, alone](Result<wire::DeleteManyResponse> r) {
                             HandOutResults(
                                 *osd, OsdClient::BatchedCall::kDeleteMany, r, group.size(),
                                 [&](size_t k, Result<wire::DeleteResponse> deleted) {
                                   answer(group[k], std::move(deleted));
                                 },
                                 [&](size_t k) { alone(group[k]); });
                           });
    }
  }
  answered.wait();
  std::vector<Result<wire::DeleteResponse>> results;
  results.reserve(copies.size());
  for (auto& a : answers) results.push_back(std::move(*a));
  return results;
}

void ClusterClient::WriteAsync(const Oid& oid, std::string_view data, const ObjectWrite& how,
                               std::function<void(Status)> done) {
  SendForCopyAsync<wire::WriteRequest, wire::WriteResponse>(
      oid, std::make_shared<wire::WriteRequest>(MakeWrite(oid, data, how)), &OsdClient::WriteAsync,
      [done = std::move(done)](Result<wire::WriteResponse> r) { done(r.status()); });
}

Status ClusterClient::SyncAll() {
  std::vector<std::thread> threads;
  const std::vector<OsdClient*>& osds = state()->osds;
  std::vector<Status> results(osds.size());
  for (size_t i = 0; i < osds.size(); ++i) {
    if (osds[i]->down()) continue;  // what it missed is recorded for repair on the others
    threads.emplace_back([&, i] {
      wire::SyncRequest r;
      r.set_epoch(map().epoch);
      results[i] = osds[i]->Sync(r).status();
    });
  }
  for (auto& t : threads) t.join();
  // An OSD that died since holds no only copy: each of its objects was written to its other
  // copy's OSD too, which syncs here.
  for (const Status& st : results) {
    if (!IsOsdFailure(st)) ORTHOFS_RETURN_IF_ERROR(st);
  }
  return Status::Ok();
}

Result<std::vector<std::pair<wire::ObjectMeta, std::string>>> ClusterClient::ListFileObjects(
    CopyFlag flag, uint32_t fnso, uint64_t fno, ObjectType type, uint32_t limit, bool with_data) {
  for (int attempt = 0;; ++attempt) {
    const MapState* s = state();
    const uint64_t epoch = s->placement.map().epoch;
    const std::vector<OsdClient*> targets = s->ListingTargets(flag, fnso, fno);
    // Where each OSD's listing is: the next page's token, or done.
    std::vector<std::string> tokens(targets.size());
    std::vector<bool> finished(targets.size(), false);
    std::vector<uint32_t> listed(targets.size(), 0);  // objects each OSD gave
    std::vector<std::pair<wire::ObjectMeta, std::string>> out;
    OsdClient* stale = nullptr;
    // A page from every OSD not done yet, all at once: one after the other they would cost a
    // round trip per OSD (a directory's listing asks every OSD holding originals).
    for (;;) {
      std::vector<size_t> asking;
      for (size_t i = 0; i < targets.size(); ++i) {
        if (!finished[i]) asking.push_back(i);
      }
      if (asking.empty()) break;
      std::vector<Result<wire::ListResponse>> pages =
          AwaitAll<Result<wire::ListResponse>>(asking.size(), [&](size_t k, auto done) {
            const size_t i = asking[k];
            auto request = std::make_shared<wire::ListRequest>();
            request->set_epoch(epoch);
            request->set_flag(static_cast<wire::CopyFlag>(flag));
            request->set_fnso(fnso);
            request->set_fno(fno);
            request->set_type(static_cast<wire::ObjectType>(type));
            request->set_with_data(with_data);
            request->set_summaries_only(!with_data);  // no object bytes read for a bare listing
            request->set_page_token(tokens[i]);
            if (limit != 0) request->set_limit(limit);
            targets[i]->ListAsync(std::move(request), std::move(done));
          });
      for (size_t k = 0; k < asking.size(); ++k) {
        const size_t i = asking[k];
        Result<wire::ListResponse>& page = pages[k];
        if (!page.ok()) {
          if (!page.status().Is(StatusCode::kStaleEpoch) || attempt >= kMaxMapRetries) {
            return page.status();
          }
          stale = targets[i];
          break;
        }
        for (int j = 0; j < page->objects_size(); ++j) {
          out.emplace_back(page->objects(j), j < page->data_size() ? page->data(j) : "");
        }
        listed[i] += static_cast<uint32_t>(page->objects_size());
        if (!page->next_page_token().empty() && page->next_page_token() == tokens[i]) {
          return Status::Internal(targets[i]->name() + " repeated a listing's page token");
        }
        tokens[i] = page->next_page_token();
        finished[i] = tokens[i].empty();
      }
      if (stale) break;
      // Once every OSD has given its first `limit` objects (or all it has), the first `limit`
      // of all are there.
      if (limit != 0) {
        for (size_t i = 0; i < targets.size(); ++i) {
          if (listed[i] >= limit) finished[i] = true;
        }
      }
    }
    if (stale) {  // the map changed: list again under the new one
      FollowMapChange(stale, epoch);
      continue;
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
      return a.first.oid().offset() < b.first.oid().offset();
    });
    if (limit != 0 && out.size() > limit) out.resize(limit);
    return out;
  }
}

Status ClusterClient::VisitStoredObjects(std::span<const CopyFlag> flags, uint32_t fnso,
                                         uint64_t fno, ObjectType type, uint64_t from,
                                         uint32_t first_page,
                                         const std::function<bool(uint64_t offset)>& visit) {
  // One OSD's listing of one copy flag, read a page at a time.
  struct Cursor {
    OsdClient* osd;
    CopyFlag flag;
    std::deque<uint64_t> offsets;  // listed, not visited yet
    std::string token;
    uint32_t page;  // the next page's limit
    bool done = false;
  };
  uint64_t resume = from;  // after a map change: the last offset visited (visits are ascending)
  for (int attempt = 0;; ++attempt) {
    const MapState* s = state();
    const uint64_t epoch = s->placement.map().epoch;
    std::vector<Cursor> cursors;
    for (CopyFlag flag : flags) {
      for (OsdClient* osd : s->ListingTargets(flag, fnso, fno)) {
        cursors.push_back({.osd = osd, .flag = flag, .page = std::max(first_page, 1u)});
      }
    }
    OsdClient* stale = nullptr;
    auto page_request = [&](Cursor& c) {
      wire::ListRequest request;
      request.set_epoch(epoch);
      request.set_flag(static_cast<wire::CopyFlag>(c.flag));
      request.set_fnso(fnso);
      request.set_fno(fno);
      request.set_type(static_cast<wire::ObjectType>(type));
      request.set_summaries_only(true);
      request.set_page_token(c.token);
      if (c.token.empty()) request.set_from_offset(resume);
      request.set_limit(c.page);
      c.page = static_cast<uint32_t>(std::min<uint64_t>(uint64_t{c.page} * 8, kMaxListLimit));
      return request;
    };
    auto take_page = [&](Cursor& c, Result<wire::ListResponse> page) -> Status {
      if (!page.ok()) {
        if (page.status().Is(StatusCode::kStaleEpoch)) stale = c.osd;
        return page.status();
      }
      for (const wire::ObjectMeta& meta : page->objects()) {
        // An OSD without from_offset lists from the file's first object.
        if (meta.oid().offset() >= resume) c.offsets.push_back(meta.oid().offset());
      }
      if (!page->next_page_token().empty() && page->next_page_token() == c.token) {
        return Status::Internal(c.osd->name() + " repeated a listing's page token");
      }
      c.token = page->next_page_token();
      c.done = c.token.empty();
      return Status::Ok();
    };
    Status failed;
    {
      // Every OSD's first page at once: a seek often needs no other, and one after the other
      // they cost a round trip per OSD.
      std::vector<Result<wire::ListResponse>> first =
          AwaitAll<Result<wire::ListResponse>>(cursors.size(), [&](size_t i, auto done) {
            cursors[i].osd->ListAsync(
                std::make_shared<const wire::ListRequest>(page_request(cursors[i])),
                std::move(done));
          });
      for (size_t i = 0; i < cursors.size() && failed.ok(); ++i) {
        failed = take_page(cursors[i], std::move(first[i]));
      }
    }
    while (failed.ok()) {
      Cursor* lowest = nullptr;
      for (Cursor& c : cursors) {
        while (failed.ok() && c.offsets.empty() && !c.done) {
          failed = take_page(c, c.osd->List(page_request(c)));
        }
        if (!failed.ok()) break;
        if (!c.offsets.empty() &&
            (lowest == nullptr || c.offsets.front() < lowest->offsets.front())) {
          lowest = &c;
        }
      }
      if (!failed.ok() || lowest == nullptr) break;
      const uint64_t offset = lowest->offsets.front();
      lowest->offsets.pop_front();
      resume = offset;
      if (!visit(offset)) return Status::Ok();
    }
    if (stale != nullptr && attempt < kMaxMapRetries) {  // list again under the new map
      FollowMapChange(stale, epoch);
      continue;
    }
    return failed;
  }
}

Result<std::vector<std::pair<wire::ObjectMeta, std::string>>>
ClusterClient::ListFileObjectsEitherCopy(uint32_t fnso, uint64_t fno, ObjectType type,
                                         uint32_t limit, bool with_data) {
  // Not through an OSD believed down while the replica OSD is up: one that hangs would hold
  // the listing for the call's deadline.
  if (!ListingReachesDownOsd(CopyFlag::kReplica, fnso, fno) &&
      ListingReachesDownOsd(CopyFlag::kOriginal, fnso, fno)) {
    return ListFileObjects(CopyFlag::kReplica, fnso, fno, type, limit, with_data);
  }
  auto originals = ListFileObjects(CopyFlag::kOriginal, fnso, fno, type, limit, with_data);
  if (originals.ok() || !IsOsdFailure(originals.status())) return originals;
  return ListFileObjects(CopyFlag::kReplica, fnso, fno, type, limit, with_data);
}

bool ClusterClient::ListingReachesDownOsd(CopyFlag flag, uint32_t fnso, uint64_t fno) {
  for (OsdClient* osd : state()->ListingTargets(flag, fnso, fno)) {
    if (osd->down()) return true;
  }
  return false;
}

std::vector<OsdClient*> ClusterClient::MapState::ListingTargets(CopyFlag flag, uint32_t fnso,
                                                                uint64_t fno) const {
  // Replicas of a file all live on one OSD; originals are spread over the others.
  const uint32_t replica_osd = placement.ReplicaOsdFor(fnso, fno);
  std::vector<OsdClient*> targets;
  for (OsdClient* osd : osds) {
    if ((osd->osd_id() == replica_osd) == (flag == CopyFlag::kReplica)) targets.push_back(osd);
  }
  return targets;
}

wire::DeleteRequest ClusterClient::DeleteRequestFor(
    const Oid& oid, std::optional<uint64_t> expected_version, std::optional<uint64_t> set_version,
    bool record_repair, std::optional<uint64_t> version_floor, bool other_recovering) const {
  wire::DeleteRequest r;
  r.set_epoch(map().epoch);
  *r.mutable_oid() = ToWire(oid);
  if (expected_version) r.set_expected_version(*expected_version);
  if (set_version) r.set_set_version(*set_version);
  r.set_record_repair(record_repair);
  r.set_other_recovering(record_repair && other_recovering);
  if (NeedsVersionFloor(oid)) r.set_min_version(version_floor.value_or(VersionFloor()));
  return r;
}

Result<wire::DeleteResponse> ClusterClient::DeleteCopy(
    const Oid& oid, std::optional<uint64_t> expected_version, std::optional<uint64_t> set_version,
    bool record_repair, std::optional<uint64_t> version_floor, bool other_recovering) {
  return SendForCopy(oid,
                     DeleteRequestFor(oid, expected_version, set_version, record_repair,
                                      version_floor, other_recovering),
                     &OsdClient::Delete);
}

Result<bool> ClusterClient::Delete(const Oid& oid, std::optional<uint64_t> expected_version) {
  Result<wire::DeleteResponse> response = DeleteCopy(oid, expected_version, std::nullopt);
  if (!response.ok()) return response.status();
  return response->existed();
}

Result<wire::ObjectMeta> ClusterClient::Stat(const Oid& oid) {
  wire::StatRequest r;
  r.set_epoch(map().epoch);
  *r.mutable_oid() = ToWire(oid);
  Result<wire::StatResponse> response = SendForCopy(oid, std::move(r), &OsdClient::Stat);
  if (!response.ok()) return response.status();
  return response->meta();
}

}  // namespace orthofs
