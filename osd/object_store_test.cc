// The OSD's object store on a real RocksDB in a temporary directory: objects round-trip, their
// bytes go to the data log, and reclaiming space after deletes gives the log's segments back.
#include "osd/object_store.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <rocksdb/merge_operator.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/checksum.h"
#include "common/log_extent.h"
#include "common/object_record.h"
#include "common/oid.h"

namespace orthofs {
namespace {

constexpr uint64_t kObjectSize = 128 << 10;
constexpr int kObjects = 40;

std::string Key(int i) { return "object-" + std::to_string(1000 + i); }
std::string Bytes(int i) { return std::string(kObjectSize, static_cast<char>('a' + i % 26)); }

// An emulated disk fast enough for tests; its read counter shows which calls read objects.
StoreOptions WithDiskModel() {
  StoreOptions options;
  options.disk_model =
      DiskModelParams{std::chrono::microseconds(100), std::chrono::microseconds(0), 1000.0};
  return options;
}

class ObjectStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/object_store_test";
    std::filesystem::remove_all(dir_);
    Result<std::unique_ptr<ObjectStore>> store = ObjectStore::Open(dir_, SmallSegments());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
  }
  // Seven 128 KiB records per segment, collected only when asked (RequestCompaction).
  static StoreOptions SmallSegments() {
    StoreOptions options;
    options.log_segment_bytes = 1 << 20;
    options.collect_period = std::chrono::hours(1);
    return options;
  }
  // The data log's files on disk, in bytes.
  uint64_t SegmentFileBytes() const {
    uint64_t bytes = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir_ + "/data-log")) {
      bytes += entry.file_size();
    }
    return bytes;
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  // Collects the log and compacts everything (the OSD's space reclaim), and waits for a whole
  // round that began after the call (one under way may have begun before it).
  void CompactAndWait() {
    const uint64_t before = store_->compactions();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (store_->compactions() < before + 2 && std::chrono::steady_clock::now() < deadline) {
      store_->RequestCompaction();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_GE(store_->compactions(), before + 2) << "no compaction within 60 s";
  }

  std::string dir_;
  std::unique_ptr<ObjectStore> store_;
};

constexpr uint64_t kRecordSize = kObjectSize + kObjectRecordHeaderSize;

