#include "osd/osd_service.h"

#include <google/protobuf/descriptor.h>
#include <grpcpp/support/proto_buffer_reader.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <utility>

#include "common/limits.h"
#include "osd/read_reply.h"
#include "osd/write_many_request.h"
#include "rpc/tls.h"
#include "rpc/wire.h"

#ifndef ORTHOFS_VERSION
#define ORTHOFS_VERSION "unknown"
#endif

namespace orthofs {
namespace {

// The index gRPC gives an Osd method: its place in orthofs.proto's service, which the generated
// code registers in order.
int OsdMethodIndex(std::string_view name) {
  const google::protobuf::ServiceDescriptor* service =
      wire::ReadRequest::descriptor()->file()->FindServiceByName("Osd");
  for (int i = 0; service != nullptr && i < service->method_count(); ++i) {
    if (service->method(i)->name() == name) return i;
  }
  spdlog::critical("orthofs.proto has no Osd.{}", name);
  std::abort();
}

PrefetchEngineOptions WithCanceller(PrefetchEngineOptions options,
                                    std::shared_ptr<CallCanceller> canceller) {
  options.canceller = std::move(canceller);
  return options;
}

RepairWorkerOptions WithCanceller(RepairWorkerOptions options,
                                  std::shared_ptr<CallCanceller> canceller) {
  options.rpc.canceller = std::move(canceller);
  return options;
}

}  // namespace

OsdService::OsdService(const ClusterMap& map, const std::optional<ClusterMap>& previous_map,
                       ObjectStore* store, const OsdServiceOptions& options)
    : osd_id_(options.osd_id),
      authorize_callers_(options.authorize_callers),
      maps_(std::make_shared<const MapView>(map, previous_map)),
      store_(store),
      cache_(options.cache_bytes),
      started_(std::chrono::steady_clock::now()),
      stats_(OsdStatsSources{options.osd_id, options.data_dir, options.reserve_bytes,
                             options.tls_not_after, &maps_, store, &cache_, &prefetch_, &repair_}),
      peers_(options.prefetch.tls, peer_calls_),
      catch_up_(options.osd_id, &maps_, store, &peers_, &counters_, options.catch_up_from_peers),
      prefetch_(map, &maps_, store, &cache_, &locks_, WithCanceller(options.prefetch, peer_calls_)),
      repair_(options.osd_id, &maps_, store, &locks_, WithCanceller(options.repair, peer_calls_)),
      hand_over_(options.osd_id, store, &cache_, &locks_, &peers_, &catch_up_, &repair_,
                 &counters_),
      loader_(options.osd_id, &cache_, store, &hand_over_),
      space_(options.osd_id, options.data_dir, options.reserve_bytes, store,
             &counters_.writes_refused_full),
      reads_({options.osd_id, map.object_size, store, &cache_, &locks_, &loader_, &catch_up_,
              &recovery_, &prefetch_, &stats_}),
      writes_({options.osd_id, map.object_size, store, &cache_, &locks_, &loader_, &catch_up_,
               &recovery_, &space_, &repair_, &stats_}),
      transactions_({options.osd_id, map.object_size, store, &cache_, &locks_, &loader_, &catch_up_,
                     &recovery_, &space_}),
      listing_(options.osd_id, store, &catch_up_, &recovery_, &hand_over_, &counters_),
      recovery_(RecoveryOptions{options.osd_id, options.recovering_at_start,
                                options.hold_recovery_while, options.stall_recovery},
                &maps_, &repair_, &peers_, &admission_, &counters_) {
  // Read, ReadMany and WriteMany take and give object bytes where they are (StreamedRead,
  // StreamedReadMany, StreamedWriteMany); clients still make plain unary calls.
  MarkMethodStreamed(OsdMethodIndex("Read"),
                     new grpc::internal::StreamedUnaryHandler<wire::ReadRequest, grpc::ByteBuffer>(
                         [this](grpc::ServerContext* context, ReadStreamer* streamer) {
                           return StreamedRead(context, streamer);
                         }));
  MarkMethodStreamed(
      OsdMethodIndex("ReadMany"),
      new grpc::internal::StreamedUnaryHandler<wire::ReadManyRequest, grpc::ByteBuffer>(
          [this](grpc::ServerContext* context, ReadManyStreamer* streamer) {
            return StreamedReadMany(context, streamer);
          }));
  MarkMethodStreamed(
      OsdMethodIndex("WriteMany"),
      new grpc::internal::StreamedUnaryHandler<grpc::ByteBuffer, wire::WriteManyResponse>(
          [this](grpc::ServerContext* context, WriteManyStreamer* streamer) {
            return StreamedWriteMany(context, streamer);
          }));
}

OsdService::~OsdService() { StopBackgroundWork(); }

void OsdService::StopBackgroundWork() {
  catch_up_.RequestStop();
  recovery_.RequestStop();
  peer_calls_->CancelAll();  // what the threads joined below may be waiting for
  recovery_.Join();
  catch_up_.Join();
  repair_.Stop();
}

void OsdService::StartRecovery() { recovery_.Start(); }

bool OsdService::Drain(std::chrono::milliseconds timeout) {
  admission_.BeginDraining();
  prefetch_.Shutdown();  // ends Subscribe streams, which would otherwise hold the server
  // Requests in flight that wait for a peer (a Repair call's pushes, a take-over's fetch) fail
  // now instead of at their deadline; the peer work they leave is redone after the restart.
  peer_calls_->CancelAll();
  return admission_.WaitIdle(std::chrono::steady_clock::now() + timeout);
}

namespace {

const grpc::Status kDraining(grpc::StatusCode::UNAVAILABLE, "OSD is shutting down",
                             std::string(StatusCodeName(StatusCode::kUnavailable)));

}  // namespace

// Every handler starts with this: admitted, or refused because the OSD is shutting down.
// `view` is the map snapshot the request places by.
#define ORTHOFS_ADMIT_REQUEST()                                \
  Admission::RequestScope request_scope(&admission_, maps_);   \
  [[maybe_unused]] const MapView& view = request_scope.view(); \
  if (!request_scope.admitted()) return kDraining

Status OsdService::Authorize(grpc::ServerContext* context, CallClass call,
                             std::string_view what) const {
  if (!authorize_callers_ || context == nullptr) return Status::Ok();  // plaintext, or internal
  const std::string name = PeerCertificateName(*context);
  const PeerRole role = RoleOfCertificateName(name);
  if (RoleMayMake(role, call)) return Status::Ok();
  spdlog::warn("refused {} from '{}' ({}): {}", what, name, PeerRoleName(role), context->peer());
  return Status::PermissionDenied(
      std::string(what) + " needs " +
      (call == CallClass::kAdmin ? "the admin certificate" : "an OSD or admin certificate") +
      "; the caller's certificate is '" + name + "'");
}

grpc::Status OsdService::Finish(Method method, const Status& status) {
  stats_.Answered(method, status, std::chrono::steady_clock::now() - Admission::AdmittedAt());
  return ToGrpc(status);
}

grpc::Status OsdService::Read(grpc::ServerContext*, const wire::ReadRequest* request,
                              wire::ReadResponse* response) {
  ORTHOFS_ADMIT_REQUEST();
  std::shared_ptr<const CachedObject> object;
  std::string_view bytes;
  Status st = reads_.ServeRead(view, *request, response, &object, &bytes);
  if (st.ok()) response->set_data(bytes.data(), bytes.size());
  return Finish(kRead, st);
}

grpc::Status OsdService::StreamedRead(grpc::ServerContext*, ReadStreamer* streamer) {
  ORTHOFS_ADMIT_REQUEST();
  wire::ReadRequest request;
  if (!streamer->Read(&request)) {
    return Finish(kRead, Status::InvalidArgument("a Read without its request"));
  }
  wire::ReadResponse head;  // the reply but its bytes
  std::shared_ptr<const CachedObject> object;
  std::string_view bytes;
  const grpc::Status st = Finish(kRead, reads_.ServeRead(view, request, &head, &object, &bytes));
  // The cached object is immutable: the reply sends its bytes in place and keeps it alive.
  if (st.ok() && !streamer->Write(EncodeReadResponse(head, bytes, object))) {
    return ToGrpc(Status::Unavailable("the reader went away"));
  }
  return st;
}

grpc::Status OsdService::ReadMany(grpc::ServerContext*, const wire::ReadManyRequest* request,
                                  wire::ReadManyResponse* response) {
  ORTHOFS_ADMIT_REQUEST();
  Result<std::vector<ReadManyItem>> items = reads_.ServeReadMany(view, *request);
  if (!items.ok()) return Finish(kReadMany, items.status());
  // The reply gRPC would send, parsed back: callers in the process (the fuzzer) check the
  // hand-made encoding too.
  grpc::ByteBuffer encoded = EncodeReadManyResponse(*items);
  grpc::ProtoBufferReader reader(&encoded);
  if (!response->ParseFromZeroCopyStream(&reader)) {
    return Finish(kReadMany, Status::Internal("the encoded ReadMany reply does not parse"));
  }
  return Finish(kReadMany, Status::Ok());
}

grpc::Status OsdService::StreamedReadMany(grpc::ServerContext*, ReadManyStreamer* streamer) {
  ORTHOFS_ADMIT_REQUEST();
  wire::ReadManyRequest request;
  if (!streamer->Read(&request)) {
    return Finish(kReadMany, Status::InvalidArgument("a ReadMany without its request"));
  }
  Result<std::vector<ReadManyItem>> items = reads_.ServeReadMany(view, request);
  const grpc::Status st = Finish(kReadMany, items.status());
  // The cached objects are immutable: the reply sends their bytes in place and keeps them.
  if (st.ok() && !streamer->Write(EncodeReadManyResponse(*items))) {
    return ToGrpc(Status::Unavailable("the reader went away"));
  }
  return st;
}

grpc::Status OsdService::Write(grpc::ServerContext*, const wire::WriteRequest* request,
                               wire::WriteResponse* response) {
  ORTHOFS_ADMIT_REQUEST();
  return Finish(kWrite, writes_.Write(view, *request, BytePieces(request->data()), response));
}

grpc::Status OsdService::WriteManyFromWire(const BytePieces& message,
                                           wire::WriteManyResponse* response) {
  ORTHOFS_ADMIT_REQUEST();
  Result<std::vector<ReceivedWrite>> writes = ParseWriteMany(message);
  if (!writes.ok()) return Finish(kWriteMany, writes.status());
  writes_.WriteTogether(view, *writes, response);
  return Finish(kWriteMany, Status::Ok());
}

grpc::Status OsdService::StreamedWriteMany(grpc::ServerContext*, WriteManyStreamer* streamer) {
  grpc::ByteBuffer message;
  std::vector<grpc::Slice> slices;
  if (!streamer->Read(&message) || !message.Dump(&slices).ok()) {
    return ToGrpc(Status::InvalidArgument("a WriteMany without its request"));
  }
  // The slices hold the received bytes until this returns: the writes refer to them.
  BytePieces pieces;
  for (const grpc::Slice& slice : slices) {
    pieces.Append(std::string_view(reinterpret_cast<const char*>(slice.begin()), slice.size()));
  }
  wire::WriteManyResponse response;
  const grpc::Status st = WriteManyFromWire(pieces, &response);
  if (st.ok() && !streamer->Write(response)) {
    return ToGrpc(Status::Unavailable("the writer went away"));
  }
  return st;
}

grpc::Status OsdService::Delete(grpc::ServerContext*, const wire::DeleteRequest* request,
                                wire::DeleteResponse* response) {
  ORTHOFS_ADMIT_REQUEST();
  return Finish(kDelete, writes_.Delete(view, *request, response));
}

grpc::Status OsdService::DeleteMany(grpc::ServerContext*, const wire::DeleteManyRequest* request,
                                    wire::DeleteManyResponse* response) {
  ORTHOFS_ADMIT_REQUEST();
  if (request->deletes_size() > kMaxDeleteManyDeletes) {
    return Finish(kDeleteMany, Status::InvalidArgument(
                                   "DeleteMany of " + std::to_string(request->deletes_size()) +
                                   " deletes: at most " + std::to_string(kMaxDeleteManyDeletes)));
  }
  for (const wire::DeleteRequest& one : request->deletes()) {
    wire::DeleteManyResult* result = response->add_results();
    const Status deleted = writes_.Delete(view, one, result->mutable_response());
    stats_.Count(kDelete, deleted);
    ++stats_.counters().batched_deletes;
    if (!deleted.ok()) {
      result->clear_response();
      SetRefusal(deleted, result);
    }
  }
  return Finish(kDeleteMany, Status::Ok());
}

grpc::Status OsdService::Stat(grpc::ServerContext*, const wire::StatRequest* request,
                              wire::StatResponse* response) {
  ORTHOFS_ADMIT_REQUEST();
  return Finish(kStat, reads_.Stat(view, *request, response));
}

grpc::Status OsdService::Transact(grpc::ServerContext*, const wire::TransactRequest* request,
                                  wire::TransactResponse* response) {
  ORTHOFS_ADMIT_REQUEST();
  return Finish(kTransact, transactions_.Transact(view, *request, response));
}

grpc::Status OsdService::List(grpc::ServerContext* context, const wire::ListRequest* request,
                              wire::ListResponse* response) {
  ORTHOFS_ADMIT_REQUEST();
  if (request->unowned()) {
    if (Status st = Authorize(context, CallClass::kPeer, "unowned list"); !st.ok()) {
      return Finish(kList, st);
    }
  }
  return Finish(kList, listing_.List(view, *request, response));
}

grpc::Status OsdService::Sync(grpc::ServerContext*, const wire::SyncRequest*, wire::SyncResponse*) {
  ORTHOFS_ADMIT_REQUEST();
  return Finish(kSync, store_->SyncWal());
}

grpc::Status OsdService::Stats(grpc::ServerContext* context, const wire::StatsRequest* request,
                               wire::StatsResponse* response) {
  ORTHOFS_ADMIT_REQUEST();
  if (request->reset()) {
    if (Status st = Authorize(context, CallClass::kAdmin, "stats reset"); !st.ok()) {
      return ToGrpc(st);
    }
  }
  stats_.Report(request->reset(), response);
  return grpc::Status::OK;
}

std::string OsdService::RenderMetrics() { return stats_.RenderMetrics(recovery_.replaying()); }

grpc::Status OsdService::Repair(grpc::ServerContext* context, const wire::RepairRequest* request,
                                wire::RepairResponse* response) {
  ORTHOFS_ADMIT_REQUEST();
  if (Status st = Authorize(context, CallClass::kPeer, kMethodNames[kRepair]); !st.ok()) {
    return Finish(kRepair, st);
  }
  if (Status st = catch_up_.CheckEpoch(view, request->epoch()); !st.ok()) {
    return Finish(kRepair, st);
  }
  if (request->has_for_osd()) recovery_.PeerRecovering(request->for_osd(), request->fence());
  if (request->has_for_osd()) repair_.PeerRestarted(request->for_osd());
  *response = repair_.RunPass(request->has_for_osd() ? std::optional<uint32_t>(request->for_osd())
                                                     : std::nullopt);
  return Finish(kRepair, Status::Ok());
}

grpc::Status OsdService::SetLogLevel(grpc::ServerContext* context,
                                     const wire::LogLevelRequest* request,
                                     wire::LogLevelResponse* response) {
  ORTHOFS_ADMIT_REQUEST();
  if (Status st = Authorize(context, CallClass::kAdmin, kMethodNames[kSetLogLevel]); !st.ok()) {
    return Finish(kSetLogLevel, st);
  }
  const spdlog::level::level_enum level = spdlog::level::from_str(request->level());
  if (level == spdlog::level::off && request->level() != "off") {
    return Finish(kSetLogLevel,
                  Status::InvalidArgument("unknown log level '" + request->level().substr(0, 32) +
                                          "' (trace|debug|info|warn|error|critical|off)"));
  }
  const auto previous = spdlog::get_level();
  response->set_previous(std::string(spdlog::level::to_string_view(previous).data(),
                                     spdlog::level::to_string_view(previous).size()));
  spdlog::set_level(level);
  spdlog::warn("log level {} -> {} (admin request)", response->previous(), request->level());
  return Finish(kSetLogLevel, Status::Ok());
}

grpc::Status OsdService::DropCaches(grpc::ServerContext* context, const wire::DropCachesRequest*,
                                    wire::DropCachesResponse* response) {
  ORTHOFS_ADMIT_REQUEST();
  if (Status st = Authorize(context, CallClass::kAdmin, kMethodNames[kDropCaches]); !st.ok()) {
    return Finish(kDropCaches, st);
  }
  const uint64_t cached = cache_.stats().bytes;
  cache_.Clear();
  const uint64_t dropped = cached + store_->DropBlockCache();
  response->set_dropped_bytes(dropped);
  spdlog::info("caches dropped ({} bytes; admin request)", dropped);
  return Finish(kDropCaches, Status::Ok());
}

grpc::Status OsdService::Health(grpc::ServerContext*, const wire::HealthRequest*,
                                wire::HealthResponse* response) {
  ORTHOFS_ADMIT_REQUEST();
  response->set_osd_id(osd_id_);
  response->set_epoch(maps_.Current()->epoch());
  response->set_version(ORTHOFS_VERSION);
  response->set_uptime_seconds(static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started_)
          .count()));
  response->set_recovering(recovery_.Recovering());
  return grpc::Status::OK;
}

}  // namespace orthofs

