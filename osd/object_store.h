// The OSD's persistent object store: RocksDB, one key per object copy (common/oid.h's store
// key, so one file's objects are adjacent), a record per value (common/object_record.h) and
// beside it the record's summary (version, checksum, length: no bytes). Records of 4 KiB and
// more live in the data log (osd/data_log.h); RocksDB keeps their extents
// (common/log_extent.h) and, per log segment, how many of its bytes are still referenced.
// Exact object and byte counts persist beside the data through a merge operator.
#pragma once

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/byte_pieces.h"
#include "common/disk_model.h"
#include "common/object_cache.h"
#include "common/object_record.h"
#include "common/status.h"
#include "osd/data_log.h"
#include "osd/store_write_stop.h"

namespace orthofs {

struct StoreOptions {
  bool sync_writes = false;   // fsync the WAL on every write, not only when asked
  bool direct_reads = false;  // bypass the page cache (cold-read experiments)
  // Appended object bytes stay in the page cache after their disk writes (DataLog::Options).
  bool keep_written_pages = false;
  uint64_t block_cache_mb = 64;  // RocksDB's own block cache
  uint64_t log_segment_bytes = DataLog::kDefaultSegmentBytes;
  // How often segments that are mostly garbage are collected unasked.
  std::chrono::milliseconds collect_period{5000};
  // Experiments only: reads also take the time an emulated disk would (common/disk_model.h).
  std::optional<DiskModelParams> disk_model;
};

struct StoredObject {
  uint64_t version = 0;
  uint64_t checksum = 0;
  std::string data;
  bool tombstone = false;  // deleted; only the version remains

  ObjectRecordSummary summary() const { return {version, checksum, data.size(), tombstone}; }
};

// What the OSD's object cache holds of a live stored object (its bytes moved, not copied).
std::shared_ptr<const CachedObject> ToCachedObject(StoredObject stored);

class ObjectStore {
 public:
  // A set of changes applied atomically by Commit, one change per key. The caller reports what
  // each change replaces (it read it under its lock), so the counts stay exact without extra
  // reads. The bytes handed to Put must stay valid until Commit.
  class Batch {
   public:
    void Put(const std::string& key, uint64_t version, uint64_t checksum, const BytePieces& data,
             bool existed, uint64_t old_length);
    void Put(const std::string& key, uint64_t version, uint64_t checksum, std::string_view data,
             bool existed, uint64_t old_length) {
      Put(key, version, checksum, BytePieces(data), existed, old_length);
    }
    // Removes the key. `live` says whether a live object (not a tombstone) was there.
    void Delete(const std::string& key, bool live, uint64_t old_length);
    // Replaces the object by a tombstone of `version` (see kTombstoneRecordFormat).
    void PutTombstone(const std::string& key, uint64_t version, bool live, uint64_t old_length);
    // A repair record (proto WriteRequest.record_repair): the copy with store key
    // `other_copy_key`, on another OSD, must be made equal to this OSD's copy, which was at
    // `version` when recorded.
    void PutRepairRecord(const std::string& other_copy_key, uint64_t version);
    void DeleteRepairRecord(const std::string& other_copy_key);
    bool empty() const { return batch_.Count() == 0 && summaries_.empty() && logged_.empty(); }

   private:
    friend class ObjectStore;
    // A record, as header and bytes, of `key`: into the data log when large, else inline.
    void PutRecord(const std::string& key, std::string header, const BytePieces& data);
    struct LoggedRecord {
      std::string key;
      std::string header;
      BytePieces data;
    };
    rocksdb::WriteBatch batch_;
    std::vector<LoggedRecord> logged_;       // appended to the log by Commit
    std::vector<std::string> changed_keys_;  // every object key put or deleted
    // Each change's summary (none: deleted), added to batch_ by Commit, which has their column
    // family.
    std::vector<std::pair<std::string, std::optional<std::string>>> summaries_;
    int64_t objects_delta_ = 0;
    int64_t bytes_delta_ = 0;
    bool committed_ = false;  // Commit took it (see there)
  };

  static Result<std::unique_ptr<ObjectStore>> Open(const std::string& dir,
                                                   const StoreOptions& options);
  ~ObjectStore();

  // kNotFound when absent, kCorruption when the record fails its checksum. Tombstones are
  // returned as such (tombstone = true).
  Result<StoredObject> Get(const std::string& key) const;
  // Starts the disk reads of these keys' records at once (posix_fadvise WILLNEED), for Gets
  // that follow one after another: a batch of reads then waits about as long as its slowest.
  void WillNeed(const std::vector<std::string>& keys) const;
  // Applies the batch's changes at once (sync: durable on return). A batch is committed once,
  // whether or not that succeeds: a failed Commit may have appended its records to the data log
  // and abandoned them, and committing it again would index bytes that collection frees. A
  // second Commit of it is refused (kInvalidArgument).
  Status Commit(Batch* batch, bool sync);

