#include "common/osd_health.h"

#include <algorithm>

namespace orthofs {

bool OsdHealth::IsDown(uint32_t osd, Clock::time_point now) const {
  std::lock_guard lock(mu_);
  auto it = states_.find(osd);
  return it != states_.end() && it->second.failures > 0 && now < it->second.down_until;
}

bool OsdHealth::RecordFailure(uint32_t osd, Clock::time_point now) {
  std::lock_guard lock(mu_);
  State& s = states_[osd];
  // Failures of requests that were already in flight when the OSD went down do not lengthen
  // the backoff: only a failure after it expired (a failed probe) does.
  if (s.failures > 0 && now < s.down_until) return false;
  Clock::duration backoff = options_.initial_backoff;
  for (int i = 0; i < s.failures && backoff < options_.max_backoff; ++i) backoff *= 2;
  backoff = std::min(backoff, options_.max_backoff);
  ++s.failures;
  s.down_until = now + backoff;
  return true;
}

bool OsdHealth::RecordSuccess(uint32_t osd) {
  std::lock_guard lock(mu_);
  auto it = states_.find(osd);
  if (it == states_.end() || it->second.failures == 0) return false;
  it->second = State{};
  return true;
}

std::vector<uint32_t> OsdHealth::DownOsds(Clock::time_point now) const {
  std::vector<uint32_t> down;
  {
    std::lock_guard lock(mu_);
    for (const auto& [osd, s] : states_) {
      if (s.failures > 0 && now < s.down_until) down.push_back(osd);
    }
  }
  std::sort(down.begin(), down.end());
  return down;
}

int OsdHealth::failures(uint32_t osd) const {
  std::lock_guard lock(mu_);
  auto it = states_.find(osd);
  return it == states_.end() ? 0 : it->second.failures;
}

}  // namespace orthofs
