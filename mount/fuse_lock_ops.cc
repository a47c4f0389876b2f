#include "mount/fuse_lock_ops.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>

#include <optional>

#include "client/lock_manager.h"
#include "mount/fuse_replies.h"
#include "mount/mount_fs.h"

namespace orthofs {
namespace {

// The kernel passes a range as l_start and l_len from SEEK_SET, l_len 0 reaching any end.
FileLock LockFromFlock(const struct flock& lock, uint64_t owner, LockKind kind) {
  FileLock wanted;
  wanted.owner.owner = owner;
  wanted.kind = kind;
  wanted.mode = lock.l_type == F_RDLCK   ? LockMode::kShared
                : lock.l_type == F_WRLCK ? LockMode::kExclusive
                                         : LockMode::kUnlock;
  wanted.start = static_cast<uint64_t>(lock.l_start);
  wanted.end = lock.l_len == 0 ? kLockToEnd : wanted.start + static_cast<uint64_t>(lock.l_len) - 1;
  wanted.pid = static_cast<uint32_t>(lock.l_pid);
  return wanted;
}

bool LockRangeValid(const struct flock& lock) {
  return lock.l_start >= 0 && lock.l_len >= 0 &&
         (lock.l_type == F_RDLCK || lock.l_type == F_WRLCK || lock.l_type == F_UNLCK);
}

void ReplyLockOutcome(fuse_req_t req, const Result<LockOutcome>& outcome, const char* op) {
  if (!outcome.ok()) {
    // The lock tables' failures (an OSD unreachable, a damaged table) are the lock service's:
    // ENOLCK, as NFS answers when its lock manager cannot be reached. A write-back's error
    // before an unlock is the file's.
    if (outcome.status().Is(StatusCode::kStale) || outcome.status().Is(StatusCode::kNoSpace)) {
      return ReplyError(req, outcome.status(), op);
    }
    spdlog::warn("{}: {}", op, outcome.status().ToString());
    return (void)fuse_reply_err(req, ENOLCK);
  }
  switch (*outcome) {
    case LockOutcome::kGranted:
      return (void)fuse_reply_err(req, 0);
    case LockOutcome::kConflict:
      return (void)fuse_reply_err(req, EAGAIN);  // EWOULDBLOCK for flock: the same value
    case LockOutcome::kInterrupted:
      return (void)fuse_reply_err(req, EINTR);
    case LockOutcome::kTooManyWaiters:
    case LockOutcome::kTableFull:
      return (void)fuse_reply_err(req, ENOLCK);
  }
}

// Unlocks write back first (and locks revalidate after, RevalidateUnderLock): lock-to-unlock
// consistency across clients for programs that share a file under locks, as databases do.
Result<LockOutcome> SetLock(fuse_req_t req, fuse_ino_t ino, const FileLock& wanted, bool wait) {
  OrthoFs* fs = Fs(req);
  // Every change writes back first, as NFS does: an unlock or a downgrade lets others read. An
  // unlock still goes ahead when that fails (its error is reported after).
  const Status written_back = fs->files().FlushFile(ino);
  if (!written_back.ok() && wanted.mode != LockMode::kUnlock) return written_back;
  // A wait ends at a signal, and at unmount (else the session's threads never all return).
  Result<LockOutcome> outcome = fs->locks().Set(
      ino, wanted, wait, [req, fs] { return fuse_req_interrupted(req) != 0 || fs->Exiting(); });
  if (!written_back.ok() && outcome.ok()) return written_back;
  if (outcome.ok() && *outcome == LockOutcome::kGranted && wanted.mode != LockMode::kUnlock) {
    if (Status st = fs->files().RevalidateUnderLock(ino); !st.ok()) {
      spdlog::warn("file {}: locked, but its cached bytes could not be checked: {}", ino,
                   st.ToString());
    }
  }
  return outcome;
}

}  // namespace

void OpGetlk(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi, struct flock* lock) {
  if (!LockRangeValid(*lock)) return (void)fuse_reply_err(req, EINVAL);
  Result<std::optional<FileLock>> conflict =
      Fs(req)->locks().Test(ino, LockFromFlock(*lock, fi->lock_owner, LockKind::kPosix));
  if (!conflict.ok()) return ReplyError(req, conflict.status(), "getlk");
  struct flock answer = *lock;
  if (!*conflict) {
    answer.l_type = F_UNLCK;
  } else {
    const FileLock& held = **conflict;
    answer.l_type = held.mode == LockMode::kShared ? F_RDLCK : F_WRLCK;
    answer.l_whence = SEEK_SET;
    answer.l_start = static_cast<off_t>(held.start);
    answer.l_len = held.end == kLockToEnd ? 0 : static_cast<off_t>(held.end - held.start + 1);
    // A process of another client is on another host: its pid means nothing here (Linux would
    // even map it to whichever local process has that number).
    answer.l_pid =
        held.owner.client == Fs(req)->locks().client() ? static_cast<pid_t>(held.pid) : 0;
  }
  fuse_reply_lock(req, &answer);
}

void OpSetlk(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi, struct flock* lock, int sleep) {
  if (!LockRangeValid(*lock)) return (void)fuse_reply_err(req, EINVAL);
  ReplyLockOutcome(
      req, SetLock(req, ino, LockFromFlock(*lock, fi->lock_owner, LockKind::kPosix), sleep != 0),
      "setlk");
}

void OpFlock(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi, int op) {
  FileLock wanted;
  wanted.owner.owner = fi->lock_owner;
  wanted.kind = LockKind::kFlock;
  switch (op & (LOCK_SH | LOCK_EX | LOCK_UN)) {
    case LOCK_SH:
      wanted.mode = LockMode::kShared;
      break;
    case LOCK_EX:
      wanted.mode = LockMode::kExclusive;
      break;
    case LOCK_UN:
      wanted.mode = LockMode::kUnlock;
      break;
    default:
      return (void)fuse_reply_err(req, EINVAL);
  }
  wanted.pid = static_cast<uint32_t>(fuse_req_ctx(req)->pid);
  ReplyLockOutcome(req, SetLock(req, ino, wanted, (op & LOCK_NB) == 0), "flock");
}

}  // namespace orthofs
