// Helpers shared by the prefetch-window unit tests (prefetch_window_test, window_table_test).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/prefetch_window.h"

namespace orthofs {

// "[8,10) [13,15)": readable failure messages for a list of ranges; "" when empty.
inline std::string Str(const std::vector<IndexRange>& ranges) {
  std::string out;
  for (const IndexRange& r : ranges) {
    if (!out.empty()) out += ' ';
    out += "[" + std::to_string(r.begin) + "," + std::to_string(r.end) + ")";
  }
  return out;
}

inline std::string Str(const IndexRange& range) { return Str(std::vector<IndexRange>{range}); }

// A cor configuration with the given window policy and sizes.
inline PrefetchConfig Cor(WindowPolicy policy, uint32_t initial = 1, uint32_t max = 40) {
  PrefetchConfig config;
  config.mode = PrefetchMode::kCor;
  config.policy = policy;
  config.initial_window = initial;
  config.max_window = max;
  return config;
}

}  // namespace orthofs
