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
  ClearIfFull();
  return cached;
}

void CachedVersions::ClearIfFull() {
  if (versions_.size() <= capacity_) return;
  versions_.clear();
  cleared_ = true;
}

bool CachedVersions::OwnChange(uint64_t fno, uint64_t version) {
  auto it = versions_.find(fno);
  if (it == versions_.end() || !it->second || *it->second + 1 != version) return false;
  it->second = version;
  return true;
}

void CachedVersions::Forget(uint64_t fno) {
  versions_[fno].reset();
  ClearIfFull();
}

}  // namespace orthofs
