// An OSD's recovery: after a restart, or a stall long enough that clients may have taken it
// for dead, its copies may be older than their other copies. Until its peers have replayed the
// repair records naming its copies it refuses reads (clients read the other copy) and clients'
// changes (clients change the other copy, with a record for this one). Also the peers' side of
// it: fencing (while a peer ends its recovery, changes of one copy alone that would leave it a
// record are refused) and refusing a change of one copy alone while the other copy's OSD
// answers (PeerReachability).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <thread>

#include "common/placement.h"
#include "common/stall_watch.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "osd/admission.h"
#include "osd/map_holder.h"
#include "osd/osd_stats.h"
#include "osd/peer_clients.h"
#include "osd/peer_reachability.h"
#include "osd/repair_worker.h"

namespace orthofs {

struct RecoveryOptions {
  uint32_t osd_id = 0;
  // Refusing reads and clients' changes from the start, until Start's recovery has asked the
  // peers to replay (OsdServiceOptions::recovering_at_start).
  bool recovering_at_start = true;
  // For tests: the recovery waits to ask the peers while this file exists.
  std::string hold_recovery_while;
  // A stall longer than this is recovered from as a restart; zero: not watched.
  std::chrono::milliseconds stall_recovery{400};
};

// Thread-safe: the flags are atomics, the fence table and each thread have their own mutex;
// the recovery and the stall watch run on threads of their own, a ping on the asking thread or
// PeerReachability's.
class Recovery {
 public:
  // The pointers outlive the Recovery; `admission`'s draining ends a held recovery.
  Recovery(const RecoveryOptions& options, const MapHolder* maps, RepairWorker* repair,
           PeerClients* peers, const Admission* admission, OsdCounters* counters);
  ~Recovery();  // RequestStop and Join
  Recovery(const Recovery&) = delete;
  Recovery& operator=(const Recovery&) = delete;

  // Recovers (the peers replay what this OSD missed), then watches for stalls and recovers
  // after each.
  void Start();
  // No stall recovery begins after this; Join waits for the threads (after the peer calls
  // they may wait for are cancelled).
  void RequestStop() { stopping_ = true; }
  void Join() ORTHOFS_EXCLUDES(recovery_mu_);

  // Reads are refused: recovering, or the stall watch's last tick is overdue (the process may
  // just have resumed from a stall its watch has not noticed yet).
  bool Recovering() const;
  // Waiting for the peers' replay (the metrics' orthofs_osd_recovering).
  bool replaying() const { return recovering_.load(); }

  // While recovering: UNAVAILABLE (StatusReason::kRecovering), "OSD n is recovering: `what`
  // the other copy", for a read or a listing the client then makes there.
  Status RefuseWhileRecovering(std::string_view what) const;
  // While recovering, this OSD's copies may be older than the other copies: a client's change
  // (no set_version), whose expected version and whose base came from the other copy, would
  // be judged or applied against a stale one here, and a late replay could undo it. Refused
  // (UNAVAILABLE, StatusReason::kRecovering): the client commits on the other copy with a repair
  // record. Copy updates and replays carry set_version and only move a copy forward.
  Status RefuseClientChangeWhileRecovering() const;
  // Every check a client's change of `oid` (no set_version) passes: the one above, then, for a
  // change of this copy alone (`record_repair`), the fenced peer's and the answering peer's.
  Status CheckClientChange(const Oid& oid, bool record_repair, bool other_recovering,
                           bool has_expected_version);

  // A peer's Repair call on behalf of `peer` (recovering): it answers again, and with `fence`
  // it is about to take changes again. Returns once such changes that passed the check
  // just before have committed.
  void PeerRecovering(uint32_t peer, bool fence) ORTHOFS_EXCLUDES(fence_mu_);

 private:
  void BeginRecovery() ORTHOFS_EXCLUDES(recovery_mu_);
  // The recovery thread: the peers replay until none holds records for this OSD.
  void Recover();
  void WatchForStalls();
  bool TickOverdue() const;
  // recovering_ and refusing_changes_, or TickOverdue().
  bool RefusingChanges() const;
  // A client's change of `oid`'s copy alone after the other copy's OSD refused it as recovering
  // (`other_recovering`), refused while that OSD is fenced (about to take changes again).
  Status RefuseChangeAloneForFencedPeer(const Oid& oid, bool other_recovering) const
      ORTHOFS_EXCLUDES(fence_mu_);
  // A client's conditional change of a namespace object's copy alone (`alone`: record_repair
  // and expected_version, no set_version, not sent because the other copy's OSD refused it as
  // recovering), refused (BUSY, StatusReason::kOriginalAnswers) when that OSD answers
  // a ping from here: the client only failed to reach it (its connection still backing off
  // after an outage), and the other copy, live, would take other changes at the same version,
  // forking the object. A peer found unreachable stays so without more pings from requests until
  // a background ping finds it back (PeerReachability).
  Status RefuseChangeAloneWhileOtherAnswers(const Oid& oid, bool alone);
  bool PeerAnswers(uint32_t peer_id);

  const uint32_t osd_id_;
  const std::string hold_recovery_while_;
  const MapHolder* const maps_;
  RepairWorker* const repair_;
  PeerClients* const peers_;
  const Admission* const admission_;
  OsdCounters* const counters_;
  std::atomic<bool> recovering_;        // reads refused
  std::atomic<bool> refusing_changes_;  // clients' changes refused, the first part of it
  std::atomic<bool> stopping_{false};
  // Peers about to take changes again (RepairRequest.fence): until when this OSD refuses
  // clients' changes of one copy alone that would leave a record for them.
  mutable Mutex fence_mu_;
  std::map<uint32_t, std::chrono::steady_clock::time_point> fenced_until_
      ORTHOFS_GUARDED_BY(fence_mu_);
  Mutex recovery_mu_;
  std::thread recovery_ ORTHOFS_GUARDED_BY(recovery_mu_);
  StallWatch stall_watch_;                // ticked by the watch thread alone
  std::atomic<int64_t> last_tick_ns_{0};  // StallWatch::Clock; 0: not watching
  std::thread watch_;                     // started by Start, joined by Join
  // Last: its thread pings peers (PeerAnswers) until it is destroyed, first.
  PeerReachability reachability_;
};

}  // namespace orthofs
