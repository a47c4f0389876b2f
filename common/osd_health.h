// Which OSDs a client currently believes down. A transport failure (unreachable, deadline)
// marks an OSD down for a backoff that doubles with each consecutive failure, up to a cap;
// while down, requests go to the other copy instead of waiting for the OSD again. When the
// backoff has passed the next request is let through as a probe: success brings the OSD back,
// failure starts a longer backoff. Pure state, thread-safe; the caller passes the time.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace orthofs {

class OsdHealth {
 public:
  using Clock = std::chrono::steady_clock;
  struct Options {
    Clock::duration initial_backoff = std::chrono::seconds(1);
    // Short: while it lasts, writes skip the OSD (repair records cover them) even if it is back.
    Clock::duration max_backoff = std::chrono::seconds(5);
  };

  OsdHealth() : OsdHealth(Options{}) {}
  explicit OsdHealth(const Options& options) : options_(options) {}

  // True while `osd` is inside its backoff.
  bool IsDown(uint32_t osd, Clock::time_point now) const;
  // A request to `osd` failed at the transport. Returns true when this marked it down (it was
  // up, or its probe failed), so the caller logs each transition once.
  bool RecordFailure(uint32_t osd, Clock::time_point now);
  // A request to `osd` succeeded. Returns true when it was down before.
  bool RecordSuccess(uint32_t osd);
  // The OSDs inside their backoff, in id order.
  std::vector<uint32_t> DownOsds(Clock::time_point now) const;
  // Consecutive failures of `osd` (0 when up).
  int failures(uint32_t osd) const;

 private:
  struct State {
    int failures = 0;
    Clock::time_point down_until{};
  };
  Options options_;
  mutable std::mutex mu_;
  std::unordered_map<uint32_t, State> states_;
};

}  // namespace orthofs
