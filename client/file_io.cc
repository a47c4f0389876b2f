#include "client/file_io.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <thread>

namespace orthofs {

namespace {

WriteBackOptions CacheOptionsFor(const FileIoOptions& options, uint64_t object_size) {
  WriteBackOptions o;
  o.capacity_bytes = options.cache_bytes;
  o.object_size = object_size;
  o.max_dirty_age = options.max_dirty_age;
  return o;
}

// A file read at random is filled whole when it takes at most an eighth of the cache: a few
// such files fit at once beside what sequential readers use. --read-ahead 0 turns both off.
ReadAheadOptions ReadAheadOptionsFor(const FileIoOptions& options, uint64_t object_size) {
  ReadAheadOptions o = options.read_ahead;
  o.max_fill_objects = o.max_objects == 0 ? 0 : options.cache_bytes / 8 / object_size;
  return o;
}

// How often idle flush threads look for objects that aged.
constexpr std::chrono::milliseconds kAgeCheckInterval{200};
// A window the client has not used for this long is forgotten (the OSD forgets it too).
constexpr std::chrono::minutes kWindowExpiry{1};
// A flush thread whose write-back failed waits this long before the next one.
constexpr std::chrono::milliseconds kWriteBackRetryDelay{500};

// A write-back that can never succeed: the OSD has no room for the bytes. Anything else (OSDs
// down or recovering, a map change) may pass on a retry, so the bytes stay dirty.
bool IsRefusedForGood(const Status& status) { return status.Is(StatusCode::kNoSpace); }

}  // namespace

FileIo::FileIo(ClusterClient* cluster, uint32_t fnso, const FileIoOptions& options)
    : cluster_(cluster),
      fnso_(fnso),
      object_size_(cluster->map().object_size),
      cache_(CacheOptionsFor(options, cluster->map().object_size)),
      read_ahead_(ReadAheadOptionsFor(options, cluster->map().object_size)),
      prefetch_mode_(cluster->map().prefetch.mode),
      windows_(cluster->map().prefetch, kWindowExpiry) {
  for (int i = 0; i < std::max(1, options.flush_threads); ++i) {
    flush_threads_.emplace_back([this] { FlushThread(); });
  }
  if (prefetch_mode_ == PrefetchMode::kCor) {
    subscriptions_ = std::make_unique<WindowSubscriptions>(
        cluster_, [this](const wire::WindowUpdate& u) { ApplyWindowUpdate(u); });
  }
}

void FileIo::ApplyWindowUpdate(const wire::WindowUpdate& update) {
  if (update.fnso() != fnso_) return;
  std::lock_guard lock(windows_mu_);
  windows_.Set({"", fnso_, update.fno()}, update.pivot(), update.window_size(), WindowClock::now());
}

FileIo::~FileIo() {
  {
    std::unique_lock lock(mu_);  // read-aheads in flight call back into this
    stopping_fills_ = true;
    fetched_cv_.wait(lock, [this] { return read_ahead_in_flight_ == 0; });
  }
  subscriptions_.reset();
  if (Status st = FlushAll(); !st.ok()) {
    spdlog::error("unwritten data lost at shutdown: {}", st.ToString());
  }
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : flush_threads_) t.join();
}

Result<SharedBytes> FileIo::Read(uint64_t fno, uint64_t offset, uint64_t length, uint64_t file_size,
                                 bool for_page_cache, bool* holes) {
  bool read_holes = false;
  // An OSD that just restarted refuses reads until the others replayed its repair records;
  // when both copies' OSDs are in that state (a cluster restart), wait for them briefly.
  Result<SharedBytes> read = ReadOnce(fno, offset, length, file_size, for_page_cache, &read_holes);
  for (int attempt = 0;
       attempt < kRecoveryRetries && !read.ok() && ClusterClient::IsRecovering(read.status());
       ++attempt) {
    std::this_thread::sleep_for(kRecoveryRetryDelay);
    read_holes = false;
    read = ReadOnce(fno, offset, length, file_size, for_page_cache, &read_holes);
  }
  if (holes != nullptr) *holes = read_holes;
  return read;
}

