// The COR windows one party keeps ([Sui 2010] §3.2): on a replica OSD one MovingWindow per
// (client, file), on a client one per file (client_id empty). Windows idle for longer than the
// expiry are dropped, so a table never grows with every file ever read.
//
// Batched prefetching (the replica OSD's choice): a sequential reader moves the pivot one
// object at a time, so the protocol's "new window - old window" is one object per read, and
// loading each alone costs a disk positioning per object. With batching, the objects an
// in-window read adds wait until they make up half a wing (the reader still has at least half
// a wing of loaded objects ahead), then go as one range scan. Notifies load at once: the
// reader is outside the window and waiting.
//
// Throttling unused windows (the replica OSD's thrashing control, after [Wu 1993]'s lowering of
// the prefetch quantity): a notify far from the window (more than twice its size from the
// pivot) that follows a notify with no read inside the window in between means the last load
// went unused (a random reader). Such a window keeps its protocol
// state (it still doubles), but the objects it may load per change halve each time, down to
// one, the ones nearest the pivot first; every read inside the window doubles the quantity
// again, up to a whole window's extent.
//
// Pure logic, no locking.
#pragma once

#include <chrono>
#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/prefetch_window.h"

namespace orthofs {

using WindowClock = std::chrono::steady_clock;

struct WindowKey {
  std::string client_id;
  uint32_t fnso = 0;
  uint64_t fno = 0;
  auto operator<=>(const WindowKey&) const = default;
};

// What a window change asks for: the objects to prefetch and the window afterwards.
struct WindowChange {
  std::vector<IndexRange> prefetch;
  uint64_t pivot = 0;
  uint32_t size = 0;
  bool doubled = false;    // the size grew (a notify)
  uint64_t throttled = 0;  // objects left out by throttling
};

struct WindowTableOptions {
  bool batch_prefetches = false;
  bool throttle_unused_windows = false;
};

// The `quantity` objects of `ranges` nearest to `pivot` (ties: after the pivot first), as
// ascending ranges.
std::vector<IndexRange> NearestObjects(const std::vector<IndexRange>& ranges, uint64_t pivot,
                                       uint64_t quantity);

class WindowTable {
 public:
  WindowTable(const PrefetchConfig& config, std::chrono::milliseconds expiry,
              const WindowTableOptions& options = {});

  // A client read of `index` inside the window (replica OSD; client on the reply).
  WindowChange OnClientRead(const WindowKey& key, uint64_t index, WindowClock::time_point now);
  // A client read inside the window that the replica OSD had not loaded yet: the window is too
  // narrow to stay ahead of the reader, as after a notify. It doubles around the object, and
  // the whole window ahead of the object loads at once (replica OSD).
  WindowChange OnClientReadMiss(const WindowKey& key, uint64_t index, WindowClock::time_point now);
  // A notify: the read of `index` missed the window (replica OSD).
  WindowChange OnNotify(const WindowKey& key, uint64_t index, WindowClock::time_point now);
  // The window as the replica OSD announced it (client).
  void Set(const WindowKey& key, uint64_t pivot, uint32_t size, WindowClock::time_point now);
  // Whether the object is inside the key's window (client: read the replica?).
  bool Covers(const WindowKey& key, uint64_t index) const;
  std::optional<MovingWindow> Find(const WindowKey& key) const;
  // Drops every window of the file (all clients).
  void EraseFile(uint32_t fnso, uint64_t fno);
  // Drops windows idle since before now - expiry; returns how many.
  size_t Expire(WindowClock::time_point now);

  size_t size() const { return windows_.size(); }

 private:
  struct Entry {
    MovingWindow window;
    WindowClock::time_point last_used;
    std::vector<IndexRange> pending;  // batching: objects of the window not yet loaded
    uint32_t quantity;                // throttling: objects one change may load
    bool notified = false;
    uint64_t reads_since_notify = 0;
  };
  // The most objects a window's extent holds (a wing window of even size s covers s + 1).
  uint32_t FullQuantity() const { return config_.max_window + 1; }
  // Throttling: a read inside the window; its loads are used, so the quantity doubles.
  void CountReadInside(Entry& entry);
  // Throttling: caps the change's objects at the window's quantity.
  void Throttle(Entry& entry, WindowChange* change);
  // Batching: adds `fresh` to the pending objects and returns what is due now.
  std::vector<IndexRange> Batch(Entry& entry, const std::vector<IndexRange>& fresh, bool now);
  Entry& Get(const WindowKey& key, WindowClock::time_point now);

  PrefetchConfig config_;
  std::chrono::milliseconds expiry_;
  WindowTableOptions options_;
  std::map<WindowKey, Entry> windows_;
};

}  // namespace orthofs
