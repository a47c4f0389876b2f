// Cancels a group of outgoing calls at once. An OSD's calls to its peers (repair pushes, the
// recovery asks, rebalance fetches, prefetch traffic) may each wait until their deadline for a
// peer that is down or reconnecting; at shutdown they are cancelled instead, so a stopping OSD
// exits at once rather than after the longest of them.
#pragma once

#include <mutex>
#include <set>

namespace grpc {
class ClientContext;
}  // namespace grpc

namespace orthofs {

class CallCanceller {
 public:
  // Tracks a call until Remove. False once CancelAll has run: the call must not start.
  bool Add(grpc::ClientContext* context);
  void Remove(grpc::ClientContext* context);
  // Cancels every tracked call, and refuses every later one. Idempotent.
  void CancelAll();
  bool cancelled() const;
  size_t tracked() const;

 private:
  mutable std::mutex mu_;
  bool cancelled_ = false;
  std::set<grpc::ClientContext*> calls_;
};

}  // namespace orthofs