Result<SharedBytes> FileIo::ReadOnce(uint64_t fno, uint64_t offset, uint64_t length,
                                     uint64_t file_size, bool for_page_cache, bool* holes) {
  if (offset >= file_size) return SharedBytes();
  length = std::min(length, file_size - offset);
  const std::vector<ObjectSpan> spans = SplitIntoObjects(offset, length, object_size_);
  const uint64_t object_count = (file_size + object_size_ - 1) / object_size_;
  std::vector<SharedBytes> parts(spans.size());  // each span's bytes
  std::vector<size_t> misses;                    // spans to fetch here
  std::vector<size_t> awaited;                   // spans being fetched for another read or ahead
  std::vector<ObjectKey> ahead;
  Fill fill;
  uint64_t token;
  {
    std::lock_guard lock(mu_);
    for (size_t i = 0; i < spans.size(); ++i) {
      const ObjectSpan& span = spans[i];
      const ObjectKey key{fno, span.index};
      bool hole = false;
      if (cache_.Read(key, span.offset, span.length, &parts[i], &hole)) {
        *holes |= hole;
        continue;
      }
      if (fetches_.contains(key)) {
        awaited.push_back(i);
      } else {
        fetches_.insert(key);
        misses.push_back(i);
      }
    }
    token = cache_.FillToken();
    const ObjectRange range = read_ahead_.OnRead(fno, spans.front().index, spans.back().index,
                                                 object_count, cache_.ReadAheadQuantity());
    for (uint64_t index = range.begin; index < range.end; ++index) {
      const ObjectKey key{fno, index};
      if (cache_.Has(key) || !fetches_.insert(key).second) continue;
      ahead.push_back(key);
    }
    read_ahead_in_flight_ += ahead.size();
    read_ahead_objects_ += ahead.size();
    fill = CollectFill(fno);
  }
  std::vector<ReadCallback> land_ahead;
  for (const ObjectKey& key : ahead) {
    land_ahead.push_back([this, key, token](Result<wire::ReadResponse> r) {
      std::lock_guard lock(mu_);  // notified under the lock: the destructor may be waiting
      LandFetchedAheadLocked(key, token, &r);
      fetched_cv_.notify_all();
    });
  }
  FetchObjects(ahead, std::move(land_ahead));
  StartFill(std::move(fill));
  // A file of one object has no neighbour for its replica OSD to prefetch.
  const bool windowed = file_size > object_size_;
  // What the kernel now has whole need not stay here too.
  auto answer = [&] {
    if (for_page_cache) {
      std::lock_guard lock(mu_);
      for (const ObjectSpan& span : spans) {
        const uint64_t object_start = span.index * object_size_;
        cache_.Delivered({fno, span.index}, span.offset, span.length, file_size - object_start);
      }
    }
    SharedBytes out;
    for (SharedBytes& part : parts) out.Append(std::move(part));
    return out;
  };
  ORTHOFS_RETURN_IF_ERROR(FetchInto(fno, spans, misses, token, &parts, holes, windowed));
  if (awaited.empty()) return answer();
  // Objects another fetch brings: wait for it, then read them from the cache; what is not
  // there after all (that fetch failed, or its bytes were already evicted) is fetched here.
  std::vector<size_t> still_missing;
  {
    std::unique_lock lock(mu_);
    ++fetch_waits_;
    for (size_t i : awaited) {
      const ObjectSpan& span = spans[i];
      const ObjectKey key{fno, span.index};
      fetched_cv_.wait(lock, [&] { return !fetches_.contains(key); });
      bool hole = false;
      if (cache_.Read(key, span.offset, span.length, &parts[i], &hole)) {
        *holes |= hole;
      } else {
        fetches_.insert(key);
        still_missing.push_back(i);
      }
    }
    token = cache_.FillToken();
  }
  ORTHOFS_RETURN_IF_ERROR(FetchInto(fno, spans, still_missing, token, &parts, holes, windowed));
  return answer();
}

bool FileIo::LandFetchedAheadLocked(const ObjectKey& key, uint64_t token,
                                    Result<wire::ReadResponse>* r) {
  // A failed one is dropped: the reader fetches the object itself and hears why.
  const bool landed = r->ok() || r->status().Is(StatusCode::kNotFound);
  if (landed) cache_.Fill(key, token, r->ok() ? std::move(*(*r)->mutable_data()) : std::string());
  fetches_.erase(key);
  --read_ahead_in_flight_;
  return landed;
}

