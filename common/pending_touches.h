// PendingTouches: directory times that entry removals changed, not yet written to the
// directory's INODE. An unlink must set its directory's mtime and ctime; writing them at once
// costs a conditional write on both INODE copies per unlink, and `rm -rf` removes entries one
// after another from the same directory. Kept here instead, they go in one INODE update per
// directory a moment later (Namespace's deferred directory times), and meanwhile every read of
// that INODE by this client shows them (Apply).
//
// Pure logic; not thread-safe (its owner locks).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "common/inode.h"

namespace orthofs {

// a after b.
bool IsLater(const Timespec& a, const Timespec& b);

class PendingTouches {
 public:
  using Clock = std::chrono::steady_clock;

  // An entry of `dir` removed at `when` (wall clock: the new mtime and ctime), noted at `now`.
  void Note(uint64_t dir, const Timespec& when, Clock::time_point now);
  std::optional<Timespec> Get(uint64_t dir) const;
  // Raises `inode`'s mtime and ctime to the time pending for `dir`, if any is later; returns
  // the time applied (nullopt: none pending).
  std::optional<Timespec> Apply(uint64_t dir, Inode* inode) const;
  // A write of `dir`'s INODE carried `applied` (Apply's answer): done, unless a later removal
  // was noted since.
  void Written(uint64_t dir, const Timespec& applied);
  // The directory is gone, or its times were set explicitly (utimes): nothing to write.
  void Forget(uint64_t dir);
  // A write of the times failed (the INODE's OSDs unreachable): due again `delay` after `now`.
  void Retry(uint64_t dir, Clock::time_point now);
  // Directories whose first note since their last write is at least `delay` old.
  std::vector<uint64_t> Due(Clock::time_point now, Clock::duration delay) const;
  std::vector<uint64_t> All() const;
  // When the next directory falls due, if any is pending.
  std::optional<Clock::time_point> NextDue(Clock::duration delay) const;
  bool empty() const { return pending_.empty(); }
  size_t size() const { return pending_.size(); }

 private:
  struct Pending {
    Timespec when;            // the latest removal's time
    Clock::time_point first;  // when the first removal since the last write was noted
  };
  std::map<uint64_t, Pending> pending_;
};

}  // namespace orthofs
