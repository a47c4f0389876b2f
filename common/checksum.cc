#include "common/checksum.h"

#include <xxhash.h>

#include <memory>

namespace orthofs {

uint64_t ObjectChecksum(std::string_view data) { return XXH3_64bits(data.data(), data.size()); }

uint64_t ObjectChecksum(const BytePieces& data) {
  if (data.pieces().size() <= 1) {
    return ObjectChecksum(data.empty() ? std::string_view() : data.pieces()[0]);
  }
  // From the library's allocator: the state's layout is the library's, not its header's.
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(),
                                                                 &XXH3_freeState);
  if (state == nullptr) return ObjectChecksum(data.Join());
  XXH3_64bits_reset(state.get());
  for (std::string_view piece : data.pieces()) {
    XXH3_64bits_update(state.get(), piece.data(), piece.size());
  }
  return XXH3_64bits_digest(state.get());
}

bool ReadBytesIntact(std::string_view data, uint64_t object_length, uint64_t object_checksum,
                     std::optional<uint64_t> range_checksum) {
  if (data.size() == object_length) return ObjectChecksum(data) == object_checksum;
  return !range_checksum.has_value() || ObjectChecksum(data) == *range_checksum;
}

}  // namespace orthofs
