#include "osd/write_many_request.h"

#include <algorithm>
#include <string>

#include "common/proto_wire.h"

namespace orthofs {
namespace {

// Reads protobuf's wire format across the pieces of a message, within protobuf's parser's
// limits (common/proto_wire.h).
class WireReader {
 public:
  explicit WireReader(const BytePieces& bytes) : bytes_(bytes) {}

  bool AtEnd() const { return consumed_ == bytes_.size(); }

  // A varint of at most `max_bytes` bytes that fits 64 bits.
  bool ReadVarint(uint64_t* value, int max_bytes = 10) {
    *value = 0;
    for (int i = 0; i < max_bytes; ++i) {
      uint8_t byte;
      if (!ReadByte(&byte)) return false;
      if (i == 9 && byte > 1) return false;  // beyond 64 bits
      *value |= uint64_t{byte & 0x7fu} << (7 * i);
      if ((byte & 0x80) == 0) return true;
    }
    return false;
  }

  // A field's tag: its number (at least 1) and wire type.
  bool ReadTag(uint32_t* number, WireType* type) {
    uint64_t tag;
    if (!ReadVarint(&tag, kMaxTagOrLengthBytes) || tag > UINT32_MAX) return false;
    *number = static_cast<uint32_t>(tag >> 3);
    *type = static_cast<WireType>(tag & 7);
    return *number != 0;
  }

  // A length-delimited field's bytes, as pieces of the message.
  bool ReadLengthDelimited(BytePieces* out) {
    uint64_t length;
    if (!ReadVarint(&length, kMaxTagOrLengthBytes) || length > kMaxLength) return false;
    return Take(length, out);
  }

  // A field's value of `type`, appended as it is to `out` (when not null).
  bool CopyValue(WireType type, std::string* out) {
    BytePieces value;
    switch (type) {
      case WireType::kVarint: {
        uint64_t number;
        if (!ReadVarint(&number)) return false;
        if (out) AppendVarint(out, number);
        return true;
      }
      case WireType::kFixed64:
      case WireType::kFixed32:
        if (!Take(type == WireType::kFixed64 ? 8 : 4, &value)) return false;
        if (out) out->append(value.Join());
        return true;
      case WireType::kLengthDelimited:
        if (!ReadLengthDelimited(&value)) return false;
        if (out) {
          AppendVarint(out, value.size());
          out->append(value.Join());
        }
        return true;
      default:
        return false;  // groups, which no client sends, and the undefined types 6 and 7
    }
  }

 private:
  bool ReadByte(uint8_t* byte) {
    if (AtEnd()) return false;
    SkipUsedUpPiece();
    *byte = static_cast<uint8_t>(bytes_.pieces()[piece_][offset_++]);
    ++consumed_;
    return true;
  }

  // The next `n` bytes as pieces, from where the reader is.
  bool Take(uint64_t n, BytePieces* out) {
    if (n > bytes_.size() - consumed_) return false;
    consumed_ += n;
    while (n > 0) {
      SkipUsedUpPiece();
      const std::string_view piece = bytes_.pieces()[piece_];
      const uint64_t here = std::min<uint64_t>(n, piece.size() - offset_);
      out->Append(piece.substr(offset_, here));
      offset_ += here;
      n -= here;
    }
    return true;
  }

  void SkipUsedUpPiece() {
    if (offset_ < bytes_.pieces()[piece_].size()) return;
    ++piece_;  // pieces are never empty
    offset_ = 0;
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
    WireType type;
    if (!reader.ReadTag(&number, &type)) return Malformed("bad field tag in a write");
    if (number == wire::WriteRequest::kDataFieldNumber && type == WireType::kLengthDelimited) {
      // The bytes may appear more than once on the wire: the last counts, as in protobuf.
      write.data = BytePieces();
      if (!reader.ReadLengthDelimited(&write.data)) return Malformed("write bytes cut short");
      continue;
    }
    AppendTag(&fields, number, type);
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
    WireType type;
    if (!reader.ReadTag(&number, &type)) return Malformed("bad field tag");
    if (number == wire::WriteManyRequest::kWritesFieldNumber &&
        type == WireType::kLengthDelimited) {
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
