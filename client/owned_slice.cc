#include "client/owned_slice.h"

namespace orthofs {
namespace {

constexpr uint32_t kLengthDelimited = 2;  // protobuf's wire type of bytes and messages

void ReleaseOwner(void* owner) { delete static_cast<std::shared_ptr<const void>*>(owner); }

}  // namespace

void AppendVarint(std::string* out, uint64_t value) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

void AppendLengthDelimitedHeader(std::string* out, uint32_t field_number, uint64_t length) {
  AppendVarint(out, (uint64_t{field_number} << 3) | kLengthDelimited);
  AppendVarint(out, length);
}

grpc::Slice OwnedSlice(std::string_view bytes, std::shared_ptr<const void> owner) {
  // gRPC only reads the bytes; the slice holds a reference to their owner until it is done.
  return grpc::Slice(const_cast<char*>(bytes.data()), bytes.size(), &ReleaseOwner,
                     new std::shared_ptr<const void>(std::move(owner)));
}

}  // namespace orthofs
