// One call per key at a time, its answer shared: callers that arrive while a call for their key
// runs wait for that call and take its answer instead of making their own. For checks that
// cost a deadline when they fail (an OSD's ping of a hung peer): concurrent changes then wait
// for one ping, not each for its own. Pure: the caller's function does the work.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

namespace orthofs {

template <typename Key, typename Value>
class SingleFlight {
 public:
  // Runs `call` for `key`, or, if a call for `key` is running, waits for it and returns its
  // value. `call` runs without the lock held.
  Value Do(const Key& key, const std::function<Value()>& call) {
    std::shared_ptr<Flight> flight;
    {
      std::unique_lock lock(mu_);
      auto it = flights_.find(key);
      if (it != flights_.end()) {
        flight = it->second;
        ++flight->waiters;
        flight->landed.wait(lock, [&] { return flight->value.has_value(); });
        return *flight->value;
      }
      flight = std::make_shared<Flight>();
      flights_.emplace(key, flight);
    }
    Value value = call();
    {
      std::lock_guard lock(mu_);
      flight->value = value;
      flights_.erase(key);
    }
    flight->landed.notify_all();
    return value;
  }

  // Calls running now, and callers waiting for the one for `key` (for tests).
  size_t InFlight() const {
    std::lock_guard lock(mu_);
    return flights_.size();
  }
  size_t Waiting(const Key& key) const {
    std::lock_guard lock(mu_);
    auto it = flights_.find(key);
    return it == flights_.end() ? 0 : it->second->waiters;
  }

 private:
  struct Flight {
    std::optional<Value> value;
    size_t waiters = 0;
    std::condition_variable landed;
  };
  mutable std::mutex mu_;
  std::map<Key, std::shared_ptr<Flight>> flights_;
};

}  // namespace orthofs
