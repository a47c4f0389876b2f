#include "osd/read_reply.h"

#include <grpcpp/support/proto_buffer_reader.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace orthofs {
namespace {

wire::ReadResponse Head(bool with_range_checksum) {
  wire::ReadResponse head;
  head.mutable_meta()->mutable_oid()->set_fno(42);
  head.mutable_meta()->set_version(9);
  head.mutable_meta()->set_length(131072);
  head.mutable_meta()->set_checksum(0x1234567890abcdefull);
  head.set_from_cache(true);
  if (with_range_checksum) head.set_range_checksum(0);  // present though zero
  return head;
}

wire::ReadResponse Parse(grpc::ByteBuffer* buffer) {
  wire::ReadResponse parsed;
  grpc::ProtoBufferReader reader(buffer);
  EXPECT_TRUE(parsed.ParseFromZeroCopyStream(&reader));
  return parsed;
}

// The client parses exactly the ReadResponse protobuf would have sent, for bytes of every
// length class (none, one-byte and multi-byte varint lengths).
TEST(ReadReplyTest, ParsesAsTheResponseWithItsData) {
  for (const std::string& payload :
       {std::string(), std::string("x"), std::string(200, 'y'), std::string(128 << 10, 'z')}) {
    for (bool range : {false, true}) {
      wire::ReadResponse expected = Head(range);
      expected.set_data(payload);
      auto owner = std::make_shared<std::string>(payload);
      grpc::ByteBuffer encoded = EncodeReadResponse(Head(range), *owner, owner);
      EXPECT_EQ(encoded.Length(), expected.ByteSizeLong());
      wire::ReadResponse parsed = Parse(&encoded);
      EXPECT_EQ(parsed.data(), payload);
      EXPECT_EQ(parsed.range_checksum(), expected.range_checksum());
      EXPECT_EQ(parsed.has_range_checksum(), range);
      parsed.clear_data();
      EXPECT_EQ(parsed.SerializeAsString(), Head(range).SerializeAsString());
    }
  }
}

// The bytes are sent from the owner's memory, and the owner lives exactly as long as the
// reply does.
TEST(ReadReplyTest, RefersToTheOwnersBytesUntilReleased) {
  auto owner = std::make_shared<std::string>(1 << 17, 'q');
  std::weak_ptr<std::string> watch = owner;
  const char* where = owner->data();
  {
    grpc::ByteBuffer encoded = EncodeReadResponse(Head(false), *owner, owner);
    owner.reset();
    EXPECT_FALSE(watch.expired());
    std::vector<grpc::Slice> slices;
    ASSERT_TRUE(encoded.Dump(&slices).ok());
    ASSERT_EQ(slices.size(), 2u);
    EXPECT_EQ(reinterpret_cast<const char*>(slices[1].begin()), where);
    EXPECT_EQ(slices[1].size(), size_t{1} << 17);
  }
  EXPECT_TRUE(watch.expired());
}

}  // namespace
}  // namespace orthofs
