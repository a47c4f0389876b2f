// The OSD's gRPC service: a thin shell whose handlers check the caller's certificate, admit
// the request (Admission: refused while shutting down; it places by one map view), hand it to
// the part that serves it and count its answer (OsdStats). The parts:
//   ObjectReads, ObjectWrites  one object's reads and changes (osd/object_reads.h, _writes.h)
//   Transactions, Listing      several objects' changes, listings (osd/transactions.h, listing.h)
//   ObjectLoader, HandOver     loading objects; copies moving in a rebalance (osd/hand_over.h)
//   MapCatchUp                 epoch and placement checks, map changes (osd/map_catch_up.h)
//   Recovery                   refusals while this OSD's copies may be stale (osd/recovery.h)
//   SpaceGuard, PeerClients    the free-space reserve; clients to the other OSDs
#pragma once

#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/method_handler.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/byte_pieces.h"
#include "common/cluster_map.h"
#include "common/map_view.h"
#include "common/object_cache.h"
#include "common/peer_role.h"
#include "common/status.h"
#include "orthofs.grpc.pb.h"
#include "osd/admission.h"
#include "osd/hand_over.h"
#include "osd/listing.h"
#include "osd/map_catch_up.h"
#include "osd/map_holder.h"
#include "osd/object_loader.h"
#include "osd/object_locks.h"
#include "osd/object_reads.h"
#include "osd/object_store.h"
#include "osd/object_writes.h"
#include "osd/osd_stats.h"
#include "osd/peer_clients.h"
#include "osd/prefetch_engine.h"
#include "osd/read_reply.h"
#include "osd/recovery.h"
#include "osd/repair_worker.h"
#include "osd/space_guard.h"
#include "osd/transactions.h"
#include "osd/write_many_request.h"
#include "rpc/call_canceller.h"

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
  // Fetch a later map from the peers when a request shows one (CatchUp). The request fuzzer
  // turns it off: its peers do not exist.
  bool catch_up_from_peers = true;
  // Reads are refused as recovering from the start until StartRecovery has asked the peers to
  // replay what this OSD missed, so that none is served before it begins. The fuzzer never
  // starts recovery.
  bool recovering_at_start = true;
  // For tests: recovery waits to ask the peers while this file exists (holds the OSD in its
  // recovering state).
  std::string hold_recovery_while;
  // An OSD that did not run for longer than this (stopped, a paused VM, starved of CPU)
  // recovers as after a restart (common/stall_watch.h): clients may have taken it for dead,
  // and its peers taken changes of its copies alone. Zero: not watched. Below the shortest
  // silence after which anyone gives up on an OSD (a client's 500 ms, common/answer_watch.h; a
  // peer's 500 ms ping), none can have given up on it without it noticing.
  std::chrono::milliseconds stall_recovery{400};
};

// Thread-safe: gRPC runs handlers on many threads at once; each part states its own contract.
class OsdService final : public wire::Osd::Service {
 public:
  // `previous_map`: set while a rebalance runs (as persisted by an earlier SetMap).
  OsdService(const ClusterMap& map, const std::optional<ClusterMap>& previous_map,
             ObjectStore* store, const OsdServiceOptions& options);