namespace orthofs {

grpc::Status OsdService::PrefetchNotify(grpc::ServerContext* context,
                                        const wire::PrefetchNotifyRequest* request,
                                        wire::PrefetchNotifyResponse*) {
  ORTHOFS_ADMIT_REQUEST();
  if (Status st = Authorize(context, CallClass::kPeer, kMethodNames[kPrefetchNotify]); !st.ok()) {
    return Finish(kPrefetchNotify, st);
  }
  counters_.osd_bytes_in += request->ByteSizeLong();
  if (Status st = catch_up_.CheckEpoch(view, request->epoch()); !st.ok()) {
    return Finish(kPrefetchNotify, st);
  }
  Result<Oid> oid = FromWire(request->oid());
  if (!oid.ok()) return Finish(kPrefetchNotify, oid.status());
  if (oid->type != ObjectType::kData || oid->flag != CopyFlag::kOriginal) {
    return Finish(kPrefetchNotify,
                  Status::InvalidArgument("a prefetch notify names an original DATA object"));
  }
  const uint32_t replica_osd = view.current().ReplicaOsdFor(oid->fnso, oid->fno);
  if (replica_osd != osd_id_) {
    return Finish(
        kPrefetchNotify,
        Status::WrongOsd("file " + std::to_string(oid->fnso) + "/" + std::to_string(oid->fno) +
                         " has its replicas on OSD " + std::to_string(replica_osd)));
  }
  if (request->client_id().empty() || request->client_id().size() > 64) {
    return Finish(kPrefetchNotify, Status::InvalidArgument("client_id must be 1..64 bytes"));
  }
  return Finish(kPrefetchNotify, prefetch_.OnNotify(request->client_id(), *oid));
}

grpc::Status OsdService::Prefetch(grpc::ServerContext* context,
                                  const wire::PrefetchRequest* request,
                                  wire::PrefetchResponse* response) {
  ORTHOFS_ADMIT_REQUEST();
  if (Status st = Authorize(context, CallClass::kPeer, kMethodNames[kPrefetch]); !st.ok()) {
    return Finish(kPrefetch, st);
  }
  counters_.osd_bytes_in += request->ByteSizeLong();
  if (prefetch_.mode() != PrefetchMode::kSpa) {
    return Finish(kPrefetch, Status::InvalidArgument(
                                 "this cluster's prefetch mode is " +
                                 std::string(PrefetchModeName(prefetch_.mode())) + ", not spa"));
  }
  if (request->oids_size() > 1024) {
    return Finish(kPrefetch, Status::InvalidArgument("at most 1024 objects per prefetch"));
  }
  std::vector<Oid> originals;
  for (const wire::Oid& w : request->oids()) {
    Result<Oid> oid = catch_up_.CheckObject(view, request->epoch(), w);
    if (!oid.ok()) return Finish(kPrefetch, oid.status());
    if (oid->type != ObjectType::kData || oid->flag != CopyFlag::kOriginal) {
      return Finish(kPrefetch, Status::InvalidArgument("SPA prefetches original DATA objects"));
    }
    originals.push_back(*oid);
  }
  std::optional<ReadaheadMarker> marker;
  if (request->has_marker()) {
    marker = ReadaheadMarker{request->marker().window_start(), request->marker().window_size()};
  }
  response->set_loaded(static_cast<uint32_t>(originals.size()));
  prefetch_.OnPrefetch(std::move(originals), marker);
  return Finish(kPrefetch, Status::Ok());
}

grpc::Status OsdService::Subscribe(grpc::ServerContext* context,
                                   const wire::SubscribeRequest* request,
                                   grpc::ServerWriter<wire::WindowUpdate>* writer) {
  {
    // Admitted like any request, but not counted while it streams: Drain ends it instead.
    ORTHOFS_ADMIT_REQUEST();
    if (Status st = catch_up_.CheckEpoch(view, request->epoch()); !st.ok()) {
      return Finish(kSubscribe, st);
    }
    if (request->client_id().empty() || request->client_id().size() > 64) {
      return Finish(kSubscribe, Status::InvalidArgument("client_id must be 1..64 bytes"));
    }
  }
  prefetch_.Subscribe(request->client_id(), context, writer);
  return Finish(kSubscribe, Status::Ok());
}

}  // namespace orthofs

