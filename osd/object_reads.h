// Reads of one object and of many (proto Read, ReadMany, Stat): checked against the map view,
// refused while this OSD recovers, served from the cache or filled into it under the object's
// lock (osd/object_loader.h), and reported to the prefetcher.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "common/map_view.h"
#include "common/object_cache.h"
#include "common/status.h"
#include "orthofs.pb.h"
#include "osd/map_catch_up.h"
#include "osd/object_loader.h"
#include "osd/object_locks.h"
#include "osd/object_store.h"
#include "osd/osd_stats.h"
#include "osd/prefetch_engine.h"
#include "osd/read_reply.h"
#include "osd/recovery.h"

namespace orthofs {

// Thread-safe: no state of its own; each cache fill holds its object's lock.
class ObjectReads {
 public:
  // What a read uses; the pointers outlive the ObjectReads.
  struct Parts {
    uint32_t osd_id = 0;
    uint64_t object_size = 0;  // a map change keeps it
    ObjectStore* store = nullptr;
    ObjectCache* cache = nullptr;
    ObjectLocks* locks = nullptr;
    ObjectLoader* loader = nullptr;
    MapCatchUp* catch_up = nullptr;
    const Recovery* recovery = nullptr;
    PrefetchEngine* prefetch = nullptr;
    OsdStats* stats = nullptr;
  };
  explicit ObjectReads(const Parts& parts) : parts_(parts) {}

  // Read's work for both entry points: `head` gets the reply but its bytes, which are `*bytes`,
  // kept valid by `*object`.
  Status ServeRead(const MapView& view, const wire::ReadRequest& request, wire::ReadResponse* head,
                   std::shared_ptr<const CachedObject>* object, std::string_view* bytes);
  // ReadMany's work for both entry points: one item per read, in order (each counted as a
  // read), or the refusal of the whole call (too many reads, or too many objects' bytes).
  Result<std::vector<ReadManyItem>> ServeReadMany(const MapView& view,
                                                  const wire::ReadManyRequest& request);
  Status Stat(const MapView& view, const wire::StatRequest& request, wire::StatResponse* response);

 private:
  const Parts parts_;
};

}  // namespace orthofs
