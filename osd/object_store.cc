#include "osd/object_store.h"

#include <rocksdb/cache.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/listener.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/table.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <set>
#include <thread>

#include "common/crc32c.h"
#include "common/object_record.h"
#include "common/oid.h"
#include "osd/rocksdb_crc32c.h"
#include "osd/rocksdb_logger.h"

namespace orthofs {
namespace {

// Meta keys start with 0xff; object keys start with their flag byte (0 or 1).
const std::string kMetaPrefix =
    "\xff"
    "meta/";
// Repair records: 0xfe, then the other copy's store key (never a store key's length).
const std::string kRepairPrefix = "\xfe";
// Each record's summary (common/object_record.h), under the record's store key, in a column
// family of its own: a binary from before summaries cannot open the store (it would change
// records without their summaries).
const std::string kSummaryFamily = "summaries";
// Set once every record has its summary (records from before summaries were kept get theirs at
// the first open).
const std::string kSummariesKeptMeta = "summaries-family-kept";
// Where summaries lived for a few commits of one session (in the default family under this
// prefix): the backfill drops them.
const std::string kOldSummaryPrefix = "\xfd";
// Per data log segment (its id big-endian), how many of its bytes the index refers to: a merge
// counter, in a column family of its own (which also keeps binaries from before the data log
// out: they would take extents for damaged records).
const std::string kSegmentUsageFamily = "log-segments";
// Set once every large record of an earlier store has moved into the data log.
const std::string kRecordsInLogMeta = "records-in-data-log";
// Records this large or larger go to the data log; smaller ones (inodes, directory entries,
// tombstones) stay inline, where one RocksDB read finds them.
constexpr size_t kLoggedRecordMinBytes = 4096;
// Segments at least this much garbage are collected without being asked.
constexpr double kCollectGarbageFraction = 0.5;
// The live bytes one collection round moves at most: a quarter of the default disk reserve
// (--reserve-mb), so a full OSD can still collect.
constexpr uint64_t kCollectMaxLiveBytes = 64 << 20;

// Object keys start with their flag byte (0 or 1); repair records, meta and counters after.
const std::string kObjectKeysEnd = "\x02";
const std::string kObjectsCounterKey =
    "\xff"
    "count/objects";
const std::string kBytesCounterKey =
    "\xff"
    "count/bytes";

std::string EncodeDelta(int64_t v) {
  std::string s;
  AppendBigEndian64(&s, static_cast<uint64_t>(v));
  return s;
}

int64_t DecodeDelta(const rocksdb::Slice& s) {
  return s.size() == 8 ? static_cast<int64_t>(ReadBigEndian64(s.data())) : 0;
}

// Adds signed 64-bit deltas, so counting needs no read-modify-write of the counter key.
class AddInt64Operator : public rocksdb::AssociativeMergeOperator {
 public:
  bool Merge(const rocksdb::Slice&, const rocksdb::Slice* existing, const rocksdb::Slice& value,
             std::string* new_value, rocksdb::Logger*) const override {
    int64_t sum = (existing ? DecodeDelta(*existing) : 0) + DecodeDelta(value);
    *new_value = EncodeDelta(sum);
    return true;
  }
  const char* Name() const override { return "orthofs.AddInt64"; }
};

// Syncs the data log before RocksDB makes a memtable durable in a table: the index entries in it
// must not outlive the bytes they refer to. (A write-ahead log sync is preceded by a log sync in
// Commit and SyncWal.)
class LogSyncBeforeFlush : public rocksdb::EventListener {
 public:
  void OnFlushBegin(rocksdb::DB*, const rocksdb::FlushJobInfo&) override {
    DataLog* log = log_.load();
    if (!log) return;
    if (Status st = log->Sync(); !st.ok()) {
      spdlog::error("store: data log sync before a memtable flush failed: {}", st.ToString());
    }
  }
  void set_log(DataLog* log) { log_.store(log); }

 private:
  std::atomic<DataLog*> log_{nullptr};
};

// The store's live byte counts per data log segment.
Result<std::map<uint64_t, int64_t>> ReadSegmentUsage(rocksdb::DB* db,
                                                     rocksdb::ColumnFamilyHandle* family) {
  std::map<uint64_t, int64_t> usage;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), family));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (it->key().size() != 8) continue;
    usage[ReadBigEndian64(it->key().data())] = DecodeDelta(it->value());
  }
  if (Status st = FromRocks(it->status(), "read data log usage"); !st.ok()) return st;
  return usage;
}

// Reads `key`'s stored value and hands it to `materialize`. A kNotFound from it means the
// record's segment was collected after the value was read: the index has moved on to the
// record's new place, so the value is read again. Persisting, the segment is missing (lost in a
// crash): the copy is damaged, and repair replaces it from the other one.
template <typename T, typename Materializer>
Result<T> ReadIndexed(rocksdb::DB* db, const std::string& key, const Materializer& materialize) {
  for (int attempt = 0;; ++attempt) {
    rocksdb::PinnableSlice value;
    rocksdb::Status s = db->Get(rocksdb::ReadOptions(), db->DefaultColumnFamily(), key, &value);
    if (s.IsNotFound()) return Status::NotFound("no such object");
    if (!s.ok()) return FromRocks(s, "store read");
    Result<T> got = materialize(value.ToStringView());
    if (!got.status().Is(StatusCode::kNotFound)) return got;
    if (attempt == 3) return Status::Corruption("store read: " + got.status().message());
  }
}

}  // namespace

Status FromRocks(const rocksdb::Status& s, const std::string& context) {
  if (s.ok()) return Status::Ok();
  std::string msg = context + ": " + s.ToString();
  if (s.IsNotFound()) return Status::NotFound(msg);
  if (s.IsNoSpace() || s.ToString().find("No space left") != std::string::npos) {
    return Status::NoSpace(msg);
  }
  if (s.IsCorruption()) return Status::Corruption(msg);
  if (s.IsIOError()) return Status::IoError(msg);
  return Status::Internal(msg);
}