  // Visits objects with begin <= key < end in key order, after `start_after` if non-empty,
  // until a visitor returns false. Tombstones are skipped unless with_tombstones. Records that fail
  // to decode go to visit_corrupt (skipped when it is empty), so a listing never stops on one bad
  // object.
  using Visitor = std::function<bool(const std::string& key, const StoredObject& object)>;
  using CorruptVisitor = std::function<bool(const std::string& key)>;
  Status Scan(const std::string& begin, const std::string& end, const std::string& start_after,
              const Visitor& visit, const CorruptVisitor& visit_corrupt = {},
              bool with_tombstones = false) const;

  // What the record of a key says, without reading the object's bytes (a summary kept beside
  // every record; a record without one is read whole). kNotFound when absent; tombstones are
  // returned as such. A damaged record with an intact summary is not noticed here: this is for
  // writers that replace the object whole.
  Result<ObjectRecordSummary> GetSummary(const std::string& key) const;

  // Scan's listing from the summaries alone: no object bytes are read, and damaged bytes go
  // unnoticed (a record whose summary and header are both damaged is left out). Tombstones
  // are visited too (summary.tombstone). Until older records all have summaries (a failed
  // backfill at Open), the records are read instead.
  using SummaryVisitor =
      std::function<bool(const std::string& key, const ObjectRecordSummary& summary)>;
  Status ScanSummaries(const std::string& begin, const std::string& end,
                       const std::string& start_after, const SummaryVisitor& visit) const;

  // The stored record of a key exactly as it is on disk, and a raw replacement of it: for
  // tests that damage a record the way a bad disk would (common/object_record.h's format).
  Result<std::string> GetRecordBytes(const std::string& key) const;
  Status PutRecordBytes(const std::string& key, const std::string& record);

  // Every object with begin <= key < end, in key order, read as ONE request (the prefetcher's
  // sequential range read) and handed to `take` as soon as it is read, so the first objects of
  // a long range serve readers before the last are in. With a disk model the range costs one
  // positioning and the transfer of all of it, charged before the first object is handed over.
  // Tombstones and undecodable records are left out; on an error, what was read before it has
  // been handed over.
  using RangeTaker = std::function<void(const std::string& key, StoredObject object)>;
  Status ReadRange(const std::string& begin, const std::string& end, const RangeTaker& take) const;

  // fsync of the write-ahead log: every write committed so far becomes durable.
  Status SyncWal();

  // Every repair record as (other copy's store key, version recorded), in key order.
  Result<std::vector<std::pair<std::string, uint64_t>>> RepairRecords() const;
  // kNotFound when there is none for this other copy.
  Result<uint64_t> GetRepairRecord(const std::string& other_copy_key) const;

  // Small named values beside the objects (the OSD's identity, ...).
  Result<std::string> GetMeta(const std::string& name) const;
  Status PutMeta(const std::string& name, const std::string& value);

  // Emulated disk: reads and the ones that had to seek (0 without a disk model).
  uint64_t disk_reads() const;
  uint64_t disk_seeks() const;

  // Gives the space of deleted objects back to the file system soon: a background thread
  // collects every data log segment with garbage in it (moving its live records to the end of
  // the log), then flushes the memtable and compacts the whole index (a full OSD asks after
  // deletes). Requests made while one runs coalesce into the next. Without requests, segments
  // that are mostly garbage are collected every few seconds.
  void RequestCompaction();
  // Empties RocksDB's block cache (what no reader holds right now): a benchmark's reads start
  // cold. Returns the bytes it held before.
  uint64_t DropBlockCache();
  uint64_t compactions() const { return compactions_.load(); }
  // Data log segments collected (emptied and deleted) so far.
  uint64_t segments_collected() const { return segments_collected_.load(); }

  // Object bytes live in the data log: its size on disk, and how much of it is garbage
  // (overwritten or deleted objects) not yet collected.
  uint64_t data_log_bytes() const { return log_->total_bytes(); }
  uint64_t data_log_garbage_bytes() const { return log_->garbage_bytes(); }
  // Appended object bytes not yet durable. A durable index write leaves none behind it.
  bool data_log_unsynced() const { return log_->HasUnsynced(); }
  // Writes of the index made durable (synced commits, WAL syncs): what sync requests cost.
  uint64_t wal_syncs() const { return wal_syncs_.load(); }
  // After RocksDB's first background error (a full disk, a failing device) every write is
  // refused until the store is reopened (osd/store_write_stop.h); reads go on.
  bool writes_stopped() const { return write_stop_->stopped(); }
  Status WritesAllowed() const { return write_stop_->WritesAllowed(); }

