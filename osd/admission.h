// Which requests an OSD serves while it runs and shuts down: each is counted in flight from
// admission to answer, and once draining has begun new ones are refused (UNAVAILABLE, so
// clients fail over) while Drain waits for those in flight.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>

#include "common/map_view.h"
#include "osd/map_holder.h"

namespace orthofs {

// Thread-safe: atomics; a RequestScope lives on its request's thread.
class Admission {
 public:
  // Counts a request in flight (admitted() false once draining has begun) and holds the map
  // view it places by until it answers (MapHolder::Install waits for that).
  class RequestScope {
   public:
    RequestScope(Admission* admission, const MapHolder& maps);
    ~RequestScope();
    RequestScope(const RequestScope&) = delete;
    RequestScope& operator=(const RequestScope&) = delete;

    bool admitted() const { return admitted_; }
    const MapView& view() const { return *view_; }
    // For a request that installs a map: it must not wait for itself.
    void DropView() { view_.reset(); }

   private:
    Admission* const admission_;
    bool admitted_;
    std::shared_ptr<const MapView> view_;
  };

  // When the request this thread serves was admitted (the sync server runs a call on one
  // thread), for its latency.
  static std::chrono::steady_clock::time_point AdmittedAt();

  // Refuses every later request.
  void BeginDraining() { draining_ = true; }
  bool draining() const { return draining_.load(); }
  // Waits until no admitted request is in flight; false if some still are at `deadline`.
  bool WaitIdle(std::chrono::steady_clock::time_point deadline) const;

 private:
  std::atomic<bool> draining_{false};
  std::atomic<int> in_flight_{0};
};

}  // namespace orthofs
