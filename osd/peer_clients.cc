#include "osd/peer_clients.h"

namespace orthofs {

OsdClient* PeerClients::For(const MapView& view, uint32_t osd_id) {
  MutexLock lock(&mu_);
  auto it = clients_.find(osd_id);
  if (it != clients_.end()) return it->second.get();
  const OsdInfo* info = view.FindOsd(osd_id);
  if (info == nullptr) return nullptr;
  RpcOptions rpc;
  rpc.deadline = std::chrono::milliseconds(10000);
  rpc.tls = tls_;
  rpc.canceller = canceller_;
  return clients_.emplace(osd_id, std::make_unique<OsdClient>(*info, rpc)).first->second.get();
}

}  // namespace orthofs
