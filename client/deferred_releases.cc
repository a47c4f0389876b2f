#include "client/deferred_releases.h"

#include <spdlog/spdlog.h>

#include <system_error>
#include <utility>

namespace orthofs {

DeferredReleases::DeferredReleases(size_t max_queued, int workers) : max_queued_(max_queued) {
  for (int i = 0; i < workers; ++i) {
    try {
      workers_.emplace_back([this] { Work(); });
    } catch (const std::system_error& e) {
      spdlog::warn("deferred releases: {} worker threads ({})", workers_.size(), e.what());
      break;
    }
  }
}

DeferredReleases::~DeferredReleases() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

bool DeferredReleases::Add(uint64_t fno, Release release) {
  {
    MutexLock lock(&mu_);
    // Without a worker (none could start), every release is the caller's.
    if (workers_.empty() || stopping_ || queue_.size() >= max_queued_) {
      ++refused_;
      return false;
    }
    queue_.emplace_back(fno, std::move(release));
    ++added_;
  }
  work_ready_.notify_one();
  return true;
}

void DeferredReleases::Drain() {
  MutexLock lock(&mu_);
  const uint64_t target = added_;
  while (finished_ < target) work_done_.wait(mu_);
}

DeferredReleases::Counts DeferredReleases::counts() const {
  MutexLock lock(&mu_);
  return Counts{.deferred = added_,
                .refused = refused_,
                .failed = failed_,
                .waiting = queue_.size() + running_};
}

void DeferredReleases::Work() {
  MutexLock lock(&mu_);
  for (;;) {
    if (queue_.empty()) {
      // Stops only once the queue is empty: what was deferred is released before unmount.
      if (stopping_) return;
      work_ready_.wait(mu_);
      continue;
    }
    auto [fno, release] = std::move(queue_.front());
    queue_.pop_front();
    ++running_;
    mu_.unlock();
    const Status released = release();
    release = nullptr;  // what it holds goes outside the lock
    if (!released.ok()) {
      // The INODE or objects stay, unreachable: fsck collects them as orphans.
      spdlog::warn("freeing unlinked file {}: {}", fno, released.ToString());
    }
    mu_.lock();
    --running_;
    ++finished_;
    if (!released.ok()) ++failed_;
    work_done_.notify_all();
  }
}

}  // namespace orthofs
