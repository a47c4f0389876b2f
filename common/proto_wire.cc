#include "common/proto_wire.h"

namespace orthofs {

void AppendVarint(std::string* out, uint64_t value) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

void AppendTag(std::string* out, uint32_t field_number, WireType type) {
  AppendVarint(out, (uint64_t{field_number} << 3) | static_cast<uint32_t>(type));
}

void AppendLengthDelimitedHeader(std::string* out, uint32_t field_number, uint64_t length) {
  AppendTag(out, field_number, WireType::kLengthDelimited);
  AppendVarint(out, length);
}

}  // namespace orthofs
