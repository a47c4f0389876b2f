#include "common/window_table.h"

namespace orthofs {

WindowTable::WindowTable(const PrefetchConfig& config, std::chrono::milliseconds expiry)
    : config_(config), expiry_(expiry) {}

WindowTable::Entry& WindowTable::Get(const WindowKey& key, WindowClock::time_point now) {
  auto [it, created] = windows_.try_emplace(key, Entry{MovingWindow(config_), now});
  it->second.last_used = now;
  return it->second;
}

WindowChange WindowTable::OnClientRead(const WindowKey& key, uint64_t index,
                                       WindowClock::time_point now) {
  MovingWindow& w = Get(key, now).window;
  WindowChange change;
  change.prefetch = w.MoveTo(index);
  change.pivot = w.pivot();
  change.size = w.size();
  return change;
}

WindowChange WindowTable::OnNotify(const WindowKey& key, uint64_t index,
                                   WindowClock::time_point now) {
  MovingWindow& w = Get(key, now).window;
  const uint32_t before = w.size();
  WindowChange change;
  change.prefetch = w.Widen(index);
  change.pivot = w.pivot();
  change.size = w.size();
  change.doubled = w.size() > before;
  return change;
}

void WindowTable::Set(const WindowKey& key, uint64_t pivot, uint32_t size,
                      WindowClock::time_point now) {
  windows_.insert_or_assign(key, Entry{MovingWindow(config_, pivot, size), now});
}

bool WindowTable::Covers(const WindowKey& key, uint64_t index) const {
  auto it = windows_.find(key);
  return it != windows_.end() && it->second.window.Covers(index);
}

std::optional<MovingWindow> WindowTable::Find(const WindowKey& key) const {
  auto it = windows_.find(key);
  if (it == windows_.end()) return std::nullopt;
  return it->second.window;
}

void WindowTable::EraseFile(uint32_t fnso, uint64_t fno) {
  for (auto it = windows_.begin(); it != windows_.end();) {
    if (it->first.fnso == fnso && it->first.fno == fno) {
      it = windows_.erase(it);
    } else {
      ++it;
    }
  }
}

size_t WindowTable::Expire(WindowClock::time_point now) {
  size_t dropped = 0;
  for (auto it = windows_.begin(); it != windows_.end();) {
    if (now - it->second.last_used > expiry_) {
      it = windows_.erase(it);
      ++dropped;
    } else {
      ++it;
    }
  }
  return dropped;
}

}  // namespace orthofs
