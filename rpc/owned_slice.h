// A gRPC slice over bytes that are already somewhere, for sending a large bytes field from
// where it is instead of copying it into a message and again by its serialization (the wire
// form around it: common/proto_wire.h). Protobuf accepts fields in any order, so a message
// whose bytes field is appended after its other (serialized) fields parses as the message.
#pragma once

#include <grpcpp/support/slice.h>

#include <memory>
#include <string_view>

namespace orthofs {

// A slice of `bytes` that gRPC reads in place: it keeps `owner` (which keeps `bytes` valid)
// alive until gRPC is done with it.
grpc::Slice OwnedSlice(std::string_view bytes, std::shared_ptr<const void> owner);

}  // namespace orthofs
