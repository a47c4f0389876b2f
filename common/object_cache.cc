#include "common/object_cache.h"

#include <algorithm>

namespace orthofs {

ObjectCache::ObjectCache(uint64_t capacity_bytes, double prefetch_share)
    : capacity_(capacity_bytes),
      prefetch_quota_(static_cast<uint64_t>(static_cast<double>(capacity_bytes) *
                                            std::clamp(prefetch_share, 0.0, 1.0))) {}

std::shared_ptr<const CachedObject> ObjectCache::Lookup(const std::string& key) {
  std::lock_guard lock(mu_);
  auto found = index_.find(key);
  if (found == index_.end()) {
    ++stats_.misses;
    return nullptr;
  }
  ++stats_.hits;
  Chain::iterator it = found->second;
  if (it->chain == CacheChain::kPrefetch) {
    ++stats_.prefetch_hits;
    uint64_t charge = Charge(*it->object);
    prefetch_bytes_ -= charge;
    demand_bytes_ += charge;
    it->chain = CacheChain::kDemand;
    demand_.splice(demand_.begin(), prefetch_, it);
  } else {
    demand_.splice(demand_.begin(), demand_, it);
  }
  return it->object;
}

bool ObjectCache::Contains(const std::string& key) const {
  std::lock_guard lock(mu_);
  return index_.count(key) > 0;
}

std::shared_ptr<const CachedObject> ObjectCache::Peek(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto found = index_.find(key);
  return found == index_.end() ? nullptr : found->second->object;
}

void ObjectCache::Insert(const std::string& key, std::shared_ptr<const CachedObject> object,
                         CacheChain chain) {
  std::lock_guard lock(mu_);
  if (auto found = index_.find(key); found != index_.end()) RemoveLocked(found->second);
  uint64_t charge = Charge(*object);
  if (charge > capacity_) return;
  if (chain == CacheChain::kPrefetch) ++stats_.prefetch_inserts;
  Chain& c = ChainOf(chain);
  c.push_front(Entry{key, std::move(object), chain});
  index_[key] = c.begin();
  BytesOf(chain) += charge;
  just_inserted_ = &c.front();
  EvictLocked();
  just_inserted_ = nullptr;
}

void ObjectCache::Erase(const std::string& key) {
  std::lock_guard lock(mu_);
  if (auto found = index_.find(key); found != index_.end()) RemoveLocked(found->second);
}

void ObjectCache::Clear() {
  std::lock_guard lock(mu_);
  demand_.clear();
  prefetch_.clear();
  index_.clear();
  demand_bytes_ = prefetch_bytes_ = 0;
}

void ObjectCache::RemoveLocked(Chain::iterator it) {
  BytesOf(it->chain) -= Charge(*it->object);
  index_.erase(it->key);
  ChainOf(it->chain).erase(it);
}

void ObjectCache::EvictLocked() {
  while (demand_bytes_ + prefetch_bytes_ > capacity_) {
    bool from_prefetch =
        !prefetch_.empty() && (prefetch_bytes_ > prefetch_quota_ || demand_.empty());
    // Never the object just inserted (the MRU of its chain): when it is its chain's only
    // entry, the other chain gives up its LRU instead. Insert guarantees it fits alone.
    Chain& preferred = from_prefetch ? prefetch_ : demand_;
    Chain& other = from_prefetch ? demand_ : prefetch_;
    Chain& victim_chain = preferred.size() == 1 && !other.empty() && just_inserted_ != nullptr &&
                                  &preferred.front() == just_inserted_
                              ? other
                              : preferred;
    if (&victim_chain == &prefetch_) ++stats_.prefetch_evicted_unused;
    ++stats_.evictions;
    RemoveLocked(std::prev(victim_chain.end()));
  }
}

ObjectCacheStats ObjectCache::stats() const {
  std::lock_guard lock(mu_);
  ObjectCacheStats s = stats_;
  s.entries = index_.size();
  s.bytes = demand_bytes_ + prefetch_bytes_;
  s.prefetch_bytes = prefetch_bytes_;
  return s;
}

}  // namespace orthofs