FileIo::Fill FileIo::CollectFill(uint64_t fno) {
  Fill fill;
  // Filling uses free room only (it does not push out what someone read), and stops under
  // write pressure.
  while (!stopping_fills_ && fills_in_flight_ + fill.keys.size() < kMaxFillsInFlight &&
         cache_.ReadAheadQuantity() > 0 &&
         cache_.FreeBytes() >= (fills_in_flight_ + fill.keys.size() + 1) * object_size_) {
    std::optional<uint64_t> next = read_ahead_.NextToFill(fno);
    if (!next) break;
    const ObjectKey key{fno, *next};
    if (cache_.Has(key) || !fetches_.insert(key).second) continue;  // here or on its way
    fill.keys.push_back(key);
  }
  fills_in_flight_ += fill.keys.size();
  read_ahead_in_flight_ += fill.keys.size();
  filled_objects_ += fill.keys.size();
  fill.token = cache_.FillToken();
  return fill;
}

void FileIo::StartFill(Fill fill) {
  std::vector<ReadCallback> land;
  for (const ObjectKey& key : fill.keys) {
    land.push_back([this, key, token = fill.token](Result<wire::ReadResponse> r) {
      Fill next;
      {
        std::lock_guard lock(mu_);
        if (!LandFetchedAheadLocked(key, token, &r)) read_ahead_.StopFilling(key.fno, key.index);
        --fills_in_flight_;
        // Collected before this fetch stops counting, so the destructor waits for these too.
        next = CollectFill(key.fno);
        fetched_cv_.notify_all();
        // With nothing collected this FileIo may be gone once the lock is released.
        if (next.keys.empty()) return;
      }
      StartFill(std::move(next));
    });
  }
  FetchObjects(fill.keys, std::move(land));
}

Status FileIo::FetchInto(uint64_t fno, const std::vector<ObjectSpan>& spans,
                         const std::vector<size_t>& misses, uint64_t token,
                         std::vector<SharedBytes>* parts, bool* holes, bool windowed) {
  if (misses.empty()) return Status::Ok();
  // Every missing object is fetched whole, all at once, from the OSDs that hold them.
  PendingCalls pending;
  pending.Add(static_cast<int>(misses.size()));
  std::vector<ObjectKey> keys;
  std::vector<ReadCallback> fill;
  for (size_t i : misses) {
    const ObjectSpan& span = spans[i];
    const ObjectKey key{fno, span.index};
    keys.push_back(key);
    SharedBytes* part = &(*parts)[i];
    fill.push_back([this, part, holes, &pending, key, span, token](Result<wire::ReadResponse> r) {
      const bool ok = r.ok() || r.status().Is(StatusCode::kNotFound);
      {
        std::lock_guard lock(mu_);  // absent objects are holes: zeros
        if (ok) {
          *holes |=
              cache_.FillAndRead(key, token, r.ok() ? std::move(*r->mutable_data()) : std::string(),
                                 span.offset, span.length, part);
        }
        fetches_.erase(key);
      }
      fetched_cv_.notify_all();
      pending.Done(ok ? Status::Ok() : r.status());
    });
  }
  FetchObjects(keys, std::move(fill), windowed);
  return pending.Wait();
}

FileIo::FirstRead FileIo::PlanFetch(const ObjectKey& key) {
  const Oid original = OriginalOf(key);
  if (prefetch_mode_ == PrefetchMode::kCor) {
    bool in_window = false;
    {
      std::lock_guard lock(windows_mu_);
      in_window = windows_.Covers(WindowKey{"", fnso_, key.fno}, key.index);
      const auto now = WindowClock::now();
      if (now - last_window_expiry_ > kWindowExpiry) {
        windows_.Expire(now);
        last_window_expiry_ = now;
      }
    }
    const Oid replica = original.WithFlag(CopyFlag::kReplica);
    if (in_window && !cluster_->CopyIsDown(replica)) {
      // COR: the replica OSD prefetched it; reading it there moves the window (both copies).
      ++replica_reads_;
      return FirstRead{replica, true};
    }
  }
  ++original_reads_;
  // The other copy serves when one copy's OSD is down (known: it goes first) or fails now.
  if (cluster_->CopyIsDown(original)) return FirstRead{original.WithFlag(CopyFlag::kReplica)};
  return FirstRead{original};
}

