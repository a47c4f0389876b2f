#include "common/space_reserve.h"

namespace orthofs {

SpaceReserve::SpaceReserve(uint64_t reserve_bytes, Clock::duration probe_interval)
    : reserve_bytes_(reserve_bytes), probe_interval_(probe_interval) {}

bool SpaceReserve::NeedsProbe(Clock::time_point now) const {
  if (!probed_at_ || now - *probed_at_ >= probe_interval_) return true;
  const uint64_t margin =
      available_at_probe_ > reserve_bytes_ ? available_at_probe_ - reserve_bytes_ : 0;
  return admitted_since_probe_ * 2 >= margin || admitted_since_probe_ >= kMaxAdmittedUnprobed;
}

void SpaceReserve::Probed(uint64_t available_bytes, Clock::time_point now) {
  probed_at_ = now;
  available_at_probe_ = available_bytes;
  admitted_since_probe_ = 0;
}

bool SpaceReserve::Admits(uint64_t bytes, Use use) {
  const uint64_t available = estimated_available();
  const uint64_t floor = use == Use::kMetadata ? reserve_bytes_ / 2 : reserve_bytes_;
  if (available < floor || bytes > available - floor) return false;
  admitted_since_probe_ += bytes;
  return true;
}

uint64_t SpaceReserve::estimated_available() const {
  return available_at_probe_ > admitted_since_probe_ ? available_at_probe_ - admitted_since_probe_
                                                     : 0;
}

}  // namespace orthofs
