// fcntl and flock locks that hold across every client of a namespace, for the mount's getlk,
// setlk and flock (common/file_locks.h says where they live and how a dead holder is found).
// A change reads the file's LOCK object, decides, and writes it back only if no other change
// landed in between (a conditional write, retried on conflict), so two clients never both get
// a conflicting lock. Waiters poll: there is no server to queue them.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include "client/cluster_client.h"
#include "common/file_locks.h"

namespace orthofs {

struct LockManagerOptions {
  // A holder whose session has not beaten for this long, as a waiter measures it, is dead and
  // loses its locks: how long a killed client's locks keep others waiting.
  std::chrono::milliseconds lease{15000};
  // How many F_SETLKW and blocking flock calls may wait at once: each holds one of the
  // mount's FUSE threads while it polls.
  size_t max_waiters = 16;
  // The session's beat: a fifth of the lease, at most a second.
  std::chrono::milliseconds Beat() const {
    return std::min(std::chrono::milliseconds(1000), lease / 5);
  }
};

struct LockStats {
  uint64_t granted = 0;          // locks taken (not unlocks)
  uint64_t refused = 0;          // EAGAIN: held elsewhere, not to wait
  uint64_t taken_from_dead = 0;  // tables rewritten without a dead client's locks
  uint64_t files_held = 0;       // files where this client holds locks now
};

enum class LockOutcome {
  kGranted,
  kConflict,        // held elsewhere and not to wait (EAGAIN / EWOULDBLOCK)
  kInterrupted,     // the waiting caller got a signal (EINTR)
  kTooManyWaiters,  // LockManagerOptions::max_waiters wait already (ENOLCK)
  kTableFull,       // the file has kMaxLocksPerFile locks already (ENOLCK)
};

class LockManager {
 public:
  // `file_closed(fno)`: no descriptor of the file is open on this client (ReleaseFile checks it
  // again under the file's mutex, so a lock taken through a new open is not released).
  LockManager(ClusterClient* cluster, uint32_t fnso, LockManagerOptions options = {},
              std::function<bool(uint64_t fno)> file_closed = {});
  // Stops the session's beat. ReleaseAll first, or the locks stay until their lease runs out.
  ~LockManager();
  LockManager(const LockManager&) = delete;
  LockManager& operator=(const LockManager&) = delete;

  // This client's lock id (LockOwner::client, its session's offset).
  uint64_t client() const { return client_; }

  // F_GETLK: the lock that keeps `wanted` (owner.owner set; owner.client is this client's)
  // from being granted now, after taking dead holders' locks away.
  Result<std::optional<FileLock>> Test(uint64_t fno, FileLock wanted);
  // F_SETLK (wait false), F_SETLKW, flock(2), and their unlocks. `interrupted` is asked
  // between polls while waiting.
  Result<LockOutcome> Set(uint64_t fno, FileLock wanted, bool wait,
                          const std::function<bool()>& interrupted = {});
  // close(2): `owner`'s locks of `kind` on the file go (POSIX drops a process's fcntl locks at
  // any close of the file; the last close of an open file drops its flock). Costs nothing
  // when this client holds none there. A release that fails is retried at every beat.
  Status ReleaseOwner(uint64_t fno, uint64_t owner, LockKind kind);
  // The file's last descriptor on this client closed: no process here can hold a lock on it
  // any more, so whatever this client still holds there goes (open file description locks,
  // which Linux does not pass on at close).
  Status ReleaseFile(uint64_t fno);
  // Unmount: every lock this client holds, then its session.
  void ReleaseAll();

  LockStats stats() const;
  // Files where this client holds locks now.
  size_t files_held() const;

 private:
  struct Table {
    FileLocks locks;
    uint64_t version = 0;  // 0: no LOCK object
  };
  Result<Table> ReadTable(uint64_t fno);
  // Writes `locks` if the object is still at `expected` (an empty table deletes it).
  Status WriteTable(uint64_t fno, const FileLocks& locks, uint64_t expected);
  // `holder` holds a lock in the way: if its session says it is dead, its locks in `table`
  // go (true: the caller reads again, whether this write or another client's landed).
  Result<bool> TakeFromDeadHolder(uint64_t fno, const Table& table, uint64_t holder);
  // Writes `next` in place of `table` (WriteTable) and notes it: true; false when another
  // change landed first (paused after the conflict: read again). A table whose deletion its
  // client died in the middle of reads as absent (ClusterClient::FinishDeletionCutShort).
  Result<bool> Commit(uint64_t fno, const Table& table, const FileLocks& next, int attempt);
  // Read-modify-write with retries: `change` edits the table (false: nothing to change).
  // `still_wanted`, if given, is asked under the file's mutex before each try.
  Status ChangeTable(uint64_t fno, const std::function<bool(FileLocks*)>& change,
                     const std::function<bool()>& still_wanted = {});
  // Notes what this client holds in `fno` after a write of `locks`.
  void NoteHeld(uint64_t fno, const FileLocks& locks);
  std::mutex& FileMutex(uint64_t fno) { return file_mu_[fno % file_mu_.size()]; }
  // Makes the session object (before this client's first lock) and starts its beat.
  Status EnsureSession();
  void BeatLoop(std::stop_token stop);
  // Retries failed releases every beat, on its own thread.
  void RetryLoop(std::stop_token stop);
  // Stops and joins the beat and the retrier.
  void StopThreads();

  ClusterClient* const cluster_;
  const uint32_t fnso_;
  const LockManagerOptions options_;
  const uint64_t client_;
  const std::function<bool(uint64_t)> file_closed_;
  // One change of a file's table at a time here (so what NoteHeld sees comes in order).
  std::array<std::mutex, 64> file_mu_;

  mutable std::mutex mu_;
  // (owner, kind) pairs this client holds, by file.
  std::map<uint64_t, std::set<std::pair<uint64_t, LockKind>>> held_;
  // Releases that failed (an OSD unreachable), retried at every beat: file -> (owner, kind),
  // with owner 0 and no kind meaning all of this client's locks there.
  std::set<std::pair<uint64_t, std::pair<uint64_t, LockKind>>> pending_releases_;
  std::set<uint64_t> pending_file_releases_;

  std::mutex watch_mu_;
  SessionWatch watch_;

  std::mutex session_mu_;
  bool session_made_ = false;
  uint64_t beats_ = 0;
  std::jthread beat_;
  std::jthread retrier_;

  std::atomic<size_t> waiters_{0};
  std::atomic<uint64_t> granted_{0};
  std::atomic<uint64_t> refused_{0};
  std::atomic<uint64_t> taken_from_dead_{0};
};

}  // namespace orthofs