void FileIo::AfterFirstRead(const ObjectKey& key, const FirstRead& first,
                            Result<wire::ReadResponse> r, const ReadCallback& fill) {
  const Oid original = OriginalOf(key);
  if (first.in_window) {
    if (!ClusterClient::NeedsOtherCopy(r.status())) {
      {
        std::lock_guard lock(windows_mu_);
        windows_.OnClientRead(WindowKey{"", fnso_, key.fno}, original.offset, WindowClock::now());
      }
      return fill(std::move(r));
    }
    ++replica_read_failures_;  // the original serves instead
    cluster_->ReadAsync(original, 0, 0, fill);
    return;
  }
  // A missing object is a hole only if the other copy lacks it too (a degraded write may
  // not be repaired here yet).
  const Oid second =
      first.copy.flag == CopyFlag::kReplica ? original : original.WithFlag(CopyFlag::kReplica);
  if (r.ok() || !cluster_->AskOtherCopy(r.status(), second)) return fill(std::move(r));
  if (!r.status().Is(StatusCode::kNotFound)) ++failover_reads_;
  cluster_->ReadAsync(second, 0, 0,
                      [first_missing = r.status().Is(StatusCode::kNotFound),
                       fill](Result<wire::ReadResponse> other) {
                        if (first_missing && ClusterClient::IsOsdFailure(other.status())) {
                          return fill(Status::NotFound("absent"));
                        }
                        fill(std::move(other));
                      });
}

void FileIo::FetchObjects(const std::vector<ObjectKey>& keys, std::vector<ReadCallback> fills,
                          bool windowed) {
  if (keys.empty()) return;
  std::vector<FirstRead> plans;
  std::vector<Oid> copies;
  std::vector<Oid> others;
  for (const ObjectKey& key : keys) {
    plans.push_back(PlanFetch(key));
    copies.push_back(plans.back().copy);
    others.push_back(plans.back().copy.OtherCopy());
  }
  // Hedged: a copy slow to answer (its OSD hung, or just slow) has the other asked too.
  cluster_->ReadManyHedgedAsync(
      copies, others,
      [this, keys, plans = std::move(plans), fills = std::move(fills)](
          size_t i, Result<wire::ReadResponse> r, bool from_other) {
        if (from_other) {  // the other copy answered first, successfully
          ++hedged_answers_;
          return fills[i](std::move(r));
        }
        AfterFirstRead(keys[i], plans[i], std::move(r), fills[i]);
      },
      windowed);
}

Status FileIo::Write(uint64_t fno, uint64_t offset, std::string_view data) {
  const auto now = CacheClock::now();
  const std::vector<ObjectSpan> spans = SplitIntoObjects(offset, data.size(), object_size_);
  size_t due_now = 0;
  {
    std::lock_guard lock(mu_);
    // The OSDs refused this file's bytes for lack of space: more would be dropped too. The
    // error stays until fsync or close reports it.
    if (auto error = write_back_errors_.find(fno);
        error != write_back_errors_.end() && error->second.Is(StatusCode::kNoSpace)) {
      return error->second;
    }
  }
  // Room first: a write the cache has none for fails with nothing of it cached, or its bytes
  // would be written back later, past the size its failure left.
  ORTHOFS_RETURN_IF_ERROR(RelievePressure(fno));
  {
    std::lock_guard lock(mu_);
    for (const ObjectSpan& span : spans) {
      due_now += cache_.Write({fno, span.index}, span.offset,
                              data.substr(span.buffer_offset, span.length), now);
    }
  }
  // Each object written whole is due at once: one flush thread per object. (Waking one for a
  // write that completed nothing cost a futile context switch per small write.)
  for (size_t i = 0; i < due_now; ++i) work_cv_.notify_one();
  // The write is accepted (cached): a write-back failing from here on is for the file's fsync
  // or close to report, as with a page cache.
  (void)RelievePressure(fno);
  return Status::Ok();
}

