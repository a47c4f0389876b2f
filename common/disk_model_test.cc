#include "common/disk_model.h"

#include <gtest/gtest.h>

namespace orthofs {
namespace {

using std::chrono::microseconds;

Oid Data(uint64_t fno, uint64_t index, CopyFlag flag = CopyFlag::kOriginal) {
  return Oid{1, fno, index, ObjectType::kData, flag};
}

constexpr uint64_t kObject = 128 * 1024;
// 131072 bytes at 100 MB/s = 1310 us (truncated to whole microseconds).
constexpr microseconds kTransfer{1310};
constexpr microseconds kPosition{8500 + 4170};

TEST(DiskModelTest, ParseNames) {
  Result<std::optional<DiskModelParams>> none = ParseDiskModel("none");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  Result<std::optional<DiskModelParams>> hdd = ParseDiskModel("hdd");
  ASSERT_TRUE(hdd.ok());
  ASSERT_TRUE(hdd->has_value());
  EXPECT_EQ((*hdd)->seek, microseconds(8500));
  EXPECT_EQ((*hdd)->rotation, microseconds(4170));
  EXPECT_EQ((*hdd)->transfer_mb_s, 100.0);
  Result<std::optional<DiskModelParams>> bad = ParseDiskModel("ssd");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'ssd'"), std::string::npos);
}

TEST(DiskModelTest, FirstReadSeeks) {
  DiskModel disk(DiskModelParams{});
  EXPECT_EQ(disk.ReadTime(Data(5, 0), Data(5, 0), kObject), kPosition + kTransfer);
  EXPECT_EQ(disk.seeks(), 1u);
  EXPECT_EQ(disk.reads(), 1u);
}

TEST(DiskModelTest, NextObjectOfTheSameCopyContinuesWithoutSeek) {
  DiskModel disk(DiskModelParams{});
  disk.ReadTime(Data(5, 0), Data(5, 0), kObject);
  EXPECT_EQ(disk.ReadTime(Data(5, 1), Data(5, 1), kObject), kTransfer);
  EXPECT_EQ(disk.ReadTime(Data(5, 1), Data(5, 1), kObject), kTransfer);  // same object again
  EXPECT_EQ(disk.seeks(), 1u);
}

TEST(DiskModelTest, JumpsAndOtherCopiesSeek) {
  DiskModel disk(DiskModelParams{});
  disk.ReadTime(Data(5, 0), Data(5, 0), kObject);
  EXPECT_EQ(disk.ReadTime(Data(5, 2), Data(5, 2), kObject), kPosition + kTransfer);  // skip one
  EXPECT_EQ(disk.ReadTime(Data(6, 3), Data(6, 3), kObject), kPosition + kTransfer);  // other file
  EXPECT_EQ(disk.ReadTime(Data(6, 4, CopyFlag::kReplica), Data(6, 4, CopyFlag::kReplica), kObject),
            kPosition + kTransfer);  // the other copy lives elsewhere on the disk
  EXPECT_EQ(disk.ReadTime(Data(6, 3), Data(6, 3), kObject), kPosition + kTransfer);  // backwards
  EXPECT_EQ(disk.seeks(), 5u);
}

TEST(DiskModelTest, RangeScanIsOnePositioningAndManyTransfers) {
  DiskModel disk(DiskModelParams{});
  EXPECT_EQ(disk.ReadTime(Data(5, 10), Data(5, 49), 40 * kObject),
            kPosition + microseconds(40 * kObject / 100));
  // The head rests after the scan's last object.
  EXPECT_EQ(disk.ReadTime(Data(5, 50), Data(5, 50), kObject), kTransfer);
  EXPECT_EQ(disk.seeks(), 1u);
}

TEST(DiskModelTest, ParametersScale) {
  DiskModelParams fast;
  fast.seek = microseconds(100);
  fast.rotation = microseconds(0);
  fast.transfer_mb_s = 1000;
  DiskModel disk(fast);
  EXPECT_EQ(disk.ReadTime(Data(1, 0), Data(1, 0), 1000000), microseconds(100 + 1000));
}

}  // namespace
}  // namespace orthofs