std::string SegmentUsageKey(uint64_t segment) {
  std::string key;
  AppendBigEndian64(&key, segment);
  return key;
}

void ObjectStore::Batch::PutRecord(const std::string& key, std::string header,
                                   const BytePieces& data) {
  changed_keys_.push_back(key);
  if (header.size() + data.size() >= kLoggedRecordMinBytes) {
    logged_.push_back({key, std::move(header), data});
    return;
  }
  // Header and bytes go into the batch as they are, in pieces: no joined copy of the object.
  std::vector<rocksdb::Slice> value_parts = {header};
  for (std::string_view piece : data.pieces()) value_parts.emplace_back(piece.data(), piece.size());
  const rocksdb::Slice key_part(key);
  batch_.Put(rocksdb::SliceParts(&key_part, 1),
             rocksdb::SliceParts(value_parts.data(), static_cast<int>(value_parts.size())));
}

void ObjectStore::Batch::Put(const std::string& key, uint64_t version, uint64_t checksum,
                             const BytePieces& data, bool existed, uint64_t old_length) {
  PutRecord(key, EncodeObjectRecordHeader(version, checksum), data);
  summaries_.emplace_back(key, EncodeObjectRecordSummary({version, checksum, data.size()}));
  if (!existed) ++objects_delta_;
  bytes_delta_ += static_cast<int64_t>(data.size()) - static_cast<int64_t>(old_length);
}

void ObjectStore::Batch::Delete(const std::string& key, bool live, uint64_t old_length) {
  changed_keys_.push_back(key);
  batch_.Delete(key);
  summaries_.emplace_back(key, std::nullopt);
  if (live) {
    --objects_delta_;
    bytes_delta_ -= static_cast<int64_t>(old_length);
  }
}

void ObjectStore::Batch::PutTombstone(const std::string& key, uint64_t version, bool live,
                                      uint64_t old_length) {
  PutRecord(key, EncodeTombstoneRecord(version), {});
  summaries_.emplace_back(key, EncodeObjectRecordSummary({.version = version, .tombstone = true}));
  if (live) {
    --objects_delta_;
    bytes_delta_ -= static_cast<int64_t>(old_length);
  }
}

void ObjectStore::Batch::PutRepairRecord(const std::string& other_copy_key, uint64_t version) {
  std::string value;
  AppendBigEndian64(&value, version);
  batch_.Put(kRepairPrefix + other_copy_key, value);
}

void ObjectStore::Batch::DeleteRepairRecord(const std::string& other_copy_key) {
  batch_.Delete(kRepairPrefix + other_copy_key);
}

Result<std::vector<std::pair<std::string, uint64_t>>> ObjectStore::RepairRecords() const {
  std::vector<std::pair<std::string, uint64_t>> records;
  const std::string end = PrefixSuccessor(kRepairPrefix);
  rocksdb::ReadOptions ro;
  rocksdb::Slice upper(end);
  ro.iterate_upper_bound = &upper;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro));
  for (it->Seek(kRepairPrefix); it->Valid(); it->Next()) {
    if (it->key().size() != 1 + kStoreKeySize || it->value().size() != 8) continue;
    records.emplace_back(it->key().ToString().substr(1), ReadBigEndian64(it->value().data()));
  }
  if (Status st = FromRocks(it->status(), "list repair records"); !st.ok()) return st;
  return records;
}

Result<uint64_t> ObjectStore::GetRepairRecord(const std::string& other_copy_key) const {
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), kRepairPrefix + other_copy_key, &value);
  if (s.IsNotFound()) return Status::NotFound("no repair record");
  if (Status st = FromRocks(s, "read repair record"); !st.ok()) return st;
  if (value.size() != 8)
    return Status::Corruption("repair record of " + std::to_string(value.size()) + " bytes");
  return ReadBigEndian64(value.data());
}

ObjectStore::ObjectStore(std::unique_ptr<rocksdb::DB> db,
                         std::vector<rocksdb::ColumnFamilyHandle*> families,
                         std::unique_ptr<DataLog> log, const StoreOptions& options)
    : db_(std::move(db)), families_(std::move(families)), options_(options), log_(std::move(log)) {
  summaries_ = families_.at(1);
  segment_usage_ = families_.at(2);
  if (options_.disk_model) disk_ = std::make_unique<DiskModel>(*options_.disk_model);
}

uint64_t ObjectStore::DropBlockCache() {
  if (!block_cache_) return 0;
  const uint64_t held = block_cache_->GetUsage();
  block_cache_->EraseUnRefEntries();
  return held;
}

void ObjectStore::RequestCompaction() {
  {
    std::lock_guard lock(compaction_mu_);
    compaction_requested_ = true;
  }
  compaction_cv_.notify_one();
}

void ObjectStore::MaintenanceThread() {
  std::unique_lock lock(compaction_mu_);
  while (true) {
    compaction_cv_.wait_for(lock, options_.collect_period,
                            [this] { return compaction_requested_ || closing_; });
    if (closing_) return;
    const bool requested = compaction_requested_;
    compaction_requested_ = false;
    // Stopped after a disk error: nothing is written until the OSD restarts.
    if (write_stop_->stopped()) continue;
    lock.unlock();
    // Asked to reclaim space: every segment with garbage; else the mostly-garbage ones.
    if (Status st = CollectSegments(requested ? 0.0 : kCollectGarbageFraction); !st.ok()) {
      spdlog::warn("store: data log collection failed: {}", st.ToString());
    }
    if (!requested) {
      lock.lock();
      continue;
    }
    rocksdb::Status s = db_->Flush(rocksdb::FlushOptions(), families_);
    rocksdb::CompactRangeOptions compact;
    // Blob files of a store from before the data log: their garbage goes as well.
    compact.blob_garbage_collection_policy = rocksdb::BlobGarbageCollectionPolicy::kForce;
    compact.blob_garbage_collection_age_cutoff = 1.0;
    if (s.ok()) s = db_->CompactRange(compact, nullptr, nullptr);
    if (s.ok()) {
      ++compactions_;
    } else {
      spdlog::warn("store compaction (to reclaim deleted objects' space) failed: {}", s.ToString());
    }
    lock.lock();
  }
}

