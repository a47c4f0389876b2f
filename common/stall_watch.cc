#include "common/stall_watch.h"

namespace orthofs {

std::optional<StallWatch::Clock::duration> StallWatch::Tick(Clock::time_point now) {
  std::optional<Clock::duration> stall;
  if (last_ && now - *last_ > threshold_) stall = now - *last_;
  if (!last_ || now > *last_) last_ = now;  // a clock that never goes back, but be safe
  return stall;
}

}  // namespace orthofs
