// Copies moving between OSDs in a rebalance (orthofs rebalance; proto Fetch, Discard, Migrate).
// A copy this OSD gained moves here from its previous owner: fetched (verified; a copy damaged
// there moves from its other copy instead), committed durably with its repair record, then
// dropped at the source. That happens on first use (TakeOver), for a whole file before its
// listing (TakeOverFile), and in batches the rebalance tool asks for (Migrate). The other side:
// a copy this OSD lost is handed to its new owner (Fetch) and dropped when it has it (Discard).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/map_view.h"
#include "common/object_cache.h"
#include "common/placement.h"
#include "common/status.h"
#include "orthofs.pb.h"
#include "osd/map_catch_up.h"
#include "osd/object_locks.h"
#include "osd/object_store.h"
#include "osd/osd_stats.h"
#include "osd/peer_clients.h"
#include "osd/repair_worker.h"

namespace orthofs {

// Thread-safe: no state of its own but counters; each copy is moved under its object's lock.
class HandOver {
 public:
  // The pointers outlive the HandOver.
  HandOver(uint32_t osd_id, ObjectStore* store, ObjectCache* cache, ObjectLocks* locks,
           PeerClients* peers, MapCatchUp* catch_up, RepairWorker* repair, OsdCounters* counters);

  // Moves `oid` here from `source`: fetches it, commits it durably (with its repair record),
  // then has the source drop it. kNotFound (*tombstone_version, if given, as in
  // LoadLocalLocked) when the source has nothing. A copy damaged at the source moves from its
  // other copy (FetchIntact) unless !stand_in: then it stays, kCorruption. Caller holds
  // locks.For(key) and has found nothing local.
  Result<std::shared_ptr<const CachedObject>> TakeOver(const MapView& view, const Oid& oid,
                                                       const std::string& key, uint32_t source,
                                                       uint64_t* tombstone_version,
                                                       bool stand_in = true);
  // Before a per-file listing during a rebalance: take over that file's copies (of `flag`, and
  // `type` if given) that this OSD gained and the previous map's OSDs still hold.
  Status TakeOverFile(const MapView& view, CopyFlag flag, uint32_t fnso, uint64_t fno,
                      std::optional<ObjectType> type);

  // The RPCs, after the caller's certificate was checked (Fetch and Discard: an OSD or admin;
  // Migrate: admin).
  Status Fetch(const MapView& view, const wire::FetchRequest& request,
               wire::FetchResponse* response);
  Status Discard(const MapView& view, const wire::DiscardRequest& request,
                 wire::DiscardResponse* response);
  Status Migrate(const MapView& view, const wire::MigrateRequest& request,
                 wire::MigrateResponse* response);

 private:
  // Fetch and Discard: our settled epoch, a copy this OSD does not own.
  Result<Oid> CheckHandOver(const MapView& view, uint64_t epoch, const wire::Oid& wire_oid);
  Status DiscardAt(const MapView& view, uint32_t source, const Oid& oid);
  // TakeOver's steps, also used for a batch (Migrate): the copy as `source` holds it (checksum
  // verified, asked twice; `damaged`, without bytes, when it fails at the source); its records
  // added to `batch` (the object, null for a tombstone: the batch refers to its bytes until
  // Commit); after the commit, the bookkeeping.
  Result<wire::FetchResponse> FetchFrom(const MapView& view, uint32_t source, const Oid& oid);
  // FetchFrom, but when the source's copy is damaged there, the other copy's bytes and version,
  // read from its holder: a damaged copy still moves, and arrives intact (as scrub would have
  // rewritten it). kCorruption when nothing intact can stand in (the other copy is damaged,
  // missing, older or missed writes, or the damaged copy's summary is unreadable too);
  // kUnavailable when the other copy cannot be read now.
  Result<wire::FetchResponse> FetchIntact(const MapView& view, uint32_t source, const Oid& oid);
  [[nodiscard]] std::shared_ptr<const CachedObject> StageTakenCopy(const Oid& oid,
                                                                   const std::string& key,
                                                                   wire::FetchResponse* fetched,
                                                                   ObjectStore::Batch* batch);
  void TakenOver(const std::string& key, bool repair_record);
  // TakeOverFile's work on one page of a holder's listing.
  Status TakeOverListed(const MapView& view, uint32_t holder, const wire::ListResponse& page);

  const uint32_t osd_id_;
  ObjectStore* const store_;
  ObjectCache* const cache_;
  ObjectLocks* const locks_;
  PeerClients* const peers_;
  MapCatchUp* const catch_up_;
  RepairWorker* const repair_;
  OsdCounters* const counters_;
};

}  // namespace orthofs
