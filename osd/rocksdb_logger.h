// RocksDB's info log, sent to spdlog instead of a LOG file in the data dir.
//
// RocksDB 7.8 asserts (aborts the OSD) when it writes to its LOG file after an append to it
// failed: on a disk filled to the last byte by something else, the first flush or compaction
// that logs a line would kill the daemon. A logger with no file of its own cannot fail that
// way, and RocksDB's lines land where the OSD's own go (the journal, --log-file).
//
// Thread-safe: spdlog's default logger is.
#pragma once

#include <rocksdb/env.h>

#include <atomic>
#include <cstdarg>
#include <memory>
#include <string>

namespace orthofs {

class RocksDbLogger final : public rocksdb::Logger {
 public:
  // RocksDB's INFO lines (every flush and compaction) are spdlog debug; its warnings and errors
  // keep their level. `name` prefixes each line (the OSD's store, by its data dir).
  explicit RocksDbLogger(std::string name);

  void Logv(const char* format, va_list ap) override;
  void Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) override;

  // Until the store is open every line is debug: an open that fails says why in one line of
  // the OSD's own (a held LOCK: "data dir ... is in use"), not also in RocksDB's words.
  void Opened() { opened_.store(true, std::memory_order_relaxed); }

 private:
  const std::string name_;
  std::atomic<bool> opened_{false};
};

// The spdlog level of a RocksDB log level (INFO and below: debug).
int SpdlogLevelOf(rocksdb::InfoLogLevel level);

}  // namespace orthofs
