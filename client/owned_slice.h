// Pieces for building a protobuf message's wire form by hand as gRPC slices, so that large
// bytes fields are sent from where they already are instead of being copied into the message
// and copied again by its serialization. Protobuf accepts fields in any order, so a message
// whose bytes field is appended after its other (serialized) fields parses as the message.
#pragma once

#include <grpcpp/support/slice.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace orthofs {

// Appends `value` as a protobuf varint.
void AppendVarint(std::string* out, uint64_t value);
// Appends a length-delimited field's tag and length (its bytes follow).
void AppendLengthDelimitedHeader(std::string* out, uint32_t field_number, uint64_t length);

// A slice of `bytes` that gRPC reads in place: it keeps `owner` (which keeps `bytes` valid)
// alive until gRPC is done with it.
grpc::Slice OwnedSlice(std::string_view bytes, std::shared_ptr<const void> owner);

}  // namespace orthofs
