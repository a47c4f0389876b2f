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

// The message a reply's bytes parse as (ReadResponse or ReadManyResponse).
template <typename Message = wire::ReadResponse>
Message Parse(grpc::ByteBuffer* buffer) {
  Message parsed;
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

// Replies and refusals side by side, in order, parse exactly as the ReadManyResponse protobuf
// would have sent: bytes of every length class, an empty object, a range checksum, an error.
TEST(ReadReplyTest, ReadManyParsesAsTheResponseWithEveryResultInOrder) {
  const std::vector<std::string> payloads = {std::string(128 << 10, 'a'), std::string(),
                                             std::string("b"), std::string(300, 'c')};
  auto owner = std::make_shared<std::vector<std::string>>(payloads);
  std::vector<ReadManyItem> items;
  wire::ReadManyResponse expected;
  for (size_t i = 0; i < payloads.size(); ++i) {
    ReadManyItem item;
    item.head = Head(i == 3);
    item.bytes = (*owner)[i];
    item.owner = owner;
    items.push_back(item);
    wire::ReadResponse* response = expected.add_results()->mutable_response();
    *response = Head(i == 3);
    response->set_data(payloads[i]);
    if (i == 1) {  // a refusal between replies
      ReadManyItem refused;
      refused.status = Status::NotFound("object 1/42/7 not found");
      items.push_back(refused);
      wire::ReadManyResult* result = expected.add_results();
      result->set_error_code("NOT_FOUND");
      result->set_error_message("object 1/42/7 not found");
    }
  }
  ASSERT_EQ(std::string(StatusCodeName(StatusCode::kNotFound)), "NOT_FOUND");
  grpc::ByteBuffer encoded = EncodeReadManyResponse(items);
  EXPECT_EQ(encoded.Length(), expected.ByteSizeLong());
  wire::ReadManyResponse parsed = Parse<wire::ReadManyResponse>(&encoded);
  ASSERT_EQ(parsed.results_size(), 5);
  EXPECT_EQ(parsed.results(0).response().data(), payloads[0]);
  EXPECT_TRUE(parsed.results(1).has_response());  // an empty object is a reply all the same
  EXPECT_EQ(parsed.results(2).error_code(), "NOT_FOUND");
  EXPECT_FALSE(parsed.results(2).has_response());
  EXPECT_EQ(parsed.results(4).response().range_checksum(), 0u);
  EXPECT_TRUE(parsed.results(4).response().has_range_checksum());
  EXPECT_EQ(parsed.SerializeAsString(), expected.SerializeAsString());
}

// No reads, or only refusals: still a well-formed response.
TEST(ReadReplyTest, ReadManyWithoutBytes) {
  grpc::ByteBuffer none = EncodeReadManyResponse({});
  EXPECT_EQ(Parse<wire::ReadManyResponse>(&none).results_size(), 0);
  ReadManyItem refused;
  refused.status = Status(StatusCode::kUnavailable, "OSD 3 is recovering: read the other copy",
                          StatusReason::kRecovering);
  grpc::ByteBuffer encoded = EncodeReadManyResponse({refused, refused});
  wire::ReadManyResponse parsed = Parse<wire::ReadManyResponse>(&encoded);
  ASSERT_EQ(parsed.results_size(), 2);
  EXPECT_EQ(parsed.results(1).error_code(), "UNAVAILABLE:RECOVERING");
  EXPECT_EQ(parsed.results(1).error_message(), "OSD 3 is recovering: read the other copy");
}

// Each read's bytes go out from its owner's memory, one slice each, and the owners live as
// long as the reply does.
TEST(ReadReplyTest, ReadManyRefersToEachOwnersBytes) {
  auto first = std::make_shared<std::string>(1 << 17, 'x');
  auto second = std::make_shared<std::string>(1 << 16, 'y');
  std::weak_ptr<std::string> watch_first = first, watch_second = second;
  const char* first_at = first->data();
  const char* second_at = second->data();
  {
    ReadManyItem a{Status::Ok(), Head(false), *first, first};
    ReadManyItem b{Status::Ok(), Head(false), *second, second};
    grpc::ByteBuffer encoded = EncodeReadManyResponse({a, b});
    a = {};
    b = {};
    first.reset();
    second.reset();
    EXPECT_FALSE(watch_first.expired());
    EXPECT_FALSE(watch_second.expired());
    std::vector<grpc::Slice> slices;
    ASSERT_TRUE(encoded.Dump(&slices).ok());
    ASSERT_EQ(slices.size(), 4u);  // fields, bytes, fields, bytes
    EXPECT_EQ(reinterpret_cast<const char*>(slices[1].begin()), first_at);
    EXPECT_EQ(reinterpret_cast<const char*>(slices[3].begin()), second_at);
  }
  EXPECT_TRUE(watch_first.expired());
  EXPECT_TRUE(watch_second.expired());
}

}  // namespace
}  // namespace orthofs
