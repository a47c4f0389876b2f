// A file's bytes as objects, through the client's write-back object cache ([Knafla 1998] §3.2):
// reads are served from the cache or fetch whole objects from their original OSD (the
// replica on failure); writes land in the cache and a pool of flush threads writes both
// copies of each object in parallel. Objects never written read as zeros and are never
// stored (sparse files).
//
// Reads with COR prefetching (cluster map prefetch mode cor): an object inside this client's
// window for the file is read from the file's replica OSD, which has prefetched it; others
// from their original OSD, which tells the replica OSD to widen the window. The replica OSDs
// push window changes over Subscribe streams (client/window_subscriptions.h).
//
// When write-back happens: at once for objects written whole; at the latest after
// max_dirty_age; on Flush (close, fsync); and under memory pressure, when the writer itself
// writes back (synchronous write-back, [Wu 1993]) until the cache has room again.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "client/cluster_client.h"
#include "client/window_subscriptions.h"
#include "common/object_spans.h"
#include "common/read_ahead.h"
#include "common/window_table.h"
#include "common/write_back_cache.h"

namespace orthofs {

struct FileIoOptions {
  uint64_t cache_bytes = 256ull << 20;
  int flush_threads = 4;
  std::chrono::milliseconds max_dirty_age{5000};
  ReadAheadOptions read_ahead;
};

struct FileIoStats {
  WriteBackStats cache;
  uint64_t synchronous_write_backs = 0;  // done by writers under memory pressure
  uint64_t writer_waits = 0;             // writers that waited for a full cache to drain
  uint64_t original_reads = 0;           // objects fetched from their original OSD
  uint64_t replica_reads = 0;            // from the replica OSD, inside the COR window
  uint64_t replica_read_failures = 0;    // replica OSD failed; the original served
  uint64_t failover_reads = 0;           // one copy's OSD failed; the other copy served
  uint64_t read_ahead_objects = 0;       // objects fetched ahead of a sequential reader
  uint64_t filled_objects = 0;           // fetched to fill a small file read at random
  uint64_t fetch_waits = 0;              // reads that waited for a fetch already under way
  uint64_t hedged_answers = 0;           // answered by the other copy: the first was slow
};

class FileIo {
 public:
  FileIo(ClusterClient* cluster, uint32_t fnso, const FileIoOptions& options = {});
  // Writes back what is still dirty, then stops the flush threads.
  ~FileIo();

  FileIo(const FileIo&) = delete;
  FileIo& operator=(const FileIo&) = delete;

  // Reads up to `length` bytes at `offset` of a file of `file_size` bytes. `for_page_cache`:
  // the kernel keeps what it reads (not O_DIRECT), so objects it has had whole leave this
  // client's cache (WriteBackCache::Delivered). `holes`, if given, is set when some bytes
  // read as zeros that no object holds: a sparse file's hole, or objects deleted under the
  // reader (another client removed the file; the caller tells the two apart by its INODE).
  // The bytes are the cache's own, shared (common/shared_bytes.h): nothing is copied here.
  Result<SharedBytes> Read(uint64_t fno, uint64_t offset, uint64_t length, uint64_t file_size,
                           bool for_page_cache = false, bool* holes = nullptr);
  // Copies the bytes into the cache (they reach the OSDs later, or now under pressure). Fails,
  // with nothing cached, when the cache has no room that write-backs can make; a write-back
  // failing after the bytes are cached is reported by the file's Flush.
  Status Write(uint64_t fno, uint64_t offset, std::string_view data);
  // Every byte written to the file so far is on both copies' OSDs when this returns (not yet
  // fsync'd there). Returns the first write-back failure of the file since the last Flush
  // that `reports` (fsync, close): others (lseek, fallocate) return it and leave it for those.
  Status Flush(uint64_t fno, bool reports = true);
  Status FlushAll();
  // The file is gone: its cached bytes, dirty ones too, are dropped, and write-backs in flight
  // have finished when this returns, so none lands after the objects are deleted.
  void Forget(uint64_t fno);
  // Another client changed the file: drop what this client did not write itself.
  void ForgetClean(uint64_t fno);
  // Before the OSDs truncate the file: every byte written is written back, so that none lands
  // after the truncation, and those past the new end too, so that a truncation that fails
  // loses nothing (Truncated drops them from the cache once it succeeded). Bytes the OSDs
  // refuse for lack of space do not fail the truncation (see Flush for their error).
  Status PrepareTruncate(uint64_t fno);
  // After the OSDs truncated the file to `size`: a read that fetched while the truncation was
  // on its way (with a fill token taken after PrepareTruncate) may have cached old bytes past
  // the new end, which would come back if the file grows again. They go.
  void Truncated(uint64_t fno, uint64_t size);

  FileIoStats stats();

