#include "common/object_version.h"

#include <algorithm>
#include <limits>

namespace orthofs {

uint64_t NextObjectVersion(uint64_t stored, uint64_t floor) {
  // A stored version at the top cannot grow; it stays (no write brings a copy back to 0).
  const uint64_t next = stored == std::numeric_limits<uint64_t>::max() ? stored : stored + 1;
  return std::max(next, floor);
}

uint64_t VersionFloorAt(std::chrono::system_clock::time_point now) {
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count();
  return micros > 0 ? static_cast<uint64_t>(micros) : 0;
}

uint64_t BoundedVersionFloor(uint64_t asked, std::chrono::system_clock::time_point now) {
  return std::min(asked, VersionFloorAt(now + kMaxVersionFloorLead));
}

}  // namespace orthofs
