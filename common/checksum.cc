#include "common/checksum.h"

#include <xxhash.h>

namespace orthofs {

uint64_t ObjectChecksum(std::string_view data) { return XXH3_64bits(data.data(), data.size()); }

bool ReadBytesIntact(std::string_view data, uint64_t object_length, uint64_t object_checksum,
                     std::optional<uint64_t> range_checksum) {
  if (data.size() == object_length) return ObjectChecksum(data) == object_checksum;
  return !range_checksum.has_value() || ObjectChecksum(data) == *range_checksum;
}

}  // namespace orthofs
