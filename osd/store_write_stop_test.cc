#include "osd/store_write_stop.h"

#include <gtest/gtest.h>

namespace orthofs {
namespace {

TEST(StoreWriteStopTest, AllowsWritesUntilTheFirstBackgroundError) {
  StoreWriteStop stop;
  EXPECT_FALSE(stop.stopped());
  EXPECT_TRUE(stop.WritesAllowed().ok());
  rocksdb::Status full = rocksdb::Status::NoSpace("While appending to file: 000033.log");
  stop.OnBackgroundError(rocksdb::BackgroundErrorReason::kWriteCallback, &full);
  EXPECT_TRUE(stop.stopped());
  const Status refused = stop.WritesAllowed();
  EXPECT_TRUE(refused.Is(StatusCode::kNoSpace)) << refused.ToString();
  EXPECT_NE(refused.message().find("store write"), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find("000033.log"), std::string::npos) << refused.message();
}

TEST(StoreWriteStopTest, TheFirstErrorIsTheOneReported) {
  StoreWriteStop stop;
  rocksdb::Status device = rocksdb::Status::IOError("read-only file system");
  stop.OnBackgroundError(rocksdb::BackgroundErrorReason::kFlush, &device);
  rocksdb::Status full = rocksdb::Status::NoSpace("later");
  stop.OnBackgroundError(rocksdb::BackgroundErrorReason::kCompaction, &full);
  const Status refused = stop.WritesAllowed();
  EXPECT_TRUE(refused.Is(StatusCode::kIoError)) << refused.ToString();
  EXPECT_NE(refused.message().find("store flush"), std::string::npos) << refused.message();
}

TEST(StoreWriteStopTest, TurnsRocksDbsOwnRecoveryOff) {
  StoreWriteStop stop;
  bool auto_recovery = true;
  stop.OnErrorRecoveryBegin(rocksdb::BackgroundErrorReason::kWriteCallback,
                            rocksdb::Status::NoSpace(), &auto_recovery);
  EXPECT_FALSE(auto_recovery);
}

}  // namespace
}  // namespace orthofs
