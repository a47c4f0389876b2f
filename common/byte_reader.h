// Bounds-checked reading of the big-endian records the namespace objects are stored as
// (INODE, DIRENT, SUPER, LOCK): each read fails rather than run past the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/oid.h"

namespace orthofs {

class ByteReader {
 public:
  explicit ByteReader(std::string_view bytes) : bytes_(bytes) {}
  bool U8(uint8_t* v) {
    if (!Need(1)) return false;
    *v = static_cast<uint8_t>(bytes_[pos_++]);
    return true;
  }
  bool U32(uint32_t* v) {
    if (!Need(4)) return false;
    *v = ReadBigEndian32(bytes_.data() + pos_);
    pos_ += 4;
    return true;
  }
  bool U64(uint64_t* v) {
    if (!Need(8)) return false;
    *v = ReadBigEndian64(bytes_.data() + pos_);
    pos_ += 8;
    return true;
  }
  bool Bytes(size_t n, std::string* out) {
    if (!Need(n)) return false;
    out->assign(bytes_.substr(pos_, n));
    pos_ += n;
    return true;
  }
  bool done() const { return pos_ == bytes_.size(); }

 private:
  bool Need(size_t n) const { return bytes_.size() - pos_ >= n; }
  std::string_view bytes_;
  size_t pos_ = 0;
};

}  // namespace orthofs