TEST_F(ObjectStoreTest, ObjectBytesLiveInTheDataLogAndDeletesGiveItBack) {
  EXPECT_EQ(store_->data_log_bytes(), 0u);
  // Five objects per batch: one batch's records often span two segments, whose live counts
  // must each get their own records' bytes (checked by collection and after reopening).
  for (int first = 0; first < kObjects; first += 5) {
    ObjectStore::Batch batch;
    std::vector<std::string> data;  // referred to by the batch until Commit
    for (int i = first; i < std::min(first + 5, kObjects); ++i) data.push_back(Bytes(i));
    for (int i = first; i < std::min(first + 5, kObjects); ++i) {
      const std::string& bytes = data[i - first];
      batch.Put(Key(i), 1, ObjectChecksum(bytes), bytes, false, 0);
    }
    ASSERT_TRUE(store_->Commit(&batch, false).ok());
  }
  EXPECT_EQ(store_->data_log_bytes(), kObjects * kRecordSize);
  EXPECT_EQ(SegmentFileBytes(), kObjects * kRecordSize);
  EXPECT_EQ(store_->data_log_garbage_bytes(), 0u);
  for (int i = 0; i < kObjects; ++i) {
    Result<StoredObject> got = store_->Get(Key(i));
    ASSERT_TRUE(got.ok()) << Key(i) << ": " << got.status().ToString();
    EXPECT_EQ(got->version, 1u);
    EXPECT_TRUE(got->data == Bytes(i)) << Key(i);
  }

  // In the newer half, overwrite every fourth object and delete every fourth: their old bytes
  // are garbage in segments beside live objects, less than half of each (the usual collection
  // leaves them); the reclaim collects all of it.
  enum class Fate { kKept, kOverwritten, kDeleted };
  auto fate = [](int i) {
    if (i < kObjects / 2 || i % 2 == 0) return Fate::kKept;
    return i % 4 == 1 ? Fate::kOverwritten : Fate::kDeleted;
  };
  for (int i = 0; i < kObjects; ++i) {
    ObjectStore::Batch batch;
    const std::string data = Bytes(i + 1);  // referred to by the batch until Commit
    if (fate(i) == Fate::kOverwritten) {
      batch.Put(Key(i), 2, ObjectChecksum(data), data, true, kObjectSize);
    } else if (fate(i) == Fate::kDeleted) {
      batch.Delete(Key(i), true, kObjectSize);
    } else {
      continue;
    }
    ASSERT_TRUE(store_->Commit(&batch, false).ok());
  }
  const uint64_t live = kObjects - kObjects / 8;  // all but the deleted eighth
  EXPECT_EQ(store_->data_log_garbage_bytes(), kObjects / 4 * kRecordSize);
  EXPECT_EQ(store_->segments_collected(), 0u);
  CompactAndWait();
  EXPECT_EQ(store_->data_log_garbage_bytes(), 0u);
  EXPECT_GT(store_->segments_collected(), 0u);
  EXPECT_EQ(store_->data_log_bytes(), live * kRecordSize);
  EXPECT_EQ(SegmentFileBytes(), live * kRecordSize);
  EXPECT_EQ(store_->object_count(), live);
  for (int i = 0; i < kObjects; ++i) {
    Result<StoredObject> got = store_->Get(Key(i));
    if (fate(i) == Fate::kKept) {
      ASSERT_TRUE(got.ok()) << Key(i) << ": " << got.status().ToString();
      EXPECT_EQ(got->version, 1u);
      EXPECT_TRUE(got->data == Bytes(i)) << Key(i);
    } else if (fate(i) == Fate::kOverwritten) {
      ASSERT_TRUE(got.ok()) << Key(i) << ": " << got.status().ToString();
      EXPECT_EQ(got->version, 2u);
      EXPECT_TRUE(got->data == Bytes(i + 1)) << Key(i);
    } else {
      EXPECT_TRUE(got.status().Is(StatusCode::kNotFound))
          << Key(i) << ": " << got.status().ToString();
    }
  }

  // Everything survives closing and reopening the store, and so do the live counts.
  store_.reset();
  Result<std::unique_ptr<ObjectStore>> reopened = ObjectStore::Open(dir_, SmallSegments());
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  store_ = std::move(*reopened);
  Result<StoredObject> got = store_->Get(Key(kObjects - 3));  // overwritten
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(got->data == Bytes(kObjects - 2));
  EXPECT_EQ(store_->object_count(), live);
  EXPECT_EQ(store_->data_log_bytes(), live * kRecordSize);
  EXPECT_EQ(store_->data_log_garbage_bytes(), 0u);
}

// Opens the store's RocksDB as it is on disk (all three column families), for a test that
// changes it behind the store's back; `change` gets the default family.
void ChangeRawStore(const std::string& dir, const std::function<void(rocksdb::DB*)>& change) {
  // The counts' merges in the write-ahead log need an operator to be replayed (any will do:
  // the test reads no count).
  class KeepLatest : public rocksdb::AssociativeMergeOperator {
   public:
    bool Merge(const rocksdb::Slice&, const rocksdb::Slice*, const rocksdb::Slice& value,
               std::string* new_value, rocksdb::Logger*) const override {
      *new_value = value.ToString();
      return true;
    }
    const char* Name() const override { return "orthofs.AddInt64"; }
  };
  rocksdb::Options options;
  options.merge_operator = std::make_shared<KeepLatest>();
  rocksdb::DB* raw = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::Status opened = rocksdb::DB::Open(options, dir,
                                             {{rocksdb::kDefaultColumnFamilyName, options},
                                              {"summaries", options},
                                              {"log-segments", options}},
                                             &handles, &raw);
  ASSERT_TRUE(opened.ok()) << opened.ToString();
  change(raw);
  for (auto* handle : handles) delete handle;
  delete raw;
}

// An extent whose bytes are not the record it was written for (its segment lost and its id used
// again, say) reads as damaged, not as another object's bytes.
TEST_F(ObjectStoreTest, AnExtentOverAnotherRecordReadsAsDamaged) {
  for (int i = 0; i < 2; ++i) {
    ObjectStore::Batch batch;
    const std::string data = Bytes(i);
    batch.Put(Key(i), 1, ObjectChecksum(data), data, false, 0);
    ASSERT_TRUE(store_->Commit(&batch, false).ok());
  }
  store_.reset();
  ChangeRawStore(dir_, [](rocksdb::DB* db) {
    std::string first;
    std::string second;
    ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), Key(0), &first).ok());
    rocksdb::Status got = db->Get(rocksdb::ReadOptions(), Key(1), &second);
    ASSERT_TRUE(got.ok()) << got.ToString();
    LogExtent moved = *DecodeLogExtent(first);
    moved.offset = DecodeLogExtent(second)->offset;  // object 1's place, object 0's binding
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), Key(0), EncodeLogExtent(moved)).ok());
  });
  Result<std::unique_ptr<ObjectStore>> reopened = ObjectStore::Open(dir_, SmallSegments());
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  store_ = std::move(*reopened);
  EXPECT_TRUE(store_->Get(Key(0)).status().Is(StatusCode::kCorruption))
      << store_->Get(Key(0)).status().ToString();
  EXPECT_TRUE(store_->GetRecordBytes(Key(0)).status().Is(StatusCode::kCorruption));
  EXPECT_TRUE(store_->Get(Key(1))->data == Bytes(1));
}

