// A Read's reply as gRPC sends it, built without copying the object's bytes: the ReadResponse's
// other fields are serialized (small) and the bytes follow as a slice of the OSD's cached
// object, which the slice keeps alive until gRPC has sent them. Before, each object read was
// copied twice in the OSD (into the message, then by its serialization).
#pragma once

#include <grpcpp/support/byte_buffer.h>

#include <memory>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "orthofs.pb.h"

namespace orthofs {

// The wire form of `head` with data = `bytes`; `head` has no data of its own. `owner` keeps
// `bytes` valid.
grpc::ByteBuffer EncodeReadResponse(const wire::ReadResponse& head, std::string_view bytes,
                                    std::shared_ptr<const void> owner);

// One read of a ReadMany as its reply carries it: refused (`status`), or `head` with data =
// `bytes`, kept valid by `owner`.
struct ReadManyItem {
  Status status;
  wire::ReadResponse head;  // no data of its own
  std::string_view bytes;
  std::shared_ptr<const void> owner;
};

// The wire form of a ReadManyResponse with one result per item, in order: each read's bytes
// are sent from where they are, as EncodeReadResponse sends one.
grpc::ByteBuffer EncodeReadManyResponse(const std::vector<ReadManyItem>& items);

}  // namespace orthofs
