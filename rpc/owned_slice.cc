#include "rpc/owned_slice.h"

namespace orthofs {
namespace {

void ReleaseOwner(void* owner) { delete static_cast<std::shared_ptr<const void>*>(owner); }

}  // namespace

grpc::Slice OwnedSlice(std::string_view bytes, std::shared_ptr<const void> owner) {
  // gRPC only reads the bytes; the slice holds a reference to their owner until it is done.
  return grpc::Slice(const_cast<char*>(bytes.data()), bytes.size(), &ReleaseOwner,
                     new std::shared_ptr<const void>(std::move(owner)));
}

}  // namespace orthofs
