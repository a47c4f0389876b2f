// The stored object record: format byte, big-endian version and XXH3 checksum, then the data.
#include "common/object_record.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>

#include "common/checksum.h"
#include "common/oid.h"

namespace orthofs {
namespace {

std::string RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t v = rng();
    for (int b = 0; b < 8; ++b) s[i + b] = static_cast<char>(v >> (8 * b));
  }
  for (; i < n; ++i) s[i] = static_cast<char>(rng());
  return s;
}

void ExpectRoundTrip(uint64_t version, const std::string& data) {
  std::string record = EncodeObjectRecord(version, data);
  ASSERT_EQ(record.size(), kObjectRecordHeaderSize + data.size());
  Result<ObjectRecordView> view = DecodeObjectRecord(record);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ(view->version, version);
  EXPECT_EQ(view->checksum, ObjectChecksum(data));
  EXPECT_EQ(view->data.size(), data.size());
  EXPECT_TRUE(view->data == data);  // not EXPECT_EQ: do not print 16 MiB on failure
  // The view points into the record, no copy.
  EXPECT_EQ(view->data.data(), record.data() + kObjectRecordHeaderSize);
}

void ExpectCorruption(const std::string& record, const std::string& want_in_message) {
  Result<ObjectRecordView> view = DecodeObjectRecord(record);
  ASSERT_FALSE(view.ok()) << "corrupt record of " << record.size() << " bytes decoded";
  EXPECT_EQ(view.status().code(), StatusCode::kCorruption);
  EXPECT_NE(view.status().message().find(want_in_message), std::string::npos)
      << view.status().message();
}

TEST(ObjectRecordTest, HeaderLayout) {
  EXPECT_EQ(kObjectRecordHeaderSize, 21u);
  EXPECT_EQ(kObjectRecordFormat, 1);
  const std::string data = "hello, object";
  std::string record = EncodeObjectRecord(0x0102030405060708, data);
  ASSERT_EQ(record.size(), 21 + data.size());
  EXPECT_EQ(static_cast<uint8_t>(record[0]), kObjectRecordFormat);
  EXPECT_EQ(record.substr(1, 8), std::string("\x01\x02\x03\x04\x05\x06\x07\x08"));
  EXPECT_EQ(ReadBigEndian64(record.data() + 9), ObjectChecksum(data));
  EXPECT_EQ(ReadBigEndian32(record.data() + 17),
            static_cast<uint32_t>(ObjectChecksum(record.substr(0, 17))));
  EXPECT_EQ(record.substr(21), data);
}

TEST(ObjectRecordTest, RoundTripEmptyData) {
  ExpectRoundTrip(0, "");
  ExpectRoundTrip(1, "");
  EXPECT_EQ(EncodeObjectRecord(7, "").size(), kObjectRecordHeaderSize);
}

TEST(ObjectRecordTest, RoundTripSmallAndBinaryData) {
  ExpectRoundTrip(1, "x");
  ExpectRoundTrip(42, "hello");
  ExpectRoundTrip(3, std::string("\0\0\0", 3));
  ExpectRoundTrip(std::numeric_limits<uint64_t>::max(), std::string("\xff\x00\x80", 3));
  for (size_t n : {1u, 15u, 16u, 17u, 255u, 4096u, 131072u}) ExpectRoundTrip(n, RandomBytes(n, n));
}

TEST(ObjectRecordTest, RoundTrip16MiB) {
  ExpectRoundTrip(123456789, RandomBytes(16 * 1024 * 1024, 16));
}

TEST(ObjectRecordTest, VersionExtremes) {
  for (uint64_t v : {uint64_t{0}, uint64_t{1}, uint64_t{1} << 63, uint64_t{0xff},
                     std::numeric_limits<uint64_t>::max()}) {
    ExpectRoundTrip(v, "data");
  }
}

TEST(ObjectRecordTest, EncodeWithPrecomputedChecksum) {
  const std::string data = RandomBytes(5000, 3);
  EXPECT_EQ(EncodeObjectRecord(77, ObjectChecksum(data), data), EncodeObjectRecord(77, data));
  EXPECT_EQ(EncodeObjectRecord(0, ObjectChecksum(""), ""), EncodeObjectRecord(0, ""));
  // A wrong precomputed checksum is stored as given and caught on decode.
  ExpectCorruption(EncodeObjectRecord(77, ObjectChecksum(data) ^ 1, data), "checksum mismatch");
}

