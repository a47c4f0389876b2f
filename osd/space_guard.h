// The OSD's free-space guard on its data dir (common/space_reserve.h): probes the file system
// as needed, refuses writes (NO_SPACE) that would eat into the reserve, logs each full episode
// once, and gives space back after deletes on a full OSD.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "common/space_reserve.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "osd/object_store.h"

namespace orthofs {

// Thread-safe: the reserve's figures and the episode flag share one mutex.
class SpaceGuard {
 public:
  // `reserve_bytes` 0 or an empty `data_dir` turns the guard off. `refused` counts refusals.
  SpaceGuard(uint32_t osd_id, std::string data_dir, uint64_t reserve_bytes, ObjectStore* store,
             std::atomic<uint64_t>* refused);

  // NO_SPACE when `bytes` more would eat into the disk's reserve (probing statvfs as needed).
  // Metadata may wait up to 2 s for room that a memtable flush holds for a moment.
  Status CheckSpaceFor(uint64_t bytes, SpaceReserve::Use use) ORTHOFS_EXCLUDES(mu_);
  // After a delete on a full OSD: compact so that the deleted bytes' space comes back.
  void ReclaimSpaceIfFull() ORTHOFS_EXCLUDES(mu_);

 private:
  // The refusal of CheckSpaceFor, logged once per full episode.
  Status Refuse() ORTHOFS_REQUIRES(mu_);

  const uint32_t osd_id_;
  const std::string data_dir_;
  const uint64_t reserve_bytes_;
  ObjectStore* const store_;
  std::atomic<uint64_t>* const refused_;
  Mutex mu_;
  SpaceReserve space_ ORTHOFS_GUARDED_BY(mu_);
  bool full_ ORTHOFS_GUARDED_BY(mu_) = false;  // refusing writes now (logged once per episode)
};

}  // namespace orthofs
