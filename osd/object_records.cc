#include "osd/object_records.h"

#include <spdlog/spdlog.h>

#include "common/checksum.h"
#include "rpc/wire.h"

namespace orthofs {

ObjectRecordSummary SummaryOf(const CachedObject& object) {
  return {object.version, object.checksum, object.data.size(), false};
}

std::shared_ptr<const CachedObject> MakeObject(uint64_t version, uint64_t checksum,
                                               std::string data) {
  auto o = std::make_shared<CachedObject>();
  o->version = version;
  o->checksum = checksum;
  o->data = std::move(data);
  return o;
}

std::shared_ptr<const CachedObject> MakeObject(uint64_t version, std::string data) {
  const uint64_t checksum = ObjectChecksum(data);
  return MakeObject(version, checksum, std::move(data));
}

void FillMeta(const Oid& oid, const ObjectRecordSummary& object, wire::ObjectMeta* meta) {
  *meta->mutable_oid() = ToWire(oid);
  meta->set_version(object.version);
  meta->set_length(object.length);
  meta->set_checksum(object.checksum);
}

void FillMeta(const Oid& oid, const CachedObject& object, wire::ObjectMeta* meta) {
  FillMeta(oid, SummaryOf(object), meta);
}

std::string OtherCopyKey(const Oid& oid) { return EncodeStoreKey(oid.OtherCopy()); }

Result<std::shared_ptr<const CachedObject>> LoadLocalLocked(ObjectCache* cache, ObjectStore* store,
                                                            const std::string& key,
                                                            uint64_t* tombstone_version) {
  if (tombstone_version) *tombstone_version = 0;
  if (auto cached = cache->Peek(key)) return cached;
  Result<StoredObject> stored = store->Get(key);
  if (!stored.ok()) return stored.status();
  if (stored->tombstone) {
    if (tombstone_version) *tombstone_version = stored->version;
    return Status::NotFound("object deleted");
  }
  return ToCachedObject(std::move(*stored));
}

void RepairRecorded(OsdCounters* counters, RepairWorker* repair) {
  ++counters->repair_records_written;
  repair->RecordsAdded();
}

void TraceMetadataChange(const Oid& oid, std::string_view what, uint64_t from, uint64_t to,
                         bool copy_update, bool record_repair, bool other_recovering) {
  // At debug level, every namespace object's change: the history to follow when fsck finds a
  // dangling entry (which change of an INODE or DIRENT went where, at which version).
  if (oid.type == ObjectType::kData || !spdlog::should_log(spdlog::level::debug)) return;
  spdlog::debug("{} {} v{} -> v{}{}{}{}", what, oid.ToString(), from, to,
                copy_update ? " (copy update)" : "", record_repair ? " +repair record" : "",
                other_recovering ? " (other copy recovering)" : "");
}

}  // namespace orthofs