Status FileIo::RelievePressure(uint64_t writer_fno) {
  std::unique_lock lock(mu_);
  // Every write calls this twice (before and after caching its bytes): mostly there is none.
  if (!cache_.UnderPressure()) return Status::Ok();
  // Other files whose write-back failed (here, or before without their fsync or close having
  // reported it yet): theirs are retried by the flush threads and reported by their own fsync
  // or close, and the writer goes on with the next oldest.
  std::set<uint64_t> failed_files;
  Status others_failure;
  for (const auto& [fno, error] : write_back_errors_) {
    if (fno != writer_fno) failed_files.insert(fno);
  }
  while (cache_.UnderPressure()) {
    if (std::optional<FlushJob> job = cache_.TakeOldestFlush(failed_files)) {
      ++synchronous_write_backs_;
      const uint64_t job_fno = job->key.fno;
      lock.unlock();
      std::vector<FlushJob> oldest;
      oldest.push_back(std::move(*job));
      const Status written = WriteBackNow(std::move(oldest));
      lock.lock();
      if (!written.ok()) {
        if (job_fno == writer_fno) return written;
        failed_files.insert(job_fno);
        if (others_failure.ok()) others_failure = written;
      }
    } else if (cache_.Full()) {
      // No room, and none to be made from what failed: the writer hears why (both copies'
      // OSDs down, a full OSD) instead of waiting forever. Files that failed before are tried
      // once more first.
      if (!others_failure.ok()) return others_failure;
      if (!failed_files.empty()) {
        failed_files.clear();
        continue;
      }
      // Everything pinned is already being written back: wait for some of it.
      ++writer_waits_;
      written_back_cv_.wait(lock);
    } else {
      return Status::Ok();
    }
  }
  return Status::Ok();
}

void FileIo::StartWriteBack(std::shared_ptr<FlushJob> job, std::function<void(Status)> done,
                            CopyWriteBatch* batch) {
  // The job's ranges go to both copies at once (one copy and a repair record while the other's
  // OSD is down); the last range to finish reports.
  auto pending = std::make_shared<std::atomic<int>>(0);
  auto first_error = std::make_shared<Status>();
  auto error_mu = std::make_shared<std::mutex>();
  std::vector<std::pair<uint64_t, uint64_t>> pieces;
  if (job->replace) {
    pieces.emplace_back(0, job->data.size());
  } else {
    for (const auto& [b, e] : job->ranges.ranges()) pieces.emplace_back(b, e - b);
  }
  *pending = static_cast<int>(pieces.size());
  auto finish_one = [this, job, pending, first_error, error_mu, done](const Status& st) {
    if (!st.ok()) {
      std::lock_guard lock(*error_mu);
      if (first_error->ok()) *first_error = st;
    }
    if (--*pending > 0) return;
    const Status result = *first_error;
    {
      std::lock_guard lock(mu_);
      if (result.ok()) {
        cache_.FlushDone(*job, true);
      } else if (IsRefusedForGood(result)) {
        // The bytes are dropped, and the file's next write, fsync or close reports why.
        cache_.FlushRefused(*job);
        spdlog::warn("write-back of file {} object {} refused (dropped): {}", job->key.fno,
                     job->key.index, result.ToString());
      } else {
        cache_.FlushDone(*job, false);
        spdlog::warn("write-back of file {} object {} failed (kept, will retry): {}", job->key.fno,
                     job->key.index, result.ToString());
      }
      if (!result.ok()) {
        Status& recorded = write_back_errors_[job->key.fno];
        if (recorded.ok()) recorded = result;
      }
    }
    written_back_cv_.notify_all();
    done(result);
  };
  const Oid original = OriginalOf(job->key);
  for (const auto& [offset, length] : pieces) {
    ObjectWrite how;
    how.offset = offset;
    how.replace = job->replace;
    const std::string_view bytes = std::string_view(job->data).substr(offset, length);
    // Batched, the requests refer to the job's bytes (it outlives them), not copies.
    cluster_->WriteBothCopiesAsync(original, bytes, how, finish_one, batch, job);
  }
}

Status FileIo::WriteBackNow(std::vector<FlushJob> jobs) {
  PendingCalls pending;
  CopyWriteBatch batch;
  for (FlushJob& job : jobs) {
    pending.Add();
    StartWriteBack(
        std::make_shared<FlushJob>(std::move(job)), [&pending](Status st) { pending.Done(st); },
        &batch);
  }
  cluster_->SendWrites(std::move(batch));
  return pending.Wait();
}

