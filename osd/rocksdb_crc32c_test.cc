#include "osd/rocksdb_crc32c.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <filesystem>
#include <random>
#include <string>

#include "common/crc32c.h"

// RocksDB's own implementation, still reachable under the wrap by its __real_ name.
extern "C" uint32_t __real__ZN7rocksdb6crc32c6ExtendEjPKcm(uint32_t init_crc, const char* data,
                                                           size_t n);

namespace orthofs {
namespace {

TEST(RocksDbCrc32cTest, RocksDbUsesOurs) { EXPECT_TRUE(RocksDbCrc32cIsOurs()); }

TEST(RocksDbCrc32cTest, SameValuesAsRocksDbsOwn) {
  std::mt19937_64 rng(11);
  std::string buffer(256 << 10, '\0');
  for (char& c : buffer) c = static_cast<char>(rng());
  for (int i = 0; i < 200; ++i) {
    const size_t begin = rng() % 4096;
    const size_t n = rng() % (buffer.size() - begin);
    const uint32_t seed = static_cast<uint32_t>(rng());
    ASSERT_EQ(Crc32cExtend(seed, buffer.data() + begin, n),
              __real__ZN7rocksdb6crc32c6ExtendEjPKcm(seed, buffer.data() + begin, n))
        << "begin " << begin << " length " << n;
  }
}

TEST(RocksDbCrc32cTest, WriteAheadLogReplaysAfterReopen) {
  // Records checksummed by ours are read back (and verified) by RocksDB's recovery.
  const std::string dir = ::testing::TempDir() + "/rocksdb_crc32c_test";
  std::filesystem::remove_all(dir);
  rocksdb::Options options;
  options.create_if_missing = true;
  const std::string value(128 << 10, 'v');
  {
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(options, dir, &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    rocksdb::WriteOptions sync;
    sync.sync = true;
    for (int i = 0; i < 20; ++i) ASSERT_TRUE(db->Put(sync, "key" + std::to_string(i), value).ok());
  }  // closed without a flush: the values are only in the log
  options.paranoid_checks = true;
  options.wal_recovery_mode = rocksdb::WALRecoveryMode::kAbsoluteConsistency;
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(options, dir, &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  for (int i = 0; i < 20; ++i) {
    std::string got;
    ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), "key" + std::to_string(i), &got).ok());
    EXPECT_EQ(got, value);
  }
  db.reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace orthofs