void ObjectStore::EmulateDiskRead(std::string_view first_key, std::string_view last_key,
                                  uint64_t bytes) const {
  if (!disk_) return;
  Result<Oid> first = DecodeStoreKey(first_key);
  Result<Oid> last = DecodeStoreKey(last_key);
  if (!first.ok() || !last.ok()) return;
  std::unique_lock lock(disk_mu_);
  const uint64_t ticket = disk_next_ticket_++;
  disk_turn_.wait(lock, [&] { return disk_serving_ == ticket; });
  const std::chrono::microseconds busy = disk_->ReadTime(*first, *last, bytes);
  lock.unlock();
  std::this_thread::sleep_for(busy);  // the head is ours: later tickets wait
  lock.lock();
  ++disk_serving_;
  disk_turn_.notify_all();
}

std::shared_ptr<const CachedObject> ToCachedObject(StoredObject stored) {
  auto object = std::make_shared<CachedObject>();
  object->version = stored.version;
  object->checksum = stored.checksum;
  object->data = std::move(stored.data);
  return object;
}

Status ObjectStore::ReadRange(const std::string& begin, const std::string& end,
                              const RangeTaker& take) const {
  std::vector<std::pair<std::string, StoredObject>> held;  // with a disk model, until charged
  uint64_t bytes = 0;
  rocksdb::ReadOptions ro;
  rocksdb::Slice upper(end);
  ro.iterate_upper_bound = &upper;
  // The takers keep what a range read loads (the prefetcher's window cache): a second copy in
  // RocksDB's blob cache would only push out index and filter blocks, and fill fresh memory.
  ro.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro));
  // The range's index first (small values), so that the disk reads of all its records start at
  // once: a file's objects lie in the data log in the order they were written (randomly, for a
  // file written at random), where the kernel's read-ahead would not find them in turn.
  std::vector<std::pair<std::string, std::string>> values;
  std::vector<LogExtent> extents;
  for (it->Seek(begin); it->Valid(); it->Next()) {
    if (it->key().size() != kStoreKeySize) continue;
    values.emplace_back(it->key().ToString(), it->value().ToString());
    if (!IsLogExtent(values.back().second)) continue;
    if (Result<LogExtent> extent = DecodeLogExtent(values.back().second); extent.ok()) {
      extents.push_back(*extent);
    }
  }
  Status st = FromRocks(it->status(), "store range read");
  it.reset();  // the reads, the emulated disk time and the takers need not pin the scan's files
  log_->WillNeed(extents);
  for (const auto& [key, value] : values) {
    Result<StoredObject> object = MaterializeAt(key, value);
    if (!object.ok() || object->tombstone) continue;  // deleted meanwhile, or damaged
    if (!disk_) {
      take(key, std::move(*object));
      continue;
    }
    bytes += object->data.size() + kObjectRecordHeaderSize;
    held.emplace_back(key, std::move(*object));
  }
  if (!held.empty()) EmulateDiskRead(held.front().first, held.back().first, bytes);
  for (auto& [key, object] : held) take(key, std::move(object));
  return st;
}

uint64_t ObjectStore::disk_reads() const {
  std::lock_guard lock(disk_mu_);
  return disk_ ? disk_->reads() : 0;
}

uint64_t ObjectStore::disk_seeks() const {
  std::lock_guard lock(disk_mu_);
  return disk_ ? disk_->seeks() : 0;
}

ObjectStore::~ObjectStore() {
  {
    std::lock_guard lock(compaction_mu_);
    closing_ = true;
  }
  compaction_cv_.notify_one();
  if (db_) db_->DisableManualCompaction();  // a running CompactRange returns early
  if (compaction_thread_.joinable()) compaction_thread_.join();
  if (log_) {
    if (Status st = log_->Sync(); !st.ok()) {
      spdlog::error("store: data log sync at close failed: {}", st.ToString());
    }
  }
  if (db_) {
    for (rocksdb::ColumnFamilyHandle* family : families_) {
      rocksdb::Status d = db_->DestroyColumnFamilyHandle(family);
      (void)d;  // only fails for a null handle
    }
    rocksdb::Status s = db_->Close();
    (void)s;  // nothing left to do with a failed close at shutdown
  }
  if (flush_listener_) static_cast<LogSyncBeforeFlush*>(flush_listener_.get())->set_log(nullptr);
}

