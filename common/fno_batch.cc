#include "common/fno_batch.h"

#include <limits>
#include <string>

namespace orthofs {

Result<FnoBatch> NextFnoBatch(uint64_t next_fno, std::optional<uint64_t> random) {
  constexpr uint64_t kTop = std::numeric_limits<uint64_t>::max();
  if (next_fno > kTop - kFnoBatch) {
    return Status::NoSpace("the namespace's file numbers are used up (the counter is at " +
                           std::to_string(next_fno) + ")");
  }
  uint64_t first = next_fno;
  if (random) {
    const uint64_t jump = (1 + *random % kMaxFnoJumpBatches) * kFnoBatch;
    if (next_fno <= kTop - kFnoBatch - jump) first = next_fno + jump;
  }
  return FnoBatch{first, first + kFnoBatch};
}

}  // namespace orthofs
