#include "client/write_many_encoding.h"

#include <grpcpp/support/slice.h>

#include <string>

namespace orthofs {
namespace {

// Protobuf's wire format: a length-delimited field is its tag, a varint length, the bytes.
constexpr uint8_t kWriteManyWritesTag = (1 << 3) | 2;   // WriteManyRequest.writes = 1
constexpr uint8_t kWriteRequestDataTag = (4 << 3) | 2;  // WriteRequest.data = 4

void AppendVarint(std::string* out, uint64_t value) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

void ReleaseOwner(void* owner) { delete static_cast<std::shared_ptr<const void>*>(owner); }

}  // namespace

std::shared_ptr<wire::WriteRequest> SharedWrite::WithData() const {
  auto whole = std::make_shared<wire::WriteRequest>(*request);
  whole->set_data(std::string(data));
  return whole;
}

SharedWrite SharedWrite::FromRequest(std::shared_ptr<wire::WriteRequest> request) {
  auto bytes = std::make_shared<std::string>(std::move(*request->mutable_data()));
  request->clear_data();
  SharedWrite write{std::move(request), *bytes, nullptr};
  write.data_owner = std::move(bytes);
  return write;
}

grpc::ByteBuffer EncodeWriteMany(const std::vector<const SharedWrite*>& writes) {
  std::vector<grpc::Slice> slices;
  slices.reserve(writes.size() * 2);
  for (const SharedWrite* write : writes) {
    std::string fields = write->request->SerializeAsString();
    if (!write->data.empty()) {
      fields.push_back(static_cast<char>(kWriteRequestDataTag));
      AppendVarint(&fields, write->data.size());
    }
    std::string head;
    head.push_back(static_cast<char>(kWriteManyWritesTag));
    AppendVarint(&head, fields.size() + write->data.size());
    head += fields;
    slices.emplace_back(head);
    if (write->data.empty()) continue;
    // gRPC only reads the bytes; the slice holds a reference to their owner until it is done.
    slices.emplace_back(const_cast<char*>(write->data.data()), write->data.size(), &ReleaseOwner,
                        new std::shared_ptr<const void>(write->data_owner));
  }
  return grpc::ByteBuffer(slices.data(), slices.size());
}

}  // namespace orthofs
