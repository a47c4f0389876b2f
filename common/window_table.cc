#include "common/window_table.h"

#include <algorithm>

namespace orthofs {

WindowTable::WindowTable(const PrefetchConfig& config, std::chrono::milliseconds expiry,
                         bool batch_prefetches)
    : config_(config), expiry_(expiry), batch_(batch_prefetches) {}

std::vector<IndexRange> WindowTable::Batch(Entry& entry, const std::vector<IndexRange>& fresh,
                                           bool now) {
  if (!batch_) return fresh;
  // Pending objects the window left behind are no longer wanted.
  const IndexRange extent = entry.window.Extent();
  std::vector<IndexRange> kept;
  uint64_t count = 0;
  for (IndexRange r : entry.pending) {
    r.begin = std::max(r.begin, extent.begin);
    r.end = std::min(r.end, extent.end);
    if (!r.empty()) kept.push_back(r);
  }
  kept.insert(kept.end(), fresh.begin(), fresh.end());
  std::sort(kept.begin(), kept.end(),
            [](const IndexRange& a, const IndexRange& b) { return a.begin < b.begin; });
  // Merge touching runs: they load with one scan.
  std::vector<IndexRange> merged;
  for (const IndexRange& r : kept) {
    if (!merged.empty() && r.begin <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, r.end);
    } else {
      merged.push_back(r);
    }
  }
  for (const IndexRange& r : merged) count += r.size();
  const uint64_t batch = std::max<uint64_t>(1, entry.window.wing_length() / 2);
  if (now || count >= batch) {
    entry.pending.clear();
    return merged;
  }
  entry.pending = std::move(merged);
  return {};
}

WindowTable::Entry& WindowTable::Get(const WindowKey& key, WindowClock::time_point now) {
  auto [it, created] = windows_.try_emplace(key, Entry{MovingWindow(config_), now, {}});
  it->second.last_used = now;
  return it->second;
}

WindowChange WindowTable::OnClientRead(const WindowKey& key, uint64_t index,
                                       WindowClock::time_point now) {
  Entry& entry = Get(key, now);
  MovingWindow& w = entry.window;
  WindowChange change;
  change.prefetch = Batch(entry, w.MoveTo(index), /*now=*/false);
  change.pivot = w.pivot();
  change.size = w.size();
  return change;
}

WindowChange WindowTable::OnNotify(const WindowKey& key, uint64_t index,
                                   WindowClock::time_point now) {
  Entry& entry = Get(key, now);
  MovingWindow& w = entry.window;
  const uint32_t before = w.size();
  WindowChange change;
  change.prefetch = Batch(entry, w.Widen(index), /*now=*/true);
  change.pivot = w.pivot();
  change.size = w.size();
  change.doubled = w.size() > before;
  return change;
}

void WindowTable::Set(const WindowKey& key, uint64_t pivot, uint32_t size,
                      WindowClock::time_point now) {
  windows_.insert_or_assign(key, Entry{MovingWindow(config_, pivot, size), now, {}});
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
