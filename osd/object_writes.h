// Changes of objects one at a time (proto Write, WriteMany, Delete): checked against the map
// view, this OSD's recovery and its free space before any lock, then staged and committed
// under the object's lock, with the repair record a change of one copy alone leaves for the
// other copy. WriteMany commits its writes together.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/byte_pieces.h"
#include "common/map_view.h"
#include "common/object_cache.h"
#include "common/object_record.h"
#include "common/status.h"
#include "orthofs.pb.h"
#include "osd/map_catch_up.h"
#include "osd/object_loader.h"
#include "osd/object_locks.h"
#include "osd/object_store.h"
#include "osd/osd_stats.h"
#include "osd/recovery.h"
#include "osd/repair_worker.h"
#include "osd/space_guard.h"
#include "osd/write_many_request.h"

namespace orthofs {

// Thread-safe: no state of its own; each change holds its objects' locks (ObjectLocks).
class ObjectWrites {
 public:
  // What a change uses; the pointers outlive the ObjectWrites.
  struct Parts {
    uint32_t osd_id = 0;
    uint64_t object_size = 0;  // a map change keeps it
    ObjectStore* store = nullptr;
    ObjectCache* cache = nullptr;
    ObjectLocks* locks = nullptr;
    ObjectLoader* loader = nullptr;
    MapCatchUp* catch_up = nullptr;
    Recovery* recovery = nullptr;
    SpaceGuard* space = nullptr;
    RepairWorker* repair = nullptr;
    OsdStats* stats = nullptr;
  };
  explicit ObjectWrites(const Parts& parts) : parts_(parts) {}

  // One write under the request's map view, committed alone; `data` is its bytes
  // (request.data() is not looked at). A replacing write stores them as they are (no copy of
  // the object).
  Status Write(const MapView& view, const wire::WriteRequest& request, const BytePieces& data,
               wire::WriteResponse* response);
  // WriteMany's writes, each answered in its result (and counted as a write), committed
  // together: one data-log append and one index write for all of them (the per-commit cost of
  // the store, not the bytes, is what a batch of 128 KiB objects saves). Their objects' locks
  // are held across the commit.
  void WriteTogether(const MapView& view, const std::vector<ReceivedWrite>& writes,
                     wire::WriteManyResponse* response);
  Status Delete(const MapView& view, const wire::DeleteRequest& request,
                wire::DeleteResponse* response);

 private:
  // A write checked, with its object's lock held, and added to a batch that is still to be
  // committed; FinishWrite completes it after the commit, under the same lock.
  struct StagedWrite {
    Oid oid;
    std::string key;
    std::shared_ptr<const CachedObject> merged;  // a ranged write's object after it
    BytePieces data;                             // the write's bytes as received
    ObjectRecordSummary summary;
    bool record_repair = false;
    wire::WriteResponse* response = nullptr;
  };

  // A write's arguments and the room for it (which may wait: SpaceGuard), before any lock.
  Status CheckWrite(const Oid& oid, const wire::WriteRequest& request, const BytePieces& data);
  // Write after CheckObject and CheckWrite: locks the object, stages and commits.
  Status WriteChecked(const MapView& view, const Oid& oid, const std::string& key,
                      const wire::WriteRequest& request, const BytePieces& data,
                      wire::WriteResponse* response);
  // Adds the change of `request` (passed CheckWrite) to `batch`. No staged write when the
  // write is already answered in `response` (a copy update older than the stored copy). Caller
  // holds locks.For(key).
  Result<std::optional<StagedWrite>> StageWrite(const MapView& view, const Oid& oid,
                                                const std::string& key,
                                                const wire::WriteRequest& request,
                                                const BytePieces& data, ObjectStore::Batch* batch,
                                                wire::WriteResponse* response);
  // StageWrite's look at the stored object: its summary, and its bytes (`*old_object`) when
  // the write needs them. Caller holds locks.For(key).
  Result<ObjectRecordSummary> LoadForWrite(const MapView& view, const Oid& oid,
                                           const std::string& key,
                                           const wire::WriteRequest& request,
                                           uint64_t* tombstone_version,
                                           std::shared_ptr<const CachedObject>* old_object);
  // A copy update that changes nothing (the stored copy is as new, or gone): what is stored
  // stays, and the answer says what it is (`current`, or absent at `stored_version`).
  Status KeepStored(const Oid& oid, const wire::WriteRequest& request,
                    const Result<ObjectRecordSummary>& current, uint64_t stored_version,
                    wire::WriteResponse* response);
  void FinishWrite(const StagedWrite& write);
  // A write or delete that changed nothing here still owes the other copy its state: store
  // only the repair record (proto WriteRequest.record_repair). `version` is ours.
  Status CommitRepairRecordOnly(const Oid& oid, uint64_t version, bool sync);

  const Parts parts_;
};

}  // namespace orthofs
