// The OSD's current MapView, swapped whole when the cluster map changes (orthofs rebalance).
// Every request places by one snapshot from start to answer; Install waits until no request
// holds the snapshot it replaced, so that after it returns nothing placed with the old map
// changes this OSD's copies any more (a new owner may then take them over safely).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>

#include "common/map_view.h"

namespace orthofs {

class MapHolder {
 public:
  explicit MapHolder(std::shared_ptr<const MapView> view)
      : view_(std::move(view)), settled_epoch_(view_->epoch()) {}

  std::shared_ptr<const MapView> Current() const {
    std::lock_guard lock(mu_);
    return view_;
  }

  // Installs `view` and waits up to `timeout` for requests still placing by the old one. False
  // on timeout (the new view is installed all the same; settled_epoch lags until a retry).
  bool Install(std::shared_ptr<const MapView> view, std::chrono::milliseconds timeout) {
    std::lock_guard install(install_mu_);
    std::shared_ptr<const MapView> old;
    {
      std::lock_guard lock(mu_);
      old = std::exchange(view_, view);
    }
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (old.use_count() > 1) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    settled_epoch_.store(view->epoch());
    return true;
  }

  // The epoch with no request of an older one in flight.
  uint64_t settled_epoch() const { return settled_epoch_.load(); }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const MapView> view_;  // guarded by mu_
  std::mutex install_mu_;                // one Install at a time
  std::atomic<uint64_t> settled_epoch_;
};

}  // namespace orthofs
