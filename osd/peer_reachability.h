// Whether this OSD reaches each peer, for the changes a client would commit on one copy alone
// (OsdService::RefuseChangeAloneWhileOtherAnswers): a replica takes a namespace change alone
// only while the original's OSD does not answer this OSD either, else the client's view is
// stale and the change would fork the object.
//
// A peer is pinged when first asked about (concurrent askers share that ping). Once a ping
// finds it unreachable, it stays so, and askers do not wait on it, until a later ping answers:
// a background thread pings every unreachable peer again every `repinging_every`. So a hung
// peer costs each change nothing after its first ping, and a peer that comes back is seen
// within one ping.
//
// Thread-safe. The ping function runs on the asking thread or on the background thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include "common/single_flight.h"
#include "common/thread_annotations.h"

namespace orthofs {

class PeerReachability {
 public:
  // `ping(peer)`: true when the peer answered (a refusal too); false when it could not be
  // reached in time.
  PeerReachability(std::function<bool(uint32_t peer)> ping,
                   std::chrono::milliseconds repinging_every);
  ~PeerReachability();  // stops the background thread (waiting out a ping in flight)
  PeerReachability(const PeerReachability&) = delete;
  PeerReachability& operator=(const PeerReachability&) = delete;

  // True when `peer` answers: at once while it is known unreachable (false), else by a ping.
  bool Reachable(uint32_t peer) ORTHOFS_EXCLUDES(mu_);
  // The peer called this OSD (it restarted): reachable, pinged again when next asked about.
  void NoteAnswered(uint32_t peer) ORTHOFS_EXCLUDES(mu_);
  bool KnownUnreachable(uint32_t peer) const ORTHOFS_EXCLUDES(mu_);

 private:
  void RepingUnreachable() ORTHOFS_EXCLUDES(mu_);

  const std::function<bool(uint32_t)> ping_;
  const std::chrono::milliseconds repinging_every_;
  SingleFlight<uint32_t, bool> pings_;
  mutable Mutex mu_;
  std::condition_variable_any stop_cv_;
  std::set<uint32_t> unreachable_ ORTHOFS_GUARDED_BY(mu_);
  bool stopping_ ORTHOFS_GUARDED_BY(mu_) = false;
  std::thread repinger_;
};

}  // namespace orthofs
