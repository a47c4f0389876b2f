// Transactions (proto Transact): up to kMaxTxnOps checks, puts and deletes of this OSD's
// copies, judged against their versions and committed together or not at all. They carry the
// namespace's changes of several objects (creates, renames, unlinks).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/map_view.h"
#include "common/object_cache.h"
#include "common/placement.h"
#include "common/status.h"
#include "orthofs.pb.h"
#include "osd/map_catch_up.h"
#include "osd/object_loader.h"
#include "osd/object_locks.h"
#include "osd/object_store.h"
#include "osd/recovery.h"
#include "osd/space_guard.h"

namespace orthofs {

// Thread-safe: no state of its own; a transaction holds all its objects' locks (ascending).
class Transactions {
 public:
  // What a transaction uses; the pointers outlive the Transactions.
  struct Parts {
    uint32_t osd_id = 0;
    uint64_t object_size = 0;  // a map change keeps it
    ObjectStore* store = nullptr;
    ObjectCache* cache = nullptr;
    ObjectLocks* locks = nullptr;
    ObjectLoader* loader = nullptr;
    MapCatchUp* catch_up = nullptr;
    const Recovery* recovery = nullptr;
    SpaceGuard* space = nullptr;
  };
  explicit Transactions(const Parts& parts) : parts_(parts) {}

  Status Transact(const MapView& view, const wire::TransactRequest& request,
                  wire::TransactResponse* response);

 private:
  // A transaction's objects, in the order of its ops.
  struct Objects {
    std::vector<Oid> oids;
    std::vector<std::string> keys;
    uint64_t put_bytes = 0;  // what its puts store
  };
  // Each op's object placed here, its kind and data valid, no object twice.
  Result<Objects> CheckOps(const MapView& view, const wire::TransactRequest& request);
  // The objects as they are (null: absent; their tombstones' versions in `tombstone_versions`),
  // refused unless each op's expected version holds. Caller holds their locks.
  Result<std::vector<std::shared_ptr<const CachedObject>>> LoadAndCheckVersions(
      const MapView& view, const wire::TransactRequest& request, const Objects& objects,
      std::vector<uint64_t>* tombstone_versions);

  const Parts parts_;
};

}  // namespace orthofs
