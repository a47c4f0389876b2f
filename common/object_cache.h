// A byte-bounded object cache with two LRU chains ([Knafla 1998] §2.2, after Freedman & DeWitt):
// objects loaded by prefetching enter the prefetch chain and move to the demand chain on their
// first use. Eviction takes the prefetch chain's LRU end while that chain holds more than its
// share of the capacity, else the demand chain's; so speculative data cannot flush the
// demand working set, and the demand set cannot starve prefetching entirely.
// Thread-safe.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace orthofs {

struct CachedObject {
  uint64_t version = 0;
  uint64_t checksum = 0;
  std::string data;
};

enum class CacheChain { kDemand, kPrefetch };

struct ObjectCacheStats {
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t prefetch_inserts = 0;         // objects that entered the prefetch chain
  uint64_t prefetch_hits = 0;            // first uses of prefetched objects
  uint64_t prefetch_evicted_unused = 0;  // prefetched, evicted before any use (thrashing)
  uint64_t evictions = 0;
  uint64_t entries = 0;
  uint64_t bytes = 0;
  uint64_t prefetch_bytes = 0;
};

class ObjectCache {
 public:
  // capacity_bytes == 0 disables caching. prefetch_share in [0, 1].
  explicit ObjectCache(uint64_t capacity_bytes, double prefetch_share = 0.5);

  ObjectCache(const ObjectCache&) = delete;
  ObjectCache& operator=(const ObjectCache&) = delete;

  // The cached object or nullptr. A hit in the prefetch chain moves it to the demand chain.
  std::shared_ptr<const CachedObject> Lookup(const std::string& key);
  // True if present; no promotion and no statistics (for "already prefetched?" checks).
  bool Contains(const std::string& key) const;
  // The cached object or nullptr, with no promotion and no statistics (writers use it to
  // refresh entries that are cached without counting a read).
  std::shared_ptr<const CachedObject> Peek(const std::string& key) const;
  // Inserts or replaces. A replaced object keeps no chain position. Objects larger than the
  // capacity are not cached.
  void Insert(const std::string& key, std::shared_ptr<const CachedObject> object, CacheChain chain);
  void Erase(const std::string& key);
  void Clear();

  ObjectCacheStats stats() const;
  uint64_t capacity_bytes() const { return capacity_; }

 private:
  struct Entry {
    std::string key;
    std::shared_ptr<const CachedObject> object;
    CacheChain chain;
  };
  using Chain = std::list<Entry>;  // front = most recently used

  Chain& ChainOf(CacheChain c) { return c == CacheChain::kDemand ? demand_ : prefetch_; }
  uint64_t& BytesOf(CacheChain c) {
    return c == CacheChain::kDemand ? demand_bytes_ : prefetch_bytes_;
  }
  static uint64_t Charge(const CachedObject& o) { return o.data.size() + sizeof(Entry) + 64; }
  void RemoveLocked(Chain::iterator it);
  void EvictLocked();

  const uint64_t capacity_;
  const uint64_t prefetch_quota_;
  mutable std::mutex mu_;
  Chain demand_;
  Chain prefetch_;
  uint64_t demand_bytes_ = 0;
  uint64_t prefetch_bytes_ = 0;
  std::unordered_map<std::string, Chain::iterator> index_;
  const Entry* just_inserted_ = nullptr;  // protected from eviction during its own Insert
  ObjectCacheStats stats_;
};

}  // namespace orthofs
