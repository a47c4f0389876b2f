#include "common/byte_ranges.h"

#include <algorithm>
#include <iterator>

namespace orthofs {

void ByteRanges::Add(uint64_t begin, uint64_t end) {
  if (begin >= end) return;
  // The first range that could touch [begin, end): the last one starting at or before begin.
  auto it = ranges_.upper_bound(begin);
  if (it != ranges_.begin() && std::prev(it)->second >= begin) --it;
  // Swallow every range that overlaps or touches.
  while (it != ranges_.end() && it->first <= end) {
    begin = std::min(begin, it->first);
    end = std::max(end, it->second);
    it = ranges_.erase(it);
  }
  ranges_.emplace(begin, end);
}

void ByteRanges::Add(const ByteRanges& other) {
  for (const auto& [b, e] : other.ranges_) Add(b, e);
}

void ByteRanges::TrimTo(uint64_t end) {
  auto it = ranges_.lower_bound(end);
  ranges_.erase(it, ranges_.end());
  if (!ranges_.empty() && ranges_.rbegin()->second > end) ranges_.rbegin()->second = end;
}

bool ByteRanges::Covers(uint64_t begin, uint64_t end) const {
  if (begin >= end) return true;
  auto it = ranges_.upper_bound(begin);
  if (it == ranges_.begin()) return false;
  --it;
  return it->first <= begin && it->second >= end;
}

uint64_t ByteRanges::bytes() const {
  uint64_t n = 0;
  for (const auto& [b, e] : ranges_) n += e - b;
  return n;
}

}  // namespace orthofs