TEST(ObjectRecordTest, DetectsFlippedDataByte) {
  const std::string data = RandomBytes(300, 1);
  const std::string record = EncodeObjectRecord(5, data);
  for (size_t i = kObjectRecordHeaderSize; i < record.size(); ++i) {
    for (int bit : {0, 7}) {
      std::string bad = record;
      bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
      ExpectCorruption(bad, "checksum mismatch");
    }
  }
}

TEST(ObjectRecordTest, DetectsFlippedByteIn16MiB) {
  std::string record = EncodeObjectRecord(9, RandomBytes(16 * 1024 * 1024, 2));
  record[kObjectRecordHeaderSize + 8 * 1024 * 1024 + 3] ^= 0x10;
  ExpectCorruption(record, "checksum mismatch");
}

TEST(ObjectRecordTest, DetectsFlippedHeaderByte) {
  // Version, data checksum and the header check itself are all covered.
  const std::string record = EncodeObjectRecord(5, "some object bytes");
  for (size_t i = 1; i < kObjectRecordHeaderSize; ++i) {
    std::string bad = record;
    bad[i] = static_cast<char>(bad[i] ^ 0x01);
    ExpectCorruption(bad, "header check mismatch");
  }
  // Also for empty data.
  std::string empty = EncodeObjectRecord(5, "");
  empty[16] ^= 0x80;
  ExpectCorruption(empty, "header check mismatch");
}

TEST(ObjectRecordTest, DetectsUnknownFormatByte) {
  const std::string record = EncodeObjectRecord(5, "abc");
  for (int format : {0, 3, 0x7f, 0x80, 0xff}) {
    std::string bad = record;
    bad[0] = static_cast<char>(format);
    ExpectCorruption(bad, "unknown format " + std::to_string(format));
  }
}

TEST(ObjectRecordTest, DetectsTruncatedHeader) {
  const std::string record = EncodeObjectRecord(5, "");
  for (size_t n = 0; n < kObjectRecordHeaderSize; ++n) {
    ExpectCorruption(record.substr(0, n), "shorter than its header");
  }
  const std::string with_data = EncodeObjectRecord(5, "abcdef");
  ExpectCorruption(with_data.substr(0, 20), "shorter than its header");
}

TEST(ObjectRecordTest, DetectsTruncatedOrExtendedData) {
  const std::string record = EncodeObjectRecord(5, "abcdefgh");
  // The length is implied by the record size, so a lost tail or an extra byte shows up as a
  // checksum mismatch.
  ExpectCorruption(record.substr(0, record.size() - 1), "checksum mismatch");
  ExpectCorruption(record.substr(0, kObjectRecordHeaderSize), "checksum mismatch");
  ExpectCorruption(record + "z", "checksum mismatch");
}

TEST(ObjectRecordTest, TombstoneKeepsItsVersionAndNoData) {
  for (uint64_t v : {uint64_t{1}, uint64_t{42}, std::numeric_limits<uint64_t>::max()}) {
    const std::string record = EncodeTombstoneRecord(v);
    EXPECT_EQ(record.size(), kObjectRecordHeaderSize);
    EXPECT_EQ(static_cast<uint8_t>(record[0]), kTombstoneRecordFormat);
    Result<ObjectRecordView> view = DecodeObjectRecord(record);
    ASSERT_TRUE(view.ok()) << view.status().ToString();
    EXPECT_TRUE(view->tombstone);
    EXPECT_EQ(view->version, v);
    EXPECT_TRUE(view->data.empty());
  }
  Result<ObjectRecordView> live = DecodeObjectRecord(EncodeObjectRecord(3, "x"));
  ASSERT_TRUE(live.ok());
  EXPECT_FALSE(live->tombstone);
}

TEST(ObjectRecordTest, TombstoneWithDataOrFlippedHeaderIsCorrupt) {
  ExpectCorruption(EncodeTombstoneRecord(5) + "x", "tombstone record carries data");
  std::string flipped = EncodeTombstoneRecord(5);
  flipped[3] ^= 0x04;
  ExpectCorruption(flipped, "header check mismatch");
}

TEST(ObjectRecordTest, HeaderAlonePlusDataIsTheRecord) {
  for (const std::string& data : {std::string(), std::string("x"), std::string(4096, 'z')}) {
    EXPECT_EQ(EncodeObjectRecordHeader(7, 99) + data, EncodeObjectRecord(7, 99, data));
  }
  EXPECT_EQ(EncodeObjectRecordHeader(1, 2).size(), kObjectRecordHeaderSize);
}

