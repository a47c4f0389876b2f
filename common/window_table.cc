#include "common/window_table.h"

#include <algorithm>
#include <limits>

namespace orthofs {

namespace {

constexpr uint64_t kLastIndex = std::numeric_limits<uint64_t>::max();

}  // namespace

std::vector<IndexRange> NearestObjects(const std::vector<IndexRange>& ranges, uint64_t pivot,
                                       uint64_t quantity) {
  // Only the quantity objects on either side of the pivot can be among the nearest, so each
  // range is clipped to them first: a huge range costs no more than a small one.
  const uint64_t low = pivot > quantity ? pivot - quantity : 0;
  const uint64_t high = pivot < kLastIndex - quantity ? pivot + quantity + 1 : kLastIndex;
  std::vector<uint64_t> objects;
  for (const IndexRange& r : ranges) {
    for (uint64_t i = std::max(r.begin, low); i < std::min(r.end, high); ++i) objects.push_back(i);
  }
  auto distance = [pivot](uint64_t i) { return i >= pivot ? i - pivot : pivot - i; };
  std::stable_sort(objects.begin(), objects.end(), [&](uint64_t a, uint64_t b) {
    if (distance(a) != distance(b)) return distance(a) < distance(b);
    return a > b;  // after the pivot first
  });
  if (objects.size() > quantity) objects.resize(quantity);
  std::sort(objects.begin(), objects.end());
  std::vector<IndexRange> out;
  for (uint64_t i : objects) {
    if (!out.empty() && out.back().end == i) {
      ++out.back().end;
    } else {
      out.push_back({i, i + 1});
    }
  }
  return out;
}

WindowTable::WindowTable(const PrefetchConfig& config, std::chrono::milliseconds expiry,
                         const WindowTableOptions& options)
    : config_(config), expiry_(expiry), options_(options) {}

void WindowTable::Throttle(Entry& entry, WindowChange* change) {
  if (!options_.throttle_unused_windows) return;
  uint64_t count = 0;
  for (const IndexRange& r : change->prefetch) count += r.size();
  if (count <= entry.quantity) return;
  change->throttled = count - entry.quantity;
  change->prefetch = NearestObjects(change->prefetch, change->pivot, entry.quantity);
}

std::vector<IndexRange> WindowTable::Batch(Entry& entry, const std::vector<IndexRange>& fresh,
                                           bool now) {
  if (!options_.batch_prefetches) return fresh;
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
  auto [it, created] =
      windows_.try_emplace(key, Entry{MovingWindow(config_), now, {}, FullQuantity()});
  it->second.last_used = now;
  return it->second;
}

void WindowTable::CountReadInside(Entry& entry) {
  ++entry.reads_since_notify;
  entry.quantity =
      static_cast<uint32_t>(std::min<uint64_t>(uint64_t{entry.quantity} * 2, FullQuantity()));
}

WindowChange WindowTable::OnClientRead(const WindowKey& key, uint64_t index,
                                       WindowClock::time_point now) {
  Entry& entry = Get(key, now);
  MovingWindow& w = entry.window;
  CountReadInside(entry);
  WindowChange change;
  change.prefetch = Batch(entry, w.MoveTo(index), /*now=*/false);
  change.pivot = w.pivot();
  change.size = w.size();
  Throttle(entry, &change);
  return change;
}

WindowChange WindowTable::OnNotify(const WindowKey& key, uint64_t index,
                                   WindowClock::time_point now) {
  Entry& entry = Get(key, now);
  MovingWindow& w = entry.window;
  // A jump far from the window, with no read inside it since the last notify: the last load
  // went unused. Near misses are a sequential reader outrunning a narrow window (several
  // objects requested at once): the window grows and keeps loading.
  const uint64_t distance =
      w.has_pivot() ? (index > w.pivot() ? index - w.pivot() : w.pivot() - index) : 0;
  const bool far = w.has_pivot() && distance > 2 * uint64_t{w.size()} + 1;
  if (entry.notified && entry.reads_since_notify == 0 && far) {
    entry.quantity = std::max<uint32_t>(1, entry.quantity / 2);
  }
  entry.notified = true;
  entry.reads_since_notify = 0;
  const uint32_t before = w.size();
  WindowChange change;
  change.prefetch = Batch(entry, w.Widen(index), /*now=*/true);
  change.pivot = w.pivot();
  change.size = w.size();
  change.doubled = w.size() > before;
  Throttle(entry, &change);
  return change;
}

WindowChange WindowTable::OnClientReadMiss(const WindowKey& key, uint64_t index,
                                           WindowClock::time_point now) {
  Entry& entry = Get(key, now);
  MovingWindow& w = entry.window;
  CountReadInside(entry);
  const uint32_t before = w.size();
  w.Widen(index);
  // The reader overtook the loads, so "new window - old window" is not what is missing: load
  // the whole window ahead of the reader, as one range read.
  entry.pending.clear();
  const IndexRange extent = w.Extent();
  WindowChange change;
  if (index < kLastIndex && index + 1 < extent.end) change.prefetch = {{index + 1, extent.end}};
  change.pivot = w.pivot();
  change.size = w.size();
  change.doubled = w.size() > before;
  Throttle(entry, &change);
  return change;
}

void WindowTable::Set(const WindowKey& key, uint64_t pivot, uint32_t size,
                      WindowClock::time_point now) {
  windows_.insert_or_assign(key,
                            Entry{MovingWindow(config_, pivot, size), now, {}, FullQuantity()});
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
