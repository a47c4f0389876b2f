#include "rpc/osd_client.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <deque>
#include <future>
#include <latch>
#include <map>
#include <optional>
#include <system_error>
#include <thread>

#include "common/await_all.h"
#include "common/checksum.h"
#include "common/limits.h"
#include "common/object_version.h"
#include "common/peer_role.h"
#include "rpc/tcp_congestion.h"
#include "rpc/wire.h"

namespace orthofs {

grpc::ChannelArguments OrthoChannelArguments() {
  grpc::ChannelArguments args;
  // The largest object plus framing; anything bigger is a malformed request.
  args.SetMaxReceiveMessageSize(kMaxObjectSize + (4 << 20));
  args.SetMaxSendMessageSize(kMaxObjectSize + (4 << 20));
  // Reconnect quickly to an OSD that comes back. (Not GRPC_ARG_MIN_RECONNECT_BACKOFF_MS: it is
  // also the connect timeout, and 100 ms made connections to a busy OSD fail.)
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  // The client retries by itself (other copy, map change, recovery); gRPC's retry layer only
  // cost CPU on every call (8 % of the mount's when writing). Its transparent retries go too: a
  // call that never reached the OSD (a connection closing as the OSD stops) fails like a call to
  // a down OSD, which every caller handles (the other copy, a repair record).
  args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
  for (const auto& [name, value] : SocketReadArguments()) args.SetInt(name, value);
  ApplyTcpCongestion(&args);
  return args;
}

std::vector<std::pair<std::string, int>> SocketReadArguments() {
  return {{GRPC_ARG_TCP_READ_CHUNK_SIZE, 128 << 10}, {GRPC_ARG_TCP_MIN_READ_CHUNK_SIZE, 64 << 10}};
}

namespace {

grpc::ChannelArguments ChannelArgumentsFor(const OsdInfo& osd, const RpcOptions& options) {
  grpc::ChannelArguments args = OrthoChannelArguments();
  SetExpectedServerName(options.tls.get(), OsdCertificateName(osd.id), &args);
  return args;
}

}  // namespace

OsdClient::OsdClient(const OsdInfo& osd, const RpcOptions& options)
    : osd_id_(osd.id),
      address_(osd.address),
      name_("OSD " + std::to_string(osd.id) + " (" + osd.address + ")"),
      options_(options),
      channel_(grpc::CreateCustomChannel(osd.address, ChannelCredentialsFor(options.tls.get()),
                                         ChannelArgumentsFor(osd, options))),
      stub_(wire::Osd::NewStub(channel_)),
      encoded_write_many_(channel_) {}

OsdClient::~OsdClient() {
  std::unique_lock lock(probe_mu_);
  if (probe_call_ != nullptr) probe_call_->TryCancel();
  probe_done_.wait(lock, [this] { return !probing_; });
}

bool OsdClient::down() {
  if (health_ == nullptr || !health_->IsDown(osd_id_)) return false;
  if (const uint64_t outage = health_->ClaimProbe(osd_id_, OsdHealth::Clock::now())) {
    Probe(outage);
  }
  return true;
}

std::chrono::milliseconds OsdClient::Deadline() {
  // Sent although the OSD is believed down: the caller had no better choice (metadata's
  // careful order tries the original first; both copies down). One that hangs should not hold
  // it for the whole deadline: a probe's is enough for an OSD that answers.
  return down() ? std::min(options_.deadline, kProbeDeadline) : options_.deadline;
}

struct OsdClient::ProbeCall {
  uint64_t outage = 0;
  grpc::ClientContext context;
  wire::HealthRequest request;
  wire::HealthResponse response;
};

void OsdClient::Probe(uint64_t outage) {
  auto* call = new ProbeCall;
  call->outage = outage;
  call->context.set_deadline(std::chrono::system_clock::now() + kProbeDeadline);
  call->context.set_wait_for_ready(true);  // a channel reconnecting gets the whole deadline
  {
    std::lock_guard lock(probe_mu_);
    probing_ = true;
    probe_call_ = &call->context;
  }
  stub_->async()->Health(&call->context, &call->request, &call->response,
                         [this, call](grpc::Status status) { ProbeFinished(call, status); });
}

void OsdClient::ProbeFinished(ProbeCall* call, const grpc::Status& status) {
  {
    std::lock_guard lock(probe_mu_);
    probe_call_ = nullptr;  // no longer cancellable: freed below
  }
  // As Observe judges calls: only the transport, or a restarted OSD still waiting for its
  // missed writes, keeps it down. Busy (RESOURCE_EXHAUSTED) is alive.
  const bool unreachable = status.error_code() == grpc::StatusCode::UNAVAILABLE ||
                           status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
                           status.error_code() == grpc::StatusCode::CANCELLED;
  const bool recovering = status.ok() && call->response.recovering();
  const uint64_t outage = call->outage;
  delete call;
  if (!unreachable && !recovering) {
    if (health_->RecordProbeAnswered(osd_id_, outage)) spdlog::info("{} is back", name_);
  } else {
    ++failed_probes_;
    health_->RecordProbeFailure(
        osd_id_, OsdHealth::Clock::now(),
        recovering ? OsdHealth::Cause::kRecovering : OsdHealth::Cause::kTransport);
    spdlog::debug("{} still down: {}", name_, recovering ? "recovering" : status.error_message());
  }
  std::lock_guard lock(probe_mu_);
  probing_ = false;
  probe_done_.notify_all();
}

Status OsdClient::Cancelled() const {
  return Status::Unavailable(name_ + ": call cancelled: this process is shutting down");
}

Status OsdClient::FailureOf(const grpc::Status& status) const {
  if (options_.canceller != nullptr && options_.canceller->cancelled()) return Cancelled();
  return FromGrpc(status, name_);
}

template <typename Request, typename Response, typename Method>
Result<Response> OsdClient::Call(Method method, const Request& request,
                                 std::optional<std::chrono::milliseconds> fail_fast_within) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + fail_fast_within.value_or(Deadline()));
  context.set_wait_for_ready(fail_fast_within ? false : options_.wait_for_ready);
  CallCanceller* canceller = options_.canceller.get();
  if (canceller != nullptr && !canceller->Add(&context)) return Cancelled();
  Response response;
  grpc::Status status = (stub_.get()->*method)(&context, request, &response);
  if (canceller != nullptr) canceller->Remove(&context);
  Observe(status);
  if (!status.ok()) return FailureOf(status);
  return response;
}

Result<wire::ReadResponse> OsdClient::Read(const wire::ReadRequest& r) {
  return Call<wire::ReadRequest, wire::ReadResponse>(&wire::Osd::Stub::Read, r);
}
Result<wire::WriteResponse> OsdClient::Write(const wire::WriteRequest& r) {
  return Call<wire::WriteRequest, wire::WriteResponse>(&wire::Osd::Stub::Write, r);
}
Result<wire::DeleteResponse> OsdClient::Delete(const wire::DeleteRequest& r) {
  return Call<wire::DeleteRequest, wire::DeleteResponse>(&wire::Osd::Stub::Delete, r);
}
Result<wire::StatResponse> OsdClient::Stat(const wire::StatRequest& r) {
  return Call<wire::StatRequest, wire::StatResponse>(&wire::Osd::Stub::Stat, r);
}
Result<wire::TransactResponse> OsdClient::Transact(const wire::TransactRequest& r) {
  return Call<wire::TransactRequest, wire::TransactResponse>(&wire::Osd::Stub::Transact, r);
}
Result<wire::ListResponse> OsdClient::List(const wire::ListRequest& r) {
  return Call<wire::ListRequest, wire::ListResponse>(&wire::Osd::Stub::List, r);
}
Status OsdClient::ListEveryPage(wire::ListRequest request,
                                const std::function<void(const wire::ListResponse&)>& take) {
  do {
    Result<wire::ListResponse> page = List(request);
    if (!page.ok()) return page.status();
    take(*page);
    request.set_page_token(page->next_page_token());
  } while (!request.page_token().empty());
  return Status::Ok();
}
Result<wire::StatsResponse> OsdClient::Stats(const wire::StatsRequest& r) {
  return Call<wire::StatsRequest, wire::StatsResponse>(&wire::Osd::Stub::Stats, r);
}
void OsdClient::ReconnectNow() {
  grpc::experimental::ChannelResetConnectionBackoff(channel_.get());
}

Result<wire::SyncResponse> OsdClient::Sync(const wire::SyncRequest& r) {
  return Call<wire::SyncRequest, wire::SyncResponse>(&wire::Osd::Stub::Sync, r);
}
Result<wire::HealthResponse> OsdClient::Health(const wire::HealthRequest& r) {
  return Call<wire::HealthRequest, wire::HealthResponse>(&wire::Osd::Stub::Health, r);
}
Result<wire::HealthResponse> OsdClient::Ping(std::chrono::milliseconds deadline) {
  return Call<wire::HealthRequest, wire::HealthResponse>(&wire::Osd::Stub::Health,
                                                         wire::HealthRequest(), deadline);
}

