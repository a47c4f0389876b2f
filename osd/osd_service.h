// The OSD's gRPC service: validates each request against the cluster map (epoch, placement,
// sizes), then serves it from the object cache and the RocksDB store.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/latency_histogram.h"
#include "common/limits.h"
#include "common/object_cache.h"
#include "common/peer_role.h"
#include "common/placement.h"
#include "common/space_reserve.h"
#include "orthofs.grpc.pb.h"
#include "osd/object_locks.h"
#include "osd/object_store.h"
#include "osd/prefetch_engine.h"
#include "osd/repair_worker.h"

namespace orthofs {

struct OsdServiceOptions {
  uint32_t osd_id = 0;
  uint64_t cache_bytes = 256ull << 20;
  std::string data_dir;  // for capacity reporting and the free-space guard
  // Writes are refused (NO_SPACE) when they would leave less free space than this on the data
  // dir's file system (common/space_reserve.h); 0 turns the guard off.
  uint64_t reserve_bytes = 0;
  PrefetchEngineOptions prefetch;
  RepairWorkerOptions repair;
  // With TLS: every call is checked against the caller's certificate name (common/peer_role.h).
  bool authorize_callers = false;
  int64_t tls_not_after = 0;  // this OSD's certificate expiry (Unix seconds) for the metrics
};

class OsdService final : public wire::Osd::Service {
 public:
  OsdService(const ClusterMap& map, ObjectStore* store, const OsdServiceOptions& options);

  grpc::Status Read(grpc::ServerContext*, const wire::ReadRequest*, wire::ReadResponse*) override;
  grpc::Status Write(grpc::ServerContext*, const wire::WriteRequest*,
                     wire::WriteResponse*) override;
  grpc::Status Delete(grpc::ServerContext*, const wire::DeleteRequest*,
                      wire::DeleteResponse*) override;
  grpc::Status Stat(grpc::ServerContext*, const wire::StatRequest*, wire::StatResponse*) override;
  grpc::Status Transact(grpc::ServerContext*, const wire::TransactRequest*,
                        wire::TransactResponse*) override;
  grpc::Status List(grpc::ServerContext*, const wire::ListRequest*, wire::ListResponse*) override;
  grpc::Status Sync(grpc::ServerContext*, const wire::SyncRequest*, wire::SyncResponse*) override;
  grpc::Status Stats(grpc::ServerContext*, const wire::StatsRequest*,
                     wire::StatsResponse*) override;
  grpc::Status Health(grpc::ServerContext*, const wire::HealthRequest*,
                      wire::HealthResponse*) override;
  grpc::Status Repair(grpc::ServerContext*, const wire::RepairRequest*,
                      wire::RepairResponse*) override;
  grpc::Status PrefetchNotify(grpc::ServerContext*, const wire::PrefetchNotifyRequest*,
                              wire::PrefetchNotifyResponse*) override;
  grpc::Status Prefetch(grpc::ServerContext*, const wire::PrefetchRequest*,
                        wire::PrefetchResponse*) override;
  grpc::Status Subscribe(grpc::ServerContext*, const wire::SubscribeRequest*,
                         grpc::ServerWriter<wire::WindowUpdate>*) override;
  grpc::Status SetLogLevel(grpc::ServerContext*, const wire::LogLevelRequest*,
                           wire::LogLevelResponse*) override;

  // Prometheus text (orthofs-osd --metrics): the Stats counters, store and disk gauges, and
  // per-RPC request counts and latency histograms, labelled with this OSD's id.
  std::string RenderMetrics();

  // Shutdown, step 1: refuse new requests (UNAVAILABLE, so clients fail over), then wait up to
  // `timeout` for the ones in flight. True if none is left. gRPC's own Shutdown(deadline) would
  // wait out the whole deadline while clients merely hold idle connections.
  bool Drain(std::chrono::milliseconds timeout);
  // Step 2, before the store closes: no more background repair.
  void StopBackgroundWork();

