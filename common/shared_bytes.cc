#include "common/shared_bytes.h"

#include <algorithm>
#include <string_view>
#include <utility>

namespace orthofs {
namespace {

// Never written: in .bss, where every page read is the kernel's one zero page, so it costs no
// memory (const, it would be 256 KiB of zeros in every binary's read-only data).
constexpr uint64_t kZeroBlockSize = 256 << 10;
char zero_block[kZeroBlockSize];

}  // namespace

void SharedBytes::Append(std::shared_ptr<const std::string> owner, uint64_t offset,
                         uint64_t length) {
  if (owner == nullptr || offset >= owner->size() || length == 0) return;
  pieces_.Append(std::string_view(*owner).substr(offset, length));
  // Consecutive pieces of one object (the common case: one read within an object) keep one
  // reference.
  if (owners_.empty() || owners_.back() != owner) owners_.push_back(std::move(owner));
}

void SharedBytes::AppendZeros(uint64_t length) {
  while (length > 0) {
    const uint64_t n = std::min(length, kZeroBlockSize);
    pieces_.Append(std::string_view(zero_block, n));
    length -= n;
  }
}

void SharedBytes::Append(SharedBytes&& other) {
  for (std::string_view piece : other.pieces_.pieces()) pieces_.Append(piece);
  for (auto& owner : other.owners_) owners_.push_back(std::move(owner));
  other = SharedBytes();
}

void SharedBytes::TruncateTo(uint64_t size) {
  if (size < pieces_.size()) pieces_ = pieces_.Sub(0, size);
}

}  // namespace orthofs
