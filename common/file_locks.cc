#include "common/file_locks.h"

#include <algorithm>
#include <tuple>

#include "common/byte_reader.h"

namespace orthofs {
namespace {

constexpr uint8_t kFileLocksFormat = 1;
constexpr uint8_t kLockSessionFormat = 1;

bool Overlap(const FileLock& a, const FileLock& b) { return a.start <= b.end && b.start <= a.end; }

// Overlapping or adjacent: one owner's locks of one mode that touch become one.
bool Touch(const FileLock& a, const FileLock& b) {
  return (a.end == kLockToEnd || a.end + 1 >= b.start) &&
         (b.end == kLockToEnd || b.end + 1 >= a.start);
}

bool Before(const FileLock& a, const FileLock& b) {
  return std::tie(a.kind, a.owner, a.start) < std::tie(b.kind, b.owner, b.start);
}

}  // namespace

std::optional<FileLock> FileLocks::Conflict(const FileLock& wanted) const {
  if (wanted.mode == LockMode::kUnlock) return std::nullopt;
  for (const FileLock& held : locks_) {
    if (held.kind != wanted.kind || held.owner == wanted.owner) continue;
    if (held.mode != LockMode::kExclusive && wanted.mode != LockMode::kExclusive) continue;
    if (wanted.kind == LockKind::kFlock || Overlap(held, wanted)) return held;
  }
  return std::nullopt;
}

void FileLocks::Apply(const FileLock& change) {
  std::vector<FileLock> next;
  std::vector<FileLock> owners;  // the owner's locks of this kind, cut back
  for (const FileLock& held : locks_) {
    if (held.kind != change.kind || held.owner != change.owner) {
      next.push_back(held);
    } else if (change.kind == LockKind::kFlock || !Overlap(held, change)) {
      if (change.kind == LockKind::kPosix) owners.push_back(held);
    } else {
      if (held.start < change.start) {
        FileLock left = held;
        left.end = change.start - 1;
        owners.push_back(left);
      }
      if (held.end > change.end) {
        FileLock right = held;
        right.start = change.end + 1;
        owners.push_back(right);
      }
    }
  }
  if (change.mode != LockMode::kUnlock) {
    FileLock added = change;
    if (added.kind == LockKind::kFlock) {
      added.start = 0;
      added.end = kLockToEnd;
    }
    std::erase_if(owners, [&](const FileLock& held) {
      if (held.mode != added.mode || !Touch(held, added)) return false;
      added.start = std::min(added.start, held.start);
      added.end = std::max(added.end, held.end);
      return true;
    });
    owners.push_back(added);
  }
  next.insert(next.end(), owners.begin(), owners.end());
  std::sort(next.begin(), next.end(), Before);
  locks_ = std::move(next);
}

bool FileLocks::ReleaseOwner(const LockOwner& owner, LockKind kind) {
  return std::erase_if(locks_, [&](const FileLock& held) {
           return held.owner == owner && held.kind == kind;
         }) > 0;
}

bool FileLocks::ReleaseClient(uint64_t client) {
  return std::erase_if(locks_, [&](const FileLock& held) { return held.owner.client == client; }) >
         0;
}

std::set<uint64_t> FileLocks::Clients() const {
  std::set<uint64_t> clients;
  for (const FileLock& held : locks_) clients.insert(held.owner.client);
  return clients;
}

std::string EncodeFileLocks(const FileLocks& locks) {
  std::string out;
  out.push_back(static_cast<char>(kFileLocksFormat));
  AppendBigEndian32(&out, static_cast<uint32_t>(locks.locks().size()));
  for (const FileLock& held : locks.locks()) {
    AppendBigEndian64(&out, held.owner.client);
    AppendBigEndian64(&out, held.owner.owner);
    out.push_back(static_cast<char>(held.kind));
    out.push_back(static_cast<char>(held.mode));
    AppendBigEndian64(&out, held.start);
    AppendBigEndian64(&out, held.end);
    AppendBigEndian32(&out, held.pid);
  }
  return out;
}

Result<FileLocks> DecodeFileLocks(std::string_view bytes) {
  ByteReader r(bytes);
  uint8_t format = 0;
  uint32_t count = 0;
  if (!r.U8(&format) || format != kFileLocksFormat || !r.U32(&count) || count > kMaxLocksPerFile) {
    return Status::Corruption("undecodable LOCK object");
  }
  std::vector<FileLock> held(count);
  for (uint32_t i = 0; i < count; ++i) {
    FileLock& lock = held[i];
    uint8_t kind = 0, mode = 0;
    if (!r.U64(&lock.owner.client) || !r.U64(&lock.owner.owner) || !r.U8(&kind) || !r.U8(&mode) ||
        !r.U64(&lock.start) || !r.U64(&lock.end) || !r.U32(&lock.pid)) {
      return Status::Corruption("LOCK object cut short at lock " + std::to_string(i));
    }
    if ((kind != static_cast<uint8_t>(LockKind::kPosix) &&
         kind != static_cast<uint8_t>(LockKind::kFlock)) ||
        (mode != static_cast<uint8_t>(LockMode::kShared) &&
         mode != static_cast<uint8_t>(LockMode::kExclusive)) ||
        lock.start > lock.end) {
      return Status::Corruption("LOCK object holds a malformed lock " + std::to_string(i));
    }
    lock.kind = static_cast<LockKind>(kind);
    lock.mode = static_cast<LockMode>(mode);
  }
  if (!r.done()) return Status::Corruption("LOCK object has trailing bytes");
  // What Apply keeps: one owner's locks apart (and apart by a byte where their modes agree),
  // one flock per owner, and no two owners' locks in conflict.
  std::sort(held.begin(), held.end(), Before);
  FileLocks locks;
  for (size_t i = 0; i < held.size(); ++i) {
    const FileLock& lock = held[i];
    if (i > 0 && held[i - 1].kind == lock.kind && held[i - 1].owner == lock.owner &&
        (lock.kind == LockKind::kFlock ||
         (Touch(held[i - 1], lock) &&
          (held[i - 1].mode == lock.mode || Overlap(held[i - 1], lock))))) {
      return Status::Corruption("LOCK object holds one owner's locks unmerged");
    }
    if (locks.Conflict(lock)) return Status::Corruption("LOCK object holds conflicting locks");
    locks.locks_.push_back(lock);
  }
  return locks;
}

std::string EncodeLockSession(const LockSession& session) {
  std::string out;
  out.push_back(static_cast<char>(kLockSessionFormat));
  AppendBigEndian64(&out, session.client);
  AppendBigEndian64(&out, session.beats);
  AppendBigEndian64(&out, static_cast<uint64_t>(session.last_beat_unix_sec));
  return out;
}

Result<LockSession> DecodeLockSession(std::string_view bytes) {
  ByteReader r(bytes);
  uint8_t format = 0;
  LockSession session;
  uint64_t last = 0;
  if (!r.U8(&format) || format != kLockSessionFormat || !r.U64(&session.client) ||
      !r.U64(&session.beats) || !r.U64(&last) || !r.done()) {
    return Status::Corruption("undecodable lock session object");
  }
  session.last_beat_unix_sec = static_cast<int64_t>(last);
  return session;
}

Oid FileLocksOid(uint32_t fnso, uint64_t fno) { return Oid{fnso, fno, 0, ObjectType::kLock}; }

Oid LockSessionOid(uint32_t fnso, uint64_t client) {
  return Oid{fnso, 0, client, ObjectType::kLock};
}

bool SessionWatch::Dead(uint64_t client, std::optional<uint64_t> beats, Clock::time_point now) {
  if (!beats) return true;
  auto [it, inserted] = seen_.try_emplace(client, Seen{*beats, now});
  if (!inserted && it->second.beats != *beats) it->second = Seen{*beats, now};
  return now - it->second.since >= lease_;
}

}  // namespace orthofs
