#include "rpc/pending_calls.h"

namespace orthofs {

void PendingCalls::Add(int n) {
  std::lock_guard lock(mu_);
  pending_ += n;
}

void PendingCalls::Done(const Status& status) {
  std::lock_guard lock(mu_);
  if (!status.ok() && first_error_.ok()) first_error_ = status;
  if (--pending_ == 0) cv_.notify_all();
}

Status PendingCalls::Wait() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return pending_ == 0; });
  return first_error_;
}

}  // namespace orthofs