  // gRPC serves Read, ReadMany and WriteMany through StreamedRead, StreamedReadMany and
  // StreamedWriteMany, which send and take object bytes where they are (osd/read_reply.h,
  // osd/write_many_request.h). This Read and ReadMany are for callers in the process (the
  // fuzzer); they serve the same reads.
  grpc::Status Read(grpc::ServerContext*, const wire::ReadRequest*, wire::ReadResponse*) override;
  using ReadStreamer = grpc::ServerUnaryStreamer<wire::ReadRequest, grpc::ByteBuffer>;
  grpc::Status StreamedRead(grpc::ServerContext*, ReadStreamer* streamer);
  grpc::Status ReadMany(grpc::ServerContext*, const wire::ReadManyRequest*,
                        wire::ReadManyResponse*) override;
  using ReadManyStreamer = grpc::ServerUnaryStreamer<wire::ReadManyRequest, grpc::ByteBuffer>;
  grpc::Status StreamedReadMany(grpc::ServerContext*, ReadManyStreamer* streamer);
  using WriteManyStreamer = grpc::ServerUnaryStreamer<grpc::ByteBuffer, wire::WriteManyResponse>;
  grpc::Status StreamedWriteMany(grpc::ServerContext*, WriteManyStreamer* streamer);
  // WriteMany from its request's wire form (ParseWriteMany): the writes' bytes are stored as
  // they arrived.
  grpc::Status WriteManyFromWire(const BytePieces& message, wire::WriteManyResponse* response);
  grpc::Status Write(grpc::ServerContext*, const wire::WriteRequest*,
                     wire::WriteResponse*) override;
  grpc::Status Delete(grpc::ServerContext*, const wire::DeleteRequest*,
                      wire::DeleteResponse*) override;
  grpc::Status DeleteMany(grpc::ServerContext*, const wire::DeleteManyRequest*,
                          wire::DeleteManyResponse*) override;
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
  grpc::Status DropCaches(grpc::ServerContext*, const wire::DropCachesRequest*,
                          wire::DropCachesResponse*) override;
  grpc::Status GetMap(grpc::ServerContext*, const wire::GetMapRequest*,
                      wire::MapResponse*) override;
  grpc::Status SetMap(grpc::ServerContext*, const wire::SetMapRequest*,
                      wire::SetMapResponse*) override;
  grpc::Status Fetch(grpc::ServerContext*, const wire::FetchRequest*,
                     wire::FetchResponse*) override;
  grpc::Status Discard(grpc::ServerContext*, const wire::DiscardRequest*,
                       wire::DiscardResponse*) override;
  grpc::Status Migrate(grpc::ServerContext*, const wire::MigrateRequest*,
                       wire::MigrateResponse*) override;

  // The store meta name under which the maps persist (EncodeRunningMaps; osd/main.cc reads them
  // at start).
  static constexpr const char* kMapsMetaName = MapCatchUp::kMapsMetaName;

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
  // Then watches for stalls (OsdServiceOptions::stall_recovery), and recovers after each.
  void StartRecovery();
  ~OsdService() override;
  // Stalls the watch found (each followed by a recovery unless one was running).
  uint64_t stalls() const { return counters_.stalls.load(); }

 private:
  using Method = OsdStats::Method;
  using enum OsdStats::Method;
  static constexpr auto& kMethodNames = OsdStats::kMethodNames;

  // PERMISSION_DENIED unless the caller's certificate allows `call` (with authorize_callers);
  // `what` names the call in the message and the log.
  Status Authorize(grpc::ServerContext* context, CallClass call, std::string_view what) const;

  // Counts the call (and its latency since admission) and logs a refusal; its gRPC status.
  grpc::Status Finish(Method method, const Status& status);

  const uint32_t osd_id_;
  const bool authorize_callers_;
  MapHolder maps_;
  ObjectStore* const store_;
  ObjectCache cache_;
  const std::chrono::steady_clock::time_point started_;
  ObjectLocks locks_;  // per-object serialization of read-modify-write and cache fills
  OsdStats stats_;
  OsdCounters& counters_ = stats_.counters();
  // The calls this OSD makes to its peers; cancelled when it shuts down.
  const std::shared_ptr<CallCanceller> peer_calls_ = std::make_shared<CallCanceller>();
  PeerClients peers_;  // for rebalance calls, map catch-up and pings
  Admission admission_;
  MapCatchUp catch_up_;      // checks requests' epochs, follows the cluster's maps
  PrefetchEngine prefetch_;  // after cache_ and locks_, which it uses
  RepairWorker repair_;      // after store_ and locks_, which it uses
  HandOver hand_over_;       // rebalance: copies this OSD gains and loses
  ObjectLoader loader_;      // cache, store, or taken over
  SpaceGuard space_;
  ObjectReads reads_;
  ObjectWrites writes_;
  Transactions transactions_;
  Listing listing_;
  // Last: its threads use the parts above (its pings, peers_; its replays, repair_).
  Recovery recovery_;
};

}  // namespace orthofs
