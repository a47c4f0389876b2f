#include "client/lock_manager.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <random>
#include <vector>

#include "common/boot_clock.h"
#include "rpc/wire.h"

namespace orthofs {
namespace {

uint64_t NewLockClientId() {
  std::random_device random;
  uint64_t id = 0;
  while (id == 0) id = (static_cast<uint64_t>(random()) << 32) | random();
  return id;
}

int64_t UnixSecondsNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Waiters poll: quickly at first (a lock held for a moment), then every 100 ms.
constexpr auto kFirstPoll = std::chrono::milliseconds(2);
constexpr auto kLongestPoll = std::chrono::milliseconds(100);
// A conditional write that lost to another client's change retries at once a few times, then
// with a short random pause (many clients contending for one file).
constexpr int kRetriesBeforePausing = 3;

void PauseAfterConflict(int attempt) {
  if (attempt < kRetriesBeforePausing) return;
  thread_local std::minstd_rand random(std::random_device{}());
  std::this_thread::sleep_for(std::chrono::microseconds(100 + random() % 2000));
}

}  // namespace

LockManager::LockManager(ClusterClient* cluster, uint32_t fnso, LockManagerOptions options,
                         std::function<bool(uint64_t fno)> file_closed)
    : cluster_(cluster),
      fnso_(fnso),
      options_(options),
      client_(NewLockClientId()),
      file_closed_(std::move(file_closed)),
      watch_(options.lease) {}

LockManager::~LockManager() { StopThreads(); }

LockStats LockManager::stats() const {
  return LockStats{granted_.load(), refused_.load(), taken_from_dead_.load(), files_held()};
}

size_t LockManager::files_held() const {
  std::lock_guard lock(mu_);
  return held_.size();
}

Result<LockManager::Table> LockManager::ReadTable(uint64_t fno) {
  Result<wire::ReadResponse> read = cluster_->ReadEitherCopy(FileLocksOid(fnso_, fno));
  if (read.status().Is(StatusCode::kNotFound)) return Table{};
  if (!read.ok()) return read.status();
  Result<FileLocks> locks = DecodeFileLocks(read->data());
  if (!locks.ok()) {
    return Status::Corruption("locks of file " + std::to_string(fno) + ": " +
                              locks.status().message());
  }
  return Table{std::move(*locks), read->meta().version()};
}

Status LockManager::WriteTable(uint64_t fno, const FileLocks& locks, uint64_t expected) {
  const Oid oid = FileLocksOid(fnso_, fno);
  if (locks.empty()) {
    if (expected == 0) return Status::Ok();
    return cluster_->DeleteBothCopies(oid, expected);
  }
  return cluster_->WriteOriginalThenReplica(oid, EncodeFileLocks(locks), expected).status();
}

Result<bool> LockManager::Commit(uint64_t fno, const Table& table, const FileLocks& next,
                                 int attempt) {
  Status written = WriteTable(fno, next, table.version);
  if (written.Is(StatusCode::kVersionMismatch)) {
    PauseAfterConflict(attempt);
    return false;
  }
  if (!written.ok()) return written;
  NoteHeld(fno, next);
  return true;
}

void LockManager::NoteHeld(uint64_t fno, const FileLocks& locks) {
  std::set<std::pair<uint64_t, LockKind>> mine;
  for (const FileLock& held : locks.locks()) {
    if (held.owner.client == client_) mine.emplace(held.owner.owner, held.kind);
  }
  std::lock_guard lock(mu_);
  if (mine.empty()) {
    held_.erase(fno);
  } else {
    held_[fno] = std::move(mine);
  }
}

Result<bool> LockManager::TakeFromDeadHolder(uint64_t fno, const Table& table, uint64_t holder) {
  Result<wire::ReadResponse> session = cluster_->ReadEitherCopy(LockSessionOid(fnso_, holder));
  std::optional<uint64_t> beats;
  if (session.ok()) {
    beats = session->meta().version();  // every beat is a write: a new version
  } else if (!session.status().Is(StatusCode::kNotFound)) {
    return session.status();
  }
  {
    std::lock_guard lock(watch_mu_);
    if (!watch_.Dead(holder, beats, SessionWatch::Clock::now())) return false;
  }
  FileLocks without = table.locks;
  without.ReleaseClient(holder);
  // Read again either way: after this write, or after another client's change that came first.
  Result<bool> committed = Commit(fno, table, without, kRetriesBeforePausing);
  if (!committed.ok()) return committed.status();
  if (*committed) {
    ++taken_from_dead_;
    spdlog::warn("file {}: took the locks of client {:016x} away: its lock session {}", fno, holder,
                 beats ? "stopped beating" : "is gone");
  }
  return true;
}

Result<std::optional<FileLock>> LockManager::Test(uint64_t fno, FileLock wanted) {
  wanted.owner.client = client_;
  std::lock_guard file_lock(FileMutex(fno));  // a take-over's NoteHeld in order with Set's
  for (;;) {
    Result<Table> table = ReadTable(fno);
    if (!table.ok()) return table.status();
    std::optional<FileLock> conflict = table->locks.Conflict(wanted);
    if (!conflict || conflict->owner.client == client_) return conflict;
    Result<bool> taken = TakeFromDeadHolder(fno, *table, conflict->owner.client);
    if (!taken.ok()) return taken.status();
    if (!*taken) return conflict;
  }
}

Result<LockOutcome> LockManager::Set(uint64_t fno, FileLock wanted, bool wait,
                                     const std::function<bool()>& interrupted) {
  wanted.owner.client = client_;
  bool waiting = false;
  struct WaiterCount {
    std::atomic<size_t>* waiters;
    bool* waiting;
    ~WaiterCount() {
      if (*waiting) --*waiters;
    }
  } waiter_count{&waiters_, &waiting};
  auto poll = kFirstPoll;
  for (int attempt = 0;; ++attempt) {
    {
      std::lock_guard file_lock(FileMutex(fno));
      Result<Table> table = ReadTable(fno);
      if (!table.ok()) return table.status();
      std::optional<FileLock> conflict = table->locks.Conflict(wanted);
      if (conflict && conflict->owner.client != client_) {
        Result<bool> taken = TakeFromDeadHolder(fno, *table, conflict->owner.client);
        if (!taken.ok()) return taken.status();
        if (*taken) continue;
      }
      if (conflict && wait && wanted.kind == LockKind::kFlock) {
        // A flock conversion that has to wait gives up the owner's lock first, as Linux does:
        // two holders of a shared flock both asking for it exclusive would wait for each other.
        FileLocks without = table->locks;
        if (without.ReleaseOwner(wanted.owner, LockKind::kFlock)) {
          Result<bool> committed = Commit(fno, *table, without, attempt);
          if (!committed.ok()) return committed.status();
          continue;  // and wait without it
        }
      }
      if (!conflict) {
        FileLocks next = table->locks;
        next.Apply(wanted);
        if (next == table->locks) {
          NoteHeld(fno, next);
          return LockOutcome::kGranted;
        }
        if (next.locks().size() > kMaxLocksPerFile) {
          spdlog::warn("file {}: more than {} locks; this one is refused (ENOLCK)", fno,
                       kMaxLocksPerFile);
          return LockOutcome::kTableFull;
        }
        if (wanted.mode != LockMode::kUnlock) {
          ORTHOFS_RETURN_IF_ERROR(EnsureSession());
          // Noted before the write: one whose answer is lost may have landed, and a release
          // then still finds it here (the next NoteHeld corrects what did not land). A failed
          // release of this owner waiting for a retry no longer applies.
          std::lock_guard lock(mu_);
          held_[fno].emplace(wanted.owner.owner, wanted.kind);
          pending_releases_.erase({fno, {wanted.owner.owner, wanted.kind}});
        }
        Result<bool> committed = Commit(fno, *table, next, attempt);
        if (!committed.ok()) return committed.status();
        if (!*committed) continue;
        if (wanted.mode != LockMode::kUnlock) ++granted_;
        return LockOutcome::kGranted;
      }
    }
    if (!wait) {
      ++refused_;
      return LockOutcome::kConflict;
    }
    if (!waiting) {
      if (waiters_.fetch_add(1) >= options_.max_waiters) {
        --waiters_;
        spdlog::warn("file {}: {} lock waits already; this one is refused (ENOLCK)", fno,
                     options_.max_waiters);
        return LockOutcome::kTooManyWaiters;
      }
      waiting = true;
    }
    if (interrupted && interrupted()) return LockOutcome::kInterrupted;
    std::this_thread::sleep_for(poll);
    poll = std::min<std::chrono::milliseconds>(poll * 2, kLongestPoll);
  }
}

Status LockManager::ChangeTable(uint64_t fno, const std::function<bool(FileLocks*)>& change,
                                const std::function<bool()>& still_wanted) {
  std::lock_guard file_lock(FileMutex(fno));
  for (int attempt = 0;; ++attempt) {
    if (still_wanted && !still_wanted()) return Status::Ok();
    Result<Table> table = ReadTable(fno);
    if (!table.ok()) return table.status();
    FileLocks next = table->locks;
    if (!change(&next)) {
      NoteHeld(fno, next);
      return Status::Ok();
    }
    Result<bool> committed = Commit(fno, *table, next, attempt);
    if (!committed.ok()) return committed.status();
    if (*committed) return Status::Ok();
  }
}

Status LockManager::ReleaseOwner(uint64_t fno, uint64_t owner, LockKind kind) {
  {
    std::lock_guard lock(mu_);
    auto it = held_.find(fno);
    if (it == held_.end() || !it->second.count({owner, kind})) return Status::Ok();
  }
  const LockOwner whose{client_, owner};
  Status released =
      ChangeTable(fno, [&](FileLocks* locks) { return locks->ReleaseOwner(whose, kind); });
  if (!released.ok()) {
    spdlog::warn("file {}: releasing the locks of owner {:x} failed ({}); retried", fno, owner,
                 released.ToString());
    std::lock_guard lock(mu_);
    pending_releases_.insert({fno, {owner, kind}});
  }
  return released;
}

Status LockManager::ReleaseFile(uint64_t fno) {
  {
    std::lock_guard lock(mu_);
    if (!held_.count(fno)) return Status::Ok();
  }
  // A lock taken since through a new open of the file stays (its Set holds the file mutex
  // from its open on: the check below sees that open).
  Status released = ChangeTable(
      fno, [&](FileLocks* locks) { return locks->ReleaseClient(client_); },
      [&] { return !file_closed_ || file_closed_(fno); });
  if (!released.ok()) {
    spdlog::warn("file {}: releasing this client's locks failed ({}); retried", fno,
                 released.ToString());
    std::lock_guard lock(mu_);
    pending_file_releases_.insert(fno);
  }
  return released;
}

void LockManager::ReleaseAll() {
  std::vector<uint64_t> files;
  {
    std::lock_guard lock(mu_);
    for (const auto& [fno, owners] : held_) files.push_back(fno);
    pending_releases_.clear();
    pending_file_releases_.clear();
  }
  bool all_released = true;
  for (uint64_t fno : files) {
    if (Status st = ReleaseFile(fno); !st.ok()) {
      all_released = false;
      spdlog::error("file {}: this client's locks stay until its lease ({} ms) runs out: {}", fno,
                    options_.lease.count(), st.ToString());
    }
  }
  StopThreads();
  std::lock_guard lock(session_mu_);
  if (!session_made_ || !all_released) return;  // a session left behind is collected by fsck
  if (Status st = cluster_->DeleteBothCopies(LockSessionOid(fnso_, client_)); !st.ok()) {
    spdlog::warn("this client's lock session stays for fsck to collect: {}", st.ToString());
  }
  session_made_ = false;
}

Status LockManager::EnsureSession() {
  std::lock_guard lock(session_mu_);
  if (session_made_) return Status::Ok();
  const LockSession session{client_, ++beats_, UnixSecondsNow()};
  Result<wire::ObjectMeta> made = cluster_->WriteOriginalThenReplica(
      LockSessionOid(fnso_, client_), EncodeLockSession(session), std::nullopt);
  if (!made.ok()) return made.status();
  session_made_ = true;
  beat_ = std::jthread([this](std::stop_token stop) { BeatLoop(stop); });
  retrier_ = std::jthread([this](std::stop_token stop) { RetryLoop(stop); });
  spdlog::debug("lock session {:016x} made; it beats every {} ms", client_,
                options_.Beat().count());
  return Status::Ok();
}

void LockManager::BeatLoop(std::stop_token stop) {
  std::mutex sleep_mu;
  std::condition_variable_any sleep;
  auto last_beat = BootClock::now();
  bool lease_lost_reported = false;
  for (;;) {
    {
      std::unique_lock lock(sleep_mu);
      sleep.wait_for(lock, stop, options_.Beat(), [] { return false; });
      if (stop.stop_requested()) return;
    }
    LockSession session;
    {
      std::lock_guard lock(session_mu_);
      session = LockSession{client_, ++beats_, UnixSecondsNow()};
    }
    Result<wire::ObjectMeta> beat = cluster_->WriteOriginalThenReplica(
        LockSessionOid(fnso_, client_), EncodeLockSession(session), std::nullopt);
    const auto now = BootClock::now();
    if (beat.ok()) {
      // A pause this long (a stopped or suspended process, an outage) let waiters elsewhere
      // take this client's locks: programs here that think they hold them no longer do.
      if (now - last_beat >= options_.lease && !lease_lost_reported) {
        spdlog::error(
            "the lock session went {} ms without a beat (lease {} ms): other clients may have "
            "taken this client's locks",
            std::chrono::duration_cast<std::chrono::milliseconds>(now - last_beat).count(),
            options_.lease.count());
      }
      last_beat = now;
      lease_lost_reported = false;
    } else {
      spdlog::warn("lock session beat failed: {}", beat.status().ToString());
      if (now - last_beat >= options_.lease && !lease_lost_reported) {
        spdlog::error(
            "no lock session beat for the lease ({} ms): other clients may take this "
            "client's locks",
            options_.lease.count());
        lease_lost_reported = true;
      }
    }
  }
}

void LockManager::RetryLoop(std::stop_token stop) {
  std::mutex sleep_mu;
  std::condition_variable_any sleep;
  for (;;) {
    {
      std::unique_lock lock(sleep_mu);
      sleep.wait_for(lock, stop, options_.Beat(), [] { return false; });
      if (stop.stop_requested()) return;
    }
    // Releases that failed before, again (not on the beat's thread: one that waits for an OSD
    // must not hold up the beats that keep this client's other locks).
    std::set<std::pair<uint64_t, std::pair<uint64_t, LockKind>>> owners;
    std::set<uint64_t> files;
    {
      std::lock_guard lock(mu_);
      owners.swap(pending_releases_);
      files.swap(pending_file_releases_);
    }
    for (const auto& [fno, owner] : owners) (void)ReleaseOwner(fno, owner.first, owner.second);
    for (uint64_t fno : files) (void)ReleaseFile(fno);
  }
}

void LockManager::StopThreads() {
  std::jthread beat, retrier;
  {
    std::lock_guard lock(session_mu_);
    beat = std::move(beat_);
    retrier = std::move(retrier_);
  }
  // Joined here, with no lock held (the retrier's releases take the file mutexes).
}

}  // namespace orthofs