Result<wire::RepairResponse> OsdClient::Repair(const wire::RepairRequest& r) {
  return Call<wire::RepairRequest, wire::RepairResponse>(&wire::Osd::Stub::Repair, r);
}
Result<wire::PrefetchNotifyResponse> OsdClient::PrefetchNotify(
    const wire::PrefetchNotifyRequest& r) {
  return Call<wire::PrefetchNotifyRequest, wire::PrefetchNotifyResponse>(
      &wire::Osd::Stub::PrefetchNotify, r);
}
Result<wire::MapResponse> OsdClient::GetMap(const wire::GetMapRequest& r) {
  return Call<wire::GetMapRequest, wire::MapResponse>(&wire::Osd::Stub::GetMap, r);
}
Result<wire::SetMapResponse> OsdClient::SetMap(const wire::SetMapRequest& r) {
  return Call<wire::SetMapRequest, wire::SetMapResponse>(&wire::Osd::Stub::SetMap, r);
}
Result<wire::FetchResponse> OsdClient::Fetch(const wire::FetchRequest& r) {
  return Call<wire::FetchRequest, wire::FetchResponse>(&wire::Osd::Stub::Fetch, r);
}
Result<wire::DiscardResponse> OsdClient::Discard(const wire::DiscardRequest& r) {
  return Call<wire::DiscardRequest, wire::DiscardResponse>(&wire::Osd::Stub::Discard, r);
}
Result<wire::MigrateResponse> OsdClient::Migrate(const wire::MigrateRequest& r) {
  return Call<wire::MigrateRequest, wire::MigrateResponse>(&wire::Osd::Stub::Migrate, r);
}
Result<wire::LogLevelResponse> OsdClient::SetLogLevel(const wire::LogLevelRequest& r) {
  return Call<wire::LogLevelRequest, wire::LogLevelResponse>(&wire::Osd::Stub::SetLogLevel, r);
}

Result<wire::DropCachesResponse> OsdClient::DropCaches(const wire::DropCachesRequest& r) {
  return Call<wire::DropCachesRequest, wire::DropCachesResponse>(&wire::Osd::Stub::DropCaches, r);
}

void OsdClient::Observe(const grpc::Status& status) {
  // A call this process cancelled says nothing about the OSD.
  if (health_ == nullptr || status.error_code() == grpc::StatusCode::CANCELLED) return;
  const StatusReason reason = StatusFromWireCode(status.error_details(), "").reason();
  // A refusal because another OSD recovers (RepairRequest.fence) comes from a well OSD, and
  // marking it down would send its reads elsewhere and flood the log with "marked down"/"is
  // back".
  if ((status.error_code() == grpc::StatusCode::UNAVAILABLE &&
       reason != StatusReason::kPeerRecovering) ||
      status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    ObserveFailure(status.error_message(), reason == StatusReason::kRecovering
                                               ? OsdHealth::Cause::kRecovering
                                               : OsdHealth::Cause::kTransport);
  } else if (health_->RecordSuccess(osd_id_)) {
    spdlog::info("{} is back", name_);
  }
}

void OsdClient::ObserveBatch(const std::optional<std::string>& recovering) {
  if (health_ == nullptr) return;
  if (recovering) {
    ObserveFailure(*recovering, OsdHealth::Cause::kRecovering);
  } else if (health_->RecordSuccess(osd_id_)) {
    spdlog::info("{} is back", name_);
  }
}

void OsdClient::ObserveFailure(const std::string& why, OsdHealth::Cause cause) {
  ++transport_failures_;
  if (health_->RecordFailure(osd_id_, OsdHealth::Clock::now(), cause)) {
    ++marked_down_;
    spdlog::warn("{} marked down ({}): the other copies serve until it answers again", name_, why);
  }
}

namespace {

const char* BatchedCallName(OsdClient::BatchedCall call) {
  return call == OsdClient::BatchedCall::kReadMany ? "ReadMany" : "WriteMany";
}

}  // namespace

bool OsdClient::MayCall(BatchedCall call) const {
  const int64_t since = unknown_since_[static_cast<int>(call)].load(std::memory_order_relaxed);
  if (since == 0) return true;
  const std::chrono::steady_clock::time_point refused{std::chrono::steady_clock::duration(since)};
  return std::chrono::steady_clock::now() - refused >= options_.old_osd_recheck;
}

void OsdClient::NoteUnknown(BatchedCall call) {
  const int64_t now = std::chrono::steady_clock::now().time_since_epoch().count();
  const int64_t before = unknown_since_[static_cast<int>(call)].exchange(now);
  if (before == 0) {
    spdlog::info(
        "{} does not know {} (an older version): single calls instead, asked again "
        "after {} ms",
        name_, BatchedCallName(call), options_.old_osd_recheck.count());
  }
}

template <typename Request, typename Response, typename Start>
void OsdClient::CallAsync(Start start, std::shared_ptr<const Request> request,
                          std::function<void(Result<Response>)> done, bool batched) {
  // Everything the call needs lives until its callback.
  struct Call {
    grpc::ClientContext context;
    std::shared_ptr<const Request> request;
    Response response;
    std::function<void(Result<Response>)> done;
  };
  auto* call = new Call;
  call->request = std::move(request);
  call->done = std::move(done);
  StartOrQueue([this, call, start, batched](const Status* refused) {
    // The deadline counts from the start on the wire, not from the wait in the queue.
    call->context.set_deadline(std::chrono::system_clock::now() + Deadline());
    call->context.set_wait_for_ready(options_.wait_for_ready);
    // `done` runs last: once it has, the owner may destroy this client.
    auto finish = [this, call](Result<Response> result) {
      std::function<void(Result<Response>)> done = std::move(call->done);
      delete call;
      CallFinished();
      done(std::move(result));
    };
    if (refused != nullptr) return finish(*refused);
    CallCanceller* canceller = options_.canceller.get();
    if (canceller != nullptr && !canceller->Add(&call->context)) return finish(Cancelled());
    start(&call->context, call->request.get(), &call->response,
          [this, call, finish, batched](grpc::Status status) {
            if (options_.canceller != nullptr) options_.canceller->Remove(&call->context);
            if (!status.ok() || !batched) Observe(status);
            if (status.ok()) return finish(std::move(call->response));
            finish(FailureOf(status));
          });
  });
}

void OsdClient::StartOrQueue(std::function<void(const Status*)> start) {
  {
    std::lock_guard lock(queue_mu_);
    if (in_flight_ >= kMaxAsyncInFlight) {
      waiting_.push_back(std::move(start));
      return;
    }
    ++in_flight_;
  }
  start(nullptr);
}

void OsdClient::CallFinished() {
  std::function<void(const Status*)> next;
  std::deque<std::function<void(const Status*)>> refused;
  Status refusal;
  {
    std::lock_guard lock(queue_mu_);
    if (waiting_.empty()) {
      --in_flight_;
      return;
    }
    if (options_.canceller != nullptr && options_.canceller->cancelled()) {
      refusal = Cancelled();
    } else if (health_ != nullptr && health_->IsDown(osd_id_)) {
      // Queued behind calls that found the OSD down (hung: each would wait out its own
      // deadline, one after another): the callers' failover takes them at once instead.
      refusal = Status(StatusCode::kUnavailable, name_ + " is down: the call was not sent",
                       StatusReason::kNotSent);
    }
    if (!refusal.ok()) {
      // Each fails at once and finishes here again: all in this loop, not one call deeper per
      // queued call. None is sent, even if the OSD is back a moment later.
      in_flight_ += static_cast<int>(waiting_.size()) - 1;
      refused.swap(waiting_);
    } else {
      next = std::move(waiting_.front());  // the slot passes to the next call
      waiting_.pop_front();
    }
  }
  if (next) return next(nullptr);
  for (std::function<void(const Status*)>& start : refused) start(&refusal);
}

void OsdClient::ReadAsync(std::shared_ptr<const wire::ReadRequest> request,
                          std::function<void(Result<wire::ReadResponse>)> done) {
  CallAsync<wire::ReadRequest, wire::ReadResponse>(
      [this](auto* context, auto* req, auto* resp, auto on_done) {
        stub_->async()->Read(context, req, resp, std::move(on_done));
      },
      std::move(request), std::move(done));
}

void OsdClient::ListAsync(std::shared_ptr<const wire::ListRequest> request,
                          std::function<void(Result<wire::ListResponse>)> done) {
  CallAsync<wire::ListRequest, wire::ListResponse>(
      [this](auto* context, auto* req, auto* resp, auto on_done) {
        stub_->async()->List(context, req, resp, std::move(on_done));
      },
      std::move(request), std::move(done));
}

void OsdClient::StatsAsync(std::shared_ptr<const wire::StatsRequest> request,
                           std::function<void(Result<wire::StatsResponse>)> done) {
  CallAsync<wire::StatsRequest, wire::StatsResponse>(
      [this](auto* context, auto* req, auto* resp, auto on_done) {
        stub_->async()->Stats(context, req, resp, std::move(on_done));
      },
      std::move(request), std::move(done));
}

void OsdClient::ReadManyAsync(std::shared_ptr<const wire::ReadManyRequest> request,
                              std::function<void(Result<wire::ReadManyResponse>)> done) {
  CallAsync<wire::ReadManyRequest, wire::ReadManyResponse>(
      [this](auto* context, auto* req, auto* resp, auto on_done) {
        stub_->async()->ReadMany(context, req, resp, std::move(on_done));
      },
      std::move(request), std::move(done), /*batched=*/true);
}

void OsdClient::WriteAsync(std::shared_ptr<const wire::WriteRequest> request,
                           std::function<void(Result<wire::WriteResponse>)> done) {
  CallAsync<wire::WriteRequest, wire::WriteResponse>(
      [this](auto* context, auto* req, auto* resp, auto on_done) {
        stub_->async()->Write(context, req, resp, std::move(on_done));
      },
      std::move(request), std::move(done));
}

void OsdClient::WriteManyAsync(std::shared_ptr<const wire::WriteManyRequest> request,
                               std::function<void(Result<wire::WriteManyResponse>)> done) {
  CallAsync<wire::WriteManyRequest, wire::WriteManyResponse>(
      [this](auto* context, auto* req, auto* resp, auto on_done) {
        stub_->async()->WriteMany(context, req, resp, std::move(on_done));
      },
      std::move(request), std::move(done), /*batched=*/true);
}