// A segment file lost (a crash, a bad disk): its records read as damaged (repair replaces them
// from their other copies), its count goes, and its id is never used again.
TEST_F(ObjectStoreTest, ALostSegmentReadsAsDamagedAndItsIdIsRetired) {
  ObjectStore::Batch batch;
  const std::string data = Bytes(3);
  batch.Put(Key(3), 1, ObjectChecksum(data), data, false, 0);
  ASSERT_TRUE(store_->Commit(&batch, false).ok());
  store_.reset();
  // Every segment file goes: the next open would number its new one 1 if it went by the files.
  std::filesystem::remove_all(dir_ + "/data-log");
  Result<std::unique_ptr<ObjectStore>> reopened = ObjectStore::Open(dir_, SmallSegments());
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  store_ = std::move(*reopened);
  EXPECT_TRUE(store_->Get(Key(3)).status().Is(StatusCode::kCorruption))
      << store_->Get(Key(3)).status().ToString();
  ObjectStore::Batch rewrite;
  const std::string other = Bytes(4);
  rewrite.Put(Key(4), 1, ObjectChecksum(other), other, false, 0);
  ASSERT_TRUE(store_->Commit(&rewrite, false).ok());
  EXPECT_TRUE(store_->Get(Key(3)).status().Is(StatusCode::kCorruption))
      << "not object 4's bytes, though they sit where object 3's did in a segment 1";
  EXPECT_TRUE(store_->Get(Key(4))->data == Bytes(4));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/data-log/000000000001.seg"));
  // A replacing write (what repair does) makes the damaged copy whole again.
  ObjectStore::Batch repair;
  repair.Put(Key(3), 1, ObjectChecksum(data), data, true, kObjectSize);
  ASSERT_TRUE(store_->Commit(&repair, false).ok());
  EXPECT_TRUE(store_->Get(Key(3))->data == data);
}

// A record that cannot be read keeps its segment, but no other: collection goes on with the
// other victims (it used to stop the whole round there, every round).
TEST_F(ObjectStoreTest, AnUnreadableRecordKeepsOnlyItsOwnSegment) {
  auto put = [&](int key, int content, uint64_t version) {
    ObjectStore::Batch batch;
    const std::string data = Bytes(content);
    batch.Put(Key(key), version, ObjectChecksum(data), data, version > 1,
              version > 1 ? kObjectSize : 0);
    ASSERT_TRUE(store_->Commit(&batch, false).ok());
  };
  // Segments 1 and 2 hold seven records each; all but the first of each are overwritten.
  for (int i = 0; i < 14; ++i) put(i, i, 1);
  for (int i = 0; i < 14; ++i) {
    if (i != 0 && i != 7) put(i, i + 1, 2);
  }
  const std::string first = dir_ + "/data-log/000000000001.seg";
  const std::string second = dir_ + "/data-log/000000000002.seg";
  ASSERT_TRUE(std::filesystem::exists(first) && std::filesystem::exists(second));
  std::filesystem::resize_file(first, 0);  // object 0's record is gone (a damaged disk)

  CompactAndWait();
  EXPECT_TRUE(std::filesystem::exists(first)) << "a segment with an unreadable record went";
  EXPECT_FALSE(std::filesystem::exists(second)) << "the collection stopped at the damage";
  EXPECT_TRUE(store_->Get(Key(0)).status().Is(StatusCode::kCorruption));
  Result<StoredObject> moved = store_->Get(Key(7));
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  EXPECT_TRUE(moved->data == Bytes(7));
}

