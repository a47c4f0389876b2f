// DeferredReleases: deletes the data objects of files whose last link is gone after the unlink
// has answered.
//
// An unlink is done, for every client, once the entry and the INODE are gone: a reader elsewhere
// that finds an object missing finds the INODE gone too and answers ESTALE. The data objects
// (two calls each, and a listing for a large file) then reach nothing, and deleting them on
// worker threads lets `rm -rf` go on. A crash before a release ran leaves what a crash inside an
// unlink always could: orphan objects, which fsck collects.
//
// Bounded: past `max_queued` releases waiting, Add refuses and the caller releases the file
// itself, so a burst of unlinks slows down rather than piling up. Drain waits for what was
// added (statfs, unmount), so `df` right after `rm -rf` counts the freed space.
//
// Thread-safe. The destructor runs every queued release before it returns.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "client/namespace.h"
#include "common/status.h"
#include "common/thread_annotations.h"

namespace orthofs {

class DeferredReleases {
 public:
  // Frees what remains of some files together (Namespace::ReleaseUnlinkedMany): one status
  // per file, in order.
  using ReleaseMany = std::function<std::vector<Status>(const std::vector<Unlinked>&)>;
  // Enough for a few seconds of unlinks; each waiting one costs a few bytes.
  static constexpr size_t kMaxQueued = 4096;
  // Each release is a few round trips in a row: two keep the OSDs busy without taking the
  // CPU that the unlinks themselves need on a small client.
  static constexpr int kWorkers = 2;
  // A worker takes what waits, up to this many files, in one go: the data objects of 128
  // small files are a DeleteMany call or two per OSD instead of two calls each.
  static constexpr size_t kMaxBatch = 128;
  // ... once the oldest has waited this long (or kMaxBatch wait, or a Drain asks): `rm -rf`
  // frees a file every millisecond or two, so a batch gathers tens of files.
  static constexpr std::chrono::milliseconds kBatchWait{50};

  explicit DeferredReleases(ReleaseMany release, size_t max_queued = kMaxQueued,
                            int workers = kWorkers);
  DeferredReleases(const DeferredReleases&) = delete;
  DeferredReleases& operator=(const DeferredReleases&) = delete;
  ~DeferredReleases();

  // Queues the release of a file; false when `max_queued` are waiting (the caller releases it).
  bool Add(const Unlinked& unlinked);
  // Waits until every release added before the call has run.
  void Drain();

  struct Counts {
    uint64_t deferred = 0;  // releases queued by Add
    uint64_t refused = 0;   // Adds refused as full
    uint64_t failed = 0;    // releases that answered an error (logged; fsck collects the rest)
    size_t waiting = 0;     // queued or running now
  };
  Counts counts() const;

 private:
  void Work();

  const size_t max_queued_;
  mutable Mutex mu_;
  std::condition_variable_any work_ready_;
  std::condition_variable_any work_done_;
  const ReleaseMany release_;
  using Clock = std::chrono::steady_clock;
  std::deque<std::pair<Unlinked, Clock::time_point>> queue_ ORTHOFS_GUARDED_BY(mu_);
  int draining_ ORTHOFS_GUARDED_BY(mu_) = 0;  // Drains waiting: no batch waits for more
  size_t running_ ORTHOFS_GUARDED_BY(mu_) = 0;
  // Releases finished since the start: Drain waits until it passes the count added before it.
  uint64_t added_ ORTHOFS_GUARDED_BY(mu_) = 0;
  uint64_t finished_ ORTHOFS_GUARDED_BY(mu_) = 0;
  uint64_t refused_ ORTHOFS_GUARDED_BY(mu_) = 0;
  uint64_t failed_ ORTHOFS_GUARDED_BY(mu_) = 0;
  bool stopping_ ORTHOFS_GUARDED_BY(mu_) = false;
  std::vector<std::thread> workers_;  // joined by the destructor, after the queue drained
};

}  // namespace orthofs
