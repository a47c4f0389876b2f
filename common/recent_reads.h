// Values this client read a moment ago, for the change that usually follows the read.
//
// The kernel looks a name up right before it creates, unlinks or renames it, so the client
// reads the same DIRENT bucket twice within a millisecond. A change is optimistic ([Kroha]
// §4): it writes conditionally on the version it read, and a conflict re-reads and retries. So
// the first attempt may start from the lookup's read: if the object changed since, the
// conditional write fails and the retry reads afresh. Callers never answer from a value taken
// here (no EEXIST or ENOENT from it), they only start a change with it.
//
// Take removes the value: one read starts at most one change. Values older than `max_age`
// are not returned. Peek leaves the value where it is, for values the caller may answer from
// (what this client wrote itself a moment ago). Pure logic, no locking.
#pragma once

#include <chrono>
#include <cstddef>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <utility>

namespace orthofs {

template <typename Value>
class RecentReads {
 public:
  using Clock = std::chrono::steady_clock;

  RecentReads(Clock::duration max_age, size_t capacity) : max_age_(max_age), capacity_(capacity) {}

  void Put(const std::string& key, Value value, Clock::time_point now) {
    if (capacity_ == 0) return;
    if (auto it = entries_.find(key); it != entries_.end()) {
      order_.erase(it->second.position);
      entries_.erase(it);
    }
    while (entries_.size() >= capacity_) {
      entries_.erase(order_.front());
      order_.pop_front();
    }
    order_.push_back(key);
    entries_.emplace(key, Entry{std::move(value), now, std::prev(order_.end())});
  }

  // The value read for `key` no longer ago than max_age, removed from here.
  std::optional<Value> Take(const std::string& key, Clock::time_point now) {
    auto it = entries_.find(key);
    if (it == entries_.end()) return std::nullopt;
    std::optional<Value> value;
    if (now - it->second.read_at <= max_age_) value = std::move(it->second.value);
    order_.erase(it->second.position);
    entries_.erase(it);
    return value;
  }

  // The value put for `key` no longer ago than max_age, and when it was put; left here.
  std::optional<std::pair<Value, Clock::time_point>> Peek(const std::string& key,
                                                          Clock::time_point now) const {
    auto it = entries_.find(key);
    if (it == entries_.end() || now - it->second.read_at > max_age_) return std::nullopt;
    return std::pair{it->second.value, it->second.read_at};
  }

  // The key's object changed here or is gone: a value read before must not start a change.
  void Forget(const std::string& key) {
    auto it = entries_.find(key);
    if (it == entries_.end()) return;
    order_.erase(it->second.position);
    entries_.erase(it);
  }

  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    Value value;
    Clock::time_point read_at;
    std::list<std::string>::iterator position;  // in order_
  };
  const Clock::duration max_age_;
  const size_t capacity_;
  std::map<std::string, Entry> entries_;
  std::list<std::string> order_;  // oldest first
};

}  // namespace orthofs