void OsdClient::WriteManyEncodedAsync(std::shared_ptr<const grpc::ByteBuffer> request,
                                      std::function<void(Result<wire::WriteManyResponse>)> done) {
  CallAsync<grpc::ByteBuffer, wire::WriteManyResponse>(
      [this](auto* context, auto* req, auto* resp, auto on_done) {
        // gRPC keeps the name's characters for the call (ClientRpcInfo): a static string.
        static const std::string kMethod = "/orthofs.wire.Osd/WriteMany";
        encoded_write_many_.UnaryCall(context, kMethod, grpc::StubOptions(), req, resp,
                                      std::move(on_done));
      },
      std::move(request), std::move(done), /*batched=*/true);
}

void OsdClient::PrefetchNotifyAsync(
    wire::PrefetchNotifyRequest request,
    std::function<void(Result<wire::PrefetchNotifyResponse>)> done) {
  CallAsync<wire::PrefetchNotifyRequest, wire::PrefetchNotifyResponse>(
      [this](auto* context, auto* req, auto* resp, auto on_done) {
        stub_->async()->PrefetchNotify(context, req, resp, std::move(on_done));
      },
      std::make_shared<const wire::PrefetchNotifyRequest>(std::move(request)), std::move(done));
}

void OsdClient::PrefetchAsync(wire::PrefetchRequest request,
                              std::function<void(Result<wire::PrefetchResponse>)> done) {
  CallAsync<wire::PrefetchRequest, wire::PrefetchResponse>(
      [this](auto* context, auto* req, auto* resp, auto on_done) {
        stub_->async()->Prefetch(context, req, resp, std::move(on_done));
      },
      std::make_shared<const wire::PrefetchRequest>(std::move(request)), std::move(done));
}

std::unique_ptr<grpc::ClientReader<wire::WindowUpdate>> OsdClient::Subscribe(
    grpc::ClientContext* context, const wire::SubscribeRequest& request) {
  return stub_->Subscribe(context, request);
}

ClusterClient::ClusterClient(const ClusterMap& map, const RpcOptions& options) : options_(options) {
  InstallMap(map);
}

