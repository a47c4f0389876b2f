#include "common/cached_versions.h"

namespace orthofs {

CachedVersions::Cached CachedVersions::Open(uint64_t fno, uint64_t version) {
  auto [it, inserted] = versions_.try_emplace(fno, version);
  Cached cached;
  if (inserted) {
    cached = cleared_ ? Cached::kStale : Cached::kNothing;
  } else {
    cached = it->second == version ? Cached::kValid : Cached::kStale;
    it->second = version;
  }
  if (versions_.size() > capacity_) {
    versions_.clear();
    cleared_ = true;
  }
  return cached;
}

bool CachedVersions::OwnChange(uint64_t fno, uint64_t version) {
  auto it = versions_.find(fno);
  if (it == versions_.end() || !it->second || *it->second + 1 != version) return false;
  it->second = version;
  return true;
}

void CachedVersions::Forget(uint64_t fno) { versions_[fno].reset(); }

}  // namespace orthofs
