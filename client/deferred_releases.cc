#include "client/deferred_releases.h"

#include <spdlog/spdlog.h>

#include <system_error>
#include <utility>

namespace orthofs {

DeferredReleases::DeferredReleases(ReleaseMany release, size_t max_queued, int workers)
    : max_queued_(max_queued), release_(std::move(release)) {
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

bool DeferredReleases::Add(const Unlinked& unlinked) {
  {
    MutexLock lock(&mu_);
    // Without a worker (none could start), every release is the caller's.
    if (workers_.empty() || stopping_ || queue_.size() >= max_queued_) {
      ++refused_;
      return false;
    }
    queue_.emplace_back(unlinked, Clock::now());
    ++added_;
  }
  work_ready_.notify_one();
  return true;
}

void DeferredReleases::Drain() {
  MutexLock lock(&mu_);
  const uint64_t target = added_;
  ++draining_;
  work_ready_.notify_all();
  while (finished_ < target) work_done_.wait(mu_);
  --draining_;
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
    const Clock::time_point due = queue_.front().second + kBatchWait;
    if (queue_.size() < kMaxBatch && draining_ == 0 && !stopping_ && Clock::now() < due) {
      work_ready_.wait_until(mu_, due);  // more may come to go along
      continue;
    }
    std::vector<Unlinked> batch;
    while (!queue_.empty() && batch.size() < kMaxBatch) {
      batch.push_back(queue_.front().first);
      queue_.pop_front();
    }
    running_ += batch.size();
    mu_.unlock();
    const std::vector<Status> released = release_(batch);
    uint64_t failed = 0;
    for (size_t i = 0; i < batch.size(); ++i) {
      const Status st = i < released.size() ? released[i] : Status::Internal("no answer");
      if (st.ok()) continue;
      // The INODE or objects stay, unreachable: fsck collects them as orphans.
      spdlog::warn("freeing unlinked file {}: {}", batch[i].fno, st.ToString());
      ++failed;
    }
    mu_.lock();
    running_ -= batch.size();
    finished_ += batch.size();
    failed_ += failed;
    work_done_.notify_all();
  }
}

}  // namespace orthofs