Result<std::unique_ptr<ObjectStore>> ObjectStore::Open(const std::string& dir,
                                                       const StoreOptions& options) {
  rocksdb::Options db_options;
  db_options.create_if_missing = true;
  // No LOG file: on a disk full to the last byte RocksDB aborts at its next line after a failed
  // append to it (osd/rocksdb_logger.h).
  auto info_log = std::make_shared<RocksDbLogger>(dir);
  db_options.info_log = info_log;
  db_options.merge_operator = std::make_shared<AddInt64Operator>();
  db_options.use_direct_reads = options.direct_reads;
  // Records of older stores lay side by side in blob files until they moved to the data log,
  // and RocksDB's default, POSIX_FADV_RANDOM on every file, turned each read into a synchronous
  // 128 KiB disk read (cold sequential reads then: 375-390 -> 447-457 MB/s plaintext without
  // it). The data log's files are opened without advice as well.
  db_options.advise_random_on_open = false;
  db_options.IncreaseParallelism(2);
  // Objects are 128 KiB by default: larger write buffers and blocks keep write
  // amplification and index size down.
  db_options.write_buffer_size = 64 << 20;
  // Object bytes are mostly incompressible (media, archives, random benchmark data): snappy
  // only burns CPU on them.
  db_options.compression = rocksdb::kNoCompression;
  // Object bytes live in the data log; values of 4 KiB and more only in stores from before it,
  // until their first open moves them (MoveRecordsToLog). Those lived in blob files, whose
  // garbage compactions collect.
  db_options.enable_blob_files = true;
  db_options.min_blob_size = 4096;
  db_options.blob_file_size = 256 << 20;
  db_options.enable_blob_garbage_collection = true;
  db_options.blob_garbage_collection_age_cutoff = 0.25;
  rocksdb::BlockBasedTableOptions table;
  table.block_size = 64 << 10;
  // Every write first looks its object up (version, ranged merge); for new objects the bloom
  // filter answers "absent" without reading data blocks.
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  std::shared_ptr<rocksdb::Cache> block_cache = rocksdb::NewLRUCache(options.block_cache_mb << 20);
  table.block_cache = block_cache;
  db_options.blob_cache = table.block_cache;  // object bytes as before, one LRU for both
  // XXH3 for the block checksums of flushes and compactions: cheaper than even a hardware
  // CRC32C. (The write-ahead log has no choice: CRC32C, see osd/rocksdb_crc32c.cc.)
  table.checksum = rocksdb::kXXH3;
  db_options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));

  spdlog::debug(
      "store {}: RocksDB's log checksums (CRC32C) on {}", dir,
      RocksDbCrc32cIsOurs() && Crc32cUsesHardware() ? "the crc32 instruction" : "a lookup table");
  // Summaries are small values, read one at a time or in key order: no blob files.
  rocksdb::ColumnFamilyOptions summary_options(db_options);
  summary_options.enable_blob_files = false;
  summary_options.merge_operator = nullptr;
  summary_options.write_buffer_size = 8 << 20;
  db_options.create_missing_column_families = true;
  // A log file lives until every family has flushed what it holds, and the summaries' memtable
  // fills slowly: flushed separately, it kept logs full of object bytes around (hundreds of
  // MiB, past the disk reserve). Both families flush together.
  db_options.atomic_flush = true;
  rocksdb::ColumnFamilyOptions usage_options(summary_options);
  usage_options.merge_operator = db_options.merge_operator;
  const std::vector<rocksdb::ColumnFamilyDescriptor> families = {
      {rocksdb::kDefaultColumnFamilyName, db_options},
      {kSummaryFamily, summary_options},
      {kSegmentUsageFamily, usage_options}};
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  // A previous run's appends become durable before its index can be made durable by the open
  // (RocksDB flushes what it recovers from its write-ahead log).
  ORTHOFS_RETURN_IF_ERROR(DataLog::SyncExisting(dir + "/data-log"));
  auto flush_listener = std::make_shared<LogSyncBeforeFlush>();
  db_options.listeners.push_back(flush_listener);
  auto write_stop = std::make_shared<StoreWriteStop>();
  db_options.listeners.push_back(write_stop);
  rocksdb::Status s = rocksdb::DB::Open(db_options, dir, families, &handles, &raw);
  if (!s.ok()) {
    if (s.ToString().find("lock file") != std::string::npos) {
      return Status::IoError("data dir " + dir +
                             " is in use by another process (its RocksDB LOCK is held)");
    }
    return FromRocks(s, "cannot open store in " + dir);
  }
  std::unique_ptr<rocksdb::DB> db(raw);
  info_log->Opened();
  Result<std::map<uint64_t, int64_t>> usage = ReadSegmentUsage(db.get(), handles.at(2));
  Result<std::unique_ptr<DataLog>> log =
      usage.ok() ? DataLog::Open(dir + "/data-log",
                                 {.segment_bytes = options.log_segment_bytes,
                                  .drop_cache_before_reads = options.direct_reads,
                                  .drop_written_pages = !options.keep_written_pages},
                                 usage->empty() ? 1 : usage->rbegin()->first + 1)
                 : Result<std::unique_ptr<DataLog>>(usage.status());
  if (!log.ok()) {
    for (rocksdb::ColumnFamilyHandle* family : handles) (void)db->DestroyColumnFamilyHandle(family);
    return log.status();
  }
  flush_listener->set_log(log->get());
  std::unique_ptr<ObjectStore> store(
      new ObjectStore(std::move(db), std::move(handles), std::move(*log), options));
  store->flush_listener_ = flush_listener;
  store->write_stop_ = write_stop;
  store->block_cache_ = std::move(block_cache);
  if (Status st = store->RestoreSegmentUsage(*usage); !st.ok()) return st;
  if (Status st = store->BackfillSummaries(dir); !st.ok()) {
    // Bare listings go through the records until a later open completes it.
    spdlog::error(
        "store {}: adding summaries to older records failed, retried at the next "
        "start: {}",
        dir, st.ToString());
  }

  for (auto [key, counter] : {std::pair{&kObjectsCounterKey, &store->objects_},
                              std::pair{&kBytesCounterKey, &store->bytes_}}) {
    std::string value;
    rocksdb::Status g = store->db_->Get(rocksdb::ReadOptions(), *key, &value);
    if (g.ok()) {
      counter->store(DecodeDelta(value));
    } else if (!g.IsNotFound()) {
      return FromRocks(g, "cannot read store counters in " + dir);
    }
  }
  if (Status st = store->MoveRecordsToLog(dir); !st.ok()) return st;
  store->compaction_thread_ = std::thread([s = store.get()] { s->MaintenanceThread(); });
  return store;
}

Status ObjectStore::ReadLogged(std::string_view value, std::string* header,
                               std::string* data) const {
  Result<LogExtent> extent = DecodeLogExtent(value);
  if (!extent.ok()) return extent.status();
  ORTHOFS_RETURN_IF_ERROR(log_->Read(*extent, header, data));
  if (RecordBinding(*header, *data) != extent->binding) {
    return Status::Corruption("the data log holds another record where this one should be");
  }
  return Status::Ok();
}

