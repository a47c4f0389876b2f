#include "osd/read_reply.h"

#include <string>
#include <vector>

#include "common/proto_wire.h"
#include "rpc/owned_slice.h"
#include "rpc/wire.h"

namespace orthofs {
namespace {

// A ReadResponse's wire form up to its data's bytes: `head`'s fields, then the data field's tag
// and length (none for empty data, which protobuf leaves out).
std::string ReadResponseBeforeData(const wire::ReadResponse& head, uint64_t data_size) {
  std::string fields = head.SerializeAsString();
  if (data_size > 0) {
    AppendLengthDelimitedHeader(&fields, wire::ReadResponse::kDataFieldNumber, data_size);
  }
  return fields;
}

}  // namespace

grpc::ByteBuffer EncodeReadResponse(const wire::ReadResponse& head, std::string_view bytes,
                                    std::shared_ptr<const void> owner) {
  const std::string fields = ReadResponseBeforeData(head, bytes.size());
  if (bytes.empty()) {
    grpc::Slice only(fields);
    return grpc::ByteBuffer(&only, 1);
  }
  grpc::Slice slices[] = {grpc::Slice(fields), OwnedSlice(bytes, std::move(owner))};
  return grpc::ByteBuffer(slices, 2);
}

grpc::ByteBuffer EncodeReadManyResponse(const std::vector<ReadManyItem>& items) {
  // Small fields gather in `fields` until a read's bytes follow as a slice of their own.
  std::vector<grpc::Slice> slices;
  std::string fields;
  for (const ReadManyItem& item : items) {
    if (!item.status.ok()) {
      wire::ReadManyResult refused;
      SetRefusal(item.status, &refused);
      const std::string result = refused.SerializeAsString();
      AppendLengthDelimitedHeader(&fields, wire::ReadManyResponse::kResultsFieldNumber,
                                  result.size());
      fields += result;
      continue;
    }
    const std::string response = ReadResponseBeforeData(item.head, item.bytes.size());
    const uint64_t response_length = response.size() + item.bytes.size();
    std::string response_header;
    AppendLengthDelimitedHeader(&response_header, wire::ReadManyResult::kResponseFieldNumber,
                                response_length);
    AppendLengthDelimitedHeader(&fields, wire::ReadManyResponse::kResultsFieldNumber,
                                response_header.size() + response_length);
    fields += response_header;
    fields += response;
    if (item.bytes.empty()) continue;
    slices.emplace_back(fields);
    fields.clear();
    slices.push_back(OwnedSlice(item.bytes, item.owner));
  }
  if (!fields.empty() || slices.empty()) slices.emplace_back(fields);
  return grpc::ByteBuffer(slices.data(), slices.size());
}

}  // namespace orthofs
