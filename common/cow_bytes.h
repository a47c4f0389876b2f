// An object's bytes in the client's cache, shared with the write-backs that send them: taking
// them for a write-back copies nothing, and the cache copies them only when it changes them
// while a write-back still holds them (copy on write). Objects written whole and written back
// once, the common case, are never copied. Not thread-safe itself: the cache's owner serializes
// calls; holders of Share()'s result may release it on any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace orthofs {

class CowBytes {
 public:
  uint64_t size() const { return bytes_ ? bytes_->size() : 0; }
  bool empty() const { return size() == 0; }
  std::string_view view() const { return bytes_ ? std::string_view(*bytes_) : std::string_view(); }

  // The bytes, to be changed in place: copied first if anyone else holds them.
  std::string& Mutable();
  // Replaced by `bytes` (no copy of the old ones when shared).
  void Assign(std::string_view bytes);
  void Adopt(std::string bytes);
  // The first `size` bytes are kept (no-op when not longer).
  void TruncateTo(uint64_t size);
  void Clear() { bytes_.reset(); }
  // The current bytes for a reader outside the cache: they never change under it.
  std::shared_ptr<const std::string> Share();
  // Another holder of the bytes exists (a write-back in flight).
  bool IsShared() const;

 private:
  std::shared_ptr<std::string> bytes_;
};

}  // namespace orthofs
