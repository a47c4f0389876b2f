#include "osd/peer_reachability.h"

#include <vector>

namespace orthofs {

PeerReachability::PeerReachability(std::function<bool(uint32_t peer)> ping,
                                   std::chrono::milliseconds repinging_every)
    : ping_(std::move(ping)), repinging_every_(repinging_every) {
  repinger_ = std::thread([this] { RepingUnreachable(); });
}

PeerReachability::~PeerReachability() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  repinger_.join();
}

bool PeerReachability::Reachable(uint32_t peer) {
  if (KnownUnreachable(peer)) return false;
  const bool answered = pings_.Do(peer, [&] { return ping_(peer); });
  if (!answered) {
    MutexLock lock(&mu_);
    unreachable_.insert(peer);
  }
  return answered;
}

void PeerReachability::NoteAnswered(uint32_t peer) {
  MutexLock lock(&mu_);
  unreachable_.erase(peer);
}

bool PeerReachability::KnownUnreachable(uint32_t peer) const {
  MutexLock lock(&mu_);
  return unreachable_.contains(peer);
}

void PeerReachability::RepingUnreachable() {
  for (;;) {
    std::vector<uint32_t> peers;
    {
      MutexLock lock(&mu_);
      stop_cv_.wait_for(mu_, repinging_every_,
                        [this]() ORTHOFS_REQUIRES(mu_) { return stopping_; });
      if (stopping_) return;
      peers.assign(unreachable_.begin(), unreachable_.end());
    }
    for (uint32_t peer : peers) {
      if (pings_.Do(peer, [&] { return ping_(peer); })) NoteAnswered(peer);
    }
  }
}

}  // namespace orthofs
