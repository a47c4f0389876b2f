// A latency histogram with fixed buckets (100 us .. 10 s), safe to update from many threads
// without a lock: the OSD records every RPC in one.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>

#include "common/prometheus_text.h"

namespace orthofs {

class LatencyHistogram {
 public:
  static constexpr std::array<double, 12> kUpperBoundsSeconds = {
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5, 2.5, 10};

  void Observe(std::chrono::nanoseconds latency);
  // Cumulative counts, as Prometheus wants them.
  HistogramSnapshot Snapshot() const;

 private:
  std::array<std::atomic<uint64_t>, kUpperBoundsSeconds.size() + 1> buckets_{};  // last: +Inf
  std::atomic<uint64_t> sum_nanos_{0};
};

}  // namespace orthofs
