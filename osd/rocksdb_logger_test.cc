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
  std::ostringstream out;
  auto previous = spdlog::default_logger();
  auto logger = std::make_shared<spdlog::logger>(
      "test", std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
  logger->set_level(spdlog::level::debug);
  spdlog::set_default_logger(logger);
  const std::string dir = ::testing::TempDir() + "/rocksdb_logger_test";
  std::filesystem::remove_all(dir);
  {
    Result<std::unique_ptr<ObjectStore>> store = ObjectStore::Open(dir, StoreOptions{});
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ASSERT_TRUE((*store)->PutMeta("name", "value").ok());
  }
  spdlog::set_default_logger(previous);
  EXPECT_NE(out.str().find("rocksdb " + dir + ": "), std::string::npos) << out.str();
  EXPECT_FALSE(std::filesystem::exists(dir + "/LOG"));
  std::filesystem::remove_all(dir);
}

// A failed open (the data dir in use) leaves its explanation to the caller: nothing at warn.
TEST(RocksDbLoggerTest, AFailedOpenLogsNothingAboveDebug) {
  const std::string dir = ::testing::TempDir() + "/rocksdb_logger_held_test";
  std::filesystem::remove_all(dir);
  Result<std::unique_ptr<ObjectStore>> holder = ObjectStore::Open(dir, StoreOptions{});
  ASSERT_TRUE(holder.ok()) << holder.status().ToString();
  std::ostringstream out;
  auto previous = spdlog::default_logger();
  auto logger = std::make_shared<spdlog::logger>(
      "test", std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
  logger->set_level(spdlog::level::info);
  spdlog::set_default_logger(logger);
  Result<std::unique_ptr<ObjectStore>> second = ObjectStore::Open(dir, StoreOptions{});
  spdlog::set_default_logger(previous);
  ASSERT_FALSE(second.ok());  // RocksDB's LOCK is held (by this process here)
  EXPECT_EQ(out.str(), "");
  holder = Status::Internal("closed");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace orthofs
