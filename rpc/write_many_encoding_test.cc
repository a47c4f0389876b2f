#include "rpc/write_many_encoding.h"

#include <grpcpp/support/proto_buffer_reader.h>
#include <gtest/gtest.h>

#include <string>

namespace orthofs {
namespace {

wire::WriteManyRequest Parse(grpc::ByteBuffer* buffer) {
  wire::WriteManyRequest parsed;
  grpc::ProtoBufferReader reader(buffer);
  EXPECT_TRUE(parsed.ParseFromZeroCopyStream(&reader));
  return parsed;
}

wire::WriteRequest Request(uint64_t index, uint64_t offset) {
  wire::WriteRequest request;
  request.set_epoch(7);
  request.mutable_oid()->set_fno(42);
  request.mutable_oid()->set_offset(index);
  request.set_offset(offset);
  request.set_replace(offset == 0);
  if (index == 2) request.set_expected_version(0);  // present though zero
  return request;
}

// What the OSD parses is exactly the WriteManyRequest protobuf would have sent, for bytes of
// every length class (none, one-byte and multi-byte varint lengths).
TEST(WriteManyEncodingTest, ParsesAsTheRequestWithItsData) {
  const std::vector<std::string> payloads = {
      "", "x", std::string(200, 'y'), std::string(128 << 10, 'z'), std::string(3 << 20, 'w')};
  std::vector<SharedWrite> writes;
  wire::WriteManyRequest expected;
  for (size_t i = 0; i < payloads.size(); ++i) {
    auto request = std::make_shared<wire::WriteRequest>(Request(i, i * 100));
    *expected.add_writes() = *request;
    expected.mutable_writes(static_cast<int>(i))->set_data(payloads[i]);
    auto bytes = std::make_shared<std::string>(payloads[i]);
    writes.push_back({request, *bytes, bytes});
  }
  std::vector<const SharedWrite*> pointers;
  for (const SharedWrite& write : writes) pointers.push_back(&write);
  grpc::ByteBuffer encoded = EncodeWriteMany(pointers);
  EXPECT_EQ(encoded.Length(), expected.ByteSizeLong());
  wire::WriteManyRequest parsed = Parse(&encoded);
  EXPECT_EQ(parsed.SerializeAsString(), expected.SerializeAsString());
  EXPECT_TRUE(parsed.writes(2).has_expected_version());
}

// The bytes are not copied: the buffer refers to them, and keeps their owner alive after
// everyone else let go.
TEST(WriteManyEncodingTest, TheBytesAreSharedAndKeptAlive) {
  auto bytes = std::make_shared<std::string>(4096, 'q');
  std::weak_ptr<std::string> watch = bytes;
  grpc::ByteBuffer encoded;
  {
    SharedWrite write{std::make_shared<wire::WriteRequest>(Request(1, 0)), *bytes, bytes};
    bytes.reset();
    encoded = EncodeWriteMany({&write});
  }
  EXPECT_FALSE(watch.expired()) << "the buffer holds the owner";
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(encoded.Dump(&slices).ok());
  ASSERT_EQ(slices.size(), 2u);
  EXPECT_EQ(static_cast<const void*>(slices[1].begin()),
            static_cast<const void*>(watch.lock()->data()));
  EXPECT_EQ(Parse(&encoded).writes(0).data(), std::string(4096, 'q'));
  slices.clear();
  encoded.Clear();
  EXPECT_TRUE(watch.expired()) << "released with the last slice";
}

// Two writes sharing one owner (the two copies of one object): it lives until both slices go.
TEST(WriteManyEncodingTest, OneOwnerForSeveralSlicesIsReleasedOnce) {
  int released = 0;
  std::shared_ptr<std::string> bytes(new std::string(1000, 's'), [&](std::string* p) {
    ++released;
    delete p;
  });
  grpc::ByteBuffer encoded;
  {
    SharedWrite first{std::make_shared<wire::WriteRequest>(Request(1, 0)), *bytes, bytes};
    SharedWrite second{std::make_shared<wire::WriteRequest>(Request(2, 0)), *bytes, bytes};
    encoded = EncodeWriteMany({&first, &second});
  }
  bytes.reset();
  EXPECT_EQ(released, 0);
  grpc::ByteBuffer copy = encoded;  // gRPC copies the buffer it sends: references, not bytes
  encoded.Clear();
  EXPECT_EQ(released, 0);
  EXPECT_EQ(Parse(&copy).writes(1).data(), std::string(1000, 's'));
  copy.Clear();
  EXPECT_EQ(released, 1);
}

TEST(WriteManyEncodingTest, FromRequestAndWithDataRoundTrip) {
  auto request = std::make_shared<wire::WriteRequest>(Request(3, 5));
  request->set_data("payload");
  SharedWrite shared = SharedWrite::FromRequest(request);
  EXPECT_TRUE(shared.request->data().empty());
  EXPECT_EQ(shared.data, "payload");
  std::shared_ptr<wire::WriteRequest> whole = shared.WithData();
  EXPECT_EQ(whole->data(), "payload");
  EXPECT_EQ(whole->oid().offset(), 3u);
  EXPECT_NE(whole->data().data(), shared.data.data()) << "WithData copies";
}

}  // namespace
}  // namespace orthofs
