#include "common/log_extent.h"

#include <gtest/gtest.h>

#include "common/object_record.h"

namespace orthofs {
namespace {

TEST(LogExtentTest, RoundTrips) {
  const LogExtent extent{
      .segment = 7, .offset = (5ull << 32) + 3, .length = 131093, .binding = 0x0123456789abcdef};
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

// The binding covers the record's header however the record is split into pieces, and tells
// records apart by version and by data checksum.
TEST(LogExtentTest, BindingCoversTheHeaderInAnySplit) {
  const std::string record = EncodeObjectRecord(5, std::string(100, 'd'));
  const uint64_t whole = RecordBinding(record, "");
  const std::string_view view(record);
  EXPECT_EQ(
      RecordBinding(view.substr(0, kObjectRecordHeaderSize), view.substr(kObjectRecordHeaderSize)),
      whole);
  EXPECT_EQ(RecordBinding(view.substr(0, 3), view.substr(3)), whole);
  EXPECT_EQ(RecordBinding("", record), whole);
  // Bytes in pieces: the header's missing part spans several of them.
  BytePieces pieces;
  for (size_t at = 3; at < record.size(); at += 4) pieces.Append(view.substr(at, 4));
  EXPECT_EQ(RecordBinding(view.substr(0, 3), pieces), whole);
  EXPECT_EQ(RecordBinding(view.substr(0, kObjectRecordHeaderSize), BytePieces()), whole);
  EXPECT_NE(RecordBinding(EncodeObjectRecord(6, std::string(100, 'd')), ""), whole);
  EXPECT_NE(RecordBinding(EncodeObjectRecord(5, std::string(100, 'e')), ""), whole);
  EXPECT_EQ(RecordBinding(EncodeObjectRecord(5, std::string(100, 'd')), "trailing"), whole)
      << "the bytes after the header are the data checksum's to check";
}

TEST(LogExtentTest, WrongSizesAreCorrupt) {
  const std::string encoded = EncodeLogExtent({.segment = 1, .offset = 0, .length = 1});
  EXPECT_TRUE(DecodeLogExtent(encoded.substr(1)).status().Is(StatusCode::kCorruption));
  EXPECT_TRUE(DecodeLogExtent(encoded + "x").status().Is(StatusCode::kCorruption));
}

}  // namespace
}  // namespace orthofs
