// A set of disjoint half-open byte ranges [begin, end) within one object. Adding a range that
// overlaps or touches others merges them, so the set is always minimal. Not thread-safe.
#pragma once

#include <cstdint>
#include <map>

namespace orthofs {

class ByteRanges {
 public:
  // Empty ranges (begin >= end) are ignored.
  void Add(uint64_t begin, uint64_t end);
  void Add(const ByteRanges& other);
  // Removes every byte at or beyond `end`.
  void TrimTo(uint64_t end);
  void Clear() { ranges_.clear(); }

  // True if every byte of [begin, end) is in the set (an empty range is always covered).
  bool Covers(uint64_t begin, uint64_t end) const;
  bool empty() const { return ranges_.empty(); }
  // Number of bytes in the set.
  uint64_t bytes() const;
  // One past the last byte in the set; 0 when empty.
  uint64_t end() const { return ranges_.empty() ? 0 : ranges_.rbegin()->second; }
  // begin -> end, ascending, disjoint and non-adjacent.
  const std::map<uint64_t, uint64_t>& ranges() const { return ranges_; }

  bool operator==(const ByteRanges& other) const { return ranges_ == other.ranges_; }

 private:
  std::map<uint64_t, uint64_t> ranges_;
};

}  // namespace orthofs
