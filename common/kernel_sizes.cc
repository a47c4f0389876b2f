#include "common/kernel_sizes.h"

#include <algorithm>

namespace orthofs {

KernelSizes::KernelSizes(size_t max_files) : max_files_(std::max<size_t>(max_files, 1)) {}

uint64_t& KernelSizes::Entry(uint64_t fno) {
  // Past the bound it starts over rather than track the kernel's inodes one by one.
  if (sizes_.size() >= max_files_ && !sizes_.contains(fno)) sizes_.clear();
  return sizes_[fno];  // 0 for a file not known yet
}

void KernelSizes::Told(uint64_t fno, uint64_t size) { Entry(fno) = size; }

void KernelSizes::Grew(uint64_t fno, uint64_t end) {
  uint64_t& size = Entry(fno);
  size = std::max(size, end);
}

bool KernelSizes::MayExceed(uint64_t fno, uint64_t size) const {
  auto it = sizes_.find(fno);
  return it != sizes_.end() && it->second > size;
}

}  // namespace orthofs