ClusterClient::~ClusterClient() {
  while (resends_in_flight_.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

OsdClient* ClusterClient::MapState::Osd(uint32_t osd_id) const {
  for (OsdClient* c : osds) {
    if (c->osd_id() == osd_id) return c;
  }
  return nullptr;
}

void ClusterClient::InstallMap(const ClusterMap& map) {
  auto next = std::make_unique<MapState>(map);
  for (const OsdInfo& osd : map.osds) {
    // An OSD keeps its connection across maps unless its address changed.
    OsdClient* existing = nullptr;
    for (const auto& c : connections_) {
      if (c->osd_id() == osd.id && c->address() == osd.address) existing = c.get();
    }
    if (existing == nullptr) {
      connections_.push_back(std::make_unique<OsdClient>(osd, options_));
      connections_.back()->set_health(&health_);
      existing = connections_.back().get();
    }
    next->osds.push_back(existing);
  }
  states_.push_back(std::move(next));
  state_.store(states_.back().get(), std::memory_order_release);
}

void ClusterClient::FollowMapChange(OsdClient* from, uint64_t seen_epoch) {
  std::lock_guard lock(map_mu_);
  const uint64_t running = state()->placement.map().epoch;
  if (running > seen_epoch) return;  // another call switched already
  Result<wire::MapResponse> answer = from->GetMap(wire::GetMapRequest());
  Result<ClusterMap> map = answer.ok() ? ParseClusterMap(answer->map()) : answer.status();
  if (map.ok() && map->epoch > running &&
      map->object_size == state()->placement.map().object_size) {
    spdlog::info("cluster map epoch {} -> {} (from {}), {} OSDs", running, map->epoch, from->name(),
                 map->osds.size());
    InstallMap(*map);
    ++map_changes_;
    if (on_map_change_) on_map_change_();
    return;
  }
  if (!map.ok()) {
    spdlog::warn("{} refused epoch {} as stale but gave no map: {}", from->name(), running,
                 map.status().ToString());
  }
  // The OSD runs an older map than ours: it catches up from its peers in a moment.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

Result<wire::MapResponse> ClusterClient::CatchUpWithCluster() {
  // Every OSD is asked: one restarted during a map change may still run the older map.
  std::optional<wire::MapResponse> latest;
  OsdClient* latest_osd = nullptr;
  uint64_t latest_epoch = 0;
  for (OsdClient* osd : osds()) {
    Result<wire::MapResponse> answer = osd->GetMap(wire::GetMapRequest());
    if (!answer.ok()) continue;  // a down OSD: the others tell
    Result<ClusterMap> running = ParseClusterMap(answer->map());
    const uint64_t epoch = running.ok() ? running->epoch : 0;
    if (!latest || epoch > latest_epoch) {
      latest = std::move(*answer);
      latest_osd = osd;
      latest_epoch = epoch;
    }
  }
  if (!latest) {
    return Status::Unavailable("no OSD of map epoch " + std::to_string(map().epoch) + " answered");
  }
  if (latest_epoch > map().epoch) FollowMapChange(latest_osd, map().epoch);
  return *latest;
}

template <typename Request, typename Response>
Result<Response> ClusterClient::SendForCopy(const Oid& oid, Request request,
                                            Result<Response> (OsdClient::*call)(const Request&)) {
  for (int attempt = 0;; ++attempt) {
    const MapState* s = state();
    request.set_epoch(s->placement.map().epoch);
    OsdClient* osd = s->Osd(s->placement.OsdFor(oid));
    Result<Response> result = (osd->*call)(request);
    if (result.ok() || !result.status().Is(StatusCode::kStaleEpoch) || attempt >= kMaxMapRetries) {
      return result;
    }
    FollowMapChange(osd, s->placement.map().epoch);
  }
}

template <typename Request, typename Response>
void ClusterClient::SendForCopyAsync(const Oid& oid, std::shared_ptr<Request> request,
                                     void (OsdClient::*call)(std::shared_ptr<const Request>,
                                                             std::function<void(Result<Response>)>),
                                     std::function<void(Result<Response>)> done, int attempt) {
  const MapState* s = state();
  const uint64_t epoch = s->placement.map().epoch;
  request->set_epoch(epoch);
  OsdClient* osd = s->Osd(s->placement.OsdFor(oid));
  // The request stays for a resend: a map change is rare, but must not fail a write.
  (osd->*call)(request, [this, oid, request, call, done = std::move(done), osd, epoch,
                         attempt](Result<Response> result) mutable {
    if (result.ok() || !result.status().Is(StatusCode::kStaleEpoch) || attempt >= kMaxMapRetries) {
      return done(std::move(result));
    }
    // Not on the gRPC callback thread: fetching the map is a blocking call.
    ++resends_in_flight_;
    std::thread([this, oid, request = std::move(request), call, done = std::move(done), osd, epoch,
                 attempt]() mutable {
      FollowMapChange(osd, epoch);
      SendForCopyAsync(oid, std::move(request), call, std::move(done), attempt + 1);
      --resends_in_flight_;
    }).detach();
  });
}

namespace {

// Hands each of a batched call's `count` results on, in order: to answer(k, response or
// refusal), or to alone(k) when it should go again as a single call (an OSD from before the
// batched call: a rolling upgrade, which the OSD's client remembers; or a stale epoch: the
// single call follows the map change). An answered call reports the OSD's health from its
// items (OsdClient::ObserveBatch).
template <typename ManyResponse, typename Answer, typename Alone>
void HandOutResults(OsdClient& osd, OsdClient::BatchedCall call, Result<ManyResponse>& r,
                    size_t count, const Answer& answer, const Alone& alone) {
  const bool old_osd = !r.ok() && r.status().Is(StatusReason::kNotImplemented);
  if (old_osd) osd.NoteUnknown(call);
  std::optional<std::string> recovering;
  for (size_t k = 0; r.ok() && k < std::min<size_t>(count, r->results_size()); ++k) {
    const auto& result = r->results(static_cast<int>(k));
    if (!recovering && RefusalOf(result, osd.name()).Is(StatusReason::kRecovering)) {
      recovering = result.error_message();
    }
  }
  if (r.ok()) osd.ObserveBatch(recovering);
  for (size_t k = 0; k < count; ++k) {
    if (old_osd) {
      alone(k);
      continue;
    }
    if (!r.ok()) {
      answer(k, r.status());
      continue;
    }
    if (static_cast<int>(k) >= r->results_size()) {
      answer(k,
             Status::Internal(osd.name() + ": " + BatchedCallName(call) + " answered " +
                              std::to_string(r->results_size()) + " of " + std::to_string(count)));
      continue;
    }
    auto* result = r->mutable_results(static_cast<int>(k));
    const Status refusal = RefusalOf(*result, osd.name());
    if (refusal.ok()) {
      answer(k, std::move(*result->mutable_response()));
    } else if (refusal.Is(StatusCode::kStaleEpoch)) {
      alone(k);
    } else {
      answer(k, refusal);
    }
  }
}

// The client checks what the OSD sent (the OSD checked what it read from its disk): a whole
// object against the object's checksum, a range (truncation's kept head, `orthofs get` ranges)
// against the checksum the OSD computed for it. Bytes that do not match were corrupted in transit
// or memory.
Status VerifyReadBytes(const Oid& oid, const wire::ReadResponse& read) {
  if (ReadBytesIntact(
          read.data(), read.meta().length(), read.meta().checksum(),
          read.has_range_checksum() ? std::optional(read.range_checksum()) : std::nullopt)) {
    return Status::Ok();
  }
  return Status::Corruption("object " + oid.ToString() + ": bytes received fail their checksum");
}

}  // namespace

Result<wire::ReadResponse> ClusterClient::Read(const Oid& oid, uint64_t offset, uint64_t length) {
  wire::ReadRequest r;
  r.set_epoch(map().epoch);
  *r.mutable_oid() = ToWire(oid);
  if (!client_id_.empty()) r.set_client_id(client_id_);
  r.set_offset(offset);
  r.set_length(length);
  Result<wire::ReadResponse> read = SendForCopy(oid, std::move(r), &OsdClient::Read);
  if (read.ok()) ORTHOFS_RETURN_IF_ERROR(VerifyReadBytes(oid, *read));
  if (read.ok() && test_hooks_.after_reading) test_hooks_.after_reading(oid);
  return read;
}

Result<wire::ReadResponse> ClusterClient::ReadEitherCopy(const Oid& original, uint64_t offset,
                                                         uint64_t length) {
  Result<wire::ReadResponse> read = ReadEitherCopyOnce(original, offset, length);
  // Both copies' OSDs restarting (waiting for their repair records to be replayed): briefly.
  for (int attempt = 0; attempt < 50 && !read.ok() && IsRecovering(read.status()); ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    read = ReadEitherCopyOnce(original, offset, length);
  }
  return read;
}

std::vector<Result<wire::ReadResponse>> ClusterClient::ReadManyAndWait(
    const std::vector<Oid>& oids) {
  std::vector<std::optional<Result<wire::ReadResponse>>> answers(oids.size());
  if (!oids.empty()) {
    std::latch answered(static_cast<std::ptrdiff_t>(oids.size()));
    ReadManyAsync(oids, [&answers, &answered](size_t i, Result<wire::ReadResponse> read) {
      answers[i].emplace(std::move(read));
      answered.count_down();
    });
    answered.wait();
  }
  std::vector<Result<wire::ReadResponse>> reads;
  reads.reserve(oids.size());
  for (std::optional<Result<wire::ReadResponse>>& answer : answers) {
    reads.push_back(std::move(*answer));
  }
  return reads;
}

Result<wire::ReadResponse> ClusterClient::EitherCopysAnswer(const Oid& first_copy,
                                                            Result<wire::ReadResponse> first,
                                                            Result<wire::ReadResponse> other) {
  // Absent from both is absent; otherwise the other copy's answer counts.
  if (!other.ok() && first.status().Is(StatusCode::kNotFound) && IsOsdFailure(other.status())) {
    return first;
  }
  if (other.ok() && first.status().Is(StatusCode::kNotFound) &&
      first_copy.flag == CopyFlag::kOriginal && first_copy.type != ObjectType::kData) {
    Result<bool> finished = FinishDeletionCutShort(first_copy, other->meta().version(),
                                                   finish_deletions_on_read_.load());
    if (finished.ok() && *finished) return first;
  }
  return other;
}

Result<bool> ClusterClient::FinishDeletionCutShort(const Oid& original, uint64_t replica_version,
                                                   bool finish) {
  const Oid original_copy = original.WithFlag(CopyFlag::kOriginal);
  // A delete expecting version 0 changes nothing on an absent copy and answers its tombstone's
  // version; one that exists refuses it, so a live original stays (written again meanwhile).
  Result<wire::DeleteResponse> probe = DeleteCopy(original_copy, 0, std::nullopt);
  if (probe.status().Is(StatusCode::kVersionMismatch)) return false;
  if (!probe.ok()) return probe.status();
  if (probe->existed() || !probe->tombstone() || probe->version() <= replica_version) return false;
  if (!finish) return true;
  // At the tombstone's version: a replica written since at a newer one (a create following its
  // original) keeps that write.
  Result<wire::DeleteResponse> finished =
      DeleteCopy(original_copy.OtherCopy(), std::nullopt, probe->version());
  // Its client died between the copies, or is about to delete the replica itself.
  spdlog::info(
      "{}: finished a deletion cut short (replica at version {}, original deleted at {}): {}",
      original_copy.ToString(), replica_version, probe->version(),
      finished.ok() ? "OK" : finished.status().ToString());
  return true;  // deleted either way: a replica still there is finished by the next read
}

std::vector<Result<wire::ReadResponse>> ClusterClient::ReadEitherCopyMany(
    const std::vector<Oid>& originals) {
  std::vector<Oid> first;
  std::vector<Oid> second;
  for (const Oid& original : originals) {
    Oid copy = original.WithFlag(CopyFlag::kOriginal);
    Oid other = original.WithFlag(CopyFlag::kReplica);
    if (CopyIsDown(copy)) std::swap(copy, other);
    first.push_back(copy);
    second.push_back(other);
  }
  std::vector<Result<wire::ReadResponse>> reads = ReadManyAndWait(first);
  // The other copy of each that needs it, together as well.
  std::vector<size_t> again;
  std::vector<Oid> others;
  for (size_t i = 0; i < reads.size(); ++i) {
    if (!reads[i].ok() && NeedsOtherCopy(reads[i].status())) {
      again.push_back(i);
      others.push_back(second[i]);
    }
  }
  std::vector<Result<wire::ReadResponse>> other_reads = ReadManyAndWait(others);
  for (size_t k = 0; k < again.size(); ++k) {
    reads[again[k]] =
        EitherCopysAnswer(first[again[k]], std::move(reads[again[k]]), std::move(other_reads[k]));
  }
  // Both copies' OSDs recovering: asked again for a while, as ReadEitherCopy does.
  for (size_t i = 0; i < reads.size(); ++i) {
    if (!reads[i].ok() && IsRecovering(reads[i].status())) reads[i] = ReadEitherCopy(originals[i]);
  }
  return reads;
}

Result<wire::ReadResponse> ClusterClient::ReadEitherCopyOnce(const Oid& original, uint64_t offset,
                                                             uint64_t length) {
  Oid first = original.WithFlag(CopyFlag::kOriginal);
  Oid second = original.WithFlag(CopyFlag::kReplica);
  if (CopyIsDown(first)) std::swap(first, second);
  Result<wire::ReadResponse> read = Read(first, offset, length);
  if (read.ok() || !NeedsOtherCopy(read.status())) return read;
  return EitherCopysAnswer(first, std::move(read), Read(second, offset, length));
}

namespace {

// A data change one copy takes alone (with a repair record) carries this client's clock as
// its version's floor (common/object_version.h): a double outage then cannot leave the two
// copies at one version with different bytes. So does every data deletion (one floor for both
// copies: a tombstone kept on either has it). Data changes both copies take count up by one,
// which keeps them equal. Metadata never gets a floor: its changes commit on the original
// first and the replica follows at the original's version, so a floor on a change the replica
// took alone would outrank every later change the original takes at version + 1 (the caller
// holds the version it got as the next expected one).
bool NeedsVersionFloor(const Oid& oid) { return oid.type == ObjectType::kData; }

uint64_t VersionFloor() { return VersionFloorAt(std::chrono::system_clock::now()); }

}  // namespace

wire::WriteRequest ClusterClient::MakeWrite(const Oid& oid, std::string_view data,
                                            const ObjectWrite& how, bool with_data) const {
  wire::WriteRequest r;
  r.set_epoch(map().epoch);
  *r.mutable_oid() = ToWire(oid);
  r.set_offset(how.offset);
  if (with_data) r.set_data(std::string(data));
  r.set_replace(how.replace);
  // A whole object's checksum, taken here once for both copies (end to end: see the proto).
  if (how.replace) r.set_checksum(ObjectChecksum(data));
  if (how.expected_version) r.set_expected_version(*how.expected_version);
  r.set_sync(how.sync);
  r.set_record_repair(how.record_repair);
  r.set_other_recovering(how.record_repair && how.other_recovering);
  if (how.record_repair) ++degraded_writes_;
  if (how.record_repair && NeedsVersionFloor(oid)) r.set_min_version(VersionFloor());
  return r;
}

wire::WriteRequest ClusterClient::RecordRepairRequest(const Oid& oid, uint64_t version,
                                                      bool sync) const {
  wire::WriteRequest r;
  r.set_epoch(map().epoch);
  *r.mutable_oid() = ToWire(oid);
  r.set_set_version(version);  // not newer than what is stored: changes no bytes
  r.set_record_repair(true);
  r.set_sync(sync);
  // A data copy still at `version` moves up to the floor it would have had as a write taken
  // alone.
  if (NeedsVersionFloor(oid)) r.set_min_version(VersionFloor());
  ++degraded_writes_;
  return r;
}

Result<wire::ObjectMeta> ClusterClient::Write(const Oid& oid, std::string_view data,
                                              const ObjectWrite& how) {
  Result<wire::WriteResponse> response =
      SendForCopy(oid, MakeWrite(oid, data, how), &OsdClient::Write);
  if (!response.ok()) return response.status();
  return response->meta();
}

void PendingCalls::Add(int n) {
  std::lock_guard lock(mu_);
  pending_ += n;
}

void PendingCalls::Done(const Status& status) {
  std::lock_guard lock(mu_);
  if (!status.ok() && first_error_.ok()) first_error_ = status;
  if (--pending_ == 0) cv_.notify_all();
}

Status PendingCalls::Wait() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return pending_ == 0; });
  return first_error_;
}

void ClusterClient::WriteBothCopiesAsync(const Oid& original, std::string_view data,
                                         const ObjectWrite& how, PendingCalls* pending) {
  pending->Add();
  WriteBothCopiesAsync(original, data, how, [pending](Status st) { pending->Done(st); });
}

