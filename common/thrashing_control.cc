#include "common/thrashing_control.h"

#include <algorithm>

namespace orthofs {

ThrashingController::ThrashingController(const ThrashingConfig& config)
    : config_(config), pfq_(std::max(config.p_max, config.p_min)) {}

void ThrashingController::Observe(uint64_t non_replaceable, uint64_t capacity) {
  const double used = static_cast<double>(non_replaceable);
  const double w1 = config_.w1_share * static_cast<double>(capacity);
  const double w2 = config_.w2_share * static_cast<double>(capacity);
  if (!under_pressure_ && capacity > 0 && used >= w1) {
    under_pressure_ = true;
    ++stats_.pressure_episodes;
    const uint32_t lowered = std::max(config_.p_min, pfq_ / 2);
    if (lowered < pfq_) {
      pfq_ = lowered;
      ++stats_.pfq_lowered;
    }
    return;
  }
  if (under_pressure_) {
    // The observation that ends an episode only ends it; raising starts with the next one.
    if (used <= w2) under_pressure_ = false;
    return;
  }
  if (used <= w2 && pfq_ < config_.p_max) {
    pfq_ = static_cast<uint32_t>(std::min<uint64_t>(uint64_t{pfq_} * 2, config_.p_max));
    ++stats_.pfq_raised;
  }
}

double DegreeOfThrashing(uint64_t evicted_unused, uint64_t prefetched) {
  return prefetched == 0 ? 0.0 : static_cast<double>(evicted_unused) / prefetched;
}

double SynchronousReadRatio(uint64_t synchronous_reads, uint64_t demand_reads) {
  return demand_reads == 0 ? 0.0 : static_cast<double>(synchronous_reads) / demand_reads;
}

}  // namespace orthofs
