// The two-chain (demand / prefetch) byte-bounded LRU object cache.
#include "common/object_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace orthofs {
namespace {

// Objects are large relative to the cache's per-entry overhead (Charge() = data size +
// sizeof(Entry) + 64; Entry is private), so "how many objects fit" does not depend on the
// exact overhead. kCapacity3 holds three objects but never four as long as the overhead per
// object is below kMaxOverhead, which OverheadIsSmall checks.
constexpr uint64_t kObjectSize = 10 * 1024;
constexpr uint64_t kMaxOverhead = 512;
constexpr uint64_t kCapacity3 = 3 * (kObjectSize + kMaxOverhead);
static_assert(4 * kObjectSize > kCapacity3, "four objects must not fit");

std::shared_ptr<const CachedObject> Obj(const std::string& key, uint64_t version = 1,
                                        size_t size = kObjectSize) {
  auto o = std::make_shared<CachedObject>();
  o->version = version;
  o->checksum = version * 31;
  o->data.assign(size, key.empty() ? 'x' : key.back());
  return o;
}

uint64_t OverheadPerObject() {
  ObjectCache cache(1 << 20);
  cache.Insert("k", Obj("k"), CacheChain::kDemand);
  return cache.stats().bytes - kObjectSize;
}

TEST(ObjectCacheTest, OverheadIsSmall) {
  uint64_t overhead = OverheadPerObject();
  EXPECT_GE(overhead, 64u);  // at least the documented constant
  EXPECT_LT(overhead, kMaxOverhead);
}

TEST(ObjectCacheTest, EmptyCache) {
  ObjectCache cache(kCapacity3);
  EXPECT_EQ(cache.capacity_bytes(), kCapacity3);
  ObjectCacheStats s = cache.stats();
  EXPECT_EQ(s.hits, 0u);
  EXPECT_EQ(s.misses, 0u);
  EXPECT_EQ(s.entries, 0u);
  EXPECT_EQ(s.bytes, 0u);
  EXPECT_EQ(s.prefetch_bytes, 0u);
  EXPECT_FALSE(cache.Contains("a"));
}

TEST(ObjectCacheTest, HitAndMissStats) {
  ObjectCache cache(kCapacity3);
  EXPECT_EQ(cache.Lookup("a"), nullptr);
  cache.Insert("a", Obj("a", 7), CacheChain::kDemand);
  auto a = cache.Lookup("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->version, 7u);
  EXPECT_EQ(a->checksum, 7u * 31);
  EXPECT_EQ(a->data, std::string(kObjectSize, 'a'));
  EXPECT_NE(cache.Lookup("a"), nullptr);
  EXPECT_EQ(cache.Lookup("b"), nullptr);

  ObjectCacheStats s = cache.stats();
  EXPECT_EQ(s.hits, 2u);
  EXPECT_EQ(s.misses, 2u);
  EXPECT_EQ(s.entries, 1u);
  EXPECT_EQ(s.bytes, kObjectSize + OverheadPerObject());
  EXPECT_EQ(s.prefetch_bytes, 0u);
  EXPECT_EQ(s.evictions, 0u);
  EXPECT_EQ(s.prefetch_inserts, 0u);
  EXPECT_EQ(s.prefetch_hits, 0u);
}

TEST(ObjectCacheTest, ReturnedObjectOutlivesEviction) {
  ObjectCache cache(kCapacity3);
  cache.Insert("a", Obj("a"), CacheChain::kDemand);
  auto a = cache.Lookup("a");
  ASSERT_NE(a, nullptr);
  cache.Clear();
  EXPECT_EQ(a->data.size(), kObjectSize);  // shared ownership keeps it alive
}

TEST(ObjectCacheTest, LruEvictionOrderInDemandChain) {
  ObjectCache cache(kCapacity3);
  cache.Insert("a", Obj("a"), CacheChain::kDemand);
  cache.Insert("b", Obj("b"), CacheChain::kDemand);
  cache.Insert("c", Obj("c"), CacheChain::kDemand);
  EXPECT_EQ(cache.stats().entries, 3u);
  EXPECT_EQ(cache.stats().evictions, 0u);

  // Use order now (MRU first): a, c, b.
  ASSERT_NE(cache.Lookup("a"), nullptr);

  cache.Insert("d", Obj("d"), CacheChain::kDemand);  // evicts b, the LRU
  EXPECT_TRUE(cache.Contains("a"));
  EXPECT_FALSE(cache.Contains("b"));
  EXPECT_TRUE(cache.Contains("c"));
  EXPECT_TRUE(cache.Contains("d"));

  cache.Insert("e", Obj("e"), CacheChain::kDemand);  // evicts c
  EXPECT_FALSE(cache.Contains("c"));
  EXPECT_TRUE(cache.Contains("a"));

  cache.Insert("f", Obj("f"), CacheChain::kDemand);  // evicts a
  EXPECT_FALSE(cache.Contains("a"));
  EXPECT_TRUE(cache.Contains("d"));
  EXPECT_TRUE(cache.Contains("e"));
  EXPECT_TRUE(cache.Contains("f"));

  ObjectCacheStats s = cache.stats();
  EXPECT_EQ(s.evictions, 3u);
  EXPECT_EQ(s.entries, 3u);
  EXPECT_EQ(s.prefetch_evicted_unused, 0u);
  EXPECT_LE(s.bytes, kCapacity3);
}

TEST(ObjectCacheTest, ContainsDoesNotPromoteOrCount) {
  ObjectCache cache(kCapacity3);
  cache.Insert("a", Obj("a"), CacheChain::kDemand);
  cache.Insert("b", Obj("b"), CacheChain::kDemand);
  cache.Insert("c", Obj("c"), CacheChain::kDemand);
  EXPECT_TRUE(cache.Contains("a"));
  EXPECT_FALSE(cache.Contains("zz"));
  cache.Insert("d", Obj("d"), CacheChain::kDemand);
  EXPECT_FALSE(cache.Contains("a"));  // still the LRU despite Contains
  ObjectCacheStats s = cache.stats();
  EXPECT_EQ(s.hits, 0u);
  EXPECT_EQ(s.misses, 0u);
}

TEST(ObjectCacheTest, ContainsDoesNotPromotePrefetchedObject) {
  ObjectCache cache(kCapacity3);
  cache.Insert("p", Obj("p"), CacheChain::kPrefetch);
  uint64_t charge = cache.stats().prefetch_bytes;
  EXPECT_TRUE(cache.Contains("p"));
  ObjectCacheStats s = cache.stats();
  EXPECT_EQ(s.prefetch_hits, 0u);
  EXPECT_EQ(s.prefetch_bytes, charge);
  EXPECT_EQ(s.hits, 0u);
}

TEST(ObjectCacheTest, PeekDoesNotPromoteOrCount) {
  ObjectCache cache(kCapacity3);
  EXPECT_EQ(cache.Peek("a"), nullptr);
  cache.Insert("a", Obj("a", 5), CacheChain::kDemand);
  cache.Insert("b", Obj("b"), CacheChain::kDemand);
  cache.Insert("c", Obj("c"), CacheChain::kDemand);
  auto a = cache.Peek("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->version, 5u);
  cache.Insert("d", Obj("d"), CacheChain::kDemand);
  EXPECT_FALSE(cache.Contains("a"));  // Peek left a at the LRU end
  EXPECT_EQ(cache.Peek("a"), nullptr);

  cache.Insert("p", Obj("p"), CacheChain::kPrefetch);
  const uint64_t prefetch_bytes = cache.stats().prefetch_bytes;
  ASSERT_NE(cache.Peek("p"), nullptr);
  ObjectCacheStats s = cache.stats();
  EXPECT_EQ(s.hits, 0u);
  EXPECT_EQ(s.misses, 0u);
  EXPECT_EQ(s.prefetch_hits, 0u);
  EXPECT_EQ(s.prefetch_bytes, prefetch_bytes);  // still in the prefetch chain
  EXPECT_GT(prefetch_bytes, 0u);
}

TEST(ObjectCacheTest, PrefetchedObjectIsPromotedOnFirstLookup) {
  ObjectCache cache(kCapacity3);
  cache.Insert("p", Obj("p"), CacheChain::kPrefetch);
  ObjectCacheStats s = cache.stats();
  EXPECT_EQ(s.prefetch_inserts, 1u);
  EXPECT_EQ(s.prefetch_bytes, s.bytes);
  EXPECT_GT(s.prefetch_bytes, kObjectSize);

  ASSERT_NE(cache.Lookup("p"), nullptr);
  s = cache.stats();
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.prefetch_hits, 1u);
  EXPECT_EQ(s.prefetch_bytes, 0u);  // moved to the demand chain
  EXPECT_EQ(s.entries, 1u);

  // Later uses are ordinary demand hits: prefetch_hits counts first uses only.
  ASSERT_NE(cache.Lookup("p"), nullptr);
  ASSERT_NE(cache.Lookup("p"), nullptr);
  s = cache.stats();
  EXPECT_EQ(s.hits, 3u);
  EXPECT_EQ(s.prefetch_hits, 1u);
  EXPECT_EQ(s.prefetch_inserts, 1u);
}

TEST(ObjectCacheTest, PromotedObjectIsMostRecentlyUsedInDemandChain) {
  ObjectCache cache(kCapacity3);
  cache.Insert("a", Obj("a"), CacheChain::kDemand);
  cache.Insert("b", Obj("b"), CacheChain::kDemand);
  cache.Insert("p", Obj("p"), CacheChain::kPrefetch);
  ASSERT_NE(cache.Lookup("p"), nullptr);  // demand chain MRU first: p, b, a
  cache.Insert("c", Obj("c"), CacheChain::kDemand);
  EXPECT_FALSE(cache.Contains("a"));
  cache.Insert("d", Obj("d"), CacheChain::kDemand);
  EXPECT_FALSE(cache.Contains("b"));
  EXPECT_TRUE(cache.Contains("p"));
  EXPECT_EQ(cache.stats().prefetch_evicted_unused, 0u);  // p was used: not "unused"
}

TEST(ObjectCacheTest, EvictionPrefersPrefetchChainWhileOverItsShare) {
  // Share 0.5: the prefetch chain may keep 1.5 objects' worth when the cache is full.
  ObjectCache cache(kCapacity3, 0.5);
  cache.Insert("p1", Obj("1"), CacheChain::kPrefetch);
  cache.Insert("p2", Obj("2"), CacheChain::kPrefetch);
  cache.Insert("d1", Obj("3"), CacheChain::kDemand);
  EXPECT_EQ(cache.stats().entries, 3u);
  EXPECT_EQ(cache.stats().evictions, 0u);  // over its share, but the cache is not full

  // Full: the prefetch chain (2 objects > 1.5) loses its LRU end, p1.
  cache.Insert("d2", Obj("4"), CacheChain::kDemand);
  EXPECT_FALSE(cache.Contains("p1"));
  EXPECT_TRUE(cache.Contains("p2"));
  EXPECT_TRUE(cache.Contains("d1"));
  EXPECT_TRUE(cache.Contains("d2"));
  ObjectCacheStats s = cache.stats();
  EXPECT_EQ(s.evictions, 1u);
  EXPECT_EQ(s.prefetch_evicted_unused, 1u);

  // Now the prefetch chain (1 object) is within its share: the demand chain's LRU goes.
  cache.Insert("d3", Obj("5"), CacheChain::kDemand);
  EXPECT_TRUE(cache.Contains("p2"));
  EXPECT_FALSE(cache.Contains("d1"));
  EXPECT_TRUE(cache.Contains("d2"));
  EXPECT_TRUE(cache.Contains("d3"));
  s = cache.stats();
  EXPECT_EQ(s.evictions, 2u);
  EXPECT_EQ(s.prefetch_evicted_unused, 1u);
}

TEST(ObjectCacheTest, PrefetchInsertsCannotFlushTheDemandSetBeyondTheShare) {
  ObjectCache cache(kCapacity3, 0.5);
  cache.Insert("d1", Obj("1"), CacheChain::kDemand);
  cache.Insert("d2", Obj("2"), CacheChain::kDemand);
  // A long prefetch stream: once it holds more than its share it only evicts itself, oldest
  // first, and the two demand objects survive.
  for (int i = 0; i < 10; ++i) {
    cache.Insert("p" + std::to_string(i), Obj("p"), CacheChain::kPrefetch);
  }
  EXPECT_TRUE(cache.Contains("d1"));
  EXPECT_TRUE(cache.Contains("d2"));
  EXPECT_TRUE(cache.Contains("p9"));
  EXPECT_FALSE(cache.Contains("p8"));
  ObjectCacheStats s = cache.stats();
  EXPECT_EQ(s.prefetch_inserts, 10u);
  EXPECT_EQ(s.prefetch_evicted_unused, 9u);
  EXPECT_EQ(s.evictions, 9u);
  EXPECT_EQ(s.entries, 3u);
}

TEST(ObjectCacheTest, DemandInsertsLeavePrefetchChainItsShare) {
  ObjectCache cache(kCapacity3, 0.5);
  cache.Insert("p1", Obj("1"), CacheChain::kPrefetch);
  for (int i = 0; i < 10; ++i) {
    cache.Insert("d" + std::to_string(i), Obj("d"), CacheChain::kDemand);
  }
  // p1 (one object, within the 1.5-object share) was never chosen as a victim.
  EXPECT_TRUE(cache.Contains("p1"));
  EXPECT_TRUE(cache.Contains("d9"));
  EXPECT_TRUE(cache.Contains("d8"));
  EXPECT_FALSE(cache.Contains("d7"));
  ObjectCacheStats s = cache.stats();
  EXPECT_EQ(s.prefetch_evicted_unused, 0u);
  EXPECT_EQ(s.evictions, 8u);
}

TEST(ObjectCacheTest, PrefetchEvictedUnusedCountsOnlyUnusedObjects) {
  ObjectCache cache(kCapacity3, 0.0);  // the prefetch chain has no protected share
  cache.Insert("p1", Obj("1"), CacheChain::kPrefetch);
  cache.Insert("p2", Obj("2"), CacheChain::kPrefetch);
  ASSERT_NE(cache.Lookup("p2"), nullptr);  // used: now a demand object
  cache.Insert("p3", Obj("3"), CacheChain::kPrefetch);
  cache.Insert("d1", Obj("4"), CacheChain::kDemand);  // evicts p1 (prefetch chain first)
  cache.Insert("d2", Obj("5"), CacheChain::kDemand);  // evicts p3
  cache.Insert("d3", Obj("6"), CacheChain::kDemand);  // prefetch chain empty: evicts p2
  EXPECT_FALSE(cache.Contains("p1"));
  EXPECT_FALSE(cache.Contains("p2"));
  EXPECT_FALSE(cache.Contains("p3"));
  ObjectCacheStats s = cache.stats();
  EXPECT_EQ(s.prefetch_inserts, 3u);
  EXPECT_EQ(s.prefetch_hits, 1u);
  EXPECT_EQ(s.prefetch_evicted_unused, 2u);  // p1 and p3; p2 had been used
  EXPECT_EQ(s.evictions, 3u);
  EXPECT_EQ(s.prefetch_bytes, 0u);
}

TEST(ObjectCacheTest, PrefetchShareIsClamped) {
  // A negative share behaves like 0: prefetched data is always the first victim.
  ObjectCache low(kCapacity3, -1.0);
  low.Insert("p", Obj("p"), CacheChain::kPrefetch);
  for (int i = 0; i < 3; ++i) low.Insert("d" + std::to_string(i), Obj("d"), CacheChain::kDemand);
  EXPECT_FALSE(low.Contains("p"));
  EXPECT_TRUE(low.Contains("d0"));

  // A share above 1 behaves like 1: the prefetch chain is never over its share, so the
  // demand chain is the victim whenever it has entries.
  ObjectCache high(kCapacity3, 5.0);
  high.Insert("d", Obj("d"), CacheChain::kDemand);
  for (int i = 0; i < 3; ++i) high.Insert("p" + std::to_string(i), Obj("p"), CacheChain::kPrefetch);
  EXPECT_FALSE(high.Contains("d"));
  EXPECT_TRUE(high.Contains("p0"));
  EXPECT_TRUE(high.Contains("p2"));
}

// BUG (object_cache.cc, EvictLocked): the victim is chosen by chain only, so the entry that
// Insert just added can be its own victim. With the prefetch chain within its share and the
// demand chain empty, a demand object that fits the cache (70 KiB of 100 KiB) but not the
// space the prefetched data leaves is inserted and immediately evicted, while the unused
// prefetched object stays: speculative data displaces demand data, the opposite of the
// two-chain rule, and Insert silently does nothing although the object is smaller than the
// capacity. (Same with prefetch_share = 1 whenever the cache is full of prefetched data.)
// Fix: never evict the entry being inserted; when it is the demand chain's only entry, take
// the victim from the prefetch chain.
TEST(ObjectCacheTest, DemandInsertIsNotEvictedByItself) {
  ObjectCache cache(100 * 1024, 0.5);
  cache.Insert("p", Obj("p", 1, 40 * 1024), CacheChain::kPrefetch);
  cache.Insert("d", Obj("d", 1, 70 * 1024), CacheChain::kDemand);
  EXPECT_TRUE(cache.Contains("d")) << "the demand object was evicted by its own insertion";
  EXPECT_FALSE(cache.Contains("p"));
}

TEST(ObjectCacheTest, ReplacingAKey) {
  ObjectCache cache(kCapacity3);
  cache.Insert("a", Obj("a", 1), CacheChain::kDemand);
  cache.Insert("b", Obj("b", 1), CacheChain::kDemand);
  cache.Insert("c", Obj("c", 1), CacheChain::kDemand);
  // Replace a with a new version: one entry, the new object, and a becomes MRU.
  cache.Insert("a", Obj("a", 2), CacheChain::kDemand);
  ObjectCacheStats s = cache.stats();
  EXPECT_EQ(s.entries, 3u);
  EXPECT_EQ(s.evictions, 0u);
  EXPECT_EQ(s.bytes, 3 * (kObjectSize + OverheadPerObject()));
  cache.Insert("d", Obj("d"), CacheChain::kDemand);  // evicts b, not the replaced a
  EXPECT_FALSE(cache.Contains("b"));
  auto a = cache.Lookup("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->version, 2u);
}

TEST(ObjectCacheTest, ReplacingChangesSizeAndChain) {
  ObjectCache cache(kCapacity3);
  cache.Insert("a", Obj("a", 1, 100), CacheChain::kDemand);
  uint64_t small = cache.stats().bytes;
  cache.Insert("a", Obj("a", 2, 5000), CacheChain::kPrefetch);
  ObjectCacheStats s = cache.stats();
  EXPECT_EQ(s.entries, 1u);
  EXPECT_EQ(s.bytes, small + 4900);
  EXPECT_EQ(s.prefetch_bytes, s.bytes);
  EXPECT_EQ(s.prefetch_inserts, 1u);
  cache.Insert("a", Obj("a", 3, 10), CacheChain::kDemand);
  s = cache.stats();
  EXPECT_EQ(s.entries, 1u);
  EXPECT_EQ(s.bytes, small - 90);
  EXPECT_EQ(s.prefetch_bytes, 0u);
  EXPECT_EQ(cache.Lookup("a")->version, 3u);
  EXPECT_EQ(cache.stats().prefetch_hits, 0u);
}

TEST(ObjectCacheTest, ObjectLargerThanCapacityIsNotCached) {
  ObjectCache cache(kCapacity3);
  cache.Insert("a", Obj("a"), CacheChain::kDemand);
  cache.Insert("huge", Obj("h", 1, kCapacity3 + 1), CacheChain::kDemand);
  EXPECT_FALSE(cache.Contains("huge"));
  EXPECT_TRUE(cache.Contains("a"));  // nothing was evicted to make room for it
  EXPECT_EQ(cache.stats().evictions, 0u);
  cache.Insert("huge", Obj("h", 1, kCapacity3 + 1), CacheChain::kPrefetch);
  EXPECT_FALSE(cache.Contains("huge"));
  EXPECT_EQ(cache.stats().entries, 1u);
  // An object whose data fits but whose charge (data + overhead) does not is not cached.
  cache.Insert("edge", Obj("e", 1, kCapacity3 - 10), CacheChain::kDemand);
  EXPECT_FALSE(cache.Contains("edge"));
  EXPECT_TRUE(cache.Contains("a"));
}

TEST(ObjectCacheTest, ObjectExactlyAtCapacityIsCached) {
  const uint64_t overhead = OverheadPerObject();
  ObjectCache cache(kObjectSize + overhead);
  cache.Insert("a", Obj("a"), CacheChain::kDemand);
  EXPECT_TRUE(cache.Contains("a"));
  EXPECT_EQ(cache.stats().bytes, cache.capacity_bytes());
  cache.Insert("b", Obj("b"), CacheChain::kDemand);
  EXPECT_FALSE(cache.Contains("a"));
  EXPECT_TRUE(cache.Contains("b"));
}

TEST(ObjectCacheTest, ReplacingWithTooLargeObjectDropsTheStaleVersion) {
  ObjectCache cache(kCapacity3);
  cache.Insert("a", Obj("a", 1), CacheChain::kDemand);
  cache.Insert("a", Obj("a", 2, kCapacity3 * 2), CacheChain::kDemand);
  // The old version must not be served after the caller replaced it.
  EXPECT_FALSE(cache.Contains("a"));
  EXPECT_EQ(cache.Lookup("a"), nullptr);
  EXPECT_EQ(cache.stats().bytes, 0u);
}

TEST(ObjectCacheTest, ZeroCapacityCachesNothing) {
  ObjectCache cache(0);
  EXPECT_EQ(cache.capacity_bytes(), 0u);
  cache.Insert("a", Obj("a"), CacheChain::kDemand);
  cache.Insert("b", Obj("b", 1, 0), CacheChain::kDemand);  // even an empty object
  cache.Insert("p", Obj("p"), CacheChain::kPrefetch);
  EXPECT_FALSE(cache.Contains("a"));
  EXPECT_FALSE(cache.Contains("b"));
  EXPECT_FALSE(cache.Contains("p"));
  EXPECT_EQ(cache.Lookup("a"), nullptr);
  ObjectCacheStats s = cache.stats();
  EXPECT_EQ(s.entries, 0u);
  EXPECT_EQ(s.bytes, 0u);
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.hits, 0u);
  EXPECT_EQ(s.evictions, 0u);
}

TEST(ObjectCacheTest, Erase) {
  ObjectCache cache(kCapacity3);
  cache.Insert("a", Obj("a"), CacheChain::kDemand);
  cache.Insert("p", Obj("p"), CacheChain::kPrefetch);
  cache.Erase("a");
  cache.Erase("p");
  cache.Erase("never-inserted");
  EXPECT_FALSE(cache.Contains("a"));
  EXPECT_FALSE(cache.Contains("p"));
  ObjectCacheStats s = cache.stats();
  EXPECT_EQ(s.entries, 0u);
  EXPECT_EQ(s.bytes, 0u);
  EXPECT_EQ(s.prefetch_bytes, 0u);
  EXPECT_EQ(s.evictions, 0u);  // erasing is not evicting
  EXPECT_EQ(s.prefetch_evicted_unused, 0u);
  // The freed space is usable: three new objects fit without evictions.
  for (const char* k : {"x", "y", "z"}) cache.Insert(k, Obj(k), CacheChain::kDemand);
  EXPECT_EQ(cache.stats().evictions, 0u);
  EXPECT_EQ(cache.stats().entries, 3u);
}

TEST(ObjectCacheTest, Clear) {
  ObjectCache cache(kCapacity3);
  cache.Insert("a", Obj("a"), CacheChain::kDemand);
  cache.Insert("b", Obj("b"), CacheChain::kDemand);
  cache.Insert("p", Obj("p"), CacheChain::kPrefetch);
  cache.Clear();
  EXPECT_FALSE(cache.Contains("a"));
  EXPECT_FALSE(cache.Contains("b"));
  EXPECT_FALSE(cache.Contains("p"));
  ObjectCacheStats s = cache.stats();
  EXPECT_EQ(s.entries, 0u);
  EXPECT_EQ(s.bytes, 0u);
  EXPECT_EQ(s.prefetch_bytes, 0u);
  EXPECT_EQ(cache.Lookup("a"), nullptr);
  // Usable afterwards, with the full capacity.
  for (const char* k : {"x", "y", "z"}) cache.Insert(k, Obj(k), CacheChain::kDemand);
  EXPECT_EQ(cache.stats().entries, 3u);
  EXPECT_EQ(cache.stats().evictions, 0u);
  EXPECT_NE(cache.Lookup("x"), nullptr);
}

TEST(ObjectCacheTest, BytesNeverExceedCapacityUnderRandomOperations) {
  std::mt19937_64 rng(99);
  const uint64_t capacity = 200 * 1024;
  ObjectCache cache(capacity, 0.3);
  const uint64_t overhead = OverheadPerObject();
  uint64_t lookups = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string key = "k" + std::to_string(rng() % 100);
    switch (rng() % 4) {
      case 0:
      case 1:
        ++lookups;
        if (auto o = cache.Lookup(key)) {
          ASSERT_EQ(o->data.size(), o->version) << key;
        }
        break;
      case 2: {
        size_t size = rng() % (40 * 1024);
        cache.Insert(key, Obj(key, size, size),
                     rng() % 2 ? CacheChain::kDemand : CacheChain::kPrefetch);
        break;
      }
      default:
        cache.Erase(key);
    }
    ObjectCacheStats s = cache.stats();
    ASSERT_LE(s.bytes, capacity);
    ASSERT_LE(s.prefetch_bytes, s.bytes);
    ASSERT_GE(s.bytes, s.entries * overhead);
  }
  ObjectCacheStats s = cache.stats();
  EXPECT_EQ(s.hits + s.misses, lookups);
  EXPECT_LE(s.prefetch_hits, s.prefetch_inserts);
  EXPECT_LE(s.prefetch_evicted_unused, s.evictions);
}

TEST(ObjectCacheTest, ConcurrentSmoke) {
  constexpr int kThreads = 4;
  constexpr int kOpsPerThread = 20000;
  constexpr uint64_t kSize = 1024;
  const uint64_t overhead = OverheadPerObject();
  // Room for 40 of the 64 keys, so evictions happen constantly.
  ObjectCache cache(40 * (kSize + overhead), 0.25);
  std::atomic<uint64_t> lookups{0};
  std::atomic<uint64_t> found{0};
  std::atomic<uint64_t> bad_objects{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(1000 + t);
      for (int i = 0; i < kOpsPerThread; ++i) {
        int k = static_cast<int>(rng() % 64);
        std::string key = "key" + std::to_string(k);
        switch (rng() % 5) {
          case 0:
          case 1: {
            ++lookups;
            auto o = cache.Lookup(key);
            if (o) {
              ++found;
              // Objects are immutable once shared: the data must be what was inserted.
              if (o->version != static_cast<uint64_t>(k) || o->data.size() != kSize ||
                  o->data != std::string(kSize, static_cast<char>('A' + k % 26))) {
                ++bad_objects;
              }
            }
            break;
          }
          case 2:
          case 3: {
            auto o = std::make_shared<CachedObject>();
            o->version = static_cast<uint64_t>(k);
            o->data.assign(kSize, static_cast<char>('A' + k % 26));
            cache.Insert(key, std::move(o),
                         rng() % 2 ? CacheChain::kDemand : CacheChain::kPrefetch);
            break;
          }
          default:
            if (rng() % 8 == 0) {
              cache.Erase(key);
            } else {
              (void)cache.Contains(key);
            }
        }
      }
    });
  }
  for (auto& th : threads) th.join();

  ObjectCacheStats s = cache.stats();
  EXPECT_EQ(bad_objects.load(), 0u);
  EXPECT_EQ(s.hits + s.misses, lookups.load());
  EXPECT_EQ(s.hits, found.load());
  EXPECT_GT(s.hits, 0u);
  EXPECT_GT(s.misses, 0u);
  EXPECT_GT(s.evictions, 0u);
  EXPECT_LE(s.prefetch_hits, s.prefetch_inserts);
  EXPECT_LE(s.prefetch_hits, s.hits);
  EXPECT_LE(s.prefetch_evicted_unused, s.evictions);
  EXPECT_LE(s.bytes, cache.capacity_bytes());
  EXPECT_LE(s.prefetch_bytes, s.bytes);
  EXPECT_EQ(s.bytes, s.entries * (kSize + overhead));  // all objects have the same size
  EXPECT_LE(s.entries, 40u);
  uint64_t present = 0;
  for (int k = 0; k < 64; ++k) present += cache.Contains("key" + std::to_string(k)) ? 1 : 0;
  EXPECT_EQ(present, s.entries);
}

}  // namespace
}  // namespace orthofs
