#include "osd/read_reply.h"

#include <string>

#include "client/owned_slice.h"
#include "common/proto_wire.h"

namespace orthofs {

grpc::ByteBuffer EncodeReadResponse(const wire::ReadResponse& head, std::string_view bytes,
                                    std::shared_ptr<const void> owner) {
  std::string fields = head.SerializeAsString();
  if (bytes.empty()) {
    grpc::Slice only(fields);
    return grpc::ByteBuffer(&only, 1);
  }
  AppendLengthDelimitedHeader(&fields, wire::ReadResponse::kDataFieldNumber, bytes.size());
  grpc::Slice slices[] = {grpc::Slice(fields), OwnedSlice(bytes, std::move(owner))};
  return grpc::ByteBuffer(slices, 2);
}

}  // namespace orthofs
