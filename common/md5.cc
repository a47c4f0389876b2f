#include "common/md5.h"

#include <openssl/evp.h>

#include <cstdio>
#include <cstdlib>

namespace orthofs {
namespace {

// Fetched once: EVP_md5() would look the algorithm up again on every digest.
const EVP_MD* Md5Algorithm() {
  static const EVP_MD* md = [] {
    EVP_MD* m = EVP_MD_fetch(nullptr, "MD5", nullptr);
    if (m == nullptr) {
      std::fputs("orthofs: OpenSSL provides no MD5 (FIPS mode?); placement needs it\n", stderr);
      std::abort();
    }
    return m;
  }();
  return md;
}

}  // namespace

Md5Digest Md5(std::string_view data) {
  Md5Digest out{};
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), out.data(), &len, Md5Algorithm(), nullptr) != 1 ||
      len != out.size()) {
    std::fputs("orthofs: EVP_Digest(MD5) failed\n", stderr);
    std::abort();
  }
  return out;
}

std::string Md5Hex(std::string_view data) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (uint8_t b : Md5(data)) {
    s.push_back(kHex[b >> 4]);
    s.push_back(kHex[b & 15]);
  }
  return s;
}

PlacementHashes PlacementHashesOf(std::string_view data) {
  Md5Digest d = Md5(data);
  auto be32 = [&](int i) {
    return (uint32_t{d[i]} << 24) | (uint32_t{d[i + 1]} << 16) | (uint32_t{d[i + 2]} << 8) |
           uint32_t{d[i + 3]};
  };
  return {be32(0), be32(4)};
}

}  // namespace orthofs
