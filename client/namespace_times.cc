// Deferred directory times: the mtime and ctime that unlinks change, written a moment later in
// one INODE update per directory (Namespace::EnableDeferredDirectoryTimes).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "client/namespace.h"

namespace orthofs {

Namespace::~Namespace() {
  if (!directory_times_writer_.joinable()) return;
  directory_times_writer_.request_stop();
  times_noted_.notify_all();
  directory_times_writer_.join();
  if (Status st = FlushDirectoryTimes(); !st.ok()) {
    spdlog::warn("directory times not written at unmount: {}", st.ToString());
  }
}

void Namespace::EnableDeferredDirectoryTimes() {
  if (defer_directory_times_.exchange(true)) return;
  directory_times_writer_ =
      std::jthread([this](std::stop_token stop) { WriteDueDirectoryTimes(stop); });
}

void Namespace::NoteDirectoryTouch(uint64_t dir) {
  {
    MutexLock lock(&times_mu_);
    pending_times_.Note(dir, Now(), PendingTouches::Clock::now());
  }
  times_noted_.notify_all();
}

Status Namespace::EntryAddedTo(uint64_t dir) {
  const auto wait_until = std::chrono::steady_clock::now() + removal_wait_;
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    // The INODE as stored: its ctime, not one a pending touch raised, dates a mark.
    Result<wire::ReadResponse> read = cluster_->ReadEitherCopy(InodeOid(dir));
    if (read.status().Is(StatusCode::kNotFound)) {
      return Status::NotFound("directory " + std::to_string(dir) + " is removed");
    }
    if (!read.ok()) return read.status();
    Result<Inode> inode = DecodeInode(read->data());
    if (!inode.ok()) return inode.status();
    if (!inode->removing()) {
      NoteDirectoryTouch(dir);
      return Status::Ok();
    }
    // As in TouchDirectory: wait for the rmdir to give up or remove the directory.
    if (MarkAbandoned(*inode, Now()) || std::chrono::steady_clock::now() >= wait_until) {
      return Status::NotFound("directory " + std::to_string(dir) + " is being removed");
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(2 * pause, std::chrono::milliseconds(100));
  }
}

std::optional<Timespec> Namespace::ApplyPendingTimes(uint64_t fno, Inode* inode) {
  if (!defer_directory_times_.load(std::memory_order_relaxed) || !inode->IsDirectory()) {
    return std::nullopt;
  }
  MutexLock lock(&times_mu_);
  return pending_times_.Apply(fno, inode);
}

Status Namespace::WriteDirectoryTimes(uint64_t dir) {
  // From the INODE as this client wrote it last (a burst of removals: the previous write of
  // these times), else read; WriteInode adds the pending times, and a conflict reads afresh.
  std::optional<InodeRef> start;
  if (auto written = RecentlyWritten(dir)) start = written->first;
  Result<InodeRef> written = UpdateInodeWith(
      dir, [](Inode*) { return Status::Ok(); }, std::move(start));
  if (written.status().Is(StatusCode::kNotFound)) {
    MutexLock lock(&times_mu_);
    pending_times_.Forget(dir);  // removed meanwhile (by another client)
    return Status::Ok();
  }
  return written.status();
}

Status Namespace::FlushDirectoryTimes(std::optional<uint64_t> dir) {
  std::vector<uint64_t> dirs;
  {
    MutexLock lock(&times_mu_);
    if (dir) {
      if (pending_times_.Get(*dir)) dirs.push_back(*dir);
    } else {
      dirs = pending_times_.All();
    }
  }
  Status first_failure;
  for (uint64_t d : dirs) {
    Status st = WriteDirectoryTimes(d);
    if (!st.ok() && first_failure.ok()) first_failure = st;
  }
  return first_failure;
}

void Namespace::WriteDueDirectoryTimes(std::stop_token stop) {
  MutexLock lock(&times_mu_);
  while (!stop.stop_requested()) {
    const std::optional<PendingTouches::Clock::time_point> next =
        pending_times_.NextDue(kDirectoryTimesDelay);
    if (!next) {
      // The predicate runs with times_mu_ held (the analysis cannot see into the wait).
      times_noted_.wait(times_mu_, stop, [&]() ORTHOFS_NO_THREAD_SAFETY_ANALYSIS {
        return !pending_times_.empty();
      });
      continue;
    }
    const auto now = PendingTouches::Clock::now();
    if (now < *next) {
      times_noted_.wait_until(times_mu_, stop, *next, [] { return false; });
      continue;
    }
    const std::vector<uint64_t> due = pending_times_.Due(now, kDirectoryTimesDelay);
    times_mu_.unlock();
    for (uint64_t dir : due) {
      if (Status st = WriteDirectoryTimes(dir); !st.ok()) {
        spdlog::debug("directory {}: times not written yet: {}", dir, st.ToString());
        MutexLock retry(&times_mu_);
        pending_times_.Retry(dir, PendingTouches::Clock::now());
      }
    }
    times_mu_.lock();
  }
}

}  // namespace orthofs
