// What each segment of an OSD's data log (osd/data_log.h) holds: its size and how much of it is
// still referenced by the store (live), so that garbage collection picks the segments where
// moving the few live records frees the most room. Pure bookkeeping; the store keeps it exact.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

namespace orthofs {

class SegmentUsage {
 public:
  // The segment's file grew by `bytes` (an append, or the size found at open).
  void Grew(uint64_t segment, uint64_t bytes);
  // Records in the segment became referenced (delta > 0) or were replaced or deleted.
  void AddLive(uint64_t segment, int64_t delta);
  // An append whose record is not yet in the index: its segment must not be collected, or the
  // index would point into a deleted file.
  void Pin(uint64_t segment);
  void Unpin(uint64_t segment);
  // The segment's file is gone.
  void Forget(uint64_t segment);

  // Segments worth collecting, fewest live bytes first: not `active` (still appended to), not
  // pinned, at least `min_garbage_fraction` of the file garbage (and some garbage at all), and
  // together no more than `max_live_bytes` to move (the room collection may use).
  std::vector<uint64_t> Victims(uint64_t active, double min_garbage_fraction,
                                uint64_t max_live_bytes) const;

  uint64_t size(uint64_t segment) const;
  int64_t live(uint64_t segment) const;
  bool pinned(uint64_t segment) const;
  uint64_t total_bytes() const;
  // Bytes of all segments not referenced (overwritten, deleted, or appended by a failed write).
  uint64_t garbage_bytes() const;
  std::vector<uint64_t> segments() const;

 private:
  struct Segment {
    uint64_t size = 0;
    int64_t live = 0;
    int pins = 0;
  };
  std::map<uint64_t, Segment> segments_;
};

}  // namespace orthofs