Result<StoredObject> ObjectStore::Materialize(std::string_view value) const {
  if (!IsLogExtent(value)) {
    Result<ObjectRecordView> record = DecodeObjectRecord(value);
    if (!record.ok()) return record.status();
    return StoredObject{record->version, record->checksum, std::string(record->data),
                        record->tombstone};
  }
  std::string header(kObjectRecordHeaderSize, '\0');
  StoredObject object;
  // The bytes are read straight into the object: no copy after the read.
  ORTHOFS_RETURN_IF_ERROR(ReadLogged(value, &header, &object.data));
  Result<ObjectRecordView> record = DecodeObjectRecord(header, object.data);
  if (!record.ok()) return record.status();
  object.version = record->version;
  object.checksum = record->checksum;
  object.tombstone = record->tombstone;
  return object;
}

Result<std::string> ObjectStore::MaterializeRaw(std::string_view value) const {
  if (!IsLogExtent(value)) return std::string(value);
  std::string none;
  std::string record;
  ORTHOFS_RETURN_IF_ERROR(ReadLogged(value, &none, &record));
  return record;
}

Result<StoredObject> ObjectStore::Get(const std::string& key) const {
  Result<StoredObject> object = ReadIndexed<StoredObject>(
      db_.get(), key, [this](std::string_view value) { return Materialize(value); });
  if (object.ok()) EmulateDiskRead(key, key, object->data.size() + kObjectRecordHeaderSize);
  return object;
}

Result<StoredObject> ObjectStore::MaterializeAt(const std::string& key,
                                                std::string_view value) const {
  Result<StoredObject> object = Materialize(value);
  if (!object.status().Is(StatusCode::kNotFound)) return object;
  // Collected after the scan read the extent: the index has the record's new place (or none,
  // when the object was deleted since).
  return Get(key);
}

void ObjectStore::WillNeed(const std::vector<std::string>& keys) const {
  std::vector<LogExtent> extents;
  for (const std::string& key : keys) {
    Result<std::optional<LogExtent>> extent = CurrentExtent(key);
    if (extent.ok() && *extent) extents.push_back(**extent);
  }
  log_->WillNeed(extents);
}

Result<std::optional<LogExtent>> ObjectStore::CurrentExtent(const std::string& key) const {
  rocksdb::PinnableSlice value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), db_->DefaultColumnFamily(), key, &value);
  if (s.IsNotFound()) return std::optional<LogExtent>();
  if (!s.ok()) return FromRocks(s, "store read");
  if (!IsLogExtent(value.ToStringView())) return std::optional<LogExtent>();
  Result<LogExtent> extent = DecodeLogExtent(value.ToStringView());
  if (!extent.ok()) {
    // Its bytes stay in the log as garbage until collection finds nothing refers to them.
    spdlog::warn("store: the extent of a record is damaged: {}", extent.status().ToString());
    return std::optional<LogExtent>();
  }
  return std::optional<LogExtent>(*extent);
}

std::vector<std::unique_lock<std::mutex>> ObjectStore::LockKeyStripes(
    const std::vector<std::string>& keys) {
  std::vector<size_t> stripes;
  for (const std::string& key : keys) {
    stripes.push_back(std::hash<std::string>{}(key) % key_stripes_.size());
  }
  std::sort(stripes.begin(), stripes.end());
  stripes.erase(std::unique(stripes.begin(), stripes.end()), stripes.end());
  std::vector<std::unique_lock<std::mutex>> locks;
  for (size_t stripe : stripes) locks.emplace_back(key_stripes_[stripe]);
  return locks;
}

Result<ObjectRecordSummary> ObjectStore::GetSummary(const std::string& key) const {
  rocksdb::PinnableSlice value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), summaries_, key, &value);
  if (s.ok()) {
    Result<ObjectRecordSummary> summary = DecodeObjectRecordSummary(value.ToStringView());
    if (summary.ok()) return summary;
    Result<Oid> oid = DecodeStoreKey(key);
    spdlog::warn("store: the summary of {} is damaged ({}): reading the record",
                 oid.ok() ? oid->ToString() : "a record", summary.status().ToString());
  } else if (!s.IsNotFound()) {
    return FromRocks(s, "store read");
  }
  // No summary (a record written before summaries were kept, or by PutRecordBytes): the record.
  Result<StoredObject> stored = Get(key);
  if (!stored.ok()) return stored.status();
  return stored->summary();
}

Result<std::string> ObjectStore::GetRecordBytes(const std::string& key) const {
  return ReadIndexed<std::string>(db_.get(), key,
                                  [this](std::string_view value) { return MaterializeRaw(value); });
}

Status ObjectStore::PutRecordBytes(const std::string& key, const std::string& record) {
  Batch raw;
  raw.PutRecord(key, record, {});
  rocksdb::WriteBatch& batch = raw.batch_;
  // The record alone, as a bad sector would change it: its summary stays. A record that had
  // none gets one from its header if that decodes, so that bare listings see it.
  std::string existing;
  rocksdb::Status g = db_->Get(rocksdb::ReadOptions(), summaries_, key, &existing);
  if (!g.ok() && !g.IsNotFound()) return FromRocks(g, "store read");
  Result<ObjectRecordSummary> summary = SummarizeObjectRecord(record);
  if (g.IsNotFound() && summary.ok()) {
    batch.Put(summaries_, key, EncodeObjectRecordSummary(*summary));
  }
  return Commit(&raw, /*sync=*/true);
}

