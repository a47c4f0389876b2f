#include "common/kernel_sizes.h"

#include <algorithm>

namespace orthofs {

KernelSizes::KernelSizes(size_t max_files) : max_files_(std::max<size_t>(max_files, 1)) {}

void KernelSizes::MakeRoom() {
  if (sizes_.size() >= max_files_) sizes_.clear();
}

void KernelSizes::Told(uint64_t fno, uint64_t size) {
  auto it = sizes_.find(fno);
  if (it != sizes_.end()) {
    it->second = size;
    return;
  }
  MakeRoom();
  sizes_.emplace(fno, size);
}

void KernelSizes::Grew(uint64_t fno, uint64_t end) {
  auto it = sizes_.find(fno);
  if (it != sizes_.end()) {
    it->second = std::max(it->second, end);
    return;
  }
  MakeRoom();
  sizes_.emplace(fno, end);
}

bool KernelSizes::MayExceed(uint64_t fno, uint64_t size) const {
  auto it = sizes_.find(fno);
  return it != sizes_.end() && it->second > size;
}

}  // namespace orthofs
