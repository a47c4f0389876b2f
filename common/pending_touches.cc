#include "common/pending_touches.h"

#include <algorithm>

namespace orthofs {

bool IsLater(const Timespec& a, const Timespec& b) {
  return a.sec != b.sec ? a.sec > b.sec : a.nsec > b.nsec;
}

void PendingTouches::Note(uint64_t dir, const Timespec& when, Clock::time_point now) {
  auto [it, added] = pending_.try_emplace(dir, Pending{when, now});
  if (!added && IsLater(when, it->second.when)) it->second.when = when;
}

std::optional<Timespec> PendingTouches::Get(uint64_t dir) const {
  auto it = pending_.find(dir);
  if (it == pending_.end()) return std::nullopt;
  return it->second.when;
}

std::optional<Timespec> PendingTouches::Apply(uint64_t dir, Inode* inode) const {
  auto it = pending_.find(dir);
  if (it == pending_.end()) return std::nullopt;
  const Timespec& when = it->second.when;
  if (IsLater(when, inode->mtime)) inode->mtime = when;
  if (IsLater(when, inode->ctime)) inode->ctime = when;
  return when;
}

void PendingTouches::Written(uint64_t dir, const Timespec& applied) {
  auto it = pending_.find(dir);
  if (it != pending_.end() && !IsLater(it->second.when, applied)) pending_.erase(it);
}

void PendingTouches::Forget(uint64_t dir) { pending_.erase(dir); }

void PendingTouches::Retry(uint64_t dir, Clock::time_point now) {
  auto it = pending_.find(dir);
  if (it != pending_.end()) it->second.first = now;
}

std::vector<uint64_t> PendingTouches::Due(Clock::time_point now, Clock::duration delay) const {
  std::vector<uint64_t> due;
  for (const auto& [dir, p] : pending_) {
    if (now - p.first >= delay) due.push_back(dir);
  }
  return due;
}

std::vector<uint64_t> PendingTouches::All() const {
  std::vector<uint64_t> all;
  all.reserve(pending_.size());
  for (const auto& [dir, p] : pending_) all.push_back(dir);
  return all;
}

std::optional<PendingTouches::Clock::time_point> PendingTouches::NextDue(
    Clock::duration delay) const {
  std::optional<Clock::time_point> next;
  for (const auto& [dir, p] : pending_) {
    const Clock::time_point due = p.first + delay;
    if (!next || due < *next) next = due;
  }
  return next;
}

}  // namespace orthofs
