// Object checksums: XXH3-64 (libxxhash). Fast enough to verify every 128 KiB read.
#pragma once

#include <cstdint>
#include <string_view>

namespace orthofs {

uint64_t ObjectChecksum(std::string_view data);

}  // namespace orthofs
