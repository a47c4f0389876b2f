#include "osd/rocksdb_logger.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <utility>

namespace orthofs {

RocksDbLogger::RocksDbLogger(std::string name)
    : rocksdb::Logger(rocksdb::InfoLogLevel::INFO_LEVEL), name_(std::move(name)) {}

int SpdlogLevelOf(rocksdb::InfoLogLevel level) {
  switch (level) {
    case rocksdb::InfoLogLevel::DEBUG_LEVEL:
      return spdlog::level::trace;
    case rocksdb::InfoLogLevel::INFO_LEVEL:
    case rocksdb::InfoLogLevel::HEADER_LEVEL:
      return spdlog::level::debug;
    case rocksdb::InfoLogLevel::WARN_LEVEL:
      return spdlog::level::warn;
    case rocksdb::InfoLogLevel::ERROR_LEVEL:
      return spdlog::level::err;
    case rocksdb::InfoLogLevel::FATAL_LEVEL:
    default:
      return spdlog::level::critical;
  }
}

void RocksDbLogger::Logv(const char* format, va_list ap) {
  Logv(rocksdb::InfoLogLevel::INFO_LEVEL, format, ap);
}

void RocksDbLogger::Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) {
  auto spd_level = static_cast<spdlog::level::level_enum>(SpdlogLevelOf(level));
  if (!opened_.load(std::memory_order_relaxed))
    spd_level = std::min(spd_level, spdlog::level::debug);
  if (!spdlog::should_log(spd_level)) return;  // most lines: no formatting at all
  char line[2048];
  va_list copy;
  va_copy(copy, ap);
  const int n = std::vsnprintf(line, sizeof(line), format, copy);
  va_end(copy);
  if (n < 0) return;
  spdlog::log(spd_level, "rocksdb {}: {}", name_, line);  // a longer line is cut at 2 KiB
}

}  // namespace orthofs
