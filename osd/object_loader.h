// The object as this OSD serves it: from the cache or the store, or, during a rebalance, for a
// copy this OSD gained and does not hold yet, taken over from its previous owner first.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/map_view.h"
#include "common/object_cache.h"
#include "common/object_record.h"
#include "common/placement.h"
#include "common/status.h"
#include "osd/hand_over.h"
#include "osd/object_store.h"

namespace orthofs {

// Thread-safe; every call needs the caller to hold the object's lock (ObjectLocks::For(key)).
class ObjectLoader {
 public:
  // The pointers outlive the ObjectLoader.
  ObjectLoader(uint32_t osd_id, ObjectCache* cache, ObjectStore* store, HandOver* hand_over)
      : osd_id_(osd_id), cache_(cache), store_(store), hand_over_(hand_over) {}

  // The current object (cache, then store); kNotFound if absent or deleted, and then
  // *tombstone_version (if given) is the deleted object's last version, else 0. During a
  // rebalance a copy this OSD gained is taken over from its previous owner first
  // (HandOver::TakeOver; `stand_in` as there).
  Result<std::shared_ptr<const CachedObject>> LoadLocked(const MapView& view, const Oid& oid,
                                                         const std::string& key,
                                                         uint64_t* tombstone_version = nullptr,
                                                         bool stand_in = true);
  // LoadLocked's answer without the object's bytes (the record's summary), for a write that
  // replaces the object whole and for deletes. Unlike LoadLocked it does not notice a damaged
  // record whose summary is intact.
  Result<ObjectRecordSummary> LoadSummaryLocked(const MapView& view, const Oid& oid,
                                                const std::string& key,
                                                uint64_t* tombstone_version);

 private:
  const uint32_t osd_id_;
  ObjectCache* const cache_;
  ObjectStore* const store_;
  HandOver* const hand_over_;
};

}  // namespace orthofs
