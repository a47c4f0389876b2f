// MD5 through OpenSSL's EVP interface, and the two 32-bit placement hashes taken from it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace orthofs {

using Md5Digest = std::array<uint8_t, 16>;

Md5Digest Md5(std::string_view data);
std::string Md5Hex(std::string_view data);

// The first (h) and second (h2) big-endian u32 of a digest: placement's hashes (docs/DESIGN.md
// §2.2).
struct PlacementHashes {
  uint32_t h;
  uint32_t h2;
};
PlacementHashes PlacementHashesOf(std::string_view data);

}  // namespace orthofs
