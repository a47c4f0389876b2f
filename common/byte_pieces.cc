#include "common/byte_pieces.h"

#include <algorithm>
#include <cstring>

namespace orthofs {

void BytePieces::Append(std::string_view piece) {
  if (piece.empty()) return;
  pieces_.push_back(piece);
  size_ += piece.size();
}

BytePieces BytePieces::Sub(uint64_t offset, uint64_t length) const {
  BytePieces sub;
  for (std::string_view piece : pieces_) {
    if (length == 0) break;
    if (offset >= piece.size()) {
      offset -= piece.size();
      continue;
    }
    const uint64_t n = std::min<uint64_t>(length, piece.size() - offset);
    sub.Append(piece.substr(offset, n));
    length -= n;
    offset = 0;
  }
  return sub;
}

void BytePieces::CopyTo(char* out) const {
  for (std::string_view piece : pieces_) {
    std::memcpy(out, piece.data(), piece.size());
    out += piece.size();
  }
}

std::string BytePieces::Join() const {
  std::string joined(size_, '\0');
  CopyTo(joined.data());
  return joined;
}

bool BytePieces::operator==(std::string_view bytes) const {
  if (bytes.size() != size_) return false;
  for (std::string_view piece : pieces_) {
    if (bytes.substr(0, piece.size()) != piece) return false;
    bytes.remove_prefix(piece.size());
  }
  return true;
}

}  // namespace orthofs
