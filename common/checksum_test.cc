#include "common/checksum.h"

#include <gtest/gtest.h>

#include <string>

namespace orthofs {
namespace {

TEST(ObjectChecksumTest, DependsOnEveryByte) {
  std::string data(4096, 'a');
  const uint64_t before = ObjectChecksum(data);
  data[4095] = 'b';
  EXPECT_NE(ObjectChecksum(data), before);
  EXPECT_EQ(ObjectChecksum(data), ObjectChecksum(std::string(data)));
}

// Bytes in pieces checksum as the joined bytes, however they are split (XXH3 treats inputs
// up to 240 bytes, up to 1 KiB stripes and longer ones differently).
TEST(ObjectChecksumTest, PiecesChecksumAsTheJoinedBytes) {
  std::string data(300 << 10, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7919 % 251);
  for (size_t length : {0ul, 1ul, 17ul, 240ul, 241ul, 1024ul, 5000ul, 128ul << 10, 300ul << 10}) {
    const std::string_view whole = std::string_view(data).substr(0, length);
    for (size_t piece : {1ul, 3ul, 64ul, 1000ul, 16ul << 10}) {
      if (length > 20000 && piece < 1000) continue;  // enough pieces already
      BytePieces pieces;
      for (size_t at = 0; at < length; at += piece) pieces.Append(whole.substr(at, piece));
      EXPECT_EQ(ObjectChecksum(pieces), ObjectChecksum(whole)) << length << " in " << piece;
    }
  }
  EXPECT_EQ(ObjectChecksum(BytePieces()), ObjectChecksum(std::string_view()));
}

TEST(ReadBytesIntactTest, WholeObjectAgainstTheObjectChecksum) {
  const std::string object(1000, 'x');
  const uint64_t sum = ObjectChecksum(object);
  EXPECT_TRUE(ReadBytesIntact(object, object.size(), sum, std::nullopt));
  std::string flipped = object;
  flipped[10] ^= 1;
  EXPECT_FALSE(ReadBytesIntact(flipped, object.size(), sum, std::nullopt));
  // A whole object is checked against the object's checksum even with a range checksum.
  EXPECT_FALSE(ReadBytesIntact(flipped, object.size(), sum, ObjectChecksum(flipped)));
}

TEST(ReadBytesIntactTest, RangeAgainstItsOwnChecksum) {
  const std::string object = std::string(500, 'x') + std::string(500, 'y');
  const uint64_t sum = ObjectChecksum(object);
  const std::string range = object.substr(400, 200);
  EXPECT_TRUE(ReadBytesIntact(range, object.size(), sum, ObjectChecksum(range)));
  std::string damaged = range;
  damaged[0] = 'z';
  EXPECT_FALSE(ReadBytesIntact(damaged, object.size(), sum, ObjectChecksum(range)));
  // An OSD from before range checksums sends none: nothing to check against, taken as it is
  // (a rolling upgrade's new clients still truncate files through old OSDs).
  EXPECT_TRUE(ReadBytesIntact(damaged, object.size(), sum, std::nullopt));
  // An empty range (a read past the object's end) has a checksum too.
  EXPECT_TRUE(ReadBytesIntact("", object.size(), sum, ObjectChecksum("")));
}

}  // namespace
}  // namespace orthofs