// A record read in two pieces (the data log's reads) decodes as the joined record does.
TEST(ObjectRecordTest, DecodesAsHeaderAndBytes) {
  const std::string data(5000, 'q');
  const std::string record = EncodeObjectRecord(12, data);
  const std::string_view header(record.data(), kObjectRecordHeaderSize);
  Result<ObjectRecordView> view = DecodeObjectRecord(header, data);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ(view->version, 12u);
  EXPECT_EQ(view->data.data(), data.data()) << "the bytes are not copied";
  std::string damaged = data;
  damaged[4999] ^= 1;
  EXPECT_TRUE(DecodeObjectRecord(header, damaged).status().Is(StatusCode::kCorruption));
  EXPECT_TRUE(DecodeObjectRecord(header.substr(1), data).status().Is(StatusCode::kCorruption));
  const std::string tombstone = EncodeTombstoneRecord(4);
  EXPECT_TRUE(DecodeObjectRecord(tombstone, "")->tombstone);
  EXPECT_TRUE(DecodeObjectRecord(tombstone, "x").status().Is(StatusCode::kCorruption));
}

TEST(ObjectRecordTest, SummaryRoundTripsLiveAndTombstone) {
  for (const ObjectRecordSummary& summary :
       {ObjectRecordSummary{7, 0xfeedface12345678ull, 131072, false},
        ObjectRecordSummary{UINT64_MAX, 1, 0, false}, ObjectRecordSummary{9, 0, 0, true}}) {
    const std::string encoded = EncodeObjectRecordSummary(summary);
    EXPECT_EQ(encoded.size(), kObjectRecordSummarySize);
    Result<ObjectRecordSummary> decoded = DecodeObjectRecordSummary(encoded);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    EXPECT_EQ(*decoded, summary);
  }
  // A summary begins with the record's own header.
  EXPECT_EQ(EncodeObjectRecordSummary({7, 99, 5, false}).substr(0, kObjectRecordHeaderSize),
            EncodeObjectRecordHeader(7, 99));
  EXPECT_EQ(EncodeObjectRecordSummary({4, 0, 0, true}).substr(0, kObjectRecordHeaderSize),
            EncodeTombstoneRecord(4));
}

TEST(ObjectRecordTest, DamagedSummaryIsCorrupt) {
  const std::string good = EncodeObjectRecordSummary({7, 99, 5, false});
  for (size_t i = 0; i < kObjectRecordSummarySize; ++i) {
    std::string flipped = good;
    flipped[i] ^= 0x10;
    EXPECT_FALSE(DecodeObjectRecordSummary(flipped).ok()) << "byte " << i;
  }
  EXPECT_FALSE(DecodeObjectRecordSummary(good.substr(1)).ok());
  EXPECT_FALSE(DecodeObjectRecordSummary(good + "x").ok());
  EXPECT_FALSE(DecodeObjectRecordSummary("").ok());
  // Well checked, but a tombstone with a length.
  std::string tombstone_with_length = EncodeTombstoneRecord(4);
  AppendBigEndian64(&tombstone_with_length, 1);
  AppendBigEndian32(&tombstone_with_length,
                    static_cast<uint32_t>(ObjectChecksum(tombstone_with_length)));
  Result<ObjectRecordSummary> bad = DecodeObjectRecordSummary(tombstone_with_length);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("tombstone"), std::string::npos);
}

TEST(ObjectRecordTest, SummarizeChecksTheHeaderButNotTheBytes) {
  const std::string data(1000, 'q');
  std::string record = EncodeObjectRecord(6, data);
  EXPECT_EQ(*SummarizeObjectRecord(record),
            (ObjectRecordSummary{6, ObjectChecksum(data), 1000, false}));
  EXPECT_EQ(*SummarizeObjectRecord(EncodeTombstoneRecord(3)), (ObjectRecordSummary{3, 0, 0, true}));
  record.back() ^= 1;  // damaged bytes: still summarized, but not decodable
  EXPECT_TRUE(SummarizeObjectRecord(record).ok());
  EXPECT_FALSE(DecodeObjectRecord(record).ok());
  record[2] ^= 1;  // a damaged header is not
  EXPECT_FALSE(SummarizeObjectRecord(record).ok());
  EXPECT_FALSE(SummarizeObjectRecord("abc").ok());
  EXPECT_FALSE(SummarizeObjectRecord(EncodeTombstoneRecord(3) + "x").ok());
}

}  // namespace
}  // namespace orthofs
