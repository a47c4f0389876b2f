// fcntl (POSIX byte-range) and flock (whole-file) locks shared by every client of a namespace.
// A file's locks live in its LOCK object, placed and replicated like its INODE, and change by a
// conditional write of the whole table (optimistic, as the namespace's objects). A client that
// holds locks keeps a lock session object beating; a holder whose session stops beating for a
// lease, as a waiter's own clock measures it, is dead and its locks are taken away
// (SessionWatch). No clock is compared across hosts. Pure logic: client/lock_manager.h does the
// I/O.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/oid.h"
#include "common/status.h"

namespace orthofs {

// Which of the two independent lock families (Linux keeps them apart: a flock never conflicts
// with an fcntl lock).
enum class LockKind : uint8_t { kPosix = 1, kFlock = 2 };
enum class LockMode : uint8_t { kUnlock = 0, kShared = 1, kExclusive = 2 };

// Who holds a lock: a client (its lock session id) and, inside it, the kernel's lock owner (a
// process's open files for fcntl locks, an open file for flock and open-file-description
// locks).
struct LockOwner {
  uint64_t client = 0;
  uint64_t owner = 0;
  friend auto operator<=>(const LockOwner&, const LockOwner&) = default;
};

// A lock reaching this offset covers the file to any end (fcntl's l_len 0).
inline constexpr uint64_t kLockToEnd = UINT64_MAX;

// A held lock, or a request to change one (mode kUnlock removes). Bytes [start, end], end
// included, as the kernel passes them.
struct FileLock {
  LockOwner owner;
  LockKind kind = LockKind::kPosix;
  LockMode mode = LockMode::kExclusive;
  uint64_t start = 0;
  uint64_t end = kLockToEnd;
  uint32_t pid = 0;  // the holder's process on its host, for F_GETLK
  friend bool operator==(const FileLock&, const FileLock&) = default;
};

// One file's lock table.
class FileLocks {
 public:
  // The held lock that keeps `wanted` from being granted (the first by owner and offset), if
  // any: another owner's lock of the same kind over an overlapping range, either exclusive. An
  // unlock never conflicts.
  std::optional<FileLock> Conflict(const FileLock& wanted) const;
  // Sets, converts or removes (kUnlock) `change` for its owner, conflicts already checked.
  // fcntl: the owner's locks over the range are cut back to outside it, and the new lock is
  // merged with the owner's adjoining ones of the same mode (POSIX: locks of one owner never
  // overlap). flock: the owner's one lock is replaced.
  void Apply(const FileLock& change);
  // Removes every lock `owner` holds of `kind`; whether any went.
  bool ReleaseOwner(const LockOwner& owner, LockKind kind);
  // Removes every lock of the client; whether any went.
  bool ReleaseClient(uint64_t client);
  // The clients holding locks here.
  std::set<uint64_t> Clients() const;
  const std::vector<FileLock>& locks() const { return locks_; }
  bool empty() const { return locks_.empty(); }

  friend bool operator==(const FileLocks&, const FileLocks&) = default;

 private:
  friend Result<FileLocks> DecodeFileLocks(std::string_view bytes);
  std::vector<FileLock> locks_;  // sorted by kind, owner, start
};

// A file's table holds at most this many locks (about 84 KiB); more are refused (ENOLCK).
inline constexpr uint32_t kMaxLocksPerFile = 2048;

std::string EncodeFileLocks(const FileLocks& locks);
Result<FileLocks> DecodeFileLocks(std::string_view bytes);

// A client's proof of life while it holds locks: `beats` rises at every beat.
struct LockSession {
  uint64_t client = 0;
  uint64_t beats = 0;
  int64_t last_beat_unix_sec = 0;  // the holder's clock: only fsck's coarse age check reads it
  friend bool operator==(const LockSession&, const LockSession&) = default;
};

std::string EncodeLockSession(const LockSession& session);
Result<LockSession> DecodeLockSession(std::string_view bytes);

// Where the locks live: one place, for the client, fsck and tests.
Oid FileLocksOid(uint32_t fnso, uint64_t fno);
Oid LockSessionOid(uint32_t fnso, uint64_t client);
// The session objects have fno 0 (no file has it: the SUPER object's).
inline bool IsLockSession(const Oid& oid) { return oid.type == ObjectType::kLock && oid.fno == 0; }

// What a waiter has seen of the sessions of other clients that hold locks it wants. A holder
// is dead once its session's beat count has stood still for `lease` by this clock, or once its
// session is gone (a client makes its session before its first lock and removes it only after
// releasing them all).
class SessionWatch {
 public:
  explicit SessionWatch(std::chrono::nanoseconds lease) : lease_(lease) {}
  using Clock = std::chrono::steady_clock;
  // `beats`: the session's count as read now, nullopt if its object is gone.
  bool Dead(uint64_t client, std::optional<uint64_t> beats, Clock::time_point now);
  // A dead client's locks went: start afresh should its id be seen again.
  void Forget(uint64_t client) { seen_.erase(client); }

 private:
  struct Seen {
    uint64_t beats = 0;
    Clock::time_point since;
  };
  std::chrono::nanoseconds lease_;
  std::map<uint64_t, Seen> seen_;
};

}  // namespace orthofs
