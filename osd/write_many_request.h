// A WriteMany request parsed where it arrived: each write's fields but its bytes are parsed by
// protobuf into a WriteRequest, and its bytes stay pieces of the received message (gRPC's
// slices), never copied: the store writes them to the data log as they are. Protobuf's own
// parse copied every object into the message first. The parser accepts only what protobuf
// accepts (and parses to the same writes); it refuses groups, which no client sends.
#pragma once

#include <vector>

#include "common/byte_pieces.h"
#include "common/status.h"
#include "orthofs.pb.h"

namespace orthofs {

struct ReceivedWrite {
  wire::WriteRequest fields;  // data() empty
  BytePieces data;            // pieces of the message
};

// The writes of `message`, a WriteManyRequest's wire form; InvalidArgument if it is malformed.
// The writes refer to the message's memory.
Result<std::vector<ReceivedWrite>> ParseWriteMany(const BytePieces& message);

}  // namespace orthofs
