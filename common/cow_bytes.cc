#include "common/cow_bytes.h"

#include <atomic>

namespace orthofs {

bool CowBytes::IsShared() const {
  if (bytes_ == nullptr) return false;
  if (bytes_.use_count() > 1) return true;
  // The last other holder released them (on another thread, maybe): its reads of the bytes
  // happen before the changes that follow. The release's decrement is acq_rel; this fence
  // pairs with it.
  std::atomic_thread_fence(std::memory_order_acquire);
  return false;
}

std::string& CowBytes::Mutable() {
  if (bytes_ == nullptr) {
    bytes_ = std::make_shared<std::string>();
  } else if (IsShared()) {
    bytes_ = std::make_shared<std::string>(*bytes_);
  }
  return *bytes_;
}

void CowBytes::Assign(std::string_view bytes) {
  if (bytes_ == nullptr || IsShared()) {
    bytes_ = std::make_shared<std::string>(bytes);
  } else {
    bytes_->assign(bytes);
  }
}

void CowBytes::Adopt(std::string bytes) {
  bytes_ = std::make_shared<std::string>(std::move(bytes));
}

void CowBytes::TruncateTo(uint64_t size) {
  if (this->size() <= size) return;
  if (IsShared()) {
    bytes_ = std::make_shared<std::string>(bytes_->data(), size);
  } else {
    bytes_->resize(size);
  }
}

std::shared_ptr<const std::string> CowBytes::Share() {
  if (bytes_ == nullptr) bytes_ = std::make_shared<std::string>();
  return bytes_;
}

}  // namespace orthofs