void ClusterClient::WriteBothCopiesAsync(const Oid& original, std::string_view data,
                                         const ObjectWrite& how, std::function<void(Status)> done,
                                         CopyWriteBatch* batch,
                                         std::shared_ptr<const void> data_owner) {
  if (test_hooks_.before_writing_both_copies) test_hooks_.before_writing_both_copies(original);
  const Oid copies[2] = {original.WithFlag(CopyFlag::kOriginal),
                         original.WithFlag(CopyFlag::kReplica)};
  const bool down[2] = {CopyIsDown(copies[0]), CopyIsDown(copies[1])};
  if (down[0] != down[1]) {
    // One copy's OSD is known down: the other copy, with a repair record, in one round trip.
    ObjectWrite degraded = how;
    degraded.record_repair = true;
    const Oid live = down[0] ? copies[1] : copies[0];
    const Oid believed_down = live.OtherCopy();
    // The belief is a hint that may outlive the outage: if the live copy's OSD fails now, the
    // other one may well be back, and takes the write (with the record) instead.
    auto live_request = std::make_shared<wire::WriteRequest>(MakeWrite(live, data, degraded));
    auto down_request = std::make_shared<wire::WriteRequest>(*live_request);  // hashed once
    *down_request->mutable_oid() = ToWire(believed_down);
    SendForCopyAsync<wire::WriteRequest, wire::WriteResponse>(
        live, std::move(live_request), &OsdClient::WriteAsync,
        [this, done, believed_down,
         request = std::move(down_request)](Result<wire::WriteResponse> r) {
          if (r.ok() || !IsOsdFailure(r.status())) return done(r.status());
          SendForCopyAsync<wire::WriteRequest, wire::WriteResponse>(
              believed_down, request, &OsdClient::WriteAsync,
              [done](Result<wire::WriteResponse> second) { done(second.status()); });
        });
    return;
  }
  // Both at once; when exactly one fails at the transport, the other (already written) gets a
  // repair record before the write counts as done.
  struct Outcome {
    std::mutex mu;
    int done = 0;
    Status status[2];
    uint64_t version[2] = {0, 0};
  };
  auto outcome = std::make_shared<Outcome>();
  // Batched, both copies' requests refer to the caller's bytes (kept by `data_owner`);
  // otherwise each carries a copy.
  const bool shared = batch != nullptr && data_owner != nullptr;
  wire::WriteRequest first = MakeWrite(copies[0], data, how, /*with_data=*/!shared);
  for (int i = 0; i < 2; ++i) {
    // The second copy's request takes the first one's over (its bytes are not copied again).
    auto request = std::make_shared<wire::WriteRequest>(i == 0 ? first : std::move(first));
    *request->mutable_oid() = ToWire(copies[i]);
    auto on_written = [this, outcome, i, copies, sync = how.sync,
                       done](Result<wire::WriteResponse> r) {
      {
        std::lock_guard lock(outcome->mu);
        outcome->status[i] = r.status();
        if (r.ok()) outcome->version[i] = r->meta().version();
        if (++outcome->done < 2) return;
      }
      const Status& a = outcome->status[0];
      const Status& b = outcome->status[1];
      if (a.ok() && b.ok()) {
        const uint64_t* version = outcome->version;
        if (version[0] == version[1]) return done(Status::Ok());
        // The copies took the write at different versions, so they were out of step (a
        // repair's push crossed it, and its record may be gone already): the newer copy holds
        // every change, and a record there brings the other along.
        const int newer = version[0] > version[1] ? 0 : 1;
        SendForCopyAsync<wire::WriteRequest, wire::WriteResponse>(
            copies[newer],
            std::make_shared<wire::WriteRequest>(
                RecordRepairRequest(copies[newer], version[newer], sync)),
            &OsdClient::WriteAsync, [done](Result<wire::WriteResponse> r) { done(r.status()); });
        return;
      }
      const int failed = a.ok() ? 1 : 0;
      // A damaged copy refuses ranged writes; like a down one, the repair record brings
      // it back from the live copy (an OSD replaces a damaged record whole).
      const Status lost = outcome->status[failed];
      const bool full = lost.Is(StatusCode::kNoSpace);
      if (a.ok() == b.ok() || !(IsOsdFailure(lost) || lost.Is(StatusCode::kCorruption) || full)) {
        return done(a.ok() ? b : a);
      }
      // A full OSD fails the write (the application hears ENOSPC), but the copy that took
      // it gets a repair record too, so the two copies agree once space is back.
      const int live = 1 - failed;
      SendForCopyAsync<wire::WriteRequest, wire::WriteResponse>(
          copies[live],
          std::make_shared<wire::WriteRequest>(
              RecordRepairRequest(copies[live], outcome->version[live], sync)),
          &OsdClient::WriteAsync,
          [done, full, lost](Result<wire::WriteResponse> r) { done(full ? lost : r.status()); });
    };
    if (shared) {
      batch->Add(copies[i], SharedWrite{std::move(request), data, data_owner},
                 std::move(on_written));
    } else if (batch != nullptr) {
      batch->Add(copies[i], SharedWrite::FromRequest(std::move(request)), std::move(on_written));
    } else {
      SendForCopyAsync<wire::WriteRequest, wire::WriteResponse>(
          copies[i], std::move(request), &OsdClient::WriteAsync, std::move(on_written));
    }
  }
}

void ClusterClient::SendWrites(CopyWriteBatch batch) {
  const MapState* s = state();
  const uint64_t epoch = s->placement.map().epoch;
  std::map<uint32_t, std::vector<CopyWriteBatch::Item>> by_osd;
  for (CopyWriteBatch::Item& item : batch.items_) {
    by_osd[s->placement.OsdFor(item.oid)].push_back(std::move(item));
  }
  for (auto& [osd_id, items] : by_osd) {
    OsdClient* osd = s->Osd(osd_id);
    size_t begin = 0;
    while (begin < items.size()) {
      // As many writes as fit one call's size limit.
      size_t end = begin;
      uint64_t bytes = 0;
      while (end < items.size() && end - begin < kMaxWriteManyWrites &&
             (end == begin || bytes + items[end].write.data.size() <= kMaxWriteManyBytes)) {
        bytes += items[end++].write.data.size();
      }
      if (end - begin == 1 || !osd->MayCall(OsdClient::BatchedCall::kWriteMany)) {
        for (; begin < end; ++begin) {
          CopyWriteBatch::Item& item = items[begin];
          SendForCopyAsync<wire::WriteRequest, wire::WriteResponse>(
              item.oid, item.write.WithData(), &OsdClient::WriteAsync, std::move(item.done));
        }
        continue;
      }
      std::vector<CopyWriteBatch::Item> group;
      std::vector<const SharedWrite*> writes;
      for (size_t k = begin; k < end; ++k) {
        items[k].write.request->set_epoch(epoch);
        group.push_back(std::move(items[k]));
      }
      for (const CopyWriteBatch::Item& item : group) writes.push_back(&item.write);
      begin = end;
      // The bytes go out without a copy: the encoded request refers to them.
      auto encoded = std::make_shared<const grpc::ByteBuffer>(EncodeWriteMany(writes));
      osd->WriteManyEncodedAsync(encoded, [this, group = std::move(group),
                                           osd](Result<wire::WriteManyResponse> r) mutable {
        HandOutResults(
            *osd, OsdClient::BatchedCall::kWriteMany, r, group.size(),
            [&](size_t k, Result<wire::WriteResponse> written) {
              group[k].done(std::move(written));
            },
            [&](size_t k) {
              SendForCopyAsync<wire::WriteRequest, wire::WriteResponse>(
                  group[k].oid, group[k].write.WithData(), &OsdClient::WriteAsync,
                  std::move(group[k].done));
            });
      });
    }
  }
}

Status ClusterClient::WriteBothCopies(const Oid& original, std::string_view data,
                                      const ObjectWrite& how) {
  PendingCalls pending;
  WriteBothCopiesAsync(original, data, how, &pending);
  return pending.Wait();
}

void ClusterClient::ReadAsync(const Oid& oid, uint64_t offset, uint64_t length,
                              std::function<void(Result<wire::ReadResponse>)> done) {
  wire::ReadRequest r;
  r.set_epoch(map().epoch);
  *r.mutable_oid() = ToWire(oid);
  if (!client_id_.empty()) r.set_client_id(client_id_);
  r.set_offset(offset);
  r.set_length(length);
  SendForCopyAsync<wire::ReadRequest, wire::ReadResponse>(
      oid, std::make_shared<wire::ReadRequest>(std::move(r)), &OsdClient::ReadAsync,
      [this, oid, done = std::move(done)](Result<wire::ReadResponse> read) {
        if (test_hooks_.after_reading) test_hooks_.after_reading(oid);
        if (read.ok()) {
          if (Status st = VerifyReadBytes(oid, *read); !st.ok()) return done(st);
        }
        done(std::move(read));
      });
}

