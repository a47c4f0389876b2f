// DelayedCalls: runs functions after a delay, on one thread of its own: the second requests of
// hedged reads (ClusterClient::ReadManyHedgedAsync). A function must be quick (it sends a call);
// any still waiting when this is destroyed is dropped, not run.
//
// Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <thread>

#include "common/thread_annotations.h"

namespace orthofs {

class DelayedCalls {
 public:
  using Clock = std::chrono::steady_clock;
  DelayedCalls();
  ~DelayedCalls();
  DelayedCalls(const DelayedCalls&) = delete;
  DelayedCalls& operator=(const DelayedCalls&) = delete;

  void After(Clock::duration delay, std::function<void()> call) ORTHOFS_EXCLUDES(mu_);
  size_t waiting() const ORTHOFS_EXCLUDES(mu_);

 private:
  void Run() ORTHOFS_EXCLUDES(mu_);

  mutable Mutex mu_;
  std::condition_variable_any changed_;
  std::multimap<Clock::time_point, std::function<void()>> due_ ORTHOFS_GUARDED_BY(mu_);
  bool stopping_ ORTHOFS_GUARDED_BY(mu_) = false;
  std::thread runner_;
};

}  // namespace orthofs
