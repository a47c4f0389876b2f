#include "bench/bench_stats.h"

#include <algorithm>
#include <numeric>
#include <vector>

namespace orthofs {

SummaryStats Summarize(std::span<const double> values) {
  SummaryStats stats;
  if (values.empty()) return stats;
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  stats.count = n;
  stats.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(n);
  stats.median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  stats.min = sorted.front();
  stats.max = sorted.back();
  return stats;
}

}  // namespace orthofs
