#include "common/log_extent.h"

#include <gtest/gtest.h>

#include "common/object_record.h"

namespace orthofs {
namespace {

TEST(LogExtentTest, RoundTrips) {
  const LogExtent extent{.segment = 7, .offset = (5ull << 32) + 3, .length = 131093};
  const std::string encoded = EncodeLogExtent(extent);
  EXPECT_EQ(encoded.size(), kLogExtentSize);
  EXPECT_TRUE(IsLogExtent(encoded));
  Result<LogExtent> decoded = DecodeLogExtent(encoded);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, extent);
}

TEST(LogExtentTest, RecordsAreNotExtents) {
  EXPECT_FALSE(IsLogExtent(EncodeObjectRecord(3, "bytes")));
  EXPECT_FALSE(IsLogExtent(EncodeTombstoneRecord(3)));
  EXPECT_FALSE(IsLogExtent(""));
  EXPECT_TRUE(DecodeLogExtent(EncodeObjectRecord(3, std::string(kLogExtentSize - 21, 'x')))
                  .status()
                  .Is(StatusCode::kCorruption));
}

TEST(LogExtentTest, EveryFlippedBitIsCaught) {
  const std::string encoded = EncodeLogExtent({.segment = 1, .offset = 4096, .length = 100});
  for (size_t bit = 0; bit < encoded.size() * 8; ++bit) {
    std::string damaged = encoded;
    damaged[bit / 8] = static_cast<char>(damaged[bit / 8] ^ (1 << (bit % 8)));
    EXPECT_TRUE(DecodeLogExtent(damaged).status().Is(StatusCode::kCorruption)) << "bit " << bit;
  }
}

TEST(LogExtentTest, WrongSizesAreCorrupt) {
  const std::string encoded = EncodeLogExtent({.segment = 1, .offset = 0, .length = 1});
  EXPECT_TRUE(DecodeLogExtent(encoded.substr(1)).status().Is(StatusCode::kCorruption));
  EXPECT_TRUE(DecodeLogExtent(encoded + "x").status().Is(StatusCode::kCorruption));
}

}  // namespace
}  // namespace orthofs
