#include "common/osd_health.h"

#include <algorithm>

namespace orthofs {

bool OsdHealth::IsDown(uint32_t osd) const {
  std::lock_guard lock(mu_);
  auto it = states_.find(osd);
  return it != states_.end() && it->second.failures > 0;
}

OsdHealth::Clock::duration OsdHealth::BackoffAfter(int failures) const {
  Clock::duration backoff = options_.initial_backoff;
  for (int i = 1; i < failures && backoff < options_.max_backoff; ++i) backoff *= 2;
  return std::min(backoff, options_.max_backoff);
}

bool OsdHealth::RecordFailure(uint32_t osd, Clock::time_point now, Cause cause) {
  std::lock_guard lock(mu_);
  State& s = states_[osd];
  if (s.failures > 0) return false;
  s.failures = 1;
  ++s.outage;
  s.recovering = cause == Cause::kRecovering;
  s.probe_at = now + (s.recovering ? options_.recovering_probe_interval : BackoffAfter(1));
  return true;
}

bool OsdHealth::RecordSuccess(uint32_t osd) {
  std::lock_guard lock(mu_);
  auto it = states_.find(osd);
  if (it == states_.end() || it->second.failures == 0 || it->second.recovering) return false;
  it->second.failures = 0;
  return true;
}

bool OsdHealth::IsRecovering(uint32_t osd) const {
  std::lock_guard lock(mu_);
  auto it = states_.find(osd);
  return it != states_.end() && it->second.failures > 0 && it->second.recovering;
}

bool OsdHealth::RecordProbeAnswered(uint32_t osd, uint64_t outage) {
  std::lock_guard lock(mu_);
  State& s = states_[osd];
  s.probing = false;
  if (s.failures == 0 || s.outage != outage) return false;
  s.failures = 0;
  s.recovering = false;
  return true;
}

uint64_t OsdHealth::ClaimProbe(uint32_t osd, Clock::time_point now) {
  std::lock_guard lock(mu_);
  auto it = states_.find(osd);
  if (it == states_.end() || it->second.failures == 0) return 0;
  State& s = it->second;
  if (s.probing || now < s.probe_at) return 0;
  s.probing = true;
  return s.outage;
}

void OsdHealth::RecordProbeFailure(uint32_t osd, Clock::time_point now, Cause cause) {
  std::lock_guard lock(mu_);
  State& s = states_[osd];
  s.probing = false;
  // Up again meanwhile (another call succeeded): the probe's failure is older news.
  if (s.failures == 0) return;
  ++s.failures;
  s.recovering = cause == Cause::kRecovering;
  s.probe_at = now + (s.recovering ? options_.recovering_probe_interval : BackoffAfter(s.failures));
}

std::vector<uint32_t> OsdHealth::DownOsds() const {
  std::vector<uint32_t> down;
  {
    std::lock_guard lock(mu_);
    for (const auto& [osd, s] : states_) {
      if (s.failures > 0) down.push_back(osd);
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
