// A connection to one OSD (OsdClient): every call of the wire contract, synchronous or
// asynchronous, with deadlines, a bounded number in flight, and the OSD's health observed from
// every outcome. ClusterClient (client/cluster_client.h) routes over these by placement.
#pragma once

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/cluster_map.h"
#include "common/osd_health.h"
#include "common/placement.h"
#include "common/status.h"
#include "orthofs.grpc.pb.h"
#include "rpc/call_canceller.h"
#include "rpc/call_watch.h"
#include "rpc/tls.h"
#include "rpc/write_many_encoding.h"

namespace orthofs {

struct RpcOptions {
  std::chrono::milliseconds deadline{10000};  // every RPC has one; nothing waits forever
  // Wait (within the deadline) for an OSD that is reconnecting instead of failing at once:
  // for background work that must reach an OSD just back (repair), not for the data path.
  bool wait_for_ready = false;
  // Mutual TLS with this identity; plaintext when null (--insecure). An OSD's server must
  // present the certificate name OsdCertificateName(id).
  std::shared_ptr<const TlsIdentity> tls;
  // Calls register here while they run and fail at once (UNAVAILABLE) once it has cancelled
  // them; null: not cancellable. Shared by every client of one owner (an OSD's peers).
  std::shared_ptr<CallCanceller> canceller;
  // How long an OSD that refused a batched call as unknown (an older version) gets single
  // calls instead before it is asked again (OsdClient::MayCall).
  std::chrono::milliseconds old_osd_recheck{60000};
};

// Channel arguments every OrthoFS channel uses (message sizes fit the largest object).
grpc::ChannelArguments OrthoChannelArguments();

// Socket read sizes for both ends of a connection (channel arguments, name and value): objects
// are 128 KiB, and gRPC's first reads of 8 KiB made a TLS connection decrypt and hand over an
// object in many small pieces.
std::vector<std::pair<std::string, int>> SocketReadArguments();

class OsdClient {
 public:
  OsdClient(const OsdInfo& osd, const RpcOptions& options);
  ~OsdClient();  // cancels its probe and its silence ping

  // The OSD is known to be up again (it called us): the channel reconnects at once instead of
  // at the end of its reconnect backoff (up to seconds after a restart).
  void ReconnectNow();

  Result<wire::ReadResponse> Read(const wire::ReadRequest& request);
  Result<wire::WriteResponse> Write(const wire::WriteRequest& request);
  Result<wire::DeleteResponse> Delete(const wire::DeleteRequest& request);
  Result<wire::StatResponse> Stat(const wire::StatRequest& request);
  Result<wire::TransactResponse> Transact(const wire::TransactRequest& request);
  Result<wire::ListResponse> List(const wire::ListRequest& request);
  // Every page of the listing `request` starts (its page token is set here), each to `take`.
  Status ListEveryPage(wire::ListRequest request,
                       const std::function<void(const wire::ListResponse&)>& take);
  Result<wire::StatsResponse> Stats(const wire::StatsRequest& request);
  Result<wire::SyncResponse> Sync(const wire::SyncRequest& request);
  Result<wire::HealthResponse> Health(const wire::HealthRequest& request);
  // Health within `deadline`, failing at once when the OSD refuses connections (no waiting
  // for a channel to become ready): is it there at all, now?
  Result<wire::HealthResponse> Ping(std::chrono::milliseconds deadline);
  Result<wire::RepairResponse> Repair(const wire::RepairRequest& request);
  Result<wire::LogLevelResponse> SetLogLevel(const wire::LogLevelRequest& request);
  Result<wire::DropCachesResponse> DropCaches(const wire::DropCachesRequest& request);
  Result<wire::PrefetchNotifyResponse> PrefetchNotify(const wire::PrefetchNotifyRequest& request);
  Result<wire::MapResponse> GetMap(const wire::GetMapRequest& request);
  Result<wire::SetMapResponse> SetMap(const wire::SetMapRequest& request);
  Result<wire::FetchResponse> Fetch(const wire::FetchRequest& request);
  Result<wire::DiscardResponse> Discard(const wire::DiscardRequest& request);
  Result<wire::MigrateResponse> Migrate(const wire::MigrateRequest& request);

