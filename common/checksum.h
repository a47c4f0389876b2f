// Object checksums: XXH3-64 (libxxhash). Fast enough to verify every 128 KiB read.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/byte_pieces.h"

namespace orthofs {

uint64_t ObjectChecksum(std::string_view data);
// The same checksum of bytes in pieces (as if joined).
uint64_t ObjectChecksum(const BytePieces& data);

// Whether bytes an OSD sent for a read are the bytes it meant: the whole object (`data` as long
// as the object) against the object's checksum, a range against the checksum the OSD computed
// for that range. A range without one (from an OSD older than range checksums) cannot be
// checked and is taken as it is.
bool ReadBytesIntact(std::string_view data, uint64_t object_length, uint64_t object_checksum,
                     std::optional<uint64_t> range_checksum);

}  // namespace orthofs
