#include "osd/object_reads.h"

#include <algorithm>
#include <mutex>
#include <string>

#include "common/checksum.h"
#include "common/limits.h"
#include "osd/object_records.h"
#include "rpc/wire.h"

namespace orthofs {

Status ObjectReads::ServeRead(const MapView& view, const wire::ReadRequest& request,
                              wire::ReadResponse* head, std::shared_ptr<const CachedObject>* object,
                              std::string_view* bytes) {
  // The client reads the other copy, and retries when both copies say so.
  ORTHOFS_RETURN_IF_ERROR(parts_.recovery->RefuseWhileRecovering("read"));
  Result<Oid> oid = parts_.catch_up->CheckObject(view, request.epoch(), request.oid());
  if (!oid.ok()) return oid.status();
  const uint64_t object_size = parts_.object_size;
  if (request.offset() > object_size || request.length() > object_size) {
    return Status::InvalidArgument("read range beyond the object size " +
                                   std::to_string(object_size));
  }
  const std::string key = EncodeStoreKey(*oid);
  *object = parts_.cache->Lookup(key);
  const bool from_cache = *object != nullptr;
  if (!from_cache) {
    // Fill under the object's lock so a concurrent writer cannot be overtaken by a stale fill.
    std::lock_guard lock(parts_.locks->For(key));
    Result<std::shared_ptr<const CachedObject>> loaded =
        parts_.loader->LoadLocked(view, *oid, key, nullptr, !request.for_stand_in());
    if (!loaded.ok()) {
      if (loaded.status().Is(StatusCode::kNotFound)) {
        return Status::NotFound("object " + oid->ToString() + " not found");
      }
      return loaded.status();
    }
    *object = *loaded;
    parts_.cache->Insert(key, *object, CacheChain::kDemand);
  }
  const std::string& all = (*object)->data;
  FillMeta(*oid, **object, head->mutable_meta());
  const uint64_t begin = std::min<uint64_t>(request.offset(), all.size());
  const uint64_t end =
      request.length() == 0 ? all.size() : std::min<uint64_t>(begin + request.length(), all.size());
  *bytes = std::string_view(all).substr(begin, end - begin);
  if (bytes->size() != all.size()) head->set_range_checksum(ObjectChecksum(*bytes));
  head->set_from_cache(from_cache);
  parts_.stats->counters().bytes_out += bytes->size();
  parts_.prefetch->AfterDemandRead(*oid, request.client_id(), from_cache);
  return Status::Ok();
}

Result<std::vector<ReadManyItem>> ObjectReads::ServeReadMany(const MapView& view,
                                                             const wire::ReadManyRequest& request) {
  const uint64_t reads = static_cast<uint64_t>(request.reads_size());
  if (reads > kMaxReadManyReads || (reads > 1 && reads * parts_.object_size > kMaxReadManyBytes)) {
    return Status::InvalidArgument("ReadMany of " + std::to_string(reads) + " reads: at most " +
                                   std::to_string(kMaxReadManyReads) + ", of " +
                                   std::to_string(kMaxReadManyBytes >> 20) +
                                   " MiB of objects together");
  }
  // The objects not in the cache are loaded one after another below: their disk reads start
  // together first.
  std::vector<std::string> uncached;
  for (const wire::ReadRequest& read : request.reads()) {
    Result<Oid> oid = FromWire(read.oid());
    if (!oid.ok()) continue;  // refused below
    std::string key = EncodeStoreKey(*oid);
    if (!parts_.cache->Contains(key)) uncached.push_back(std::move(key));
  }
  if (uncached.size() > 1) parts_.store->WillNeed(uncached);
  std::vector<ReadManyItem> items(reads);
  for (uint64_t i = 0; i < reads; ++i) {
    ReadManyItem& item = items[i];
    std::shared_ptr<const CachedObject> object;
    item.status =
        ServeRead(view, request.reads(static_cast<int>(i)), &item.head, &object, &item.bytes);
    item.owner = std::move(object);
    parts_.stats->Count(OsdStats::kRead, item.status);
    ++parts_.stats->counters().batched_reads;
  }
  return items;
}

Status ObjectReads::Stat(const MapView& view, const wire::StatRequest& request,
                         wire::StatResponse* response) {
  Result<Oid> oid = parts_.catch_up->CheckObject(view, request.epoch(), request.oid());
  if (!oid.ok()) return oid.status();
  const std::string key = EncodeStoreKey(*oid);
  Result<std::shared_ptr<const CachedObject>> current = [&] {
    std::lock_guard lock(parts_.locks->For(key));
    return parts_.loader->LoadLocked(view, *oid, key);
  }();
  if (!current.ok()) {
    if (current.status().Is(StatusCode::kNotFound)) {
      return Status::NotFound("object " + oid->ToString() + " not found");
    }
    return current.status();
  }
  FillMeta(*oid, **current, response->mutable_meta());
  return Status::Ok();
}

}  // namespace orthofs
