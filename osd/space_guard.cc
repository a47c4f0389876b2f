#include "osd/space_guard.h"

#include <spdlog/spdlog.h>
#include <sys/statvfs.h>

#include <chrono>
#include <thread>

namespace orthofs {

SpaceGuard::SpaceGuard(uint32_t osd_id, std::string data_dir, uint64_t reserve_bytes,
                       ObjectStore* store, std::atomic<uint64_t>* refused)
    : osd_id_(osd_id),
      data_dir_(std::move(data_dir)),
      reserve_bytes_(reserve_bytes),
      store_(store),
      refused_(refused),
      space_(reserve_bytes, std::chrono::seconds(1)) {}

void SpaceGuard::ReclaimSpaceIfFull() {
  MutexLock lock(&mu_);
  if (full_) store_->RequestCompaction();
}

Status SpaceGuard::CheckSpaceFor(uint64_t bytes, SpaceReserve::Use use) {
  if (reserve_bytes_ == 0 || data_dir_.empty()) return Status::Ok();
  // A memtable flush holds its data twice (WAL and the new table) until it ends: on a nearly
  // full disk free space dips for a moment. Metadata (an rm, a rename) waits that out rather
  // than fail; data is refused at once.
  const auto give_up = SpaceReserve::Clock::now() + std::chrono::seconds(2);
  for (bool fresh = false;; fresh = true) {
    {
      MutexLock lock(&mu_);
      const auto now = SpaceReserve::Clock::now();
      if (fresh || space_.NeedsProbe(now)) {
        struct statvfs fs {};
        if (statvfs(data_dir_.c_str(), &fs) != 0) return Status::Ok();  // cannot tell: let RocksDB
        space_.Probed(static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize, now);
      }
      if (space_.Admits(bytes, use)) {
        if (full_) {
          full_ = false;
          spdlog::info("OSD {} takes writes again: {} MiB free", osd_id_,
                       space_.estimated_available() >> 20);
        }
        return Status::Ok();
      }
      if (use != SpaceReserve::Use::kMetadata || now >= give_up) return Refuse();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

Status SpaceGuard::Refuse() {
  const std::string message =
      "OSD " + std::to_string(osd_id_) +
      " is full: " + std::to_string(space_.estimated_available() >> 20) + " MiB free on " +
      data_dir_ + ", " + std::to_string(reserve_bytes_ >> 20) +
      " MiB kept in reserve for its store (--reserve-mb); free space or add OSDs";
  ++*refused_;
  if (!full_) spdlog::warn("{}", message);
  full_ = true;
  return Status::NoSpace(message);
}

}  // namespace orthofs
