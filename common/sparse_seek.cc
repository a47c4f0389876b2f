#include "common/sparse_seek.h"

#include <algorithm>
#include <iterator>

namespace orthofs {

std::optional<uint64_t> SeekInObjects(const std::set<uint64_t>& stored, uint64_t object_size,
                                      uint64_t size, uint64_t offset, SeekTarget target) {
  if (object_size == 0 || offset >= size) return std::nullopt;
  const uint64_t first = offset / object_size;
  auto it = stored.lower_bound(first);
  if (target == SeekTarget::kData) {
    if (it == stored.end()) return std::nullopt;
    // *it < size / object_size + 1 whenever the multiplication matters: checked before it.
    if (*it > (size - 1) / object_size) return std::nullopt;  // only objects past the end
    return std::max(offset, *it * object_size);
  }
  // The first index at or after `first` that is not stored.
  uint64_t hole = first;
  for (; it != stored.end() && *it == hole; ++it) ++hole;
  if (hole > (size - 1) / object_size) return size;  // data to the end: the end is the hole
  return std::max(offset, hole * object_size);
}

bool SeekDecided(const std::set<uint64_t>& stored, uint64_t first, SeekTarget target) {
  auto it = stored.lower_bound(first);
  if (it == stored.end()) return false;
  if (target == SeekTarget::kData) return true;
  // No gap while the indexes from `first` to the largest are all there. (Counted from the
  // front, which holds no index below `first` when listed from there: called per index read,
  // this must not walk them all.)
  const uint64_t listed = stored.size() - static_cast<uint64_t>(std::distance(stored.begin(), it));
  return *stored.rbegin() - first + 1 != listed;
}

}  // namespace orthofs
