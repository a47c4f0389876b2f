#include "osd/object_loader.h"

#include "osd/object_records.h"

namespace orthofs {

Result<std::shared_ptr<const CachedObject>> ObjectLoader::LoadLocked(const MapView& view,
                                                                     const Oid& oid,
                                                                     const std::string& key,
                                                                     uint64_t* tombstone_version,
                                                                     bool stand_in) {
  uint64_t tombstone = 0;
  Result<std::shared_ptr<const CachedObject>> local =
      LoadLocalLocked(cache_, store_, key, &tombstone);
  if (tombstone_version) *tombstone_version = tombstone;
  if (local.ok() || !local.status().Is(StatusCode::kNotFound) || tombstone != 0) return local;
  const std::optional<uint32_t> source = view.PreviousOwnerOf(oid, osd_id_);
  if (!source) return local;
  return hand_over_->TakeOver(view, oid, key, *source, tombstone_version, stand_in);
}

Result<ObjectRecordSummary> ObjectLoader::LoadSummaryLocked(const MapView& view, const Oid& oid,
                                                            const std::string& key,
                                                            uint64_t* tombstone_version) {
  *tombstone_version = 0;
  if (auto cached = cache_->Peek(key)) return SummaryOf(*cached);
  Result<ObjectRecordSummary> summary = store_->GetSummary(key);
  if (summary.ok() && summary->tombstone) {
    *tombstone_version = summary->version;
    return Status::NotFound("object deleted");
  }
  if (summary.ok() || !summary.status().Is(StatusCode::kNotFound) ||
      !view.PreviousOwnerOf(oid, osd_id_)) {
    return summary;
  }
  // Absent here during a rebalance: the previous owner may hold it, and LoadLocked takes it over.
  Result<std::shared_ptr<const CachedObject>> object =
      LoadLocked(view, oid, key, tombstone_version);
  if (!object.ok()) return object.status();
  return SummaryOf(**object);
}

}  // namespace orthofs
