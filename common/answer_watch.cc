#include "common/answer_watch.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace orthofs {

void AnswerWatch::RecordAnswer(Clock::time_point sent, Clock::time_point now) {
  samples_[recorded_ % kSamples] = std::max(now - sent, Clock::duration::zero());
  ++recorded_;
  if (!last_answer_ || now > *last_answer_) last_answer_ = now;
}

AnswerWatch::Clock::duration AnswerWatch::Quantile(double q) const {
  const size_t n = std::min(recorded_, kSamples);
  if (n == 0) return Clock::duration::zero();
  std::vector<Clock::duration> sorted(samples_.begin(), samples_.begin() + n);
  // The nearest-rank quantile: the smallest sample with at least q of them at or below it.
  const double rank = std::ceil(q * static_cast<double>(n) - 1e-9);
  const size_t k = std::min(n - 1, rank > 1 ? static_cast<size_t>(rank) - 1 : 0);
  std::nth_element(sorted.begin(), sorted.begin() + k, sorted.end());
  return sorted[k];
}

AnswerWatch::Clock::duration AnswerWatch::Scaled(double q, double multiple, Clock::duration low,
                                                 Clock::duration high) const {
  const auto scaled = std::chrono::duration_cast<Clock::duration>(Quantile(q) * multiple);
  return std::clamp(scaled, low, high);
}

AnswerWatch::Clock::duration AnswerWatch::SilenceThreshold() const {
  return Scaled(0.99, options_.latency_multiple, options_.min_silence, options_.max_silence);
}

AnswerWatch::Clock::duration AnswerWatch::HedgeDelay() const {
  return Scaled(0.95, options_.hedge_multiple, options_.min_hedge, options_.max_hedge);
}

bool AnswerWatch::Silent(Clock::time_point now,
                         std::optional<Clock::time_point> oldest_waiting) const {
  if (!oldest_waiting) return false;
  const Clock::duration threshold = SilenceThreshold();
  if (now - *oldest_waiting <= threshold) return false;
  return !last_answer_ || now - *last_answer_ > threshold;
}

}  // namespace orthofs