  // Start a call and return at once; `done` runs on a gRPC thread when it completes. Requests
  // are shared, not copied: a write carries a whole object, and its sender keeps it for a
  // resend after a map change.
  void ReadAsync(std::shared_ptr<const wire::ReadRequest> request,
                 std::function<void(Result<wire::ReadResponse>)> done);
  void WriteAsync(std::shared_ptr<const wire::WriteRequest> request,
                  std::function<void(Result<wire::WriteResponse>)> done);
  void WriteManyAsync(std::shared_ptr<const wire::WriteManyRequest> request,
                      std::function<void(Result<wire::WriteManyResponse>)> done);
  // The same call with the request already in its wire form (EncodeWriteMany).
  void WriteManyEncodedAsync(std::shared_ptr<const grpc::ByteBuffer> request,
                             std::function<void(Result<wire::WriteManyResponse>)> done);
  void ReadManyAsync(std::shared_ptr<const wire::ReadManyRequest> request,
                     std::function<void(Result<wire::ReadManyResponse>)> done);
  void DeleteAsync(std::shared_ptr<const wire::DeleteRequest> request,
                   std::function<void(Result<wire::DeleteResponse>)> done);
  void DeleteManyAsync(std::shared_ptr<const wire::DeleteManyRequest> request,
                       std::function<void(Result<wire::DeleteManyResponse>)> done);
  void ListAsync(std::shared_ptr<const wire::ListRequest> request,
                 std::function<void(Result<wire::ListResponse>)> done);
  void StatsAsync(std::shared_ptr<const wire::StatsRequest> request,
                  std::function<void(Result<wire::StatsResponse>)> done);
  // OSD to OSD prefetch traffic (fire and forget for the sender; `done` reports).
  void PrefetchNotifyAsync(wire::PrefetchNotifyRequest request,
                           std::function<void(Result<wire::PrefetchNotifyResponse>)> done);
  void PrefetchAsync(wire::PrefetchRequest request,
                     std::function<void(Result<wire::PrefetchResponse>)> done);
  // The stream of COR window changes; the caller owns the context (and cancels it to stop).
  std::unique_ptr<grpc::ClientReader<wire::WindowUpdate>> Subscribe(
      grpc::ClientContext* context, const wire::SubscribeRequest& request);

  // Every call's outcome is reported here (ClusterClient's view of which OSDs are down).
  void set_health(OsdHealth* health) { health_ = health; }
  // Calls that failed at the transport, the times this OSD was marked down, and its failed
  // probes (metrics).
  uint64_t transport_failures() const { return transport_failures_.load(); }
  uint64_t marked_down() const { return marked_down_.load(); }
  uint64_t failed_probes() const { return failed_probes_.load(); }
  // Down after a transport failure until a call to it succeeds: the other copy serves
  // instead. Asking sends the probe that brings it back when one is due (OsdHealth): a Health
  // call with kProbeDeadline, so that an OSD that hangs holds no request for its deadline.
  bool down();
  static constexpr std::chrono::milliseconds kProbeDeadline{2000};

  // Finds an OSD that has stopped answering before any call's deadline does (a hung process,
  // a paused VM): called every kSilenceTick by the owner's watch thread. When a call has waited
  // past the silence threshold with no answer from the OSD for as long (common/answer_watch.h:
  // 8 x its p99 latency, 0.5-1.5 s), it is pinged (kSilencePingDeadline); no answer to that
  // marks it down, and every call still waiting on it fails at once (DEADLINE_EXCEEDED), so
  // that callers take the other copy. A ping answered means slow, not hung: nothing changes.
  // Calls sent although it is believed down are failed once they wait past the threshold.
  void WatchSilence();
  static constexpr std::chrono::milliseconds kSilenceTick{50};
  static constexpr std::chrono::milliseconds kSilencePingDeadline{300};
  // After how long a read of one copy should ask the other too (3 x this OSD's p95, 20-400 ms).
  std::chrono::nanoseconds HedgeDelay() const { return calls_.HedgeDelay(); }
  // Times this OSD was marked down for its silence, and calls failed for it.
  uint64_t silences() const { return silences_.load(); }
  uint64_t calls_failed_silent() const { return calls_failed_silent_.load(); }

