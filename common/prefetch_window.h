// Prefetch windows over a file's objects (docs/DESIGN.md §8.1; [Sui 2010] §3.2).
//
// COR: the replica OSD of a file keeps one MovingWindow per (client, file); the client keeps a
// copy. A window is a pivot object and a window_size. The wing policy covers the objects within
// wing_length = window_size / 2 of the pivot on both sides; the forward policy covers the
// window_size objects after the pivot. A client read inside the window (served by the replica
// OSD) moves the pivot; a read outside it (served by the original OSD, which notifies the
// replica OSD) doubles window_size up to the maximum and moves the pivot. Either way only the
// objects in the new window and not in the old one are prefetched.
//
// SPA: the Linux on-demand read-ahead (mm/readahead.c) with an asynchronous marker, spread
// over the OSDs: a demand miss starts an initial window after the object; the first object of
// each prefetched window carries a marker, and a demand read that hits a marked object
// prefetches the next window, twice as large (up to the maximum).
//
// Pure logic, no locking.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace orthofs {

enum class PrefetchMode { kNone, kSpa, kCor };
enum class WindowPolicy { kWing, kForward };

std::string_view PrefetchModeName(PrefetchMode mode);    // "none", "spa", "cor"
std::string_view WindowPolicyName(WindowPolicy policy);  // "wing", "forward"
Result<PrefetchMode> ParsePrefetchMode(std::string_view text);
Result<WindowPolicy> ParseWindowPolicy(std::string_view text);

// The cluster-wide prefetch configuration (it lives in the cluster map).
struct PrefetchConfig {
  PrefetchMode mode = PrefetchMode::kNone;
  WindowPolicy policy = WindowPolicy::kWing;
  uint32_t initial_window = 1;  // objects
  uint32_t max_window = 40;     // objects
  bool fixed_window = false;    // window_size stays at initial_window (window-size experiment)

  bool operator==(const PrefetchConfig&) const = default;
};

// Limits every configuration must meet; kInvalidArgument naming the field otherwise.
Status ValidatePrefetchConfig(const PrefetchConfig& config);

// A daemon or client started with --prefetch MODE runs only on a map that says the same mode
// (the whole cluster prefetches one way). An empty `expected` accepts any map.
Status CheckExpectedPrefetchMode(const PrefetchConfig& map_config, std::string_view expected);

// Object indices [begin, end).
struct IndexRange {
  uint64_t begin = 0;
  uint64_t end = 0;
  bool empty() const { return begin >= end; }
  uint64_t size() const { return empty() ? 0 : end - begin; }
  bool Contains(uint64_t index) const { return begin <= index && index < end; }
  bool operator==(const IndexRange&) const = default;
};

// The objects of `next` that are not in `previous`: at most two ranges, ascending.
std::vector<IndexRange> RangeDifference(const IndexRange& next, const IndexRange& previous);

class MovingWindow {
 public:
  explicit MovingWindow(const PrefetchConfig& config);
  // A window as the replica OSD announced it (the client's copy).
  MovingWindow(const PrefetchConfig& config, uint64_t pivot, uint32_t size);

  bool has_pivot() const { return has_pivot_; }
  uint64_t pivot() const { return pivot_; }
  uint32_t size() const { return size_; }
  uint32_t wing_length() const { return size_ / 2; }

  // The objects the window covers; empty before the first pivot.
  IndexRange Extent() const;
  // The client's question: is this object inside the window (read the replica)?
  bool Covers(uint64_t index) const { return Extent().Contains(index); }

  // An in-window client read (replica OSD, and the client on the reply): the object becomes
  // the pivot, the size stays. Returns the objects to prefetch.
  std::vector<IndexRange> MoveTo(uint64_t index);
  // A notify from an original OSD (the read missed the window): the size doubles (up to the
  // maximum; not in fixed mode), then the object becomes the pivot. Returns the objects to
  // prefetch.
  std::vector<IndexRange> Widen(uint64_t index);

 private:
  std::vector<IndexRange> Reposition(uint64_t index, uint32_t size);

  PrefetchConfig config_;
  bool has_pivot_ = false;
  uint64_t pivot_ = 0;
  uint32_t size_;
};

// SPA. What a prefetched object remembers when it carries the read-ahead marker.
struct ReadaheadMarker {
  uint64_t window_start = 0;  // the window the marker opens (its first object is the marker)
  uint32_t window_size = 0;
  bool operator==(const ReadaheadMarker&) const = default;
};

// The next read-ahead window, with its marker (on window.begin).
struct Readahead {
  IndexRange window;
  ReadaheadMarker marker;
};

// A demand read of object `index`. `hit_marker` is the marker the object carried if it was
// prefetched with one (the marker is consumed). Returns the window to prefetch, if any: after a
// demand miss an initial window right after the object; after a marker hit the window following
// the marked one, twice its size (capped; fixed mode keeps the size); otherwise none.
std::optional<Readahead> SpaOnDemandRead(const PrefetchConfig& config, uint64_t index,
                                         bool was_cached,
                                         const std::optional<ReadaheadMarker>& hit_marker);

}  // namespace orthofs
