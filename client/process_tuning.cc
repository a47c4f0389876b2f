#include "client/process_tuning.h"

#include <absl/synchronization/mutex.h>
#include <malloc.h>

namespace orthofs {

void TuneProcessForDataPath() {
  // Buffers up to 64 MiB come from the heap and are reused instead of mmap'ed per request.
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}

}  // namespace orthofs
