// Summary statistics of orthofs-bench's per-run figures (MB/s, ops/s, files/s).
#pragma once

#include <cstddef>
#include <span>

namespace orthofs {

struct SummaryStats {
  size_t count = 0;
  double mean = 0;
  double median = 0;  // the average of the middle two values when count is even
  double min = 0;
  double max = 0;
};

// All zeros, count 0, for no values.
SummaryStats Summarize(std::span<const double> values);

}  // namespace orthofs
