#include "osd/object_store.h"

#include <rocksdb/cache.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/table.h>
#include <spdlog/spdlog.h>

#include <thread>

#include "common/crc32c.h"
#include "common/object_record.h"
#include "common/oid.h"
#include "osd/rocksdb_crc32c.h"

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

void ObjectStore::Batch::Put(const std::string& key, uint64_t version, uint64_t checksum,
                             std::string_view data, bool existed, uint64_t old_length) {
  // Header and bytes go into the batch as two pieces: no joined copy of the object.
  const std::string header = EncodeObjectRecordHeader(version, checksum);
  const rocksdb::Slice value_parts[2] = {header, rocksdb::Slice(data.data(), data.size())};
  const rocksdb::Slice key_part(key);
  batch_.Put(rocksdb::SliceParts(&key_part, 1), rocksdb::SliceParts(value_parts, 2));
  summaries_.emplace_back(key, EncodeObjectRecordSummary({version, checksum, data.size()}));
  if (!existed) ++objects_delta_;
  bytes_delta_ += static_cast<int64_t>(data.size()) - static_cast<int64_t>(old_length);
}

void ObjectStore::Batch::Delete(const std::string& key, bool live, uint64_t old_length) {
  batch_.Delete(key);
  summaries_.emplace_back(key, std::nullopt);
  if (live) {
    --objects_delta_;
    bytes_delta_ -= static_cast<int64_t>(old_length);
  }
}

void ObjectStore::Batch::PutTombstone(const std::string& key, uint64_t version, bool live,
                                      uint64_t old_length) {
  batch_.Put(key, EncodeTombstoneRecord(version));
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
                         const StoreOptions& options)
    : db_(std::move(db)), families_(std::move(families)), options_(options) {
  summaries_ = families_.at(1);
  if (options_.disk_model) disk_ = std::make_unique<DiskModel>(*options_.disk_model);
  compaction_thread_ = std::thread([this] { CompactionThread(); });
}

uint64_t ObjectStore::blob_file_bytes() const {
  uint64_t value = 0;
  return db_->GetIntProperty("rocksdb.total-blob-file-size", &value) ? value : 0;
}

uint64_t ObjectStore::blob_garbage_bytes() const {
  uint64_t value = 0;
  return db_->GetIntProperty("rocksdb.live-blob-file-garbage-size", &value) ? value : 0;
}

void ObjectStore::RequestCompaction() {
  {
    std::lock_guard lock(compaction_mu_);
    compaction_requested_ = true;
  }
  compaction_cv_.notify_one();
}

void ObjectStore::CompactionThread() {
  std::unique_lock lock(compaction_mu_);
  while (true) {
    compaction_cv_.wait(lock, [this] { return compaction_requested_ || closing_; });
    if (closing_) return;
    compaction_requested_ = false;
    lock.unlock();
    rocksdb::Status s = db_->Flush(rocksdb::FlushOptions(), families_);
    rocksdb::CompactRangeOptions compact;
    // Deleted objects' bytes sit in blob files until their garbage is collected: in every blob
    // file this compaction reaches. Moving their live objects needs free room, as rewriting
    // the objects in the tables did before blob files; the reserve (--reserve-mb) keeps it.
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
  for (it->Seek(begin); it->Valid(); it->Next()) {
    if (it->key().size() != kStoreKeySize) continue;
    Result<ObjectRecordView> record = DecodeObjectRecord(it->value().ToStringView());
    if (!record.ok() || record->tombstone) continue;
    StoredObject object{record->version, record->checksum, std::string(record->data), false};
    if (!disk_) {
      take(it->key().ToString(), std::move(object));
      continue;
    }
    bytes += it->value().size();
    held.emplace_back(it->key().ToString(), std::move(object));
  }
  Status st = FromRocks(it->status(), "store range read");
  it.reset();  // the emulated disk time and the takers need not pin the scan's files
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
  if (db_) {
    for (rocksdb::ColumnFamilyHandle* family : families_) {
      rocksdb::Status d = db_->DestroyColumnFamilyHandle(family);
      (void)d;  // only fails for a null handle
    }
    rocksdb::Status s = db_->Close();
    (void)s;  // nothing left to do with a failed close at shutdown
  }
}

Result<std::unique_ptr<ObjectStore>> ObjectStore::Open(const std::string& dir,
                                                       const StoreOptions& options) {
  rocksdb::Options db_options;
  db_options.create_if_missing = true;
  db_options.merge_operator = std::make_shared<AddInt64Operator>();
  db_options.use_direct_reads = options.direct_reads;
  // A file's objects lie side by side in the blob files (a flush writes them in key order), and
  // the replica OSD loads them a window at a time: the kernel's read-ahead must see those reads.
  // RocksDB's default, POSIX_FADV_RANDOM on every file, turned each into a synchronous 128 KiB
  // disk read (cold sequential reads: 375-390 -> 447-457 MB/s plaintext, 282 -> 317 with TLS).
  // Random point reads are mostly not widened (the kernel reads ahead for what looks sequential
  // on a file's shared descriptor; a read at offset 0 gets its initial read-ahead). No effect
  // with direct reads.
  db_options.advise_random_on_open = false;
  db_options.IncreaseParallelism(2);
  // Objects are 128 KiB by default: larger write buffers and blocks keep write
  // amplification and index size down.
  db_options.write_buffer_size = 64 << 20;
  // Object bytes are mostly incompressible (media, archives, random benchmark data): snappy
  // only burns CPU on them.
  db_options.compression = rocksdb::kNoCompression;
  // Object bytes (values of 4 KiB and more) live in blob files, written once at flush; the LSM
  // tree holds keys, headers and small records, so compaction moves kilobytes, not the
  // objects again (after a write-heavy hour it took a sixth of the machine's CPU from readers).
  // Garbage (overwritten and deleted objects) is collected as compactions reach the oldest
  // quarter of the blob files, and in every blob file the compaction reaches when space is
  // reclaimed (CompactionThread).
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
  table.block_cache = rocksdb::NewLRUCache(options.block_cache_mb << 20);
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
  const std::vector<rocksdb::ColumnFamilyDescriptor> families = {
      {rocksdb::kDefaultColumnFamilyName, db_options}, {kSummaryFamily, summary_options}};
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(db_options, dir, families, &handles, &raw);
  if (!s.ok()) {
    if (s.ToString().find("lock file") != std::string::npos) {
      return Status::IoError("data dir " + dir +
                             " is in use by another process (its RocksDB LOCK is held)");
    }
    return FromRocks(s, "cannot open store in " + dir);
  }
  std::unique_ptr<ObjectStore> store(
      new ObjectStore(std::unique_ptr<rocksdb::DB>(raw), std::move(handles), options));
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
  return store;
}

Result<StoredObject> ObjectStore::Get(const std::string& key) const {
  rocksdb::PinnableSlice value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), db_->DefaultColumnFamily(), key, &value);
  if (s.IsNotFound()) return Status::NotFound("no such object");
  if (!s.ok()) return FromRocks(s, "store read");
  Result<ObjectRecordView> record = DecodeObjectRecord(value.ToStringView());
  if (!record.ok()) return record.status();
  EmulateDiskRead(key, key, value.size());
  return StoredObject{record->version, record->checksum, std::string(record->data),
                      record->tombstone};
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
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), key, &value);
  if (s.IsNotFound()) return Status::NotFound("no such object");
  if (!s.ok()) return FromRocks(s, "store read");
  return value;
}