Status ObjectStore::Commit(Batch* batch, bool sync) {
  if (batch->committed_) return Status::InvalidArgument("a store batch is committed only once");
  batch->committed_ = true;
  ORTHOFS_RETURN_IF_ERROR(write_stop_->WritesAllowed());
  {
    // One change per key: the extents a change replaces are read before the write.
    std::vector<std::string> keys = batch->changed_keys_;
    std::sort(keys.begin(), keys.end());
    if (std::adjacent_find(keys.begin(), keys.end()) != keys.end()) {
      return Status::InvalidArgument("a store batch changes one key twice");
    }
  }
  // Large records go to the log first (outside any lock: appends run side by side); the index
  // then refers to them in the same write as everything else of the batch.
  std::vector<LogExtent> added;
  auto abandon = [&] {  // appended, but the index will never refer to them
    for (const LogExtent& e : added) log_->Abandoned(e);
  };
  if (!batch->logged_.empty()) {
    std::vector<DataLog::Record> records;
    records.reserve(batch->logged_.size());
    for (const Batch::LoggedRecord& record : batch->logged_) {
      records.push_back({record.header, record.data});
    }
    Result<std::vector<LogExtent>> extents = log_->AppendAll(records);
    if (!extents.ok()) return extents.status();  // AppendAll abandoned them
    added = std::move(*extents);
    // One change of usage per segment the records landed in.
    std::map<uint64_t, int64_t> appended;
    for (size_t i = 0; i < added.size(); ++i) {
      const Batch::LoggedRecord& record = batch->logged_[i];
      added[i].binding = RecordBinding(record.header, record.data);
      batch->batch_.Put(record.key, EncodeLogExtent(added[i]));
      appended[added[i].segment] += added[i].length;
    }
    for (const auto& [segment, bytes] : appended) {
      batch->batch_.Merge(segment_usage_, SegmentUsageKey(segment), EncodeDelta(bytes));
    }
  }
  batch->logged_.clear();
  for (const auto& [key, summary] : batch->summaries_) {
    if (summary) {
      batch->batch_.Put(summaries_, key, *summary);
    } else {
      batch->batch_.Delete(summaries_, key);
    }
  }
  batch->summaries_.clear();
  if (batch->objects_delta_ != 0) {
    batch->batch_.Merge(kObjectsCounterKey, EncodeDelta(batch->objects_delta_));
  }
  if (batch->bytes_delta_ != 0) {
    batch->batch_.Merge(kBytesCounterKey, EncodeDelta(batch->bytes_delta_));
  }
  rocksdb::WriteOptions wo;
  wo.sync = sync || options_.sync_writes;
  // Durable bytes before a durable index that refers to them: this batch's, and those of
  // every earlier commit, whose index entries the WAL sync makes durable too (a power cut
  // must not leave the index pointing at bytes that never reached the disk).
  if (wo.sync) {
    if (Status st = log_->Sync(); !st.ok()) {
      abandon();
      return st;
    }
  }
  // Under the keys' stripes: the extents replaced here are exactly the ones the write removes
  // (garbage collection moves extents under the same stripes).
  std::vector<std::unique_lock<std::mutex>> locks = LockKeyStripes(batch->changed_keys_);
  std::vector<LogExtent> removed;
  for (const std::string& key : batch->changed_keys_) {
    Result<std::optional<LogExtent>> old = CurrentExtent(key);
    if (!old.ok()) {
      abandon();
      return old.status();
    }
    if (!*old) continue;
    removed.push_back(**old);
    batch->batch_.Merge(segment_usage_, SegmentUsageKey((*old)->segment),
                        EncodeDelta(-static_cast<int64_t>((*old)->length)));
  }
  rocksdb::Status s = db_->Write(wo, &batch->batch_);
  if (!s.ok()) {
    abandon();
    return FromRocks(s, "store write");
  }
  if (wo.sync) ++wal_syncs_;
  log_->Indexed(added, removed);
  locks.clear();
  objects_ += batch->objects_delta_;
  bytes_ += batch->bytes_delta_;
  return Status::Ok();
}

Status ObjectStore::Scan(const std::string& begin, const std::string& end,
                         const std::string& start_after, const Visitor& visit,
                         const CorruptVisitor& visit_corrupt, bool with_tombstones) const {
  rocksdb::ReadOptions ro;
  rocksdb::Slice upper(end);
  if (!end.empty()) ro.iterate_upper_bound = &upper;
  // A scan reads each block once; keep it from flushing the block cache.
  ro.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro));
  const std::string& seek = start_after.empty() || start_after < begin ? begin : start_after;
  for (it->Seek(seek); it->Valid(); it->Next()) {
    rocksdb::Slice key = it->key();
    if (!start_after.empty() && key == start_after) continue;
    if (key.size() != kStoreKeySize) continue;  // counters and meta sort after objects
    Result<StoredObject> object = MaterializeAt(key.ToString(), it->value().ToStringView());
    if (!object.ok()) {
      if (object.status().Is(StatusCode::kNotFound)) continue;  // deleted since the scan began
      // Damaged, or its bytes unreadable (a bad sector): either way this copy needs repair.
      if (visit_corrupt && !visit_corrupt(key.ToString())) break;
      continue;
    }
    if (object->tombstone && !with_tombstones) continue;
    // Adjacent objects continue where the previous one ended: one positioning per scan.
    EmulateDiskRead(key.ToStringView(), key.ToStringView(),
                    object->data.size() + kObjectRecordHeaderSize);
    if (!visit(key.ToString(), *object)) break;
  }
  return FromRocks(it->status(), "store scan");
}

Status ObjectStore::ScanSummaries(const std::string& begin, const std::string& end,
                                  const std::string& start_after,
                                  const SummaryVisitor& visit) const {
  if (!summaries_complete()) {
    // Some older records have no summary yet: list through the records.
    return Scan(
        begin, end, start_after,
        [&](const std::string& key, const StoredObject& object) {
          return visit(key, object.summary());
        },
        {}, /*with_tombstones=*/true);
  }
  rocksdb::ReadOptions ro;
  rocksdb::Slice upper(end);
  if (!end.empty()) ro.iterate_upper_bound = &upper;
  ro.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, summaries_));
  for (it->Seek(start_after.empty() || start_after < begin ? begin : start_after); it->Valid();
       it->Next()) {
    const std::string key = it->key().ToString();
    if (key.size() != kStoreKeySize || key == start_after) continue;
    Result<ObjectRecordSummary> summary = DecodeObjectRecordSummary(it->value().ToStringView());
    if (!summary.ok()) summary = GetSummary(key);  // damaged: the record says it
    if (!summary.ok()) {
      // A record damaged beyond its header is left for a verifying scan (scrub); anything else
      // (a read error) would make the listing incomplete.
      if (summary.status().Is(StatusCode::kCorruption)) continue;
      return summary.status();
    }
    if (!visit(key, *summary)) break;
  }
  return FromRocks(it->status(), "store summary scan");
}