// Cluster map changes and the moving of copies (orthofs rebalance; proto SetMap .. Migrate).
namespace orthofs {

grpc::Status OsdService::Fetch(grpc::ServerContext* context, const wire::FetchRequest* request,
                               wire::FetchResponse* response) {
  ORTHOFS_ADMIT_REQUEST();
  if (Status st = Authorize(context, CallClass::kPeer, kMethodNames[kFetch]); !st.ok()) {
    return Finish(kFetch, st);
  }
  return Finish(kFetch, hand_over_.Fetch(view, *request, response));
}

grpc::Status OsdService::Discard(grpc::ServerContext* context, const wire::DiscardRequest* request,
                                 wire::DiscardResponse* response) {
  ORTHOFS_ADMIT_REQUEST();
  if (Status st = Authorize(context, CallClass::kPeer, kMethodNames[kDiscard]); !st.ok()) {
    return Finish(kDiscard, st);
  }
  return Finish(kDiscard, hand_over_.Discard(view, *request, response));
}

grpc::Status OsdService::Migrate(grpc::ServerContext* context, const wire::MigrateRequest* request,
                                 wire::MigrateResponse* response) {
  ORTHOFS_ADMIT_REQUEST();
  if (Status st = Authorize(context, CallClass::kAdmin, kMethodNames[kMigrate]); !st.ok()) {
    return Finish(kMigrate, st);
  }
  return Finish(kMigrate, hand_over_.Migrate(view, *request, response));
}

grpc::Status OsdService::GetMap(grpc::ServerContext*, const wire::GetMapRequest*,
                                wire::MapResponse* response) {
  ORTHOFS_ADMIT_REQUEST();
  response->set_map(FormatClusterMap(view.current().map()));
  if (view.previous()) response->set_previous_map(FormatClusterMap(view.previous()->map()));
  return Finish(kGetMap, Status::Ok());
}

grpc::Status OsdService::SetMap(grpc::ServerContext* context, const wire::SetMapRequest* request,
                                wire::SetMapResponse* response) {
  ORTHOFS_ADMIT_REQUEST();
  if (Status st = Authorize(context, CallClass::kAdmin, kMethodNames[kSetMap]); !st.ok()) {
    return Finish(kSetMap, st);
  }
  Result<MapCatchUp::RunningMaps> maps = catch_up_.ParseSetMap(*request);
  if (!maps.ok()) return Finish(kSetMap, maps.status());
  request_scope.DropView();  // Install waits for the requests holding the old view
  return Finish(kSetMap, catch_up_.Install(*maps, response));
}

}  // namespace orthofs