Status ObjectStore::PutRecordBytes(const std::string& key, const std::string& record) {
  rocksdb::WriteBatch batch;
  batch.Put(key, record);
  // The record alone, as a bad sector would change it: its summary stays. A record that had
  // none gets one from its header if that decodes, so that bare listings see it.
  std::string existing;
  rocksdb::Status g = db_->Get(rocksdb::ReadOptions(), summaries_, key, &existing);
  if (!g.ok() && !g.IsNotFound()) return FromRocks(g, "store read");
  Result<ObjectRecordSummary> summary = SummarizeObjectRecord(record);
  if (g.IsNotFound() && summary.ok()) {
    batch.Put(summaries_, key, EncodeObjectRecordSummary(*summary));
  }
  rocksdb::WriteOptions wo;
  wo.sync = true;
  return FromRocks(db_->Write(wo, &batch), "store write");
}

Status ObjectStore::Commit(Batch* batch, bool sync) {
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
  rocksdb::Status s = db_->Write(wo, &batch->batch_);
  if (!s.ok()) return FromRocks(s, "store write");
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
    Result<ObjectRecordView> record = DecodeObjectRecord(it->value().ToStringView());
    if (!record.ok()) {
      if (visit_corrupt && !visit_corrupt(key.ToString())) break;
      continue;
    }
    if (record->tombstone && !with_tombstones) continue;
    // Adjacent objects continue where the previous one ended: one positioning per scan.
    EmulateDiskRead(key.ToStringView(), key.ToStringView(), it->value().size());
    StoredObject object{record->version, record->checksum, std::string(record->data),
                        record->tombstone};
    if (!visit(key.ToString(), object)) break;
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
  rocksdb::ReadOptions ro;
  rocksdb::Slice upper(kObjectKeysEnd);
  ro.iterate_upper_bound = &upper;
  ro.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro));
  uint64_t added = 0;
  uint64_t unreadable = 0;
  rocksdb::WriteBatch batch;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (it->key().size() != kStoreKeySize) continue;
    std::string existing;
    rocksdb::Status g = db_->Get(rocksdb::ReadOptions(), summaries_, it->key(), &existing);
    if (g.ok()) continue;
    if (!g.IsNotFound()) return FromRocks(g, "store summary backfill");
    Result<ObjectRecordSummary> summary = SummarizeObjectRecord(it->value().ToStringView());
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

Status ObjectStore::SyncWal() { return FromRocks(db_->SyncWAL(), "WAL sync"); }

Result<std::string> ObjectStore::GetMeta(const std::string& name) const {
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), kMetaPrefix + name, &value);
  if (!s.ok()) return FromRocks(s, "store meta " + name);
  return value;
}

Status ObjectStore::PutMeta(const std::string& name, const std::string& value) {
  rocksdb::WriteOptions wo;
  wo.sync = true;
  return FromRocks(db_->Put(wo, kMetaPrefix + name, value), "store meta " + name);
}

}  // namespace orthofs
