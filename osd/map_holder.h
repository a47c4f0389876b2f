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
#include <vector>

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
  // Every view replaced earlier and still held counts too (a retried Install after a timeout
  // must not settle while a request of the first old view still runs).
  bool Install(std::shared_ptr<const MapView> view, std::chrono::milliseconds timeout) {
    std::lock_guard install(install_mu_);
    {
      std::lock_guard lock(mu_);
      undrained_.push_back(std::exchange(view_, view));
    }
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!undrained_.empty()) {
      std::erase_if(undrained_, [](const std::weak_ptr<const MapView>& v) { return v.expired(); });
      if (undrained_.empty()) break;
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
  std::shared_ptr<const MapView> view_;                  // guarded by mu_
  std::mutex install_mu_;                                // one Install at a time
  std::vector<std::weak_ptr<const MapView>> undrained_;  // guarded by install_mu_
  std::atomic<uint64_t> settled_epoch_;
};

}  // namespace orthofs
