// Byte ranges of a file split at object boundaries.
#pragma once

#include <cstdint>
#include <vector>

namespace orthofs {

// One object's share of a byte range.
struct ObjectSpan {
  uint64_t index;          // object index in the file
  uint64_t offset;         // within the object
  uint64_t length;         // bytes
  uint64_t buffer_offset;  // where the span starts in the caller's buffer
};

// Splits [offset, offset + length) at object boundaries.
std::vector<ObjectSpan> SplitIntoObjects(uint64_t offset, uint64_t length, uint64_t object_size);

}  // namespace orthofs