  // After the server listens: other OSDs replay the repair records naming this OSD's copies
  // (written while it was down); until they have, reads are refused (UNAVAILABLE) so clients
  // read the other copy instead of a stale one here.
  void StartRecovery();
  ~OsdService() override;

 private:
  // Counts a request in flight for Drain; false once draining has begun.
  class RequestScope {
   public:
    explicit RequestScope(OsdService* service);
    ~RequestScope();
    bool admitted() const { return admitted_; }

   private:
    OsdService* service_;
    bool admitted_;
  };

  // Counters for one RPC method.
  struct MethodCounters {
    std::atomic<uint64_t> calls{0};
    std::atomic<uint64_t> errors{0};
    LatencyHistogram latency;  // admission to answer
  };
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
    kMethodCount
  };
  static constexpr std::array<const char*, kMethodCount> kMethodNames = {
      "read", "write",           "delete",   "stat",      "transact", "list",
      "sync", "prefetch_notify", "prefetch", "subscribe", "repair",   "set_log_level"};

  // PERMISSION_DENIED unless the caller's certificate allows `call` (with authorize_callers);
  // `what` names the call in the message and the log.
  Status Authorize(grpc::ServerContext* context, CallClass call, std::string_view what) const;
  // The Stats counters as they are (the Prometheus endpoint), not relative to a reset.
  void FillStats(wire::StatsResponse* response);

  // The epoch and placement checks every object request passes.
  Result<Oid> CheckObject(uint64_t epoch, const wire::Oid& wire_oid) const;
  Status CheckEpoch(uint64_t epoch) const;
  grpc::Status Finish(Method method, const Status& status);
  // NO_SPACE when `bytes` more would eat into the disk's reserve (probing statvfs as needed).
  Status CheckSpaceFor(uint64_t bytes, SpaceReserve::Use use);
  // After a delete on a full OSD: compact so that the deleted bytes' space comes back.
  void ReclaimSpaceIfFull();

  // The current object (cache, then store); kNotFound if absent or deleted, and then
  // *tombstone_version (if given) is the deleted object's last version, else 0.
  // Caller holds LockFor(key).
  Result<std::shared_ptr<const CachedObject>> LoadLocked(const std::string& key,
                                                         uint64_t* tombstone_version = nullptr);
  void FillMeta(const Oid& oid, const CachedObject& object, wire::ObjectMeta* meta) const;
  // A write or delete that changed nothing here still owes the other copy its state: store
  // only the repair record (proto WriteRequest.record_repair). `version` is ours.
  Status CommitRepairRecordOnly(const Oid& oid, uint64_t version, bool sync);
  void RepairRecorded();

  const uint32_t osd_id_;
  const bool authorize_callers_;
  const int64_t tls_not_after_;
  std::mutex stats_baseline_mu_;
  std::map<std::string, uint64_t> stats_baseline_;  // counter values at the last Stats reset
  const Placement placement_;
  ObjectStore* const store_;
  ObjectCache cache_;
  const std::string data_dir_;
  const std::chrono::steady_clock::time_point started_;
  ObjectLocks locks_;  // per-object serialization of read-modify-write and cache fills
  std::array<MethodCounters, kMethodCount> counters_;
  std::atomic<bool> draining_{false};
  std::atomic<int> in_flight_{0};
  std::atomic<uint64_t> bytes_in_{0};
  std::atomic<uint64_t> bytes_out_{0};
  std::atomic<uint64_t> osd_bytes_in_{0};  // prefetch traffic from other OSDs
  PrefetchEngine prefetch_;                // after cache_ and locks_, which it uses
  std::atomic<uint64_t> repair_records_written_{0};
  RepairWorker repair_;  // after store_ and locks_, which it uses
  std::atomic<bool> recovering_{false};
  std::thread recovery_;
  std::mutex space_mu_;
  SpaceReserve space_;  // guarded by space_mu_
  bool full_ = false;   // guarded by space_mu_: refusing writes now (logged once per episode)
  std::atomic<uint64_t> writes_refused_full_{0};
};

}  // namespace orthofs
