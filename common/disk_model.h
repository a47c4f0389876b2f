// An emulated disk for experiments (docs/DESIGN.md §9.7): loopback machines with
// SSDs and page caches hide what the paper's prefetching saves, the seeks of a spinning disk.
// A read pays seek and rotational latency unless it continues where the previous read ended
// (the next object of the same file copy, or the same object), then the transfer time of its
// bytes. A range scan of adjacent objects is one read: one positioning, many transfers.
//
// Pure logic: the store sleeps for ReadTime, holding its one "disk head", so reads queue up as
// they would on one spindle.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/oid.h"
#include "common/status.h"

namespace orthofs {

struct DiskModelParams {
  // A 2010 7200 rpm SATA disk (e.g. a 1 TB Seagate Barracuda 7200.12): 8.5 ms average seek,
  // 4.17 ms average rotational latency (half a turn at 7200 rpm), 100 MB/s sustained.
  std::chrono::microseconds seek{8500};
  std::chrono::microseconds rotation{4170};
  double transfer_mb_s = 100.0;  // 1e6 bytes per second
};

// "none" -> nullopt (no emulation), "hdd" -> the defaults above.
Result<std::optional<DiskModelParams>> ParseDiskModel(std::string_view name);

class DiskModel {
 public:
  explicit DiskModel(const DiskModelParams& params) : params_(params) {}

  // The time to read `bytes` stored under the objects first..last (adjacent in store order;
  // first == last for one object). Moves the head to `last`.
  std::chrono::microseconds ReadTime(const Oid& first, const Oid& last, uint64_t bytes);

  uint64_t seeks() const { return seeks_; }
  uint64_t reads() const { return reads_; }

 private:
  bool Continues(const Oid& next) const;

  DiskModelParams params_;
  std::optional<Oid> head_;
  uint64_t seeks_ = 0;
  uint64_t reads_ = 0;
};

}  // namespace orthofs
