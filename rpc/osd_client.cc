#include "rpc/osd_client.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <deque>
#include <optional>
#include <thread>

#include "common/limits.h"
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
  {
    std::unique_lock lock(silence_mu_);
    if (silence_ping_ != nullptr) silence_ping_->TryCancel();
    silence_ping_done_.wait(lock, [this] { return !silence_ping_in_flight_; });
  }
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

struct OsdClient::SilencePing {
  grpc::ClientContext context;
  wire::HealthRequest request;
  wire::HealthResponse response;
  CallWatch::Clock::time_point sent;
  CallWatch::Clock::duration silence{};  // how long the OSD had been silent when pinged
};

void OsdClient::WatchSilence() {
  if (!calls_.Silent(CallWatch::Clock::now())) return;
  if (health_ != nullptr && health_->IsDown(osd_id_)) {
    // Believed down, yet sent (metadata's original first; both copies down): none waits on
    // it longer than the silence.
    if (const int failed = calls_.CancelWaiting()) calls_failed_silent_ += failed;
    return;
  }
  PingForSilence();
}

void OsdClient::PingForSilence() {
  auto* ping = new SilencePing;
  {
    std::lock_guard lock(silence_mu_);
    if (silence_ping_in_flight_) {
      delete ping;
      return;
    }
    silence_ping_in_flight_ = true;
    silence_ping_ = &ping->context;
  }
  ping->sent = CallWatch::Clock::now();
  ping->silence = calls_.OldestWait(ping->sent);
  ping->context.set_deadline(std::chrono::system_clock::now() + kSilencePingDeadline);
  ping->context.set_wait_for_ready(false);
  stub_->async()->Health(&ping->context, &ping->request, &ping->response,
                         [this, ping](grpc::Status status) { SilencePingFinished(ping, status); });
}

void OsdClient::SilencePingFinished(SilencePing* ping, const grpc::Status& status) {
  {
    std::lock_guard lock(silence_mu_);
    silence_ping_ = nullptr;
  }
  const auto now = CallWatch::Clock::now();
  const bool cancelled = status.error_code() == grpc::StatusCode::CANCELLED;
  if (AnsweredByOsd(status)) {
    calls_.RecordAnswer(ping->sent, now);  // slow, not hung: silent no more
  } else if (!cancelled && health_ != nullptr && calls_.Silent(now)) {
    ++silences_;
    ObserveFailure(
        "no answer for " +
            std::to_string(
                std::chrono::duration_cast<std::chrono::milliseconds>(ping->silence).count() +
                kSilencePingDeadline.count()) +
            " ms, nor to a ping",
        OsdHealth::Cause::kTransport);
    calls_failed_silent_ += calls_.CancelWaiting();
  }
  delete ping;
  std::lock_guard lock(silence_mu_);
  silence_ping_in_flight_ = false;
  silence_ping_done_.notify_all();
}

Status OsdClient::SilentFailure() const {
  return Status(StatusCode::kDeadlineExceeded,
                name_ + ": no answer: the OSD went silent (" +
                    std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                       calls_.SilenceThreshold())
                                       .count()) +
                    " ms without an answer), so the call was given up");
}

bool OsdClient::AnsweredByOsd(const grpc::Status& status) {
  if (status.ok() || !status.error_details().empty()) return true;
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
    case grpc::StatusCode::CANCELLED:
    case grpc::StatusCode::UNKNOWN:
      return false;
    default:
      return true;  // gRPC on the OSD refused it (overloaded, unknown call): alive
  }
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
  const uint64_t ticket = calls_.Begin(&context);
  grpc::Status status = (stub_.get()->*method)(&context, request, &response);
  const bool silenced = calls_.End(ticket, AnsweredByOsd(status));
  if (canceller != nullptr) canceller->Remove(&context);
  if (silenced && !status.ok()) return SilentFailure();
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

const char* OsdClient::BatchedCallName(BatchedCall call) {
  switch (call) {
    case BatchedCall::kReadMany:
      return "ReadMany";
    case BatchedCall::kWriteMany:
      return "WriteMany";
    case BatchedCall::kDeleteMany:
      return "DeleteMany";
  }
  return "?";
}

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
    const uint64_t ticket = calls_.Begin(&call->context);
    start(&call->context, call->request.get(), &call->response,
          [this, call, finish, batched, ticket](grpc::Status status) {
            const bool silenced = calls_.End(ticket, AnsweredByOsd(status));
            if (options_.canceller != nullptr) options_.canceller->Remove(&call->context);
            if (silenced && !status.ok()) return finish(SilentFailure());
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

void OsdClient::DeleteAsync(std::shared_ptr<const wire::DeleteRequest> request,
                            std::function<void(Result<wire::DeleteResponse>)> done) {
  CallAsync<wire::DeleteRequest, wire::DeleteResponse>(
      [this](auto* context, auto* req, auto* resp, auto on_done) {
        stub_->async()->Delete(context, req, resp, std::move(on_done));
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

void OsdClient::DeleteManyAsync(std::shared_ptr<const wire::DeleteManyRequest> request,
                                std::function<void(Result<wire::DeleteManyResponse>)> done) {
  CallAsync<wire::DeleteManyRequest, wire::DeleteManyResponse>(
      [this](auto* context, auto* req, auto* resp, auto on_done) {
        stub_->async()->DeleteMany(context, req, resp, std::move(on_done));
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

}  // namespace orthofs
