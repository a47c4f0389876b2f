#include "rpc/call_canceller.h"

#include <grpcpp/client_context.h>

namespace orthofs {

bool CallCanceller::Add(grpc::ClientContext* context) {
  std::lock_guard lock(mu_);
  if (cancelled_) return false;
  calls_.insert(context);
  return true;
}

void CallCanceller::Remove(grpc::ClientContext* context) {
  std::lock_guard lock(mu_);
  calls_.erase(context);
}

void CallCanceller::CancelAll() {
  std::lock_guard lock(mu_);
  cancelled_ = true;
  // Under the lock: a call's context outlives its Remove, which waits for this.
  for (grpc::ClientContext* context : calls_) context->TryCancel();
}

bool CallCanceller::cancelled() const {
  std::lock_guard lock(mu_);
  return cancelled_;
}

size_t CallCanceller::tracked() const {
  std::lock_guard lock(mu_);
  return calls_.size();
}

}  // namespace orthofs
