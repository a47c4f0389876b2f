#include "common/latency_histogram.h"

namespace orthofs {

void LatencyHistogram::Observe(std::chrono::nanoseconds latency) {
  const double seconds = std::chrono::duration<double>(latency).count();
  size_t i = 0;
  while (i < kUpperBoundsSeconds.size() && seconds > kUpperBoundsSeconds[i]) ++i;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  sum_nanos_.fetch_add(static_cast<uint64_t>(latency.count() < 0 ? 0 : latency.count()),
                       std::memory_order_relaxed);
}

HistogramSnapshot LatencyHistogram::Snapshot() const {
  HistogramSnapshot s;
  uint64_t running = 0;
  for (size_t i = 0; i < kUpperBoundsSeconds.size(); ++i) {
    running += buckets_[i].load(std::memory_order_relaxed);
    s.upper_bounds.push_back(kUpperBoundsSeconds[i]);
    s.counts.push_back(running);
  }
  s.count = running + buckets_.back().load(std::memory_order_relaxed);
  s.sum = static_cast<double>(sum_nanos_.load(std::memory_order_relaxed)) / 1e9;
  return s;
}

}  // namespace orthofs