 private:
  static constexpr int kRecoveryRetries = 50;
  static constexpr std::chrono::milliseconds kRecoveryRetryDelay{100};
  Result<SharedBytes> ReadOnce(uint64_t fno, uint64_t offset, uint64_t length, uint64_t file_size,
                               bool for_page_cache, bool* holes);
  using ReadCallback = std::function<void(Result<wire::ReadResponse>)>;
  // Fetches the objects of spans[i] for each i in `misses` (registered in fetches_ by the
  // caller) into the cache, and their bytes into (*parts)[i]; unregisters them. Sets `*holes`
  // if a span read zeros no object holds.
  // `windowed`: as for ClusterClient::ReadAsync.
  Status FetchInto(uint64_t fno, const std::vector<ObjectSpan>& spans,
                   const std::vector<size_t>& misses, uint64_t token,
                   std::vector<SharedBytes>* parts, bool* holes, bool windowed);
  // Reads each object from the copy that should serve it (COR window, failover) and hands the
  // answer to its fill (NotFound: a hole). The first reads of objects on one OSD go out
  // together (ClusterClient::ReadManyAsync): a file's read-ahead is one call, not one per
  // object.
  void FetchObjects(const std::vector<ObjectKey>& keys, std::vector<ReadCallback> fills,
                    bool windowed = true);
  // Where an object's fetch goes first.
  struct FirstRead {
    Oid copy;
    bool in_window = false;  // COR: the replica OSD prefetched it (copy is the replica)
  };
  FirstRead PlanFetch(const ObjectKey& key);
  // The first read's answer: handed to `fill`, unless the other copy should answer instead.
  void AfterFirstRead(const ObjectKey& key, const FirstRead& first, Result<wire::ReadResponse> r,
                      const ReadCallback& fill);
  // Filling small files read at random (ReadAhead::NextToFill) in the background, at most
  // kMaxFillsInFlight objects at a time so that a reader's own misses do not queue behind a
  // whole file; each finished fetch starts the next.
  static constexpr size_t kMaxFillsInFlight = 4;
  struct Fill {
    std::vector<ObjectKey> keys;  // registered in fetches_ and counted in flight
    uint64_t token = 0;
  };
  Fill CollectFill(uint64_t fno);  // with mu_ held
  // A fetch ahead of the reader (read-ahead or fill) came back, with mu_ held: its bytes go into
  // the cache unless it failed; it stops counting. Returns whether it landed. The caller
  // notifies fetched_cv_.
  bool LandFetchedAheadLocked(const ObjectKey& key, uint64_t token, Result<wire::ReadResponse>* r);
  void StartFill(Fill fill);
  // Writes both copies of the job's ranges, then reports to the cache; `done` gets the result.
  // With a `batch`, the copy writes wait there for ClusterClient::SendWrites.
  void StartWriteBack(std::shared_ptr<FlushJob> job, std::function<void(Status)> done,
                      CopyWriteBatch* batch = nullptr);
  // Writes the jobs back together (one call per OSD) and waits; the first failure is returned.
  Status WriteBackNow(std::vector<FlushJob> jobs);
  // Objects a flush thread writes back together: with both copies over the OSDs, 8 made two or
  // three writes per WriteMany call. 1 MiB writes of 5 x 100 MiB, 6 OSDs: 8 ->
  // 32 took overwrites from 309 to 349-374 MB/s, fresh writes from 286-296 to 299-320; 64
  // measured the same as 32.
  static constexpr size_t kFlushBatch = 32;
  // ... and at most this many bytes: one thread's WriteMany calls stay a few MiB.
  static constexpr uint64_t kFlushBatchBytes = 4 << 20;
  void FlushThread();
  // Under memory pressure the writer (of file `writer_fno`) writes back the oldest dirty
  // objects itself. A failure is its error if the object is of its file, or if the cache is
  // full of what cannot be written back; another file's failure is that file's to report.
  Status RelievePressure(uint64_t writer_fno);
  // COR: the replica OSD announced a new window for one of this client's files.
  void ApplyWindowUpdate(const wire::WindowUpdate& update);
  Oid OriginalOf(const ObjectKey& key) const {
    return Oid{fnso_, key.fno, key.index, ObjectType::kData, CopyFlag::kOriginal};
  }

  ClusterClient* cluster_;
  const uint32_t fnso_;
  const uint64_t object_size_;
  std::mutex mu_;
  std::condition_variable work_cv_;          // flush threads wait for due objects
  std::condition_variable written_back_cv_;  // a write-back finished
  WriteBackCache cache_;
  std::map<uint64_t, Status> write_back_errors_;  // per file, until its next Flush
  // Objects being fetched (for a reader or ahead of one): another reader waits for the fetch
  // instead of sending its own.
  std::set<ObjectKey> fetches_;
  std::condition_variable fetched_cv_;  // a fetch finished
  ReadAhead read_ahead_;
  uint64_t read_ahead_in_flight_ = 0;
  uint64_t read_ahead_objects_ = 0;
  uint64_t fills_in_flight_ = 0;
  uint64_t filled_objects_ = 0;
  bool stopping_fills_ = false;
  uint64_t fetch_waits_ = 0;
  uint64_t synchronous_write_backs_ = 0;
  uint64_t writer_waits_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> flush_threads_;

  const PrefetchMode prefetch_mode_;
  std::mutex windows_mu_;
  WindowTable windows_;  // this client's copy of its COR windows, keyed with an empty client id
  WindowClock::time_point last_window_expiry_ = WindowClock::now();
  std::atomic<uint64_t> original_reads_{0};
  std::atomic<uint64_t> replica_reads_{0};
  std::atomic<uint64_t> replica_read_failures_{0};
  std::atomic<uint64_t> failover_reads_{0};
  std::atomic<uint64_t> hedged_answers_{0};
  std::unique_ptr<WindowSubscriptions> subscriptions_;  // last: its threads use the above
};

}  // namespace orthofs
