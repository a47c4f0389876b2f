#include "common/checksum.h"

#include <xxhash.h>

namespace orthofs {

uint64_t ObjectChecksum(std::string_view data) { return XXH3_64bits(data.data(), data.size()); }

}  // namespace orthofs
