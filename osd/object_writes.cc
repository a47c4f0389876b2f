#include "osd/object_writes.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <mutex>
#include <utility>

#include "common/checksum.h"
#include "common/object_version.h"
#include "common/space_reserve.h"
#include "osd/object_records.h"
#include "rpc/wire.h"

namespace orthofs {

Status ObjectWrites::CheckWrite(const Oid& oid, const wire::WriteRequest& request,
                                const BytePieces& data) {
  const uint64_t object_size = parts_.object_size;
  if (request.replace() && request.offset() != 0) {
    return Status::InvalidArgument("a replacing write must start at offset 0");
  }
  if (request.offset() > object_size || data.size() > object_size - request.offset()) {
    return Status::InvalidArgument("write of " + std::to_string(data.size()) + " bytes at offset " +
                                   std::to_string(request.offset()) + " exceeds the object size " +
                                   std::to_string(object_size));
  }
  if (request.has_set_version() && request.set_version() == 0) {
    return Status::InvalidArgument("set_version must be at least 1");
  }
  if (!request.has_set_version()) {
    ORTHOFS_RETURN_IF_ERROR(parts_.recovery->CheckClientChange(
        oid, request.record_repair(), request.other_recovering(), request.has_expected_version()));
  }
  if (request.has_checksum() && !request.replace()) {
    return Status::InvalidArgument("only a replacing write carries its object's checksum");
  }
  const auto use =
      oid.type == ObjectType::kData ? SpaceReserve::Use::kData : SpaceReserve::Use::kMetadata;
  ORTHOFS_RETURN_IF_ERROR(parts_.space->CheckSpaceFor(kObjectRecordHeaderSize + data.size(), use));
  parts_.stats->counters().bytes_in += data.size();
  return Status::Ok();
}

Status ObjectWrites::Write(const MapView& view, const wire::WriteRequest& request,
                           const BytePieces& data, wire::WriteResponse* response) {
  Result<Oid> oid = parts_.catch_up->CheckObject(view, request.epoch(), request.oid());
  if (!oid.ok()) return oid.status();
  ORTHOFS_RETURN_IF_ERROR(CheckWrite(*oid, request, data));
  return WriteChecked(view, *oid, EncodeStoreKey(*oid), request, data, response);
}

Status ObjectWrites::WriteChecked(const MapView& view, const Oid& oid, const std::string& key,
                                  const wire::WriteRequest& request, const BytePieces& data,
                                  wire::WriteResponse* response) {
  std::lock_guard lock(parts_.locks->For(key));
  ObjectStore::Batch batch;
  Result<std::optional<StagedWrite>> staged =
      StageWrite(view, oid, key, request, data, &batch, response);
  if (!staged.ok()) return staged.status();
  if (!*staged) return Status::Ok();
  ORTHOFS_RETURN_IF_ERROR(parts_.store->Commit(&batch, request.sync()));
  FinishWrite(**staged);
  return Status::Ok();
}

Result<std::optional<ObjectWrites::StagedWrite>> ObjectWrites::StageWrite(
    const MapView& view, const Oid& oid, const std::string& key, const wire::WriteRequest& request,
    const BytePieces& data, ObjectStore::Batch* batch, wire::WriteResponse* response) {
  uint64_t tombstone_version = 0;
  std::shared_ptr<const CachedObject> old_object;
  Result<ObjectRecordSummary> current =
      LoadForWrite(view, oid, key, request, &tombstone_version, &old_object);
  // A damaged record can only be replaced whole by the other copy's bytes and version (a copy
  // update, repair or scrub): a ranged write needs its bytes, a version check its header.
  const bool damaged = !current.ok() && current.status().Is(StatusCode::kCorruption) &&
                       request.replace() && request.has_set_version();
  if (!current.ok() && !current.status().Is(StatusCode::kNotFound) && !damaged) {
    return current.status();
  }
  const bool existed = current.ok();
  const uint64_t old_version = existed ? current->version : 0;
  uint64_t old_length = existed ? current->length : 0;
  if (damaged) {
    Result<std::string> raw = parts_.store->GetRecordBytes(key);
    if (raw.ok() && raw->size() > kObjectRecordHeaderSize) {
      old_length = raw->size() - kObjectRecordHeaderSize;
    }
    spdlog::warn("replacing damaged record of {} with the other copy's version {}", oid.ToString(),
                 request.set_version());
  }
  // Versions only grow, also across a delete: the tombstone's version counts.
  const uint64_t stored_version = existed ? old_version : tombstone_version;
  // A data write this copy took while its other copy's write failed: the client asks for the
  // record now, and for the version floor the write would have had had it known
  // (common/object_version.h). The copy is written again as a ranged write of no bytes (a
  // record's version is in its header) at the floor. Without room for that, the record alone.
  const bool restamp = request.record_repair() && existed && old_object &&
                       request.min_version() > 0 && request.has_set_version() &&
                       request.set_version() == stored_version && oid.type == ObjectType::kData &&
                       parts_.space
                           ->CheckSpaceFor(kObjectRecordHeaderSize + old_object->data.size(),
                                           SpaceReserve::Use::kData)
                           .ok();
  // A repair record asked for once the copy is gone (deleted after the write it follows: a
  // DATA delete leaves no tombstone) records only: a ranged write of no bytes would bring the
  // object back empty, and the repair would then push it to the other copy as well.
  const bool record_of_absent = request.record_repair() && request.has_set_version() &&
                                !request.replace() && !existed && !damaged;
  if (request.has_set_version() && (request.set_version() <= stored_version || record_of_absent) &&
      !restamp) {
    // A copy update that arrives after a newer one, or after the copy was deleted (two
    // clients' copy writes crossing), must not roll the copy back: keep what is stored.
    ORTHOFS_RETURN_IF_ERROR(KeepStored(oid, request, current, stored_version, response));
    return std::optional<StagedWrite>();
  }
  if (request.has_expected_version() && request.expected_version() != old_version) {
    return Status::VersionMismatch("object " + oid.ToString() + " is at version " +
                                   std::to_string(old_version) + ", expected " +
                                   std::to_string(request.expected_version()));
  }
  const uint64_t version = request.has_set_version() && !restamp
                               ? request.set_version()
                               : NextObjectVersion(stored_version, FloorOf(request));
  // A replacing write stores the bytes as they arrived (no copy; they are joined only to
  // refresh a cached copy); a ranged one merges them into the old bytes.
  std::shared_ptr<const CachedObject> merged;
  if (!request.replace()) {
    std::string new_data = existed ? old_object->data : std::string();
    const uint64_t end = request.offset() + data.size();
    if (new_data.size() < end) new_data.resize(end, '\0');  // a gap reads as zeros
    data.CopyTo(new_data.data() + request.offset());
    merged = MakeObject(version, std::move(new_data));
  }
  const BytePieces stored_bytes = merged ? BytePieces(merged->data) : data;
  // A replacing write's bytes keep the client's checksum when it sent one (end to end).
  const uint64_t checksum = merged                   ? merged->checksum
                            : request.has_checksum() ? request.checksum()
                                                     : ObjectChecksum(data);
  const ObjectRecordSummary summary{version, checksum, stored_bytes.size()};
  batch->Put(key, version, summary.checksum, stored_bytes, existed || damaged, old_length);
  if (request.record_repair()) batch->PutRepairRecord(OtherCopyKey(oid), version);
  TraceMetadataChange(oid, "write", stored_version, version, request.has_set_version(),
                      request.record_repair(), request.other_recovering());
  return std::optional<StagedWrite>(
      StagedWrite{oid, key, std::move(merged), data, summary, request.record_repair(), response});
}

Result<ObjectRecordSummary> ObjectWrites::LoadForWrite(
    const MapView& view, const Oid& oid, const std::string& key, const wire::WriteRequest& request,
    uint64_t* tombstone_version, std::shared_ptr<const CachedObject>* old_object) {
  // A ranged write needs the old bytes. A write that replaces the object whole needs only its
  // version and length: the record's summary, not a read of 128 KiB (overwrites). A copy update
  // (set_version) that is not newer than the summary changes nothing unless the stored record
  // is damaged, so it reads the record to find out.
  if (request.replace()) {
    Result<ObjectRecordSummary> summary =
        parts_.loader->LoadSummaryLocked(view, oid, key, tombstone_version);
    const uint64_t stored = summary.ok() ? summary->version : *tombstone_version;
    const bool answered = summary.ok() || summary.status().Is(StatusCode::kNotFound);
    if (!request.has_set_version() || (answered && request.set_version() > stored)) {
      return summary;
    }
  }
  Result<std::shared_ptr<const CachedObject>> loaded =
      parts_.loader->LoadLocked(view, oid, key, tombstone_version);
  if (!loaded.ok()) return loaded.status();
  *old_object = *loaded;
  return SummaryOf(**old_object);
}

Status ObjectWrites::KeepStored(const Oid& oid, const wire::WriteRequest& request,
                                const Result<ObjectRecordSummary>& current, uint64_t stored_version,
                                wire::WriteResponse* response) {
  if (request.record_repair()) {
    ORTHOFS_RETURN_IF_ERROR(CommitRepairRecordOnly(oid, stored_version, request.sync()));
  } else if (request.sync()) {
    // What is kept may itself not be durable yet (a newer copy update without sync): a sync
    // request answers only once it is (a repair's pusher then drops its record).
    ORTHOFS_RETURN_IF_ERROR(parts_.store->SyncWal());
  }
  if (current.ok()) {
    FillMeta(oid, *current, response->mutable_meta());
  } else {
    *response->mutable_meta()->mutable_oid() = ToWire(oid);
    response->mutable_meta()->set_version(stored_version);
  }
  return Status::Ok();
}

void ObjectWrites::FinishWrite(const StagedWrite& write) {
  if (write.record_repair) RepairRecorded(&parts_.stats->counters(), parts_.repair);
  if (parts_.cache->Contains(write.key)) {
    parts_.cache->Insert(
        write.key,
        write.merged ? write.merged
                     : MakeObject(write.summary.version, write.summary.checksum, write.data.Join()),
        CacheChain::kDemand);
  }
  parts_.locks->Committed(write.key);
  FillMeta(write.oid, write.summary, write.response->mutable_meta());
}

void ObjectWrites::WriteTogether(const MapView& view, const std::vector<ReceivedWrite>& writes,
                                 wire::WriteManyResponse* response) {
  const size_t n = writes.size();
  std::vector<wire::WriteManyResult*> results(n);
  std::vector<Status> outcomes(n);
  std::vector<std::optional<Oid>> oids(n);
  std::vector<std::string> keys(n);
  std::vector<std::string> checked_keys;
  for (size_t i = 0; i < n; ++i) {
    results[i] = response->add_results();
    Result<Oid> oid =
        parts_.catch_up->CheckObject(view, writes[i].fields.epoch(), writes[i].fields.oid());
    if (!oid.ok()) {
      outcomes[i] = oid.status();
      continue;
    }
    // Before any lock: the space check may wait for room (CheckSpaceFor).
    if (Status st = CheckWrite(*oid, writes[i].fields, writes[i].data); !st.ok()) {
      outcomes[i] = st;
      continue;
    }
    oids[i] = *oid;
    keys[i] = EncodeStoreKey(*oid);
    checked_keys.push_back(keys[i]);
  }
  std::vector<std::string> sorted = checked_keys;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    // One object twice (no client sends that): each write must see the one before it.
    for (size_t i = 0; i < n; ++i) {
      if (oids[i]) {
        outcomes[i] = WriteChecked(view, *oids[i], keys[i], writes[i].fields, writes[i].data,
                                   results[i]->mutable_response());
      }
    }
  } else {
    std::vector<std::unique_lock<std::mutex>> locks = parts_.locks->LockAll(checked_keys);
    ObjectStore::Batch batch;
    std::vector<std::pair<size_t, StagedWrite>> staged;
    bool sync = false;
    for (size_t i = 0; i < n; ++i) {
      if (!oids[i]) continue;
      Result<std::optional<StagedWrite>> write =
          StageWrite(view, *oids[i], keys[i], writes[i].fields, writes[i].data, &batch,
                     results[i]->mutable_response());
      if (!write.ok()) {
        outcomes[i] = write.status();
      } else if (*write) {
        staged.emplace_back(i, std::move(**write));
        sync = sync || writes[i].fields.sync();
      }
    }
    if (!staged.empty()) {
      const Status committed = parts_.store->Commit(&batch, sync);
      for (const auto& [i, write] : staged) {
        if (committed.ok()) {
          FinishWrite(write);
        } else {
          outcomes[i] = committed;
        }
      }
    }
  }
  for (size_t i = 0; i < n; ++i) {
    parts_.stats->Count(OsdStats::kWrite, outcomes[i]);
    ++parts_.stats->counters().batched_writes;
    if (!outcomes[i].ok()) SetRefusal(outcomes[i], results[i]);
  }
}

