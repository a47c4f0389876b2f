// An OSD's free-space guard: writes are refused (NO_SPACE) once the disk's free space would
// fall under a reserve, so the store itself never meets ENOSPC. RocksDB needs room beyond the
// bytes written (the WAL and memtable flushes hold data twice, compactions rewrite files), and a
// RocksDB that hit ENOSPC refuses everything, deletes included, until it is resumed.
//
// Probing free space (statvfs) per write would cost a syscall on the data path; the guard asks
// for a probe when its figure is older than the interval or when the writes admitted since the
// last probe used up half of the margin above the reserve or kMaxAdmittedUnprobed, whichever
// comes first. (Half the margin alone let a disk that something else filled meanwhile take
// up to half its old margin past the reserve before the next probe.) Pure logic: the caller
// probes.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace orthofs {

class SpaceReserve {
 public:
  using Clock = std::chrono::steady_clock;
  // At most this much is admitted on one probe's figure: statvfs costs about a microsecond,
  // 8 MiB of writes much more.
  static constexpr uint64_t kMaxAdmittedUnprobed = 8 << 20;

  SpaceReserve(uint64_t reserve_bytes, Clock::duration probe_interval);

  // The caller should call Probed() (statvfs) before asking Admits().
  bool NeedsProbe(Clock::time_point now) const;
  void Probed(uint64_t available_bytes, Clock::time_point now);
  // What a write is for. Metadata (names, inodes: small) may use half the reserve, so that a
  // full OSD still lets users delete, rename and truncate their way out.
  enum class Use { kData, kMetadata };
  // Whether `bytes` more fit above the reserve by the current estimate; counts them if so.
  bool Admits(uint64_t bytes, Use use = Use::kData);

  // Free bytes by the last probe minus what was admitted since.
  uint64_t estimated_available() const;
  uint64_t reserve_bytes() const { return reserve_bytes_; }

 private:
  uint64_t reserve_bytes_;
  Clock::duration probe_interval_;
  std::optional<Clock::time_point> probed_at_;
  uint64_t available_at_probe_ = 0;
  uint64_t admitted_since_probe_ = 0;
};

}  // namespace orthofs
