// The forms an object takes in the OSD (its store record's summary, the cached object, the
// wire's ObjectMeta) and the small steps between them that the OSD's parts share.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/object_cache.h"
#include "common/object_record.h"
#include "common/object_version.h"
#include "common/placement.h"
#include "common/status.h"
#include "orthofs.pb.h"
#include "osd/object_store.h"
#include "osd/osd_stats.h"
#include "osd/repair_worker.h"

namespace orthofs {

ObjectRecordSummary SummaryOf(const CachedObject& object);
std::shared_ptr<const CachedObject> MakeObject(uint64_t version, uint64_t checksum,
                                               std::string data);
std::shared_ptr<const CachedObject> MakeObject(uint64_t version, std::string data);

void FillMeta(const Oid& oid, const ObjectRecordSummary& object, wire::ObjectMeta* meta);
void FillMeta(const Oid& oid, const CachedObject& object, wire::ObjectMeta* meta);

// The store key of the other copy of `oid` (which lives on another OSD).
std::string OtherCopyKey(const Oid& oid);

// A change's version floor as this OSD applies it (common/object_version.h).
template <typename Request>
uint64_t FloorOf(const Request& request) {
  return BoundedVersionFloor(request.min_version(), std::chrono::system_clock::now());
}

// The object as held here (cache, then store), without a rebalance's take-over; kNotFound if
// absent or deleted, and then *tombstone_version (if given) is the deleted object's last
// version, else 0. Caller holds the object's lock (ObjectLocks::For(key)).
Result<std::shared_ptr<const CachedObject>> LoadLocalLocked(ObjectCache* cache, ObjectStore* store,
                                                            const std::string& key,
                                                            uint64_t* tombstone_version);

// After a repair record was committed: counted, and the repair worker passes soon.
void RepairRecorded(OsdCounters* counters, RepairWorker* repair);

// Logs a change of a namespace object at debug level (what, versions, how it came).
void TraceMetadataChange(const Oid& oid, std::string_view what, uint64_t from, uint64_t to,
                         bool copy_update, bool record_repair, bool other_recovering);

}  // namespace orthofs