Status ObjectWrites::Delete(const MapView& view, const wire::DeleteRequest& request,
                            wire::DeleteResponse* response) {
  Result<Oid> oid = parts_.catch_up->CheckObject(view, request.epoch(), request.oid());
  if (!oid.ok()) return oid.status();
  if (!request.has_set_version()) {
    if (Status st = parts_.recovery->CheckClientChange(*oid, request.record_repair(),
                                                       request.other_recovering(),
                                                       request.has_expected_version());
        !st.ok()) {
      return st;
    }
  }
  const std::string key = EncodeStoreKey(*oid);
  std::lock_guard lock(parts_.locks->For(key));
  uint64_t tombstone_version = 0;
  // The version and length are all a delete needs: the summary, not the object's bytes.
  Result<ObjectRecordSummary> current =
      parts_.loader->LoadSummaryLocked(view, *oid, key, &tombstone_version);
  if (!current.ok() && !current.status().Is(StatusCode::kNotFound)) {
    return current.status();
  }
  const bool existed = current.ok();
  const uint64_t old_version = existed ? current->version : 0;
  const uint64_t stored_version = existed ? old_version : tombstone_version;
  if (request.has_expected_version() && request.expected_version() != old_version) {
    return Status::VersionMismatch("object " + oid->ToString() + " is at version " +
                                   std::to_string(old_version) + ", expected " +
                                   std::to_string(request.expected_version()));
  }
  response->set_version(stored_version);
  response->set_tombstone(!existed && stored_version > 0);
  // A degraded delete of a data copy that is absent here still leaves a tombstone (below), at
  // the client's floor: its version is what the replay at the other copy carries, so that a
  // newer write there (made while this OSD was down in turn) is not deleted by it. Not for
  // metadata, which has no floor: a tombstone at stored + 1 would tie with a copy the other
  // OSD holds at that version, and neither replay would change anything.
  const bool tombstone_for_absent = request.record_repair() && oid->type == ObjectType::kData;
  if ((request.has_set_version() && request.set_version() <= stored_version) ||
      (!existed && !request.has_set_version() && !tombstone_for_absent)) {
    // A newer state is already here, or nothing to remove and no version to record; the other
    // copy may still need the deletion.
    if (request.record_repair()) {
      return CommitRepairRecordOnly(*oid, stored_version, request.sync());
    }
    return request.sync() ? parts_.store->SyncWal()  // what is kept is durable (see StageWrite)
                          : Status::Ok();
  }
  // During a rebalance a gained DATA copy leaves a tombstone too: were the key simply gone, a
  // later miss would ask the previous owner, which may still hold the old copy. So does a DATA
  // copy deleted for the other one, which missed it: the next write here must get a version
  // above the other copy's, or its replay there would be a no-op and leave the old bytes.
  // And so does a replayed deletion (set_version), which makes this copy equal to one that
  // holds a tombstone at that version.
  const bool tombstone = oid->type != ObjectType::kData ||
                         view.PreviousOwnerOf(*oid, parts_.osd_id).has_value() ||
                         request.record_repair() || request.has_set_version();
  const uint64_t new_version = request.has_set_version()
                                   ? request.set_version()
                                   : NextObjectVersion(stored_version, FloorOf(request));
  const uint64_t old_length = existed ? current->length : 0;
  ObjectStore::Batch batch;
  if (tombstone) {
    batch.PutTombstone(key, new_version, existed, old_length);
  } else {
    batch.Delete(key, existed, old_length);
  }
  if (request.record_repair()) batch.PutRepairRecord(OtherCopyKey(*oid), new_version);
  TraceMetadataChange(*oid, "delete", stored_version, new_version, request.has_set_version(),
                      request.record_repair(), request.other_recovering());
  ORTHOFS_RETURN_IF_ERROR(parts_.store->Commit(&batch, request.sync()));
  if (request.record_repair()) RepairRecorded(&parts_.stats->counters(), parts_.repair);
  parts_.space->ReclaimSpaceIfFull();
  parts_.cache->Erase(key);
  parts_.locks->Committed(key);
  response->set_existed(existed);
  // The deletion's version, tombstone or not: a client whose delete of the other copy fails
  // passes it back with the repair record (ClusterClient::DeleteBothCopies).
  response->set_version(new_version);
  response->set_tombstone(tombstone);
  return Status::Ok();
}

Status ObjectWrites::CommitRepairRecordOnly(const Oid& oid, uint64_t version, bool sync) {
  ObjectStore::Batch batch;
  batch.PutRepairRecord(OtherCopyKey(oid), version);
  ORTHOFS_RETURN_IF_ERROR(parts_.store->Commit(&batch, sync));
  RepairRecorded(&parts_.stats->counters(), parts_.repair);
  return Status::Ok();
}

}  // namespace orthofs
