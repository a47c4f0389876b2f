// Whether this process stopped running for a while: stopped (SIGSTOP), a paused VM, a
// suspended host, or starved of CPU. A thread ticks it at a short period; a tick that comes much
// later than that means the process did not run in between. An OSD that did not run for longer
// than a client's deadline may have been taken for dead: its peers took changes of its copies
// alone, with repair records, which it has not seen. It must not serve or change those copies
// until the peers have replayed the records, as after a restart. Pure logic; the caller passes
// the time.
#pragma once

#include <chrono>
#include <optional>

#include "common/boot_clock.h"

namespace orthofs {

class StallWatch {
 public:
  // Counts a suspended host's pause too (common/boot_clock.h).
  using Clock = BootClock;
  // `threshold`: gaps longer than this are stalls.
  explicit StallWatch(Clock::duration threshold) : threshold_(threshold) {}

  // Records a tick at `now`. Returns the gap since the previous tick when it was a stall.
  std::optional<Clock::duration> Tick(Clock::time_point now);
  // True when a tick last seen at `last_tick` is overdue at `now`: the ticking thread has not
  // run since, and neither, perhaps, has the process (a request served just after a stall,
  // before the ticking thread noticed it, must not be served as if nothing happened).
  bool Overdue(Clock::time_point last_tick, Clock::time_point now) const {
    return now - last_tick > threshold_;
  }
  Clock::duration threshold() const { return threshold_; }

 private:
  Clock::duration threshold_;
  std::optional<Clock::time_point> last_;
};

}  // namespace orthofs