TEST_F(ObjectStoreTest, ABatchChangesEachKeyOnce) {
  ObjectStore::Batch batch;
  const std::string data = Bytes(5);
  batch.Put(Key(5), 1, ObjectChecksum(data), data, false, 0);
  batch.Delete(Key(5), true, kObjectSize);
  EXPECT_TRUE(store_->Commit(&batch, false).Is(StatusCode::kInvalidArgument));
  EXPECT_EQ(store_->data_log_bytes(), 0u);
  EXPECT_TRUE(store_->Get(Key(5)).status().Is(StatusCode::kNotFound));
}

// A batch is committed once, failed or not: a second Commit is refused and changes nothing (a
// failed one may have appended records it abandoned; committing it again would index them).
TEST_F(ObjectStoreTest, ABatchIsCommittedOnlyOnce) {
  const std::string data = Bytes(6);
  ObjectStore::Batch done;
  done.Put(Key(6), 1, ObjectChecksum(data), data, false, 0);
  ASSERT_TRUE(store_->Commit(&done, false).ok());
  const uint64_t logged = store_->data_log_bytes();
  EXPECT_TRUE(store_->Commit(&done, false).Is(StatusCode::kInvalidArgument));
  EXPECT_EQ(store_->data_log_bytes(), logged) << "nothing appended again";

  ObjectStore::Batch failed;
  failed.Put(Key(7), 1, ObjectChecksum(data), data, false, 0);
  failed.Delete(Key(7), true, kObjectSize);
  ASSERT_TRUE(store_->Commit(&failed, false).Is(StatusCode::kInvalidArgument));
  EXPECT_TRUE(store_->Commit(&failed, false).Is(StatusCode::kInvalidArgument));
  EXPECT_TRUE(store_->Get(Key(7)).status().Is(StatusCode::kNotFound));
  Result<StoredObject> kept = store_->Get(Key(6));
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_EQ(kept->data, data);
}

// Small records (inodes, directory entries) stay in RocksDB; only large ones are logged.
TEST_F(ObjectStoreTest, SmallRecordsStayOutOfTheLog) {
  ObjectStore::Batch batch;
  batch.Put(Key(1), 1, ObjectChecksum("small"), "small", false, 0);
  ASSERT_TRUE(store_->Commit(&batch, false).ok());
  EXPECT_EQ(store_->data_log_bytes(), 0u);
  EXPECT_EQ(store_->Get(Key(1))->data, "small");
  // Replaced by a large record and back: the large one's bytes become garbage.
  const std::string large = Bytes(2);
  ObjectStore::Batch grow;
  grow.Put(Key(1), 2, ObjectChecksum(large), large, true, 5);
  ASSERT_TRUE(store_->Commit(&grow, false).ok());
  EXPECT_EQ(store_->data_log_garbage_bytes(), 0u);
  ObjectStore::Batch shrink;
  shrink.Put(Key(1), 3, ObjectChecksum("tiny"), "tiny", true, kObjectSize);
  ASSERT_TRUE(store_->Commit(&shrink, false).ok());
  EXPECT_EQ(store_->data_log_garbage_bytes(), kRecordSize);
  EXPECT_EQ(store_->Get(Key(1))->data, "tiny");
  EXPECT_EQ(store_->Get(Key(1))->version, 3u);
}

// A durable index write (a synced commit, small or not, a store meta value, a WAL sync) makes
// every earlier index entry durable too, so the log's appended bytes go to the disk first: a
// power cut must not leave the index pointing at bytes that never got there.
TEST_F(ObjectStoreTest, ADurableIndexWriteLeavesNoUnsyncedLogBytesBehindIt) {
  auto put_large = [&](int i, bool sync) {
    ObjectStore::Batch batch;
    batch.Put(Key(i), 1, ObjectChecksum(Bytes(i)), Bytes(i), false, 0);
    ASSERT_TRUE(store_->Commit(&batch, sync).ok());
  };
  const uint64_t syncs = store_->wal_syncs();
  put_large(1, false);
  EXPECT_TRUE(store_->data_log_unsynced());
  ObjectStore::Batch small;
  small.Put(Key(2), 1, ObjectChecksum("small"), "small", false, 0);
  ASSERT_TRUE(store_->Commit(&small, true).ok());
  EXPECT_FALSE(store_->data_log_unsynced()) << "a synced small commit";
  put_large(3, false);
  ASSERT_TRUE(store_->PutMeta("test", "value").ok());
  EXPECT_FALSE(store_->data_log_unsynced()) << "a store meta value";
  put_large(4, false);
  ASSERT_TRUE(store_->SyncWal().ok());
  EXPECT_FALSE(store_->data_log_unsynced()) << "a WAL sync";
  put_large(5, true);
  EXPECT_FALSE(store_->data_log_unsynced()) << "a synced large commit";
  EXPECT_EQ(store_->wal_syncs(), syncs + 3);  // PutMeta is not counted: no request waits on it
}

