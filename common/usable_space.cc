#include "common/usable_space.h"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

namespace orthofs {

namespace {

struct FileSystem {
  double weight = 0;
  uint64_t capacity = 0;
  uint64_t available = std::numeric_limits<uint64_t>::max();
  uint64_t reserves = 0;
  uint32_t osd = 0;
};

uint64_t Scaled(uint64_t bytes, double fraction) {
  const double scaled = static_cast<double>(bytes) * fraction;
  if (scaled >= static_cast<double>(std::numeric_limits<uint64_t>::max())) {
    return std::numeric_limits<uint64_t>::max();
  }
  return static_cast<uint64_t>(scaled);
}

}  // namespace

UsableSpace ComputeUsableSpace(const std::vector<OsdSpace>& osds, int copies) {
  double total_weight = 0;
  for (const OsdSpace& osd : osds) total_weight += std::max(osd.weight, 0.0);
  if (total_weight <= 0 || copies <= 0) return {};
  std::map<std::tuple<std::string, uint64_t, uint32_t>, FileSystem> file_systems;
  for (const OsdSpace& osd : osds) {
    // An unknown file system is the OSD's own.
    const auto key = osd.filesystem_id == 0 ? std::make_tuple(osd.host, uint64_t{0}, osd.osd_id)
                                            : std::make_tuple(osd.host, osd.filesystem_id, 0u);
    FileSystem& fs = file_systems[key];
    if (fs.weight == 0) fs.osd = osd.osd_id;
    fs.weight += std::max(osd.weight, 0.0);
    // Each OSD of one file system reports it whole; the least free one is the latest.
    fs.capacity = std::max(fs.capacity, osd.capacity_bytes);
    fs.available = std::min(fs.available, osd.available_bytes);
    fs.reserves += osd.reserve_bytes;
  }
  UsableSpace usable;
  usable.capacity_bytes = std::numeric_limits<uint64_t>::max();
  usable.available_bytes = std::numeric_limits<uint64_t>::max();
  for (const auto& [key, fs] : file_systems) {
    if (fs.weight <= 0) continue;
    // Writing X bytes of files stores copies x X x share here.
    const double per_byte = static_cast<double>(copies) * fs.weight / total_weight;
    const uint64_t room = fs.available > fs.reserves ? fs.available - fs.reserves : 0;
    const uint64_t held = fs.capacity > fs.reserves ? fs.capacity - fs.reserves : 0;
    const uint64_t can_write = Scaled(room, 1 / per_byte);
    if (can_write < usable.available_bytes) {
      usable.available_bytes = can_write;
      usable.bounding_osd = fs.osd;
    }
    usable.capacity_bytes = std::min(usable.capacity_bytes, Scaled(held, 1 / per_byte));
  }
  if (usable.capacity_bytes == std::numeric_limits<uint64_t>::max()) return {};
  return usable;
}

}  // namespace orthofs
