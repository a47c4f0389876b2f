#include "client/delayed_calls.h"

#include <utility>

namespace orthofs {

DelayedCalls::DelayedCalls() {
  runner_ = std::thread([this] { Run(); });
}

DelayedCalls::~DelayedCalls() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  runner_.join();
}

void DelayedCalls::After(Clock::duration delay, std::function<void()> call) {
  {
    MutexLock lock(&mu_);
    due_.emplace(Clock::now() + delay, std::move(call));
  }
  changed_.notify_all();
}

size_t DelayedCalls::waiting() const {
  MutexLock lock(&mu_);
  return due_.size();
}

void DelayedCalls::Run() {
  MutexLock lock(&mu_);
  while (!stopping_) {
    if (due_.empty()) {
      changed_.wait(mu_);
      continue;
    }
    const Clock::time_point next = due_.begin()->first;
    if (Clock::now() < next) {
      changed_.wait_until(mu_, next);
      continue;
    }
    std::function<void()> call = std::move(due_.begin()->second);
    due_.erase(due_.begin());
    mu_.unlock();
    call();
    mu_.lock();
  }
}

}  // namespace orthofs
