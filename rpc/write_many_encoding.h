// A WriteMany call's request as gRPC sends it, built without copying the objects' bytes: each
// write's fields are serialized (small), and its bytes follow as a slice that refers to their
// owner, which the slice keeps alive until gRPC has sent them. Protobuf accepts fields in any
// order, so the OSD parses this as the WriteManyRequest it is.
#pragma once

#include <grpcpp/support/byte_buffer.h>

#include <memory>
#include <string_view>
#include <vector>

#include "orthofs.pb.h"

namespace orthofs {

// One copy write: the request without its data, and the data apart.
struct SharedWrite {
  std::shared_ptr<wire::WriteRequest> request;  // data() empty
  std::string_view data;
  std::shared_ptr<const void> data_owner;  // keeps `data` valid

  // The request with its data in it (a copy of the bytes), for the paths that send one write
  // alone.
  std::shared_ptr<wire::WriteRequest> WithData() const;
  // Moves a whole request's data out into a shared buffer of its own.
  static SharedWrite FromRequest(std::shared_ptr<wire::WriteRequest> request);
};

// The wire form of WriteManyRequest{writes: each request with its data}.
grpc::ByteBuffer EncodeWriteMany(const std::vector<const SharedWrite*>& writes);

}  // namespace orthofs