  uint64_t object_count() const { return objects_.load(); }
  uint64_t byte_count() const { return bytes_.load(); }
  bool sync_writes() const { return options_.sync_writes; }

 private:
  ObjectStore(std::unique_ptr<rocksdb::DB> db, std::vector<rocksdb::ColumnFamilyHandle*> families,
              std::unique_ptr<DataLog> log, const StoreOptions& options);
  // A stored value as a record: an inline one decoded, an extent read from the log. kNotFound
  // when the extent's segment has been collected since the value was read (read it again).
  Result<StoredObject> Materialize(std::string_view value) const;
  // Materialize for a value a scan read under `key`: when its segment was collected since, the
  // key is read again.
  Result<StoredObject> MaterializeAt(const std::string& key, std::string_view value) const;
  // The same as the record's raw bytes (header and bytes joined, undecoded).
  Result<std::string> MaterializeRaw(std::string_view value) const;
  // The record an extent value refers to, `header->size()` bytes of it into header and the rest
  // into data, checked against the extent's binding.
  Status ReadLogged(std::string_view value, std::string* header, std::string* data) const;

  // Locks, in a fixed order, the key stripes of `keys`: commits and garbage collection change
  // an object's extent under its stripe, so neither loses the other's change.
  std::vector<std::unique_lock<std::mutex>> LockKeyStripes(const std::vector<std::string>& keys);
  // The log extent stored under `key` now, if it is one.
  Result<std::optional<LogExtent>> CurrentExtent(const std::string& key) const;

  // Moves every record of earlier stores that is still inline and large into the data log,
  // once per store.
  Status MoveRecordsToLog(const std::string& dir);
  // Every object key's record in key order (no repair records, meta or counters), bypassing
  // the block cache.
  std::unique_ptr<rocksdb::Iterator> NewObjectKeyIterator() const;
  // Hands the per-segment live counts to the log; counts of segments whose files are gone
  // are dropped.
  Status RestoreSegmentUsage(const std::map<uint64_t, int64_t>& usage);
  // Empties and deletes the segments the log names as victims.
  Status CollectSegments(double min_garbage_fraction);
  // Whether every record has its summary (BackfillSummaries completed).
  bool summaries_complete() const { return summaries_complete_; }

  // Gives every record written before summaries were kept its summary, once per store.
  Status BackfillSummaries(const std::string& dir);

  // Sleeps for the emulated disk's time to read first..last (adjacent objects), holding the
  // one disk head; requests take the head in arrival order, as a disk's queue would serve them.
  void EmulateDiskRead(std::string_view first_key, std::string_view last_key, uint64_t bytes) const;

  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> families_;  // as opened: default, summaries
  rocksdb::ColumnFamilyHandle* summaries_ = nullptr;
  bool summaries_complete_ = false;  // set at Open, before any other use
  StoreOptions options_;
  mutable std::mutex disk_mu_;
  mutable std::condition_variable disk_turn_;
  mutable uint64_t disk_next_ticket_ = 0;
  mutable uint64_t disk_serving_ = 0;
  mutable std::unique_ptr<DiskModel> disk_;
  std::atomic<int64_t> objects_{0};
  std::atomic<int64_t> bytes_{0};
  void MaintenanceThread();
  std::mutex compaction_mu_;
  std::condition_variable compaction_cv_;
  bool compaction_requested_ = false;  // guarded by compaction_mu_
  bool closing_ = false;               // guarded by compaction_mu_
  std::atomic<uint64_t> compactions_{0};
  std::atomic<uint64_t> wal_syncs_{0};
  std::thread compaction_thread_;
  std::unique_ptr<DataLog> log_;
  std::shared_ptr<rocksdb::EventListener> flush_listener_;  // syncs log_ before flushes
  std::shared_ptr<StoreWriteStop> write_stop_;              // set by RocksDB's errors
  std::shared_ptr<rocksdb::Cache> block_cache_;             // RocksDB's (DropBlockCache)
  rocksdb::ColumnFamilyHandle* segment_usage_ = nullptr;    // live bytes per log segment
  std::array<std::mutex, 64> key_stripes_;
  std::atomic<uint64_t> segments_collected_{0};
};

// Maps a RocksDB status to ours (no-space errors become kNoSpace).
Status FromRocks(const rocksdb::Status& s, const std::string& context);

}  // namespace orthofs
