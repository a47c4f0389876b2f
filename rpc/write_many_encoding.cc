#include "rpc/write_many_encoding.h"

#include <string>

#include "common/proto_wire.h"
#include "rpc/owned_slice.h"

namespace orthofs {

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
      AppendLengthDelimitedHeader(&fields, wire::WriteRequest::kDataFieldNumber,
                                  write->data.size());
    }
    std::string head;
    AppendLengthDelimitedHeader(&head, wire::WriteManyRequest::kWritesFieldNumber,
                                fields.size() + write->data.size());
    head += fields;
    slices.emplace_back(head);
    if (!write->data.empty()) slices.push_back(OwnedSlice(write->data, write->data_owner));
  }
  return grpc::ByteBuffer(slices.data(), slices.size());
}

}  // namespace orthofs