void ClusterClient::ReadManyAsync(const std::vector<Oid>& oids,
                                  std::function<void(size_t, Result<wire::ReadResponse>)> done) {
  using Done = std::function<void(size_t, Result<wire::ReadResponse>)>;
  auto shared_done = std::make_shared<const Done>(std::move(done));
  auto read_alone = [this, shared_done](const Oid& oid, size_t index) {
    ReadAsync(oid, 0, 0, [shared_done, index](Result<wire::ReadResponse> r) {
      (*shared_done)(index, std::move(r));
    });
  };
  const MapState* s = state();
  const uint64_t epoch = s->placement.map().epoch;
  static_assert(kReadManyBytes <= kMaxReadManyBytes, "inside what an OSD accepts");
  const size_t data_per_call =
      std::clamp<uint64_t>(kReadManyBytes / s->placement.map().object_size, 1, kMaxReadManyReads);
  const size_t metadata_per_call = std::clamp<uint64_t>(
      kMaxReadManyBytes / s->placement.map().object_size, 1, kMaxReadManyReads);
  std::map<uint32_t, std::vector<size_t>> by_osd;  // oid indexes, in order
  for (size_t i = 0; i < oids.size(); ++i) by_osd[s->placement.OsdFor(oids[i])].push_back(i);
  for (const auto& [osd_id, indexes] : by_osd) {
    OsdClient* osd = s->Osd(osd_id);
    // Metadata objects (INODE, DIRENT) are small: as many as an OSD takes in one call.
    const bool any_data = std::any_of(indexes.begin(), indexes.end(),
                                      [&](size_t i) { return oids[i].type == ObjectType::kData; });
    const size_t per_call = any_data ? data_per_call : metadata_per_call;
    for (size_t begin = 0; begin < indexes.size(); begin += per_call) {
      const size_t end = std::min(indexes.size(), begin + per_call);
      if (end - begin == 1 || !osd->MayCall(OsdClient::BatchedCall::kReadMany)) {
        for (size_t k = begin; k < end; ++k) read_alone(oids[indexes[k]], indexes[k]);
        continue;
      }
      auto request = std::make_shared<wire::ReadManyRequest>();
      std::vector<std::pair<Oid, size_t>> group;
      for (size_t k = begin; k < end; ++k) {
        const Oid& oid = oids[indexes[k]];
        wire::ReadRequest* read = request->add_reads();
        read->set_epoch(epoch);
        *read->mutable_oid() = ToWire(oid);
        if (!client_id_.empty()) read->set_client_id(client_id_);
        group.emplace_back(oid, indexes[k]);
      }
      osd->ReadManyAsync(std::move(request), [this, group = std::move(group), shared_done,
                                              read_alone, osd](Result<wire::ReadManyResponse> r) {
        HandOutResults(
            *osd, OsdClient::BatchedCall::kReadMany, r, group.size(),
            [&](size_t k, Result<wire::ReadResponse> read) {
              const auto& [oid, index] = group[k];
              if (test_hooks_.after_reading) test_hooks_.after_reading(oid);
              if (read.ok()) {
                if (Status st = VerifyReadBytes(oid, *read); !st.ok()) read = st;
              }
              (*shared_done)(index, std::move(read));
            },
            [&](size_t k) { read_alone(group[k].first, group[k].second); });
      });
    }
  }
}

void ClusterClient::WriteAsync(const Oid& oid, std::string_view data, const ObjectWrite& how,
                               std::function<void(Status)> done) {
  SendForCopyAsync<wire::WriteRequest, wire::WriteResponse>(
      oid, std::make_shared<wire::WriteRequest>(MakeWrite(oid, data, how)), &OsdClient::WriteAsync,
      [done = std::move(done)](Result<wire::WriteResponse> r) { done(r.status()); });
}

Result<wire::ObjectMeta> ClusterClient::WriteOriginalThenReplica(
    const Oid& original, std::string_view data, std::optional<uint64_t> expected_version,
    PendingCalls* replica_pending) {
  return HookedCommit(
      original, data,
      CommitHow{.expected_version = expected_version, .replica_pending = replica_pending});
}

Result<wire::ObjectMeta> ClusterClient::WriteOriginalThenReplicaDurably(const Oid& original,
                                                                        std::string_view data,
                                                                        uint64_t expected_version,
                                                                        bool* on_both_copies) {
  *on_both_copies = false;
  return HookedCommit(
      original, data,
      CommitHow{
          .expected_version = expected_version, .sync = true, .on_both_copies = on_both_copies});
}

Result<wire::ObjectMeta> ClusterClient::HookedCommit(const Oid& original, std::string_view data,
                                                     const CommitHow& how) {
  if (test_hooks_.before_writing_original_then_replica) {
    test_hooks_.before_writing_original_then_replica(original);
  }
  if (test_hooks_.instead_of_committing) {
    if (Status unsent = test_hooks_.instead_of_committing(original); !unsent.ok()) return unsent;
  }
  Result<wire::ObjectMeta> written = CommitOriginalThenReplica(original, data, how);
  if (test_hooks_.before_answering_original_then_replica) {
    Status answer = written.status();
    test_hooks_.before_answering_original_then_replica(original, &answer);
    if (!answer.ok()) return answer;
  }
  return written;
}

Result<wire::ObjectMeta> ClusterClient::CommitOriginalThenReplica(const Oid& original,
                                                                  std::string_view data,
                                                                  const CommitHow& how) {
  const Oid original_copy = original.WithFlag(CopyFlag::kOriginal);
  const Oid replica_copy = original.WithFlag(CopyFlag::kReplica);
  ObjectWrite write;
  write.replace = true;
  write.expected_version = how.expected_version;
  write.sync = how.sync;
  for (int attempt = 0;; ++attempt) {
    // The original goes first even when its OSD is believed down: a belief can outlive the
    // outage, and committing on the replica while the original is reachable would fork them.
    Result<wire::ObjectMeta> meta = Write(original_copy, data, write);
    if (meta.ok()) {
      PendingCalls own;
      bool replica_followed = false;
      MakeReplicaFollow(original_copy, data, meta->version(),
                        how.replica_pending != nullptr ? how.replica_pending : &own, how.sync,
                        how.replica_pending == nullptr ? &replica_followed : nullptr);
      if (how.replica_pending == nullptr) ORTHOFS_RETURN_IF_ERROR(own.Wait());
      if (how.on_both_copies != nullptr) *how.on_both_copies = replica_followed;
      return meta;
    }
    if (!IsOsdFailure(meta.status()) && !meta.status().Is(StatusCode::kCorruption)) return meta;
    if (WaitedForUnsentCall(meta.status(), attempt)) continue;
    // The original's OSD is down (or its record damaged). Both copies carry the same version,
    // so the replica can be the commit point (the same condition), with a repair record for
    // the original.
    ObjectWrite alone = write;
    alone.record_repair = true;
    alone.other_recovering = IsRecovering(meta.status());
    Result<wire::ObjectMeta> replica = Write(replica_copy, data, alone);
    if (WaitedForOriginalToAnswer(original_copy, replica.status(), attempt)) continue;
    if (!BothRefusedAsRecovering(meta.status(), replica.status(), attempt)) return replica;
  }
}

bool ClusterClient::WaitedForOriginalToAnswer(const Oid& original_copy, const Status& replica,
                                              int attempt) {
  // The replica's OSD reached the original's, which this client could not: our connection to
  // it is likely still backing off from an outage. Reconnect now and commit there.
  if (!OriginalAnswers(replica)) return false;
  const MapState* s = state();
  if (OsdClient* original = s->Osd(s->placement.OsdFor(original_copy))) original->ReconnectNow();
  return WaitedToRetry(true, attempt);
}

bool ClusterClient::WaitedForUnsentCall(const Status& original, int attempt) {
  // This client did not send the commit to the original: queued while its OSD was believed
  // down (OsdClient::CallFinished). The belief may be stale, and committing on the replica
  // while the original takes other clients' changes would fork the object (a chaos run: a
  // rename's pin committed on the replica alone, its unpin on the original that lacked it,
  // and the file was freed under its new name). So the original is tried again; only an
  // answer from it, or its failure, lets the replica commit.
  return WaitedToRetry(original.Is(StatusReason::kNotSent), attempt);
}

bool ClusterClient::BothRefusedAsRecovering(const Status& original, const Status& replica,
                                            int attempt) {
  // Neither copy took the change: the original's OSD recovers, and the replica's refuses to
  // take it alone while that OSD catches up (RepairRequest.fence), or recovers as well. It
  // takes changes again in a moment.
  return WaitedToRetry(IsRecovering(original) && IsRecovering(replica), attempt);
}

bool ClusterClient::WaitedToRetry(bool worth_retrying, int attempt) {
  if (!worth_retrying || attempt >= kRecoveringRetries) return false;
  std::this_thread::sleep_for(kRecoveringRetryDelay);
  return true;
}

void ClusterClient::MakeReplicaFollow(const Oid& original_copy, std::string_view data,
                                      uint64_t version, PendingCalls* pending, bool sync,
                                      bool* followed) {
  const Oid replica_copy = original_copy.OtherCopy();
  ObjectWrite whole;
  whole.replace = true;
  whole.sync = sync;
  wire::WriteRequest r = MakeWrite(replica_copy, data, whole);
  r.set_set_version(version);
  // The original committed: whatever keeps the replica from following (its OSD down, full, a
  // damaged record), the change stands and a repair record brings the replica along.
  pending->Add();
  SendForCopyAsync<wire::WriteRequest, wire::WriteResponse>(
      replica_copy, std::make_shared<wire::WriteRequest>(std::move(r)), &OsdClient::WriteAsync,
      [this, original_copy, version, replica_copy, pending, sync,
       followed](Result<wire::WriteResponse> written) {
        if (written.ok()) {
          if (followed != nullptr) *followed = true;
          return pending->Done(Status::Ok());
        }
        if (!IsOsdFailure(written.status())) {
          spdlog::warn("{}: replica not updated ({}); recording a repair", replica_copy.ToString(),
                       written.status().ToString());
        }
        SendForCopyAsync<wire::WriteRequest, wire::WriteResponse>(
            original_copy,
            std::make_shared<wire::WriteRequest>(RecordRepairRequest(original_copy, version, sync)),
            &OsdClient::WriteAsync,
            [pending](Result<wire::WriteResponse> recorded) { pending->Done(recorded.status()); });
      });
}

