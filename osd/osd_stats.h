// The OSD's counters: per RPC method (calls, errors, latency) and per event (OsdCounters), the
// Stats answer made of them and of the other parts' own counters, and the Prometheus text.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include "common/latency_histogram.h"
#include "common/object_cache.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "orthofs.pb.h"
#include "osd/map_holder.h"
#include "osd/object_store.h"
#include "osd/prefetch_engine.h"
#include "osd/repair_worker.h"

namespace orthofs {

// Events the OSD's parts count; Stats reports each under its name there (OsdStats::Fill).
// Thread-safe: atomics, added to from any request thread.
struct OsdCounters {
  std::atomic<uint64_t> bytes_in{0};
  std::atomic<uint64_t> bytes_out{0};
  std::atomic<uint64_t> objects_listed{0};  // List answers' objects: what listings cost
  // The reads of ReadMany calls and the writes of WriteMany calls, which read_calls and
  // write_calls count too: those less these are the Read and Write calls themselves.
  std::atomic<uint64_t> batched_reads{0};
  std::atomic<uint64_t> batched_writes{0};
  std::atomic<uint64_t> batched_deletes{0};  // of DeleteMany calls, in delete_calls too
  std::atomic<uint64_t> osd_bytes_in{0};     // prefetch traffic from other OSDs
  std::atomic<uint64_t> repair_records_written{0};
  // Changes of one copy alone refused because the other copy's OSD answers.
  std::atomic<uint64_t> changes_alone_refused{0};
  std::atomic<uint64_t> writes_refused_full{0};
  std::atomic<uint64_t> stalls{0};  // found by the stall watch (osd/recovery.h)
  std::atomic<uint64_t> map_changes{0};
  std::atomic<uint64_t> copies_taken_over{0};
  std::atomic<uint64_t> damaged_copies_replaced{0};  // moved from their other copy
  std::atomic<uint64_t> copies_discarded{0};
};

// What Stats reports besides the counters. The pointers outlive the OsdStats.
struct OsdStatsSources {
  uint32_t osd_id = 0;
  std::string data_dir;        // capacity and free space
  uint64_t reserve_bytes = 0;  // --reserve-mb: free space writes may not take
  int64_t tls_not_after = 0;   // this OSD's certificate expiry (Unix seconds); 0: none
  const MapHolder* maps = nullptr;
  const ObjectStore* store = nullptr;
  const ObjectCache* cache = nullptr;
  const PrefetchEngine* prefetch = nullptr;
  const RepairWorker* repair = nullptr;
};

// Thread-safe: the counters are atomics; the Stats baseline has its own mutex.
class OsdStats {
 public:
  enum Method {
    kRead,
    kWrite,
    kDelete,
    kStat,
    kTransact,
    kList,
    kSync,
    kPrefetchNotify,
    kPrefetch,
    kSubscribe,
    kRepair,
    kSetLogLevel,
    kGetMap,
    kSetMap,
    kFetch,
    kDiscard,
    kMigrate,
    kWriteMany,  // calls; each of their writes counts as a write too
    kReadMany,   // calls; each of their reads counts as a read too
    kDropCaches,
    kDeleteMany,  // calls; each of their deletes counts as a delete too
    kMethodCount
  };
  static constexpr std::array<const char*, kMethodCount> kMethodNames = {
      "read",      "write",           "delete",     "stat",      "transact", "list",
      "sync",      "prefetch_notify", "prefetch",   "subscribe", "repair",   "set_log_level",
      "get_map",   "set_map",         "fetch",      "discard",   "migrate",  "write_many",
      "read_many", "drop_caches",     "delete_many"};

  explicit OsdStats(OsdStatsSources sources) : sources_(std::move(sources)) {}

  OsdCounters& counters() { return counters_; }

  // A call answered `latency` after its admission: counted as Count does.
  void Answered(Method method, const Status& status, std::chrono::nanoseconds latency);
  // Counts one call or one write or read of a batch, and logs a refusal (serious ones at warn).
  void Count(Method method, const Status& status);

  // The Stats answer: the counters that only grow relative to the last reset; `reset` makes
  // this answer's values the next baseline.
  void Report(bool reset, wire::StatsResponse* response) ORTHOFS_EXCLUDES(baseline_mu_);
  // Prometheus text (orthofs-osd --metrics): the Stats counters as they are (not relative to a
  // reset), store and disk gauges, and per-RPC request counts and latency histograms, labelled
  // with this OSD's id. `recovering`: replaying what this OSD missed (osd/recovery.h).
  std::string RenderMetrics(bool recovering) const;

 private:
  // Counter of one RPC method.
  struct MethodCounters {
    std::atomic<uint64_t> calls{0};
    std::atomic<uint64_t> errors{0};
    LatencyHistogram latency;  // admission to answer
  };

  // The Stats counters as they are.
  void Fill(wire::StatsResponse* response) const;

  const OsdStatsSources sources_;
  std::array<MethodCounters, kMethodCount> methods_;
  OsdCounters counters_;
  Mutex baseline_mu_;
  // Counter values at the last Stats reset.
  std::map<std::string, uint64_t> baseline_ ORTHOFS_GUARDED_BY(baseline_mu_);
};

}  // namespace orthofs
