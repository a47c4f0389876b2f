#include "osd/rocksdb_logger.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <memory>
#include <sstream>

#include "osd/object_store.h"

namespace orthofs {
namespace {

// spdlog's default logger writes to `out` at `level` while this lives.
class CapturedLog {
 public:
  explicit CapturedLog(spdlog::level::level_enum level) : previous_(spdlog::default_logger()) {
    auto logger = std::make_shared<spdlog::logger>(
        "test", std::make_shared<spdlog::sinks::ostream_sink_mt>(out_));
    logger->set_level(level);
    spdlog::set_default_logger(logger);
  }
  ~CapturedLog() { spdlog::set_default_logger(previous_); }
  std::string text() const { return out_.str(); }

 private:
  std::ostringstream out_;
  std::shared_ptr<spdlog::logger> previous_;
};

TEST(RocksDbLoggerTest, LevelsMapToSpdlogs) {
  EXPECT_EQ(SpdlogLevelOf(rocksdb::InfoLogLevel::INFO_LEVEL), spdlog::level::debug);
  EXPECT_EQ(SpdlogLevelOf(rocksdb::InfoLogLevel::HEADER_LEVEL), spdlog::level::debug);
  EXPECT_EQ(SpdlogLevelOf(rocksdb::InfoLogLevel::DEBUG_LEVEL), spdlog::level::trace);
  EXPECT_EQ(SpdlogLevelOf(rocksdb::InfoLogLevel::WARN_LEVEL), spdlog::level::warn);
  EXPECT_EQ(SpdlogLevelOf(rocksdb::InfoLogLevel::ERROR_LEVEL), spdlog::level::err);
  EXPECT_EQ(SpdlogLevelOf(rocksdb::InfoLogLevel::FATAL_LEVEL), spdlog::level::critical);
}

// An object store logs RocksDB's lines through spdlog and keeps no LOG file.
TEST(RocksDbLoggerTest, TheStoreLogsThroughSpdlogAndWritesNoLogFile) {
  const std::string dir = ::testing::TempDir() + "/rocksdb_logger_test";
  std::filesystem::remove_all(dir);
  std::string logged;
  {
    CapturedLog log(spdlog::level::debug);
    Result<std::unique_ptr<ObjectStore>> store = ObjectStore::Open(dir, StoreOptions{});
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ASSERT_TRUE((*store)->PutMeta("name", "value").ok());
    store = Status::Internal("closed");
    logged = log.text();
  }
  EXPECT_NE(logged.find("rocksdb " + dir + ": "), std::string::npos) << logged;
  EXPECT_FALSE(std::filesystem::exists(dir + "/LOG"));
  std::filesystem::remove_all(dir);
}

// A failed open (the data dir in use) leaves its explanation to the caller: nothing at warn.
TEST(RocksDbLoggerTest, AFailedOpenLogsNothingAboveDebug) {
  const std::string dir = ::testing::TempDir() + "/rocksdb_logger_held_test";
  std::filesystem::remove_all(dir);
  Result<std::unique_ptr<ObjectStore>> holder = ObjectStore::Open(dir, StoreOptions{});
  ASSERT_TRUE(holder.ok()) << holder.status().ToString();
  std::string logged;
  {
    CapturedLog log(spdlog::level::info);
    Result<std::unique_ptr<ObjectStore>> second = ObjectStore::Open(dir, StoreOptions{});
    EXPECT_FALSE(second.ok());  // RocksDB's LOCK is held (by this process here)
    logged = log.text();
  }
  EXPECT_EQ(logged, "");
  holder = Status::Internal("closed");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace orthofs