Result<wire::ObjectMeta> ClusterClient::CreateBothCopies(const Oid& original,
                                                         std::string_view data) {
  const Oid original_copy = original.WithFlag(CopyFlag::kOriginal);
  const Oid replica_copy = original.WithFlag(CopyFlag::kReplica);
  // An OSD known down: the careful order, which commits on the live copy with a repair record.
  if (CopyIsDown(original_copy) || CopyIsDown(replica_copy)) {
    return WriteOriginalThenReplica(original, data, 0);
  }
  ObjectWrite how;
  how.replace = true;
  how.expected_version = 0;
  auto answer = std::make_shared<std::promise<Result<wire::WriteResponse>>>();
  std::future<Result<wire::WriteResponse>> replica_written = answer->get_future();
  SendForCopyAsync<wire::WriteRequest, wire::WriteResponse>(
      replica_copy, std::make_shared<wire::WriteRequest>(MakeWrite(replica_copy, data, how)),
      &OsdClient::WriteAsync,
      [answer](Result<wire::WriteResponse> r) { answer->set_value(std::move(r)); });
  Result<wire::ObjectMeta> original_written = Write(original_copy, data, how);
  Result<wire::WriteResponse> replica = replica_written.get();
  if (original_written.ok()) {
    if (replica.ok() && replica->meta().version() == original_written->version()) {
      return original_written;
    }
    if (!replica.ok() && IsOsdFailure(replica.status())) {
      // Its OSD failed just now: not asked again; the original records the repair.
      Result<wire::WriteResponse> recorded = SendForCopy(
          original_copy, RecordRepairRequest(original_copy, original_written->version(), false),
          &OsdClient::Write);
      if (!recorded.ok()) return recorded.status();
      return original_written;
    }
    // The replica refused (full, damaged) or holds a lower version (a copy left over): it
    // follows the original. (A leftover at a higher version, which only a reused file number
    // could leave, would stay as it is.)
    PendingCalls follow;
    MakeReplicaFollow(original_copy, data, original_written->version(), &follow);
    ORTHOFS_RETURN_IF_ERROR(follow.Wait());
    return original_written;
  }
  const Status failed = original_written.status();
  if (!replica.ok()) return failed;
  if (IsOsdFailure(failed) || failed.Is(StatusCode::kCorruption)) {
    // The original's OSD is down (or its record damaged): the replica is the commit point, and
    // a repair record there brings the original along (WriteOriginalThenReplica's fallback).
    const uint64_t version = replica->meta().version();
    Result<wire::WriteResponse> recorded = SendForCopy(
        replica_copy, RecordRepairRequest(replica_copy, version, false), &OsdClient::Write);
    if (!recorded.ok()) return recorded.status();
    return replica->meta();
  }
  // The original refused the object (no space, say): the replica alone must not stay.
  Result<wire::DeleteResponse> removed =
      DeleteCopy(replica_copy, replica->meta().version(), std::nullopt);
  if (!removed.ok()) {
    spdlog::warn("{}: written, but its original was refused ({}), and removing it failed: {}",
                 replica_copy.ToString(), failed.ToString(), removed.status().ToString());
  }
  return failed;
}

Status ClusterClient::SyncAll() {
  std::vector<std::thread> threads;
  const std::vector<OsdClient*>& osds = state()->osds;
  std::vector<Status> results(osds.size());
  for (size_t i = 0; i < osds.size(); ++i) {
    if (osds[i]->down()) continue;  // what it missed is recorded for repair on the others
    threads.emplace_back([&, i] {
      wire::SyncRequest r;
      r.set_epoch(map().epoch);
      results[i] = osds[i]->Sync(r).status();
    });
  }
  for (auto& t : threads) t.join();
  // An OSD that died since holds no only copy: each of its objects was written to its other
  // copy's OSD too, which syncs here.
  for (const Status& st : results) {
    if (!IsOsdFailure(st)) ORTHOFS_RETURN_IF_ERROR(st);
  }
  return Status::Ok();
}

Status ClusterClient::DeleteBothCopies(const Oid& original,
                                       std::optional<uint64_t> expected_version) {
  if (test_hooks_.before_deleting_both_copies) test_hooks_.before_deleting_both_copies(original);
  if (test_hooks_.instead_of_committing) {
    if (Status unsent = test_hooks_.instead_of_committing(original); !unsent.ok()) return unsent;
  }
  const Oid original_copy = original.WithFlag(CopyFlag::kOriginal);
  const Oid replica_copy = original.WithFlag(CopyFlag::kReplica);
  const uint64_t floor = VersionFloor();  // one deletion, one floor for both copies
  // A data object's original believed down is not waited for, as in WriteBothCopiesAsync (one
  // that hangs would hold every delete of a truncate for the deadline): the replica with a
  // repair record. Metadata keeps the careful order below (a belief can outlive the outage).
  if (original.type == ObjectType::kData && !expected_version && CopyIsDown(original_copy) &&
      !CopyIsDown(replica_copy)) {
    Status replica = DeleteCopy(replica_copy, std::nullopt, std::nullopt, true, floor).status();
    if (replica.ok() || !IsOsdFailure(replica)) return replica;
  }
  for (int attempt = 0;; ++attempt) {  // the original first, as in WriteOriginalThenReplica
    Result<wire::DeleteResponse> gone =
        DeleteCopy(original_copy, expected_version, std::nullopt, false, floor);
    if (gone.ok()) {
      // A metadata replica gets the original's tombstone version, so a late replica write from
      // another client (older by version) cannot bring the deleted object back. A data replica
      // is simply removed (no tombstone for every object ever deleted), unless one copy kept a
      // tombstone anyway (MatchDataTombstones).
      std::optional<uint64_t> deleted_at;
      if (gone->version() > 0) deleted_at = gone->version();
      const bool data = original.type == ObjectType::kData;
      Result<wire::DeleteResponse> replica =
          DeleteCopy(replica_copy, std::nullopt, data ? std::nullopt : deleted_at, false, floor);
      if (replica.ok()) {
        return data ? MatchDataTombstones(original_copy, *gone, replica_copy, *replica)
                    : Status::Ok();
      }
      if (!IsOsdFailure(replica.status())) return replica.status();
      // The replica's OSD is down: the original (deleted already) records the repair and keeps
      // a tombstone at the deletion's version, so that a rewrite there goes on above the
      // replica's version and its replay is not a no-op.
      return DeleteCopy(original_copy, std::nullopt, deleted_at, true).status();
    }
    if (!IsOsdFailure(gone.status())) return gone.status();
    if (WaitedForUnsentCall(gone.status(), attempt)) continue;
    // The original's OSD is down: the replica (same version) is the commit point.
    Status alone = DeleteCopy(replica_copy, expected_version, std::nullopt, true, floor,
                              IsRecovering(gone.status()))
                       .status();
    if (WaitedForOriginalToAnswer(original_copy, alone, attempt)) continue;
    if (!BothRefusedAsRecovering(gone.status(), alone, attempt)) return alone;
  }
}

Status ClusterClient::MatchDataTombstones(const Oid& one, const wire::DeleteResponse& one_deleted,
                                          const Oid& other,
                                          const wire::DeleteResponse& other_deleted) {
  auto kept = [](const wire::DeleteResponse& r) { return r.tombstone() ? r.version() : 0; };
  const uint64_t one_kept = kept(one_deleted);
  const uint64_t other_kept = kept(other_deleted);
  if (one_kept == other_kept) return Status::Ok();
  const bool one_behind = one_kept < other_kept;
  const Oid& behind = one_behind ? one : other;
  const Oid& ahead = one_behind ? other : one;
  const uint64_t version = std::max(one_kept, other_kept);
  if (test_hooks_.before_matching_tombstone) test_hooks_.before_matching_tombstone(behind);
  // Only while the copy behind is still deleted: a write that landed there since must stay.
  Status matched = DeleteCopy(behind, 0, version).status();
  if (matched.ok() || (!IsOsdFailure(matched) && !matched.Is(StatusCode::kVersionMismatch))) {
    return matched;
  }
  // The copy behind is down now, or written again: a repair record on the one ahead makes it
  // equal to that copy (its deletion, or the write that reached it too) when it runs.
  return DeleteCopy(ahead, std::nullopt, version, true).status();
}

Status ClusterClient::DeleteBothCopiesOfEach(const std::vector<Oid>& originals, size_t in_flight) {
  std::vector<Status> results(originals.size());
  std::atomic<size_t> next{0};
  auto delete_some = [&] {
    for (size_t i = next++; i < originals.size(); i = next++) {
      results[i] = DeleteBothCopies(originals[i]);
    }
  };
  {
    std::vector<std::jthread> helpers;  // joined when the block ends
    const size_t workers = std::min(in_flight, originals.size());
    for (size_t w = 1; w < workers; ++w) {
      try {
        helpers.emplace_back(delete_some);
      } catch (const std::system_error& e) {
        spdlog::debug("deleting with {} helper threads: {}", helpers.size(), e.what());
        break;  // the threads there are, this one included, delete everything
      }
    }
    delete_some();
  }
  for (const Status& st : results) ORTHOFS_RETURN_IF_ERROR(st);
  return Status::Ok();
}

