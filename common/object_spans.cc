#include "common/object_spans.h"

#include <algorithm>

namespace orthofs {

std::vector<ObjectSpan> SplitIntoObjects(uint64_t offset, uint64_t length, uint64_t object_size) {
  std::vector<ObjectSpan> spans;
  uint64_t done = 0;
  while (done < length) {
    const uint64_t pos = offset + done;
    const uint64_t in_object = pos % object_size;
    const uint64_t n = std::min(length - done, object_size - in_object);
    spans.push_back(ObjectSpan{pos / object_size, in_object, n, done});
    done += n;
  }
  return spans;
}

}  // namespace orthofs
