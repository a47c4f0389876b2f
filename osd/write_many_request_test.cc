#include "osd/write_many_request.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/proto_wire.h"

namespace orthofs {
namespace {

wire::WriteManyRequest Request() {
  wire::WriteManyRequest request;
  const std::vector<std::string> payloads = {"", "x", std::string(200, 'y'),
                                             std::string(128 << 10, 'z')};
  for (size_t i = 0; i < payloads.size(); ++i) {
    wire::WriteRequest* write = request.add_writes();
    write->set_epoch(7);
    write->mutable_oid()->set_fno(42 + i);
    write->mutable_oid()->set_offset(i);
    write->set_offset(i * 3);
    write->set_replace(i % 2 == 0);
    write->set_data(payloads[i]);
    if (i == 1) write->set_expected_version(0);  // present though zero
    if (i == 3) write->set_set_version(1ull << 40);
  }
  return request;
}

BytePieces Split(const std::string& bytes, size_t piece) {
  BytePieces pieces;
  for (size_t at = 0; at < bytes.size(); at += piece) {
    pieces.Append(std::string_view(bytes).substr(at, piece));
  }
  return pieces;
}

// Whatever ParseWriteMany accepts, protobuf parses to the same writes.
void ExpectAgreesWithProtobuf(const std::string& bytes, size_t piece) {
  Result<std::vector<ReceivedWrite>> parsed = ParseWriteMany(Split(bytes, piece));
  if (!parsed.ok()) {
    EXPECT_TRUE(parsed.status().Is(StatusCode::kInvalidArgument));
    return;
  }
  wire::WriteManyRequest expected;
  ASSERT_TRUE(expected.ParseFromString(bytes)) << "accepted what protobuf refuses";
  ASSERT_EQ(parsed->size(), static_cast<size_t>(expected.writes_size()));
  for (size_t i = 0; i < parsed->size(); ++i) {
    wire::WriteRequest want = expected.writes(static_cast<int>(i));
    EXPECT_TRUE((*parsed)[i].data == want.data()) << i;
    want.clear_data();
    EXPECT_EQ((*parsed)[i].fields.SerializeAsString(), want.SerializeAsString()) << i;
  }
}

TEST(WriteManyRequestTest, ParsesWhatProtobufSerializesHoweverItIsSplit) {
  const std::string bytes = Request().SerializeAsString();
  for (size_t piece : {1ul, 3ul, 7ul, 100ul, 16ul << 10, bytes.size()}) {
    Result<std::vector<ReceivedWrite>> parsed = ParseWriteMany(Split(bytes, piece));
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    ASSERT_EQ(parsed->size(), 4u);
    EXPECT_TRUE((*parsed)[1].fields.has_expected_version());
    EXPECT_EQ((*parsed)[3].fields.set_version(), 1ull << 40);
    EXPECT_EQ((*parsed)[3].data.size(), 128u << 10);
    EXPECT_TRUE((*parsed)[0].data.empty());
    ExpectAgreesWithProtobuf(bytes, piece);
  }
}

// The bytes are the message's own memory, not copies.
TEST(WriteManyRequestTest, BytesReferToTheMessage) {
  const std::string bytes = Request().SerializeAsString();
  Result<std::vector<ReceivedWrite>> parsed = ParseWriteMany(Split(bytes, 16 << 10));
  ASSERT_TRUE(parsed.ok());
  for (const ReceivedWrite& write : *parsed) {
    for (std::string_view piece : write.data.pieces()) {
      EXPECT_GE(piece.data(), bytes.data());
      EXPECT_LE(piece.data() + piece.size(), bytes.data() + bytes.size());
    }
  }
  EXPECT_GT((*parsed)[3].data.pieces().size(), 1u);  // across the message's pieces
}

// Unknown fields are skipped at the top and kept in a write (as protobuf keeps them); a
// repeated bytes field counts last, as in protobuf.
TEST(WriteManyRequestTest, UnknownAndRepeatedFieldsAsProtobufDoes) {
  std::string write;
  AppendVarint(&write, (1 << 3) | 0);  // epoch
  AppendVarint(&write, 9);
  AppendLengthDelimitedHeader(&write, 4, 3);
  write += "old";
  AppendVarint(&write, (100 << 3) | 5);  // unknown fixed32
  write += "abcd";
  AppendLengthDelimitedHeader(&write, 4, 3);
  write += "new";
  std::string bytes;
  AppendVarint(&bytes, (9 << 3) | 1);  // unknown fixed64 at the top
  bytes += "12345678";
  AppendLengthDelimitedHeader(&bytes, 1, write.size());
  bytes += write;
  AppendVarint(&bytes, (1 << 3) | 0);  // `writes` with the wrong wire type: unknown
  AppendVarint(&bytes, 5);
  Result<std::vector<ReceivedWrite>> parsed = ParseWriteMany(BytePieces(bytes));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(parsed->size(), 1u);
  EXPECT_TRUE((*parsed)[0].data == "new");
  EXPECT_EQ((*parsed)[0].fields.epoch(), 9u);
  for (size_t piece : {1ul, 2ul, 5ul, bytes.size()}) ExpectAgreesWithProtobuf(bytes, piece);
}

TEST(WriteManyRequestTest, RefusesMalformedMessages) {
  auto refused = [](const std::string& bytes) {
    Result<std::vector<ReceivedWrite>> parsed = ParseWriteMany(BytePieces(bytes));
    return !parsed.ok() && parsed.status().Is(StatusCode::kInvalidArgument);
  };
  EXPECT_TRUE(refused(std::string("\x00\x01", 2)));  // field number 0
  EXPECT_TRUE(refused("\x0e"));                      // wire type 6
  EXPECT_TRUE(refused("\x0b\x0c"));                  // a group
  EXPECT_TRUE(
      refused("\x0a\x05"
              "abc"));                                              // length beyond the end
  EXPECT_TRUE(refused("\x08" + std::string(10, '\xff') + "\x01"));  // an 11-byte varint
  EXPECT_TRUE(refused("\x08" + std::string(9, '\xff') + "\x02"));   // beyond 64 bits
  EXPECT_FALSE(refused("\x08" + std::string(9, '\xff') + "\x01"));  // 2^64 - 1: fine
  // Tags and lengths of more than 5 bytes, and lengths near 2 GiB, protobuf refuses too.
  EXPECT_TRUE(refused(std::string("\x0a\x80\x80\x80\x80\x80\x00", 7)));  // 6-byte length
  EXPECT_TRUE(refused(std::string("\x88\x80\x80\x80\x80\x00\x05", 7)));  // 6-byte tag
  EXPECT_TRUE(refused("\x0a\xf0\xff\xff\xff\x07"));                      // INT_MAX - 15
  EXPECT_FALSE(refused(std::string("\x0a\x80\x80\x80\x80\x00", 6)));     // 5 bytes: fine
  EXPECT_TRUE(refused("\x0a\x02\x22\x05"));                              // write's bytes cut short
  EXPECT_TRUE(refused("\x0a\x02\x12\x01"));                              // write's oid cut short
  EXPECT_TRUE(refused("\x0a\x03\x12\x01\xff"));                          // an oid protobuf refuses
  EXPECT_TRUE(ParseWriteMany(BytePieces()).ok());                        // no writes
}

// Every cut of a valid message, and every single corrupted byte: refused, or parsed as
// protobuf parses it.
TEST(WriteManyRequestTest, CutAndCorruptedMessagesAgreeWithProtobuf) {
  wire::WriteManyRequest request = Request();
  request.mutable_writes(3)->set_data(std::string(300, 'q'));  // keep the loops short
  const std::string bytes = request.SerializeAsString();
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    ExpectAgreesWithProtobuf(bytes.substr(0, cut), 7);
  }
  for (size_t at = 0; at < bytes.size(); ++at) {
    for (uint8_t flip : {0x01, 0x80, 0xff}) {
      std::string corrupted = bytes;
      corrupted[at] = static_cast<char>(corrupted[at] ^ flip);
      ExpectAgreesWithProtobuf(corrupted, 5);
    }
  }
}

}  // namespace
}  // namespace orthofs