// Bytes handed over in pieces are stored as the joined bytes, small (inline) and large
// (logged) alike, with a binding that checks out when read back.
TEST_F(ObjectStoreTest, PutsBytesInPieces) {
  const std::string large = Bytes(3);
  const std::string small = "a small record in pieces";
  auto in_pieces = [](const std::string& bytes, size_t piece) {
    BytePieces pieces;
    for (size_t at = 0; at < bytes.size(); at += piece) {
      pieces.Append(std::string_view(bytes).substr(at, piece));
    }
    return pieces;
  };
  ObjectStore::Batch batch;
  batch.Put(Key(1), 1, ObjectChecksum(large), in_pieces(large, 5), false, 0);  // > IOV_MAX pieces
  batch.Put(Key(2), 1, ObjectChecksum(small), in_pieces(small, 7), false, 0);
  ASSERT_TRUE(store_->Commit(&batch, false).ok());
  EXPECT_EQ(store_->data_log_bytes(), kRecordSize);
  Result<StoredObject> got = store_->Get(Key(1));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->data, large);
  EXPECT_EQ(got->checksum, ObjectChecksum(large));
  EXPECT_EQ(store_->Get(Key(2))->data, small);
}

// Collection runs beside writers and readers: a record moved while it is read or replaced is
// neither lost nor resurrected, and every read sees a whole object of the right version.
TEST_F(ObjectStoreTest, CollectionBesideWritersAndReadersLosesNothing) {
  constexpr int kKeys = 12;
  std::vector<std::atomic<uint64_t>> versions(kKeys);
  auto data_of = [](int key, uint64_t version) {
    return std::string(kObjectSize, static_cast<char>('a' + (key * 7 + version) % 26));
  };
  for (int k = 0; k < kKeys; ++k) {
    ObjectStore::Batch batch;
    const std::string data = data_of(k, 1);
    batch.Put(Key(k), 1, ObjectChecksum(data), data, false, 0);
    ASSERT_TRUE(store_->Commit(&batch, false).ok());
    versions[k] = 1;
  }
  std::atomic<bool> stop = false;
  std::atomic<int> bad_reads = 0;
  std::thread reader([&] {
    while (!stop) {
      for (int k = 0; k < kKeys; ++k) {
        const uint64_t at_least = versions[k].load();
        Result<StoredObject> got = store_->Get(Key(k));
        if (!got.ok() || got->version < at_least || got->data != data_of(k, got->version)) {
          ++bad_reads;
        }
      }
    }
  });
  std::thread collector([&] {
    while (!stop) {
      store_->RequestCompaction();
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  int failed_writes = 0;
  for (int round = 2; round < 40; ++round) {
    for (int k = 0; k < kKeys; k += 1 + round % 3) {  // some keys more often than others
      ObjectStore::Batch batch;
      const std::string data = data_of(k, round);
      batch.Put(Key(k), round, ObjectChecksum(data), data, true, kObjectSize);
      if (!store_->Commit(&batch, false).ok()) ++failed_writes;
      versions[k] = round;
    }
  }
  stop = true;
  reader.join();
  collector.join();
  EXPECT_EQ(failed_writes, 0);
  EXPECT_EQ(bad_reads.load(), 0);
  CompactAndWait();
  EXPECT_GT(store_->segments_collected(), 0u);
  EXPECT_EQ(store_->data_log_garbage_bytes(), 0u);
  EXPECT_EQ(store_->data_log_bytes(), kKeys * kRecordSize);
  EXPECT_EQ(SegmentFileBytes(), kKeys * kRecordSize);
  for (int k = 0; k < kKeys; ++k) {
    Result<StoredObject> got = store_->Get(Key(k));
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(got->version, versions[k].load());
    EXPECT_TRUE(got->data == data_of(k, got->version));
  }
}

// The prefetcher's window load: a file's objects in key order, each handed over once, without
// tombstones, nothing at or past the range's end, nothing of another file.
TEST_F(ObjectStoreTest, ReadRangeHandsOverTheRangesObjectsInOrder) {
  auto key = [](uint64_t fno, uint64_t index) {
    return EncodeStoreKey(Oid{1, fno, index, ObjectType::kData, CopyFlag::kReplica});
  };
  for (uint64_t fno : {7u, 8u}) {
    for (uint64_t i = 0; i < 6; ++i) {
      ObjectStore::Batch batch;
      const std::string data = Bytes(static_cast<int>(fno * 10 + i));
      batch.Put(key(fno, i), i + 1, ObjectChecksum(data), data, false, 0);
      ASSERT_TRUE(store_->Commit(&batch, false).ok());
    }
  }
  ObjectStore::Batch batch;
  batch.PutTombstone(key(7, 3), 9, true, kObjectSize);
  ASSERT_TRUE(store_->Commit(&batch, false).ok());

  std::vector<std::string> keys;
  Status st = store_->ReadRange(key(7, 1), key(7, 5), [&](const std::string& k, StoredObject o) {
    const uint64_t i = keys.size() < 2 ? keys.size() + 1 : 4;  // 1, 2, then 4 (3 is deleted)
    EXPECT_EQ(k, key(7, i));
    EXPECT_EQ(o.version, i + 1);
    EXPECT_TRUE(o.data == Bytes(static_cast<int>(70 + i))) << i;
    EXPECT_FALSE(o.tombstone);
    keys.push_back(k);
  });
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(keys.size(), 3u);
}

// Every record has a summary beside it: version, checksum and length, or a tombstone's version;
// a deleted key has neither.
TEST_F(ObjectStoreTest, SummariesFollowPutsTombstonesAndDeletes) {
  const std::string data = Bytes(3);
  ObjectStore::Batch put;
  put.Put(Key(1), 4, ObjectChecksum(data), data, false, 0);
  put.Put(Key(2), 7, ObjectChecksum("ab"), "ab", false, 0);
  ASSERT_TRUE(store_->Commit(&put, false).ok());
  Result<ObjectRecordSummary> one = store_->GetSummary(Key(1));
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(*one, (ObjectRecordSummary{4, ObjectChecksum(data), kObjectSize, false}));
  EXPECT_EQ(*store_->GetSummary(Key(2)), (ObjectRecordSummary{7, ObjectChecksum("ab"), 2, false}));

  ObjectStore::Batch change;
  change.PutTombstone(Key(1), 5, true, kObjectSize);
  change.Delete(Key(2), true, 2);
  ASSERT_TRUE(store_->Commit(&change, false).ok());
  EXPECT_EQ(*store_->GetSummary(Key(1)), (ObjectRecordSummary{5, 0, 0, true}));
  EXPECT_TRUE(store_->GetSummary(Key(2)).status().Is(StatusCode::kNotFound));
  EXPECT_TRUE(store_->GetSummary(Key(3)).status().Is(StatusCode::kNotFound));
}

// With an emulated disk the range is one request: one read, one positioning, charged before
// the first object is handed over; the objects are the same.
TEST(ObjectStoreDiskModelTest, ReadRangeIsOneEmulatedRequest) {
  const std::string dir = ::testing::TempDir() + "/object_store_disk_test";
  std::filesystem::remove_all(dir);
  StoreOptions options;
  options.disk_model =
      DiskModelParams{std::chrono::microseconds(1000), std::chrono::microseconds(0), 1000.0};
  Result<std::unique_ptr<ObjectStore>> store = ObjectStore::Open(dir, options);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto key = [](uint64_t index) {
    return EncodeStoreKey(Oid{1, 9, index, ObjectType::kData, CopyFlag::kReplica});
  };
  for (uint64_t i = 0; i < 8; ++i) {
    ObjectStore::Batch batch;
    const std::string data = Bytes(static_cast<int>(i));
    batch.Put(key(i), 1, ObjectChecksum(data), data, false, 0);
    ASSERT_TRUE((*store)->Commit(&batch, false).ok());
  }
  std::vector<uint64_t> reads_seen;  // the disk's read count as each object is handed over
  std::vector<std::string> keys;
  Status st = (*store)->ReadRange(key(2), key(7), [&](const std::string& k, StoredObject o) {
    reads_seen.push_back((*store)->disk_reads());
    EXPECT_TRUE(o.data == Bytes(static_cast<int>(2 + keys.size())));
    keys.push_back(k);
  });
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(keys, (std::vector<std::string>{key(2), key(3), key(4), key(5), key(6)}));
  EXPECT_EQ(reads_seen, std::vector<uint64_t>(5, 1)) << "charged once, before the first";
  EXPECT_EQ((*store)->disk_reads(), 1u);
  EXPECT_EQ((*store)->disk_seeks(), 1u);
  store->reset();
  std::filesystem::remove_all(dir);
}

// A summary is read without the object's bytes (no emulated disk read), also after a reopen; a
// record without one is read whole instead.
TEST(ObjectStoreDiskModelTest, SummaryReadsNoObjectBytes) {
  const std::string dir = ::testing::TempDir() + "/object_store_summary_test";
  std::filesystem::remove_all(dir);
  const StoreOptions options = WithDiskModel();
  const std::string key = EncodeStoreKey(Oid{1, 9, 0, ObjectType::kData, CopyFlag::kOriginal});
  const std::string data = Bytes(5);
  {
    Result<std::unique_ptr<ObjectStore>> store = ObjectStore::Open(dir, options);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ObjectStore::Batch batch;
    batch.Put(key, 3, ObjectChecksum(data), data, false, 0);
    ASSERT_TRUE((*store)->Commit(&batch, false).ok());
    EXPECT_EQ((*store)->GetSummary(key)->version, 3u);
    EXPECT_EQ((*store)->disk_reads(), 0u);
  }
  Result<std::unique_ptr<ObjectStore>> store = ObjectStore::Open(dir, options);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ(*(*store)->GetSummary(key),
            (ObjectRecordSummary{3, ObjectChecksum(data), kObjectSize, false}));
  EXPECT_EQ((*store)->disk_reads(), 0u) << "the summary survives a reopen";

  // A raw record replaces the record alone, as a bad sector would: the summary stays. A raw
  // record where there was none gets one from its header; with a damaged header it has none,
  // and the record is read whole.
  std::string damaged = EncodeObjectRecord(8, "xyz");
  damaged.back() ^= 1;
  ASSERT_TRUE((*store)->PutRecordBytes(key, damaged).ok());
  EXPECT_EQ(*(*store)->GetSummary(key),
            (ObjectRecordSummary{3, ObjectChecksum(data), kObjectSize, false}));
  const std::string other = EncodeStoreKey(Oid{1, 9, 1, ObjectType::kData, CopyFlag::kOriginal});
  ASSERT_TRUE((*store)->PutRecordBytes(other, damaged).ok());
  EXPECT_EQ(*(*store)->GetSummary(other),
            (ObjectRecordSummary{8, ObjectChecksum("xyz"), 3, false}));
  EXPECT_EQ((*store)->disk_reads(), 0u);
  const std::string third = EncodeStoreKey(Oid{1, 9, 2, ObjectType::kData, CopyFlag::kOriginal});
  damaged[3] ^= 1;
  ASSERT_TRUE((*store)->PutRecordBytes(third, damaged).ok());
  EXPECT_TRUE((*store)->GetSummary(third).status().Is(StatusCode::kCorruption))
      << "no summary: the record is read, and found damaged";
  store->reset();
  std::filesystem::remove_all(dir);
}

// A listing from summaries: every record of the range in key order, tombstones included, from
// after start_after, with no object bytes read; the same objects a reading scan visits.
TEST(ObjectStoreDiskModelTest, ScanSummariesListsWithoutReadingObjects) {
  const std::string dir = ::testing::TempDir() + "/object_store_scan_summaries_test";
  std::filesystem::remove_all(dir);
  const StoreOptions options = WithDiskModel();
  Result<std::unique_ptr<ObjectStore>> store = ObjectStore::Open(dir, options);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto key = [](uint64_t fno, uint64_t index) {
    return EncodeStoreKey(Oid{1, fno, index, ObjectType::kData, CopyFlag::kReplica});
  };
  for (uint64_t fno : {4u, 5u}) {
    for (uint64_t i = 0; i < 5; ++i) {
      ObjectStore::Batch batch;
      const std::string data = Bytes(static_cast<int>(i)).substr(0, 1000 * (i + 1));
      batch.Put(key(fno, i), i + 1, ObjectChecksum(data), data, false, 0);
      ASSERT_TRUE((*store)->Commit(&batch, false).ok());
    }
  }
  ObjectStore::Batch batch;
  batch.PutTombstone(key(4, 2), 7, true, 3000);
  ASSERT_TRUE((*store)->Commit(&batch, false).ok());

  std::vector<std::pair<std::string, ObjectRecordSummary>> listed;
  Status st = (*store)->ScanSummaries(key(4, 0), key(5, 0), key(4, 0),
                                      [&](const std::string& k, const ObjectRecordSummary& s) {
                                        listed.emplace_back(k, s);
                                        return true;
                                      });
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(listed.size(), 4u) << "objects 1 to 4 of file 4";
  EXPECT_EQ(listed[0].first, key(4, 1));
  EXPECT_EQ(listed[0].second.length, 2000u);
  EXPECT_EQ(listed[1].second, (ObjectRecordSummary{7, 0, 0, true}));
  EXPECT_EQ(listed[3].first, key(4, 4));
  EXPECT_EQ(listed[3].second.version, 5u);
  EXPECT_EQ((*store)->disk_reads(), 0u);

  std::vector<std::string> scanned;
  ASSERT_TRUE((*store)
                  ->Scan(
                      key(4, 0), key(5, 0), key(4, 0),
                      [&](const std::string& k, const StoredObject& o) {
                        EXPECT_EQ(o.summary(), listed[scanned.size()].second);
                        scanned.push_back(k);
                        return true;
                      },
                      {}, /*with_tombstones=*/true)
                  .ok());
  EXPECT_EQ(scanned.size(), listed.size());
  store->reset();
  std::filesystem::remove_all(dir);
}

// A store written before summaries were kept gets them at its first open, and its large records
// move into the data log.
TEST(ObjectStoreDiskModelTest, OpenGivesOlderRecordsTheirSummariesAndMovesThemToTheLog) {
  const std::string dir = ::testing::TempDir() + "/object_store_backfill_test";
  std::filesystem::remove_all(dir);
  const std::string key = EncodeStoreKey(Oid{1, 3, 0, ObjectType::kData, CopyFlag::kOriginal});
  std::string damaged_header = EncodeObjectRecord(2, "def");
  damaged_header[5] ^= 1;
  const std::string other = EncodeStoreKey(Oid{1, 3, 1, ObjectType::kData, CopyFlag::kOriginal});
  const std::string large = EncodeStoreKey(Oid{1, 3, 2, ObjectType::kData, CopyFlag::kOriginal});
  {
    rocksdb::Options raw_options;
    raw_options.create_if_missing = true;
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(raw_options, dir, &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), key, EncodeObjectRecord(6, "abc")).ok());
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), other, damaged_header).ok());
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), large, EncodeObjectRecord(4, Bytes(9))).ok());
  }
  const StoreOptions options = WithDiskModel();
  Result<std::unique_ptr<ObjectStore>> store = ObjectStore::Open(dir, options);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ(*(*store)->GetSummary(key), (ObjectRecordSummary{6, ObjectChecksum("abc"), 3, false}));
  EXPECT_EQ((*store)->disk_reads(), 0u) << "the summary was added at open";
  EXPECT_TRUE((*store)->GetSummary(other).status().Is(StatusCode::kCorruption));
  std::vector<std::string> listed;
  ASSERT_TRUE((*store)
                  ->ScanSummaries("", "", "",
                                  [&](const std::string& k, const ObjectRecordSummary&) {
                                    listed.push_back(k);
                                    return true;
                                  })
                  .ok());
  EXPECT_EQ(listed, (std::vector<std::string>{key, large})) << "the damaged record is left out";
  EXPECT_EQ((*store)->data_log_bytes(), kObjectSize + kObjectRecordHeaderSize);
  EXPECT_EQ((*store)->data_log_garbage_bytes(), 0u);
  Result<StoredObject> moved = (*store)->Get(large);
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  EXPECT_EQ(moved->version, 4u);
  EXPECT_TRUE(moved->data == Bytes(9));
  EXPECT_EQ((*store)->Get(key)->data, "abc") << "small records stay where they are";
  store->reset();
  // Binaries from before summaries (the default column family only) and from before the data
  // log (default and summaries) are refused.
  rocksdb::DB* raw = nullptr;
  rocksdb::Status refused = rocksdb::DB::Open(rocksdb::Options(), dir, &raw);
  EXPECT_FALSE(refused.ok());
  delete raw;
  raw = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  refused = rocksdb::DB::Open(rocksdb::Options(), dir,
                              {{rocksdb::kDefaultColumnFamilyName, {}}, {"summaries", {}}},
                              &handles, &raw);
  EXPECT_FALSE(refused.ok());
  for (auto* handle : handles) delete handle;
  delete raw;
  // Reopened, the moved record is still there (the move happens once).
  store = ObjectStore::Open(dir, options);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_TRUE((*store)->Get(large)->data == Bytes(9));
  EXPECT_EQ((*store)->data_log_bytes(), kObjectSize + kObjectRecordHeaderSize);
  store->reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace orthofs
