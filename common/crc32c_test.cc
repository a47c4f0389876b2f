#include "common/crc32c.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace orthofs {
namespace {

TEST(Crc32cTest, KnownValues) {
  // The check value of CRC-32C, and RFC 3720's (iSCSI) test vectors.
  const std::string digits = "123456789";
  EXPECT_EQ(Crc32cExtend(0, digits.data(), digits.size()), 0xE3069283u);
  EXPECT_EQ(Crc32cExtendPortable(0, digits.data(), digits.size()), 0xE3069283u);
  const std::string zeros(32, '\0');
  EXPECT_EQ(Crc32cExtend(0, zeros.data(), zeros.size()), 0x8A9136AAu);
  const std::string ones(32, '\xff');
  EXPECT_EQ(Crc32cExtend(0, ones.data(), ones.size()), 0x62A8AB43u);
  std::string ascending(32, '\0');
  for (int i = 0; i < 32; ++i) ascending[i] = static_cast<char>(i);
  EXPECT_EQ(Crc32cExtend(0, ascending.data(), ascending.size()), 0x46DD794Eu);
  EXPECT_EQ(Crc32cExtend(0, nullptr, 0), 0u);
}

TEST(Crc32cTest, HardwareMatchesTableForEveryLengthAndAlignment) {
  std::mt19937_64 rng(7);
  std::string buffer(4096 + 16, '\0');
  for (char& c : buffer) c = static_cast<char>(rng());
  for (size_t align = 0; align < 8; ++align) {
    for (size_t n : {0, 1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 4096}) {
      const char* p = buffer.data() + align;
      const uint32_t seed = static_cast<uint32_t>(rng());
      EXPECT_EQ(Crc32cExtend(seed, p, n), Crc32cExtendPortable(seed, p, n))
          << "align " << align << " length " << n;
    }
  }
}

TEST(Crc32cTest, ExtendingEqualsOneCall) {
  const std::string text = "the quick brown fox jumps over the lazy dog, twice over";
  const uint32_t whole = Crc32cExtend(0, text.data(), text.size());
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    const uint32_t first = Crc32cExtend(0, text.data(), cut);
    EXPECT_EQ(Crc32cExtend(first, text.data() + cut, text.size() - cut), whole) << cut;
  }
}

}  // namespace
}  // namespace orthofs
