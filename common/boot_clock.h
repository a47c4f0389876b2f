// A clock that counts the time the machine was suspended as well (CLOCK_BOOTTIME).
// std::chrono::steady_clock is CLOCK_MONOTONIC on Linux, which stops while the host (or a VM
// whose guest kernel is frozen with it) is suspended: a stall measured with it misses exactly
// the longest pauses, after which clients surely took the OSD for dead.
#pragma once

#include <time.h>

#include <chrono>

namespace orthofs {

struct BootClock {
  using duration = std::chrono::nanoseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<BootClock>;
  static constexpr bool is_steady = true;

  static time_point now() noexcept {
    timespec ts{};
    clock_gettime(CLOCK_BOOTTIME, &ts);
    return time_point(std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec));
  }
};

}  // namespace orthofs
