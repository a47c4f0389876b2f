// Stops the store's writes at RocksDB's first background error (a flush, a compaction or a
// write-ahead log append that failed: a full disk, a failing device) until the OSD restarts.
//
// Why not RocksDB's own recovery: 7.8 resumes by itself once a full disk has room again, but
// keeps the write-ahead log writer whose append failed, and the next append through it aborts
// the process (an assert in WritableFileWriter). So the listener turns that recovery off, the
// store refuses its writes with this status, reads go on, and the OSD reopens the store (it
// restarts in place, osd/main.cc) once the disk has room: the open starts a fresh log.
//
// Thread-safe: RocksDB calls the listener on its flush, compaction and write threads.
#pragma once

#include <rocksdb/listener.h>

#include <atomic>

#include "common/status.h"
#include "common/thread_annotations.h"

namespace orthofs {

class StoreWriteStop final : public rocksdb::EventListener {
 public:
  void OnBackgroundError(rocksdb::BackgroundErrorReason reason, rocksdb::Status* error) override;
  void OnErrorRecoveryBegin(rocksdb::BackgroundErrorReason reason, rocksdb::Status error,
                            bool* auto_recovery) override;

  // Stops writes for `why` (the first call wins; later ones only log at debug).
  void Stop(const Status& why) ORTHOFS_EXCLUDES(mu_);
  bool stopped() const { return stopped_.load(std::memory_order_acquire); }
  // Ok, or the refusal of a write once stopped: NO_SPACE after a full disk, else IO_ERROR,
  // naming the error and saying that the OSD restarts once it has room.
  Status WritesAllowed() const ORTHOFS_EXCLUDES(mu_);

 private:
  std::atomic<bool> stopped_{false};
  mutable Mutex mu_;
  Status why_ ORTHOFS_GUARDED_BY(mu_);
};

// The name of a background error's cause, for logs ("flush", "compaction", "write", ...).
const char* BackgroundErrorReasonName(rocksdb::BackgroundErrorReason reason);

}  // namespace orthofs
