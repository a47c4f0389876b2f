// Per-object locks of an OSD, striped by key hash, and per-stripe write sequences: a writer
// bumps its stripe's sequence (holding the lock) after it committed, so a reader that loaded an
// object without the lock (a prefetch range scan) can tell that a write may have overtaken it
// and keep its stale copy out of the cache.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace orthofs {

class ObjectLocks {
  static constexpr size_t kStripes = 1024;

 public:
  std::mutex& For(const std::string& key) { return stripes_[StripeOf(key)].mu; }
  uint64_t Sequence(const std::string& key) const {
    return stripes_[StripeOf(key)].writes.load(std::memory_order_acquire);
  }
  // Transactions lock several stripes, in ascending order, so they cannot deadlock.
  static size_t StripeOf(const std::string& key) {
    return std::hash<std::string>{}(key) % kStripes;
  }
  std::mutex& ByStripe(size_t stripe) { return stripes_[stripe].mu; }
  // Locks the stripes of all `keys` (each once, ascending) for a change of several objects.
  std::vector<std::unique_lock<std::mutex>> LockAll(const std::vector<std::string>& keys) {
    std::set<size_t> stripes;
    for (const std::string& key : keys) stripes.insert(StripeOf(key));
    std::vector<std::unique_lock<std::mutex>> locks;
    locks.reserve(stripes.size());
    for (size_t s : stripes) locks.emplace_back(ByStripe(s));
    return locks;
  }
  // After a committed change of `key`; the caller holds For(key).
  void Committed(const std::string& key) {
    stripes_[StripeOf(key)].writes.fetch_add(1, std::memory_order_release);
  }

 private:
  struct Stripe {
    std::mutex mu;
    std::atomic<uint64_t> writes{0};
  };
  std::array<Stripe, kStripes> stripes_;
};

}  // namespace orthofs