  // The batched calls. An OSD from before one (a rolling upgrade) refuses it as UNIMPLEMENTED;
  // that is remembered for RpcOptions::old_osd_recheck, so that batches meanwhile go out as
  // single calls at once instead of each paying a refused call first. Asked again after that:
  // the OSD may have been upgraded since.
  enum class BatchedCall { kReadMany, kWriteMany, kDeleteMany };
  static const char* BatchedCallName(BatchedCall call);
  bool MayCall(BatchedCall call) const;
  void NoteUnknown(BatchedCall call);
  // A batched call that reached the OSD reports its health once, from its items (a call's
  // own success would reset the failure count that decides the next backoff): down when an
  // item was refused because the OSD itself is recovering (StatusReason::kRecovering;
  // `recovering` holds that refusal's message; a refused single Read's status marks the OSD
  // down the same way), else a success.
  void ObserveBatch(const std::optional<std::string>& recovering);

  uint32_t osd_id() const { return osd_id_; }
  const std::string& address() const { return address_; }
  // "OSD 3 (127.0.0.1:7003)", for messages.
  const std::string& name() const { return name_; }

 private:
  template <typename Request, typename Response, typename Method>
  // With `fail_fast_within`: that deadline, and no waiting for a channel to become ready.
  Result<Response> Call(Method method, const Request& request,
                        std::optional<std::chrono::milliseconds> fail_fast_within = std::nullopt);
  // `start(context, request, response, on_done)` issues the callback-API call. A batched
  // call's success is observed by ObserveBatch instead.
  template <typename Request, typename Response, typename Start>
  void CallAsync(Start start, std::shared_ptr<const Request> request,
                 std::function<void(Result<Response>)> done, bool batched = false);

  // An OSD serves a bounded number of calls at once and refuses more (RESOURCE_EXHAUSTED):
  // asynchronous calls beyond kMaxAsyncInFlight wait here, in order, for a free slot.
  static constexpr int kMaxAsyncInFlight = 32;
  // `start` sends the call, or gets the status to fail it with unsent (queued while the OSD
  // went down, or the canceller ran).
  void StartOrQueue(std::function<void(const Status* refused)> start);
  // The outcome of a call its canceller refused or cancelled.
  Status Cancelled() const;
  // A failed call's status: Cancelled() once the canceller ran, else the OSD's answer.
  Status FailureOf(const grpc::Status& status) const;
  void CallFinished();
  void Observe(const grpc::Status& status);
  void ObserveFailure(const std::string& why, OsdHealth::Cause cause);
  // A call's deadline: options_.deadline, or kProbeDeadline for an OSD believed down.
  std::chrono::milliseconds Deadline();
  struct ProbeCall;
  void Probe(uint64_t outage);
  void ProbeFinished(ProbeCall* call, const grpc::Status& status);
  // The silence watch's ping, and what its outcome decides.
  struct SilencePing;
  void PingForSilence();
  void SilencePingFinished(SilencePing* ping, const grpc::Status& status);
  // The status of a call failed because the OSD went silent.
  Status SilentFailure() const;
  // The OSD itself answered (a refusal too): not the transport, not a cancellation.
  static bool AnsweredByOsd(const grpc::Status& status);

  uint32_t osd_id_;
  std::string address_;
  std::string name_;
  RpcOptions options_;
  OsdHealth* health_ = nullptr;
  std::atomic<uint64_t> transport_failures_{0};
  std::atomic<uint64_t> marked_down_{0};
  std::atomic<uint64_t> failed_probes_{0};
  std::atomic<uint64_t> silences_{0};
  std::atomic<uint64_t> calls_failed_silent_{0};
  CallWatch calls_;
  std::mutex silence_mu_;
  std::condition_variable silence_ping_done_;
  bool silence_ping_in_flight_ = false;          // guarded by silence_mu_
  grpc::ClientContext* silence_ping_ = nullptr;  // guarded by silence_mu_: cancellable
  std::mutex probe_mu_;
  std::condition_variable probe_done_;
  bool probing_ = false;                       // guarded by probe_mu_
  grpc::ClientContext* probe_call_ = nullptr;  // guarded by probe_mu_: cancellable while set
  // Per BatchedCall: when the OSD last refused it as unknown (steady clock ticks; 0: never).
  std::atomic<int64_t> unknown_since_[3] = {0, 0, 0};
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<wire::Osd::Stub> stub_;
  // Calls whose request is sent as encoded (WriteManyEncodedAsync).
  grpc::TemplatedGenericStub<grpc::ByteBuffer, wire::WriteManyResponse> encoded_write_many_;
  std::mutex queue_mu_;
  int in_flight_ = 0;
  std::deque<std::function<void(const Status*)>> waiting_;
};

}  // namespace orthofs
