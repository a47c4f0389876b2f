// Protobuf's wire format, for the few messages whose bytes fields are encoded and parsed by
// hand so that object bytes are never copied into a message (rpc/write_many_encoding.h,
// osd/read_reply.h, osd/write_many_request.h). The rules are protobuf's
// (https://protobuf.dev/programming-guides/encoding/), including its parser's limits.
#pragma once

#include <cstdint>
#include <string>

namespace orthofs {

enum class WireType : uint32_t {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5,
};

// Protobuf's parser reads tags and lengths of at most this many bytes; a length must also stay
// below kMaxLength.
inline constexpr int kMaxTagOrLengthBytes = 5;
inline constexpr uint64_t kMaxLength = 0x7fffffff - 16;  // INT_MAX less the parser's slop

void AppendVarint(std::string* out, uint64_t value);
void AppendTag(std::string* out, uint32_t field_number, WireType type);
// A length-delimited field's tag and length (its bytes follow).
void AppendLengthDelimitedHeader(std::string* out, uint32_t field_number, uint64_t length);

}  // namespace orthofs
