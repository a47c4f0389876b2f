#include "osd/write_many_request.h"

#include <climits>
#include <string>

#include "client/owned_slice.h"

namespace orthofs {
namespace {

// Protobuf's wire types.
enum WireType : uint64_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// Reads protobuf's wire format across the pieces of a message.
class WireReader {
 public:
  explicit WireReader(const BytePieces& bytes) : bytes_(bytes) {}

  bool AtEnd() const { return consumed_ == bytes_.size(); }

  // A varint as protobuf reads one: at most 10 bytes, fitting 64 bits.
  bool ReadVarint(uint64_t* value) {
    *value = 0;
    for (int i = 0; i < 10; ++i) {
      uint8_t byte;
      if (!ReadByte(&byte)) return false;
      if (i == 9 && byte > 1) return false;  // beyond 64 bits
      *value |= uint64_t{byte & 0x7fu} << (7 * i);
      if ((byte & 0x80) == 0) return true;
    }
    return false;
  }

  // A field's tag: its number (1 .. 2^29 - 1, as protobuf allows) and wire type.
  bool ReadTag(uint32_t* number, uint64_t* type) {
    uint64_t tag;
    if (!ReadVarint(&tag) || tag > UINT32_MAX) return false;
    *number = static_cast<uint32_t>(tag >> 3);
    *type = tag & 7;
    return *number != 0;
  }

  // A length-delimited field's bytes, as pieces of the message.
  bool ReadLengthDelimited(BytePieces* out) {
    uint64_t length;
    if (!ReadVarint(&length) || length > INT_MAX || length > bytes_.size() - consumed_) {
      return false;
    }
    *out = bytes_.Sub(consumed_, length);
    Skip(length);
    return true;
  }

  // A field's value of `type`, appended as it is to `out` (when not null).
  bool CopyValue(uint64_t type, std::string* out) {
    switch (type) {
      case kVarint: {
        uint64_t value;
        if (!ReadVarint(&value)) return false;
        if (out) AppendVarint(out, value);
        return true;
      }
      case kFixed64:
      case kFixed32: {
        const uint64_t n = type == kFixed64 ? 8 : 4;
        if (n > bytes_.size() - consumed_) return false;
        if (out) out->append(bytes_.Sub(consumed_, n).Join());
        Skip(n);
        return true;
      }
      case kLengthDelimited: {
        BytePieces value;
        if (!ReadLengthDelimited(&value)) return false;
        if (out) {
          AppendVarint(out, value.size());
          out->append(value.Join());
        }
        return true;
      }
      default:
        return false;  // groups (3, 4) and the undefined types 6 and 7
    }
  }

 private:
  bool ReadByte(uint8_t* byte) {
    if (AtEnd()) return false;
    while (offset_ == bytes_.pieces()[piece_].size()) {
      ++piece_;
      offset_ = 0;
    }
    *byte = static_cast<uint8_t>(bytes_.pieces()[piece_][offset_++]);
    ++consumed_;
    return true;
  }

  void Skip(uint64_t n) {
    consumed_ += n;
    while (n > 0) {
      const uint64_t left = bytes_.pieces()[piece_].size() - offset_;
      if (n < left) {
        offset_ += n;
        return;
      }
      n -= left;
      ++piece_;
      offset_ = 0;
    }
  }

  const BytePieces& bytes_;
  size_t piece_ = 0;     // the next byte is in this piece ...
  uint64_t offset_ = 0;  // ... at this offset (or the piece is used up)
  uint64_t consumed_ = 0;
};

Status Malformed(const char* what) {
  return Status::InvalidArgument(std::string("malformed WriteMany request: ") + what);
}

// One WriteRequest: every field but the bytes goes, as it is, to protobuf's parser.
Result<ReceivedWrite> ParseWrite(const BytePieces& message) {
  ReceivedWrite write;
  std::string fields;
  WireReader reader(message);
  while (!reader.AtEnd()) {
    uint32_t number;
    uint64_t type;
    if (!reader.ReadTag(&number, &type)) return Malformed("bad field tag in a write");
    if (number == wire::WriteRequest::kDataFieldNumber && type == kLengthDelimited) {
      write.data = BytePieces();  // a repeated field: the last one counts, as in protobuf
      if (!reader.ReadLengthDelimited(&write.data)) return Malformed("write bytes cut short");
      continue;
    }
    AppendVarint(&fields, (uint64_t{number} << 3) | type);
    if (!reader.CopyValue(type, &fields)) return Malformed("bad field in a write");
  }
  if (!write.fields.ParseFromString(fields)) return Malformed("bad write fields");
  return write;
}

}  // namespace

Result<std::vector<ReceivedWrite>> ParseWriteMany(const BytePieces& message) {
  std::vector<ReceivedWrite> writes;
  WireReader reader(message);
  while (!reader.AtEnd()) {
    uint32_t number;
    uint64_t type;
    if (!reader.ReadTag(&number, &type)) return Malformed("bad field tag");
    if (number == wire::WriteManyRequest::kWritesFieldNumber && type == kLengthDelimited) {
      BytePieces one;
      if (!reader.ReadLengthDelimited(&one)) return Malformed("write cut short");
      Result<ReceivedWrite> write = ParseWrite(one);
      if (!write.ok()) return write.status();
      writes.push_back(std::move(*write));
      continue;
    }
    if (!reader.CopyValue(type, nullptr)) return Malformed("bad field");  // unknown: skipped
  }
  return writes;
}

}  // namespace orthofs