Result<std::vector<std::pair<wire::ObjectMeta, std::string>>> ClusterClient::ListFileObjects(
    CopyFlag flag, uint32_t fnso, uint64_t fno, ObjectType type, uint32_t limit, bool with_data) {
  for (int attempt = 0;; ++attempt) {
    const MapState* s = state();
    const uint64_t epoch = s->placement.map().epoch;
    const std::vector<OsdClient*> targets = s->ListingTargets(flag, fnso, fno);
    // Where each OSD's listing is: the next page's token, or done.
    std::vector<std::string> tokens(targets.size());
    std::vector<bool> finished(targets.size(), false);
    std::vector<uint32_t> listed(targets.size(), 0);  // objects each OSD gave
    std::vector<std::pair<wire::ObjectMeta, std::string>> out;
    OsdClient* stale = nullptr;
    // A page from every OSD not done yet, all at once: one after the other they would cost a
    // round trip per OSD (a directory's listing asks every OSD holding originals).
    for (;;) {
      std::vector<size_t> asking;
      for (size_t i = 0; i < targets.size(); ++i) {
        if (!finished[i]) asking.push_back(i);
      }
      if (asking.empty()) break;
      std::vector<Result<wire::ListResponse>> pages =
          AwaitAll<Result<wire::ListResponse>>(asking.size(), [&](size_t k, auto done) {
            const size_t i = asking[k];
            auto request = std::make_shared<wire::ListRequest>();
            request->set_epoch(epoch);
            request->set_flag(static_cast<wire::CopyFlag>(flag));
            request->set_fnso(fnso);
            request->set_fno(fno);
            request->set_type(static_cast<wire::ObjectType>(type));
            request->set_with_data(with_data);
            request->set_summaries_only(!with_data);  // no object bytes read for a bare listing
            request->set_page_token(tokens[i]);
            if (limit != 0) request->set_limit(limit);
            targets[i]->ListAsync(std::move(request), std::move(done));
          });
      for (size_t k = 0; k < asking.size(); ++k) {
        const size_t i = asking[k];
        Result<wire::ListResponse>& page = pages[k];
        if (!page.ok()) {
          if (!page.status().Is(StatusCode::kStaleEpoch) || attempt >= kMaxMapRetries) {
            return page.status();
          }
          stale = targets[i];
          break;
        }
        for (int j = 0; j < page->objects_size(); ++j) {
          out.emplace_back(page->objects(j), j < page->data_size() ? page->data(j) : "");
        }
        listed[i] += static_cast<uint32_t>(page->objects_size());
        if (!page->next_page_token().empty() && page->next_page_token() == tokens[i]) {
          return Status::Internal(targets[i]->name() + " repeated a listing's page token");
        }
        tokens[i] = page->next_page_token();
        finished[i] = tokens[i].empty();
      }
      if (stale) break;
      // Once every OSD has given its first `limit` objects (or all it has), the first `limit`
      // of all are there.
      if (limit != 0) {
        for (size_t i = 0; i < targets.size(); ++i) {
          if (listed[i] >= limit) finished[i] = true;
        }
      }
    }
    if (stale) {  // the map changed: list again under the new one
      FollowMapChange(stale, epoch);
      continue;
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
      return a.first.oid().offset() < b.first.oid().offset();
    });
    if (limit != 0 && out.size() > limit) out.resize(limit);
    return out;
  }
}

Status ClusterClient::VisitStoredObjects(std::span<const CopyFlag> flags, uint32_t fnso,
                                         uint64_t fno, ObjectType type, uint64_t from,
                                         uint32_t first_page,
                                         const std::function<bool(uint64_t offset)>& visit) {
  // One OSD's listing of one copy flag, read a page at a time.
  struct Cursor {
    OsdClient* osd;
    CopyFlag flag;
    std::deque<uint64_t> offsets;  // listed, not visited yet
    std::string token;
    uint32_t page;  // the next page's limit
    bool done = false;
  };
  uint64_t resume = from;  // after a map change: the last offset visited (visits are ascending)
  for (int attempt = 0;; ++attempt) {
    const MapState* s = state();
    const uint64_t epoch = s->placement.map().epoch;
    std::vector<Cursor> cursors;
    for (CopyFlag flag : flags) {
      for (OsdClient* osd : s->ListingTargets(flag, fnso, fno)) {
        cursors.push_back({.osd = osd, .flag = flag, .page = std::max(first_page, 1u)});
      }
    }
    OsdClient* stale = nullptr;
    auto page_request = [&](Cursor& c) {
      wire::ListRequest request;
      request.set_epoch(epoch);
      request.set_flag(static_cast<wire::CopyFlag>(c.flag));
      request.set_fnso(fnso);
      request.set_fno(fno);
      request.set_type(static_cast<wire::ObjectType>(type));
      request.set_summaries_only(true);
      request.set_page_token(c.token);
      if (c.token.empty()) request.set_from_offset(resume);
      request.set_limit(c.page);
      c.page = static_cast<uint32_t>(std::min<uint64_t>(uint64_t{c.page} * 8, kMaxListLimit));
      return request;
    };
    auto take_page = [&](Cursor& c, Result<wire::ListResponse> page) -> Status {
      if (!page.ok()) {
        if (page.status().Is(StatusCode::kStaleEpoch)) stale = c.osd;
        return page.status();
      }
      for (const wire::ObjectMeta& meta : page->objects()) {
        // An OSD without from_offset lists from the file's first object.
        if (meta.oid().offset() >= resume) c.offsets.push_back(meta.oid().offset());
      }
      if (!page->next_page_token().empty() && page->next_page_token() == c.token) {
        return Status::Internal(c.osd->name() + " repeated a listing's page token");
      }
      c.token = page->next_page_token();
      c.done = c.token.empty();
      return Status::Ok();
    };
    Status failed;
    {
      // Every OSD's first page at once: a seek often needs no other, and one after the other
      // they cost a round trip per OSD.
      std::vector<Result<wire::ListResponse>> first =
          AwaitAll<Result<wire::ListResponse>>(cursors.size(), [&](size_t i, auto done) {
            cursors[i].osd->ListAsync(
                std::make_shared<const wire::ListRequest>(page_request(cursors[i])),
                std::move(done));
          });
      for (size_t i = 0; i < cursors.size() && failed.ok(); ++i) {
        failed = take_page(cursors[i], std::move(first[i]));
      }
    }
    while (failed.ok()) {
      Cursor* lowest = nullptr;
      for (Cursor& c : cursors) {
        while (failed.ok() && c.offsets.empty() && !c.done) {
          failed = take_page(c, c.osd->List(page_request(c)));
        }
        if (!failed.ok()) break;
        if (!c.offsets.empty() &&
            (lowest == nullptr || c.offsets.front() < lowest->offsets.front())) {
          lowest = &c;
        }
      }
      if (!failed.ok() || lowest == nullptr) break;
      const uint64_t offset = lowest->offsets.front();
      lowest->offsets.pop_front();
      resume = offset;
      if (!visit(offset)) return Status::Ok();
    }
    if (stale != nullptr && attempt < kMaxMapRetries) {  // list again under the new map
      FollowMapChange(stale, epoch);
      continue;
    }
    return failed;
  }
}

Result<std::vector<std::pair<wire::ObjectMeta, std::string>>>
ClusterClient::ListFileObjectsEitherCopy(uint32_t fnso, uint64_t fno, ObjectType type,
                                         uint32_t limit, bool with_data) {
  // Not through an OSD believed down while the replica OSD is up: one that hangs would hold
  // the listing for the call's deadline.
  if (!ListingReachesDownOsd(CopyFlag::kReplica, fnso, fno) &&
      ListingReachesDownOsd(CopyFlag::kOriginal, fnso, fno)) {
    return ListFileObjects(CopyFlag::kReplica, fnso, fno, type, limit, with_data);
  }
  auto originals = ListFileObjects(CopyFlag::kOriginal, fnso, fno, type, limit, with_data);
  if (originals.ok() || !IsOsdFailure(originals.status())) return originals;
  return ListFileObjects(CopyFlag::kReplica, fnso, fno, type, limit, with_data);
}

bool ClusterClient::ListingReachesDownOsd(CopyFlag flag, uint32_t fnso, uint64_t fno) {
  for (OsdClient* osd : state()->ListingTargets(flag, fnso, fno)) {
    if (osd->down()) return true;
  }
  return false;
}

std::vector<OsdClient*> ClusterClient::MapState::ListingTargets(CopyFlag flag, uint32_t fnso,
                                                                uint64_t fno) const {
  // Replicas of a file all live on one OSD; originals are spread over the others.
  const uint32_t replica_osd = placement.ReplicaOsdFor(fnso, fno);
  std::vector<OsdClient*> targets;
  for (OsdClient* osd : osds) {
    if ((osd->osd_id() == replica_osd) == (flag == CopyFlag::kReplica)) targets.push_back(osd);
  }
  return targets;
}

Result<wire::DeleteResponse> ClusterClient::DeleteCopy(
    const Oid& oid, std::optional<uint64_t> expected_version, std::optional<uint64_t> set_version,
    bool record_repair, std::optional<uint64_t> version_floor, bool other_recovering) {
  wire::DeleteRequest r;
  r.set_epoch(map().epoch);
  *r.mutable_oid() = ToWire(oid);
  if (expected_version) r.set_expected_version(*expected_version);
  if (set_version) r.set_set_version(*set_version);
  r.set_record_repair(record_repair);
  r.set_other_recovering(record_repair && other_recovering);
  if (NeedsVersionFloor(oid)) r.set_min_version(version_floor.value_or(VersionFloor()));
  return SendForCopy(oid, std::move(r), &OsdClient::Delete);
}

Result<bool> ClusterClient::Delete(const Oid& oid, std::optional<uint64_t> expected_version) {
  Result<wire::DeleteResponse> response = DeleteCopy(oid, expected_version, std::nullopt);
  if (!response.ok()) return response.status();
  return response->existed();
}

Result<wire::ObjectMeta> ClusterClient::Stat(const Oid& oid) {
  wire::StatRequest r;
  r.set_epoch(map().epoch);
  *r.mutable_oid() = ToWire(oid);
  Result<wire::StatResponse> response = SendForCopy(oid, std::move(r), &OsdClient::Stat);
  if (!response.ok()) return response.status();
  return response->meta();
}

}  // namespace orthofs
