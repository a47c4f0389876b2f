#include "osd/recovery.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <optional>

namespace orthofs {
namespace {

// How long a peer refuses changes of one copy alone sent after a recovering OSD refused them
// (RepairRequest.fence): past that OSD's recovery, so that such a change sent just before it
// ended cannot land after it took changes again; past a crash in the middle of it, too.
constexpr auto kFenceLease = std::chrono::seconds(3);
// Between fencing and replaying: for such a change already past the check to commit.
constexpr auto kFenceSettle = std::chrono::milliseconds(50);
// How often the stall watch ticks (RecoveryOptions::stall_recovery).
constexpr auto kStallTick = std::chrono::milliseconds(50);
// RefuseChangeAloneWhileOtherAnswers: how long a ping of the other copy's OSD may take (on a
// closed port it fails at once).
constexpr auto kPingDeadline = std::chrono::milliseconds(500);
// How often a peer found unreachable is pinged again in the background (PeerReachability).
constexpr auto kRepingUnreachable = std::chrono::milliseconds(100);

}  // namespace

Recovery::Recovery(const RecoveryOptions& options, const MapHolder* maps, RepairWorker* repair,
                   PeerClients* peers, const Admission* admission, OsdCounters* counters)
    : osd_id_(options.osd_id),
      hold_recovery_while_(options.hold_recovery_while),
      maps_(maps),
      repair_(repair),
      peers_(peers),
      admission_(admission),
      counters_(counters),
      recovering_(options.recovering_at_start),
      refusing_changes_(options.recovering_at_start),
      stall_watch_(options.stall_recovery),
      reachability_([this](uint32_t peer) { return PeerAnswers(peer); }, kRepingUnreachable) {}

Recovery::~Recovery() {
  RequestStop();
  Join();
}

void Recovery::Join() {
  if (watch_.joinable()) watch_.join();
  MutexLock lock(&recovery_mu_);
  if (recovery_.joinable()) recovery_.join();
}

void Recovery::Start() {
  BeginRecovery();
  if (stall_watch_.threshold() > StallWatch::Clock::duration::zero()) {
    last_tick_ns_ = StallWatch::Clock::now().time_since_epoch().count();
    watch_ = std::thread([this] { WatchForStalls(); });
  }
}

void Recovery::WatchForStalls() {
  while (!stopping_.load()) {
    std::this_thread::sleep_for(kStallTick);
    const auto now = StallWatch::Clock::now();
    if (std::optional<StallWatch::Clock::duration> stall = stall_watch_.Tick(now)) {
      ++counters_->stalls;
      if (!recovering_.load()) {
        spdlog::warn(
            "this OSD did not run for {} ms (stopped, suspended or starved of CPU): its peers may "
            "have taken changes of its copies alone meanwhile; recovering as after a restart",
            std::chrono::duration_cast<std::chrono::milliseconds>(*stall).count());
        BeginRecovery();  // before the tick below: requests see one or the other
      }
    }
    last_tick_ns_ = now.time_since_epoch().count();
  }
}

bool Recovery::TickOverdue() const {
  const int64_t tick = last_tick_ns_.load();
  if (tick == 0) return false;  // not watching
  return stall_watch_.Overdue(StallWatch::Clock::time_point(StallWatch::Clock::duration(tick)),
                              StallWatch::Clock::now());
}

// The tick first: a fresh one was stored after a stall's recovery had begun, so a request that
// finds it fresh finds the recovery's flags set.
bool Recovery::Recovering() const { return TickOverdue() || recovering_.load(); }
bool Recovery::RefusingChanges() const { return TickOverdue() || refusing_changes_.load(); }

void Recovery::BeginRecovery() {
  MutexLock lock(&recovery_mu_);
  if (recovery_.joinable()) recovery_.join();  // one that has ended (recovering_ was false)
  recovering_ = true;
  refusing_changes_ = true;
  recovery_ = std::thread([this] { Recover(); });
}

void Recovery::Recover() {
  const auto start = std::chrono::steady_clock::now();
  while (!hold_recovery_while_.empty() && std::filesystem::exists(hold_recovery_while_) &&
         !admission_->draining()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // While we refuse clients' changes, they make them on the other copies, each with a record
  // for us, so a replay never quite ends. After the first, the peers are fenced: they refuse
  // such changes too (the clients wait and retry), and replay what came meanwhile until they
  // hold nothing for us. Only then do we take changes and serve reads, both at once. A copy
  // read before its record was replayed would be an old state, and a change committed on it
  // while the other copy took another at the same version would fork the object (chaos runs:
  // a rename's link count read or committed that way freed the file under its new name).
  repair_->AskPeersToReplay(/*until_none_left=*/false, /*fence=*/false);
  repair_->AskPeersToReplay(/*until_none_left=*/true, /*fence=*/true);
  refusing_changes_ = false;
  recovering_ = false;
  spdlog::info("recovery done in {} ms: serving reads",
               std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - start)
                   .count());
}

Status Recovery::RefuseWhileRecovering(std::string_view what) const {
  if (!Recovering()) return Status::Ok();
  return Status(
      StatusCode::kUnavailable,
      "OSD " + std::to_string(osd_id_) + " is recovering: " + std::string(what) + " the other copy",
      StatusReason::kRecovering);
}

Status Recovery::RefuseClientChangeWhileRecovering() const {
  if (!RefusingChanges()) return Status::Ok();
  return Status(StatusCode::kUnavailable,
                "OSD " + std::to_string(osd_id_) + " is recovering: change the other copy",
                StatusReason::kRecovering);
}

Status Recovery::CheckClientChange(const Oid& oid, bool record_repair, bool other_recovering,
                                   bool has_expected_version) {
  ORTHOFS_RETURN_IF_ERROR(RefuseClientChangeWhileRecovering());
  ORTHOFS_RETURN_IF_ERROR(RefuseChangeAloneForFencedPeer(oid, record_repair && other_recovering));
  return RefuseChangeAloneWhileOtherAnswers(
      oid, record_repair && !other_recovering && has_expected_version);
}

Status Recovery::RefuseChangeAloneForFencedPeer(const Oid& oid, bool other_recovering) const {
  if (!other_recovering) return Status::Ok();
  const uint32_t other = maps_->Current()->current().OsdFor(oid.OtherCopy());
  MutexLock lock(&fence_mu_);
  auto it = fenced_until_.find(other);
  if (it == fenced_until_.end() || std::chrono::steady_clock::now() >= it->second) {
    return Status::Ok();
  }
  // Both copies refuse, so the client retries.
  return Status(
      StatusCode::kUnavailable,
      "OSD " + std::to_string(other) + " is recovering: it takes this change itself in a moment",
      StatusReason::kPeerRecovering);
}

bool Recovery::PeerAnswers(uint32_t peer_id) {
  OsdClient* peer = peers_->For(*maps_->Current(), peer_id);
  if (peer == nullptr) return false;  // not in the map: no copy there to fork
  peer->ReconnectNow();               // our own channel may be backing off from its outage as well
  Result<wire::HealthResponse> ping = peer->Ping(kPingDeadline);
  return ping.ok() || !(ping.status().Is(StatusCode::kUnavailable) ||
                        ping.status().Is(StatusCode::kDeadlineExceeded));
}

Status Recovery::RefuseChangeAloneWhileOtherAnswers(const Oid& oid, bool alone) {
  if (!alone || oid.type == ObjectType::kData) return Status::Ok();
  const std::shared_ptr<const MapView> view = maps_->Current();
  const uint32_t other = view->current().OsdFor(oid.OtherCopy());
  if (other == osd_id_) return Status::Ok();
  // Changes arriving together share one ping, and once a peer is found unreachable none
  // waits on it again until a background ping finds it back (osd/peer_reachability.h).
  const bool answers = reachability_.Reachable(other);
  if (!answers) return Status::Ok();
  ++counters_->changes_alone_refused;
  return Status(StatusCode::kBusy,
                "OSD " + std::to_string(other) +
                    " answers: change the original there (this client's connection to it failed)",
                StatusReason::kOriginalAnswers);
}

void Recovery::PeerRecovering(uint32_t peer, bool fence) {
  reachability_.NoteAnswered(peer);  // it is back
  if (!fence) return;
  {
    MutexLock lock(&fence_mu_);
    fenced_until_[peer] = std::chrono::steady_clock::now() + kFenceLease;
  }
  // A change of one copy alone that passed the check just before commits meanwhile, and its
  // record is then in the replay (or counted as left, and asked for again).
  std::this_thread::sleep_for(kFenceSettle);
}

}  // namespace orthofs