Status ObjectStore::BackfillSummaries(const std::string& dir) {
  if (GetMeta(kSummariesKeptMeta).ok()) {
    summaries_complete_ = true;
    return Status::Ok();
  }
  std::unique_ptr<rocksdb::Iterator> it = NewObjectKeyIterator();
  uint64_t added = 0;
  uint64_t unreadable = 0;
  rocksdb::WriteBatch batch;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (it->key().size() != kStoreKeySize) continue;
    std::string existing;
    rocksdb::Status g = db_->Get(rocksdb::ReadOptions(), summaries_, it->key(), &existing);
    if (g.ok()) continue;
    if (!g.IsNotFound()) return FromRocks(g, "store summary backfill");
    Result<std::string> record = MaterializeRaw(it->value().ToStringView());
    Result<ObjectRecordSummary> summary =
        record.ok() ? SummarizeObjectRecord(*record) : Result<ObjectRecordSummary>(record.status());
    if (!summary.ok()) {
      ++unreadable;  // GetSummary reads such a record whole
      continue;
    }
    batch.Put(summaries_, it->key(), EncodeObjectRecordSummary(*summary));
    if (++added % 1024 == 0) {
      ORTHOFS_RETURN_IF_ERROR(
          FromRocks(db_->Write(rocksdb::WriteOptions(), &batch), "store summary backfill"));
      batch.Clear();
    }
  }
  ORTHOFS_RETURN_IF_ERROR(FromRocks(it->status(), "store summary backfill"));
  ORTHOFS_RETURN_IF_ERROR(
      FromRocks(db_->Write(rocksdb::WriteOptions(), &batch), "store summary backfill"));
  if (added > 0 || unreadable > 0) {
    spdlog::info("store {}: summaries added for {} records written before they were kept{}", dir,
                 added,
                 unreadable > 0 ? fmt::format(" ({} with damaged headers left out)", unreadable)
                                : std::string());
  }
  ORTHOFS_RETURN_IF_ERROR(
      FromRocks(db_->DeleteRange(rocksdb::WriteOptions(), db_->DefaultColumnFamily(),
                                 kOldSummaryPrefix, PrefixSuccessor(kOldSummaryPrefix)),
                "store summary backfill"));
  ORTHOFS_RETURN_IF_ERROR(PutMeta(kSummariesKeptMeta, "1"));
  summaries_complete_ = true;
  return Status::Ok();
}

Status ObjectStore::SyncWal() {
  ORTHOFS_RETURN_IF_ERROR(write_stop_->WritesAllowed());
  // The log's bytes first: the index must never be durable before what it refers to.
  ORTHOFS_RETURN_IF_ERROR(log_->Sync());
  ORTHOFS_RETURN_IF_ERROR(FromRocks(db_->SyncWAL(), "WAL sync"));
  ++wal_syncs_;
  return Status::Ok();
}

Result<std::string> ObjectStore::GetMeta(const std::string& name) const {
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), kMetaPrefix + name, &value);
  if (!s.ok()) return FromRocks(s, "store meta " + name);
  return value;
}

Status ObjectStore::PutMeta(const std::string& name, const std::string& value) {
  ORTHOFS_RETURN_IF_ERROR(write_stop_->WritesAllowed());
  // A synced write makes the whole WAL durable: the log's bytes first (see Commit).
  ORTHOFS_RETURN_IF_ERROR(log_->Sync());
  rocksdb::WriteOptions wo;
  wo.sync = true;
  return FromRocks(db_->Put(wo, kMetaPrefix + name, value), "store meta " + name);
}

std::unique_ptr<rocksdb::Iterator> ObjectStore::NewObjectKeyIterator() const {
  static const rocksdb::Slice kUpper(kObjectKeysEnd);
  rocksdb::ReadOptions ro;
  ro.iterate_upper_bound = &kUpper;
  ro.fill_cache = false;  // each block is read once
  return std::unique_ptr<rocksdb::Iterator>(db_->NewIterator(ro));
}

Status ObjectStore::RestoreSegmentUsage(const std::map<uint64_t, int64_t>& usage) {
  rocksdb::WriteBatch missing;
  for (const auto& [segment, live] : usage) {
    if (!log_->RestoreLive(segment, live)) missing.Delete(segment_usage_, SegmentUsageKey(segment));
  }
  // Reported once by RestoreLive; their ids stay retired (DataLog::Open numbers past them).
  return FromRocks(db_->Write(rocksdb::WriteOptions(), &missing), "data log usage");
}

Status ObjectStore::MoveRecordsToLog(const std::string& dir) {
  if (GetMeta(kRecordsInLogMeta).ok()) return Status::Ok();
  std::unique_ptr<rocksdb::Iterator> it = NewObjectKeyIterator();
  uint64_t moved = 0;
  uint64_t bytes = 0;
  // A synced commit per 64 records: the log is synced before the index refers to it.
  Batch batch;
  auto commit = [&] {
    Status st = batch.empty() ? Status::Ok() : Commit(&batch, /*sync=*/true);
    batch = Batch();
    return st;
  };
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const std::string_view value = it->value().ToStringView();
    if (it->key().size() != kStoreKeySize || IsLogExtent(value) ||
        value.size() < kLoggedRecordMinBytes) {
      continue;
    }
    // The record as it is, damaged or not (scrub still finds a damaged one).
    batch.PutRecord(it->key().ToString(), std::string(value), {});
    ++moved;
    bytes += value.size();
    if (moved % 64 == 0) ORTHOFS_RETURN_IF_ERROR(commit());
  }
  ORTHOFS_RETURN_IF_ERROR(FromRocks(it->status(), "move records to the data log"));
  ORTHOFS_RETURN_IF_ERROR(commit());
  it.reset();
  ORTHOFS_RETURN_IF_ERROR(PutMeta(kRecordsInLogMeta, "1"));
  if (moved > 0) {
    spdlog::info("store {}: {} records ({} MiB) moved from RocksDB into the data log", dir, moved,
                 bytes >> 20);
    RequestCompaction();  // their old copies go with the next compaction
  }
  return Status::Ok();
}