void FileIo::FlushThread() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    std::vector<FlushJob> jobs;
    const auto now = CacheClock::now();
    uint64_t bytes = 0;
    while (jobs.size() < kFlushBatch && bytes < kFlushBatchBytes) {
      std::optional<FlushJob> job = cache_.TakeDueFlush(now);
      if (!job) break;
      bytes += job->bytes();
      jobs.push_back(std::move(*job));
    }
    if (jobs.empty()) {
      work_cv_.wait_for(lock, kAgeCheckInterval);
      continue;
    }
    lock.unlock();
    const Status st = WriteBackNow(std::move(jobs));  // a failure is reported by Flush
    lock.lock();
    // A failed write-back that stays dirty is overdue at once: pause before trying again
    // rather than spin.
    if (!st.ok()) work_cv_.wait_for(lock, kWriteBackRetryDelay, [this] { return stopping_; });
  }
}

Status FileIo::Flush(uint64_t fno, bool reports) {
  // Start every dirty object of the file at once, then wait for those and for the file's
  // write-backs other threads have in flight. An object written again while one of those was
  // in flight is dirty once more when it ends, and it was skipped (one write-back per object
  // at a time): a second round writes it. What is dirty after that was written after this
  // flush began.
  Status first;
  std::unique_lock lock(mu_);
  for (int round = 0; round < 2 && first.ok() && cache_.HasUnwritten(fno); ++round) {
    PendingCalls pending;
    while (std::optional<FlushJob> job = cache_.TakeFlushOf(fno)) {
      pending.Add();
      lock.unlock();
      StartWriteBack(std::make_shared<FlushJob>(std::move(*job)),
                     [&pending](Status st) { pending.Done(st); });
      lock.lock();
    }
    lock.unlock();
    first = pending.Wait();
    lock.lock();
    written_back_cv_.wait(lock, [&] { return !cache_.HasInFlight(fno); });
  }
  auto error = write_back_errors_.find(fno);
  if (error != write_back_errors_.end()) {
    if (first.ok()) first = error->second;
    if (reports) write_back_errors_.erase(error);
  }
  return first;
}

Status FileIo::FlushAll() {
  std::vector<uint64_t> files;
  {
    std::lock_guard lock(mu_);
    files = cache_.FilesWithUnwritten();
    for (const auto& [fno, st] : write_back_errors_) files.push_back(fno);
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  Status first;
  for (uint64_t fno : files) {
    Status st = Flush(fno);
    if (first.ok()) first = st;
  }
  return first;
}

void FileIo::Forget(uint64_t fno) {
  std::unique_lock lock(mu_);
  cache_.Forget(fno);
  read_ahead_.Forget(fno);
  written_back_cv_.wait(lock, [&] { return !cache_.HasInFlight(fno); });
  // After the wait: a write-back in flight that failed meanwhile recorded its error for a file
  // that is gone, which every later FlushAll (unmount) would report.
  write_back_errors_.erase(fno);
}

void FileIo::ForgetClean(uint64_t fno) {
  std::lock_guard lock(mu_);
  cache_.ForgetClean(fno);
  read_ahead_.Forget(fno);  // a fill of the old file stops (its end may be wrong now)
}

Status FileIo::PrepareTruncate(uint64_t fno) {
  Status flushed = Flush(fno);
  if (!IsRefusedForGood(flushed)) return flushed;
  // The OSDs refused bytes for lack of space, which are dropped: failing the truncation would
  // save none of them, and truncating is how users free space. The file's next write, fsync
  // or close still reports it. Unless other bytes are still to be written back (another
  // failure, kept for a retry): one landing after the truncation would bring old bytes back.
  std::lock_guard lock(mu_);
  if (cache_.HasUnwritten(fno)) return flushed;
  write_back_errors_.emplace(fno, flushed);
  return Status::Ok();
}

void FileIo::Truncated(uint64_t fno, uint64_t size) {
  std::lock_guard lock(mu_);
  cache_.Truncate(fno, size);  // also a new fill token: fetches under way are not kept
  // Read-ahead's fills of the file stop: they would fetch objects past the new end.
  read_ahead_.Forget(fno);
}

FileIoStats FileIo::stats() {
  std::lock_guard lock(mu_);
  return FileIoStats{cache_.stats(),  synchronous_write_backs_, writer_waits_,
                     original_reads_, replica_reads_,           replica_read_failures_,
                     failover_reads_, read_ahead_objects_,      filled_objects_,
                     fetch_waits_,    hedged_answers_};
}

}  // namespace orthofs
