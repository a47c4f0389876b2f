// A read's answer as pieces of the buffers that already hold its bytes (the client cache's
// objects, shared with it: common/cow_bytes.h) and of zeros, kept alive by this value. The
// mount hands the pieces to the kernel as they are (fuse_reply_iov), so a read's bytes are
// copied once, by the kernel, instead of also being zeroed into a reply buffer and copied into
// it first.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/byte_pieces.h"

namespace orthofs {

class SharedBytes {
 public:
  // Bytes [offset, offset + length) of `*owner` (clamped to its end), kept valid by `owner`.
  void Append(std::shared_ptr<const std::string> owner, uint64_t offset, uint64_t length);
  // `length` zero bytes (from one static block: they cost no memory per read).
  void AppendZeros(uint64_t length);
  void Append(SharedBytes&& other);
  // The first `size` bytes are kept (no-op when not longer).
  void TruncateTo(uint64_t size);

  uint64_t size() const { return pieces_.size(); }
  bool empty() const { return pieces_.empty(); }
  const BytePieces& pieces() const { return pieces_; }
  std::string Join() const { return pieces_.Join(); }

 private:
  BytePieces pieces_;
  std::vector<std::shared_ptr<const std::string>> owners_;
};

}  // namespace orthofs