Status ObjectStore::CollectSegments(double min_garbage_fraction) {
  ORTHOFS_RETURN_IF_ERROR(write_stop_->WritesAllowed());
  if (min_garbage_fraction == 0.0) ORTHOFS_RETURN_IF_ERROR(log_->SealActiveIfGarbage());
  const std::vector<uint64_t> victims = log_->Victims(min_garbage_fraction, kCollectMaxLiveBytes);
  if (victims.empty()) return Status::Ok();
  // Every extent in a victim, from the index itself (the usage counts only chose the victims):
  // no new ones can appear, since victims are neither appended to nor pinned.
  std::map<uint64_t, std::vector<std::pair<std::string, LogExtent>>> to_move;
  for (uint64_t segment : victims) to_move[segment];
  {
    rocksdb::ReadOptions ro;
    ro.fill_cache = false;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      if (!IsLogExtent(it->value().ToStringView())) continue;
      Result<LogExtent> extent = DecodeLogExtent(it->value().ToStringView());
      if (!extent.ok()) continue;
      auto victim = to_move.find(extent->segment);
      if (victim != to_move.end()) victim->second.emplace_back(it->key().ToString(), *extent);
    }
    ORTHOFS_RETURN_IF_ERROR(FromRocks(it->status(), "data log collection scan"));
  }
  // Victims with the fewest live records first: one that has none frees its room without
  // needing any, which matters on a full disk.
  std::vector<uint64_t> order(victims);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint64_t a, uint64_t b) { return to_move[a].size() < to_move[b].size(); });
  // Each victim's live records are appended again and made durable (log sync) before the index
  // refers to them: the index must never be durable before the bytes (a memtable flush or
  // another writer's sync could make it so at any time).
  struct Move {
    std::string key;
    LogExtent from;
    LogExtent to;
  };
  std::vector<uint64_t> emptied;
  uint64_t moved_bytes = 0;
  Status stopped = Status::Ok();
  Status unreadable = Status::Ok();  // the first record that could not be read
  for (uint64_t segment : order) {
    std::vector<Move> moves;
    bool kept = false;
    for (const auto& [key, extent] : to_move[segment]) {
      {
        std::lock_guard lock(compaction_mu_);
        if (closing_) stopped = Status::Unavailable("store closing");
      }
      if (!stopped.ok()) break;
      std::string none;
      std::string record;
      if (Status st = log_->Read(extent, &none, &record); !st.ok()) {
        // The segment stays (scrub finds the damaged copy, and its rewrite frees the record);
        // the other victims are still collected.
        spdlog::error("store: data log segment {} is kept: a record in it cannot be read ({})",
                      segment, st.ToString());
        if (unreadable.ok()) unreadable = st;
        kept = true;
        break;
      }
      // Moved as it is, binding and all: a damaged record stays damaged for scrub to find.
      Result<LogExtent> to = log_->Append(record, BytePieces());
      if (!to.ok()) {
        stopped = to.status();  // no room (a full disk): what is moved so far still counts
        break;
      }
      to->binding = extent.binding;
      moves.push_back({key, extent, *to});
    }
    Status synced = moves.empty() ? Status::Ok() : log_->Sync();
    bool all_moved = stopped.ok() && synced.ok() && !kept;
    for (const Move& move : moves) {
      if (!synced.ok()) {
        log_->Abandoned(move.to);
        continue;
      }
      std::vector<std::unique_lock<std::mutex>> locks = LockKeyStripes({move.key});
      Result<std::optional<LogExtent>> current = CurrentExtent(move.key);
      if (!current.ok() || *current != move.from) {
        log_->Abandoned(move.to);  // replaced or deleted since the scan: nothing to move
        if (!current.ok()) all_moved = false;
        continue;
      }
      rocksdb::WriteBatch batch;
      batch.Put(move.key, EncodeLogExtent(move.to));
      batch.Merge(segment_usage_, SegmentUsageKey(move.to.segment), EncodeDelta(move.to.length));
      batch.Merge(segment_usage_, SegmentUsageKey(move.from.segment),
                  EncodeDelta(-static_cast<int64_t>(move.from.length)));
      if (rocksdb::Status s = db_->Write(rocksdb::WriteOptions(), &batch); !s.ok()) {
        log_->Abandoned(move.to);
        all_moved = false;
        continue;
      }
      log_->Indexed({move.to}, {move.from});
      moved_bytes += move.from.length;
    }
    if (all_moved) emptied.push_back(segment);
    if (!stopped.ok() || !synced.ok()) break;
  }
  if (!emptied.empty()) {
    // The index that refers to the moved records is durable before the old copies go.
    ORTHOFS_RETURN_IF_ERROR(SyncWal());
    for (uint64_t segment : emptied) {
      if (const int64_t live = log_->live_bytes(segment); live != 0) {
        spdlog::warn("store: data log segment {} counted {} live bytes after collection", segment,
                     live);
      }
      rocksdb::WriteBatch batch;
      batch.Delete(segment_usage_, SegmentUsageKey(segment));
      ORTHOFS_RETURN_IF_ERROR(
          FromRocks(db_->Write(rocksdb::WriteOptions(), &batch), "data log collection"));
      ORTHOFS_RETURN_IF_ERROR(log_->Remove(segment));
      ++segments_collected_;
    }
    spdlog::debug("store: {} data log segments collected, {} MiB of live records moved",
                  emptied.size(), moved_bytes >> 20);
  }
  if (stopped.Is(StatusCode::kUnavailable)) return Status::Ok();  // closing
  return stopped.ok() ? unreadable : stopped;
}

}  // namespace orthofs
