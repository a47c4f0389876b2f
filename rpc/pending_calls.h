// PendingCalls: waits for a set of asynchronous calls to finish.
#pragma once

#include <condition_variable>
#include <mutex>

#include "common/status.h"

namespace orthofs {

// Waits for a set of asynchronous calls; the first failure is the result.
class PendingCalls {
 public:
  void Add(int n = 1);
  void Done(const Status& status);
  Status Wait();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int pending_ = 0;
  Status first_error_;
};

}  // namespace orthofs
