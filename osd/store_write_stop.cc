#include "osd/store_write_stop.h"

#include <spdlog/spdlog.h>

#include <string>

#include "osd/object_store.h"

namespace orthofs {

const char* BackgroundErrorReasonName(rocksdb::BackgroundErrorReason reason) {
  switch (reason) {
    case rocksdb::BackgroundErrorReason::kFlush:
    case rocksdb::BackgroundErrorReason::kFlushNoWAL:
      return "flush";
    case rocksdb::BackgroundErrorReason::kCompaction:
      return "compaction";
    case rocksdb::BackgroundErrorReason::kWriteCallback:
      return "write";
    case rocksdb::BackgroundErrorReason::kMemTable:
      return "memtable";
    case rocksdb::BackgroundErrorReason::kManifestWrite:
    case rocksdb::BackgroundErrorReason::kManifestWriteNoWAL:
      return "manifest write";
  }
  return "background work";
}

void StoreWriteStop::OnBackgroundError(rocksdb::BackgroundErrorReason reason,
                                       rocksdb::Status* error) {
  Stop(FromRocks(*error, std::string("store ") + BackgroundErrorReasonName(reason)));
}

void StoreWriteStop::OnErrorRecoveryBegin(rocksdb::BackgroundErrorReason, rocksdb::Status,
                                          bool* auto_recovery) {
  *auto_recovery = false;  // the header says why
}

void StoreWriteStop::Stop(const Status& why) {
  MutexLock lock(&mu_);
  if (stopped_.load(std::memory_order_relaxed)) {
    spdlog::debug("store: another error while writes are stopped: {}", why.ToString());
    return;
  }
  why_ = why;
  stopped_.store(true, std::memory_order_release);
  spdlog::error(
      "store: writes stopped until the OSD restarts, which it does once its disk has "
      "room again: {}",
      why.ToString());
}

Status StoreWriteStop::WritesAllowed() const {
  if (!stopped()) return Status::Ok();
  MutexLock lock(&mu_);
  const std::string message =
      "OSD store stopped writing after " + why_.message() + "; it restarts once its disk has room";
  return why_.Is(StatusCode::kNoSpace) ? Status::NoSpace(message) : Status::IoError(message);
}

}  // namespace orthofs
