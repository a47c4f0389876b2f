// Bytes that arrived in pieces (the slices of a received gRPC message) and are used where
// they are: checksummed, written with one pwritev, and joined into one string only where
// something needs them contiguous. The pieces refer to memory the caller keeps valid.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace orthofs {

class BytePieces {
 public:
  BytePieces() = default;
  explicit BytePieces(std::string_view whole) { Append(whole); }

  void Append(std::string_view piece);  // an empty piece is not kept
  uint64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const std::vector<std::string_view>& pieces() const { return pieces_; }

  // The bytes [offset, offset + length) (clamped to the end), as pieces of these.
  BytePieces Sub(uint64_t offset, uint64_t length) const;
  // Copies every byte to `out` (size() bytes of room).
  void CopyTo(char* out) const;
  std::string Join() const;
  bool operator==(std::string_view bytes) const;

 private:
  std::vector<std::string_view> pieces_;
  uint64_t size_ = 0;
};

}  // namespace orthofs
