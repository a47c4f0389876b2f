#include "client/osd_client.h"

#include <algorithm>
#include <thread>

#include "client/wire.h"

namespace orthofs {

grpc::ChannelArguments OrthoChannelArguments() {
  grpc::ChannelArguments args;
  // The largest object plus framing; anything bigger is a malformed request.
  args.SetMaxReceiveMessageSize(kMaxObjectSize + (4 << 20));
  args.SetMaxSendMessageSize(kMaxObjectSize + (4 << 20));
  // Reconnect quickly to an OSD that comes back.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  return args;
}

OsdClient::OsdClient(const OsdInfo& osd, const RpcOptions& options)
    : osd_id_(osd.id),
      address_(osd.address),
      name_("OSD " + std::to_string(osd.id) + " (" + osd.address + ")"),
      options_(options),
      channel_(grpc::CreateCustomChannel(osd.address, grpc::InsecureChannelCredentials(),
                                         OrthoChannelArguments())),
      stub_(wire::Osd::NewStub(channel_)) {}

template <typename Request, typename Response, typename Method>
Result<Response> OsdClient::Call(Method method, const Request& request) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + options_.deadline);
  Response response;
  grpc::Status status = (stub_.get()->*method)(&context, request, &response);
  if (!status.ok()) return FromGrpc(status, name_);
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
Result<wire::StatsResponse> OsdClient::Stats(const wire::StatsRequest& r) {
  return Call<wire::StatsRequest, wire::StatsResponse>(&wire::Osd::Stub::Stats, r);
}
Result<wire::SyncResponse> OsdClient::Sync(const wire::SyncRequest& r) {
  return Call<wire::SyncRequest, wire::SyncResponse>(&wire::Osd::Stub::Sync, r);
}
Result<wire::HealthResponse> OsdClient::Health(const wire::HealthRequest& r) {
  return Call<wire::HealthRequest, wire::HealthResponse>(&wire::Osd::Stub::Health, r);
}

template <typename Request, typename Response, typename Start>
void OsdClient::CallAsync(Start start, Request request,
                          std::function<void(Result<Response>)> done) {
  // Everything the call needs lives until its callback.
  struct Call {
    grpc::ClientContext context;
    Request request;
    Response response;
    std::function<void(Result<Response>)> done;
  };
  auto* call = new Call;
  call->request = std::move(request);
  call->done = std::move(done);
  StartOrQueue([this, call, start] {
    // The deadline counts from the start on the wire, not from the wait in the queue.
    call->context.set_deadline(std::chrono::system_clock::now() + options_.deadline);
    start(&call->context, &call->request, &call->response, [this, call](grpc::Status status) {
      if (status.ok()) {
        call->done(std::move(call->response));
      } else {
        call->done(FromGrpc(status, name_));
      }
      delete call;
      CallFinished();
    });
  });
}

void OsdClient::StartOrQueue(std::function<void()> start) {
  {
    std::lock_guard lock(queue_mu_);
    if (in_flight_ >= kMaxAsyncInFlight) {
      waiting_.push_back(std::move(start));
      return;
    }
    ++in_flight_;
  }
  start();
}

void OsdClient::CallFinished() {
  std::function<void()> next;
  {
    std::lock_guard lock(queue_mu_);
    if (waiting_.empty()) {
      --in_flight_;
      return;
    }
    next = std::move(waiting_.front());  // the slot passes to the next call
    waiting_.pop_front();
  }
  next();
}

void OsdClient::ReadAsync(wire::ReadRequest request,
                          std::function<void(Result<wire::ReadResponse>)> done) {
  CallAsync<wire::ReadRequest, wire::ReadResponse>(
      [this](auto* context, auto* req, auto* resp, auto on_done) {
        stub_->async()->Read(context, req, resp, std::move(on_done));
      },
      std::move(request), std::move(done));
}

void OsdClient::WriteAsync(wire::WriteRequest request,
                           std::function<void(Result<wire::WriteResponse>)> done) {
  CallAsync<wire::WriteRequest, wire::WriteResponse>(
      [this](auto* context, auto* req, auto* resp, auto on_done) {
        stub_->async()->Write(context, req, resp, std::move(on_done));
      },
      std::move(request), std::move(done));
}

void OsdClient::PrefetchNotifyAsync(
    wire::PrefetchNotifyRequest request,
    std::function<void(Result<wire::PrefetchNotifyResponse>)> done) {
  CallAsync<wire::PrefetchNotifyRequest, wire::PrefetchNotifyResponse>(
      [this](auto* context, auto* req, auto* resp, auto on_done) {
        stub_->async()->PrefetchNotify(context, req, resp, std::move(on_done));
      },
      std::move(request), std::move(done));
}

void OsdClient::PrefetchAsync(wire::PrefetchRequest request,
                              std::function<void(Result<wire::PrefetchResponse>)> done) {
  CallAsync<wire::PrefetchRequest, wire::PrefetchResponse>(
      [this](auto* context, auto* req, auto* resp, auto on_done) {
        stub_->async()->Prefetch(context, req, resp, std::move(on_done));
      },
      std::move(request), std::move(done));
}

std::unique_ptr<grpc::ClientReader<wire::WindowUpdate>> OsdClient::Subscribe(
    grpc::ClientContext* context, const wire::SubscribeRequest& request) {
  return stub_->Subscribe(context, request);
}

ClusterClient::ClusterClient(const ClusterMap& map, const RpcOptions& options) : placement_(map) {
  for (const auto& osd : map.osds) osds_.push_back(std::make_unique<OsdClient>(osd, options));
}

OsdClient* ClusterClient::Osd(uint32_t osd_id) {
  for (auto& c : osds_) {
    if (c->osd_id() == osd_id) return c.get();
  }
  return nullptr;
}

Result<wire::ReadResponse> ClusterClient::Read(const Oid& oid, uint64_t offset, uint64_t length) {
  wire::ReadRequest r;
  r.set_epoch(map().epoch);
  *r.mutable_oid() = ToWire(oid);
  if (!client_id_.empty()) r.set_client_id(client_id_);
  r.set_offset(offset);
  r.set_length(length);
  return Osd(placement_.OsdFor(oid))->Read(r);
}

wire::WriteRequest ClusterClient::MakeWrite(const Oid& oid, std::string_view data,
                                            const ObjectWrite& how) const {
  wire::WriteRequest r;
  r.set_epoch(map().epoch);
  *r.mutable_oid() = ToWire(oid);
  r.set_offset(how.offset);
  r.set_data(std::string(data));
  r.set_replace(how.replace);
  if (how.expected_version) r.set_expected_version(*how.expected_version);
  r.set_sync(how.sync);
  return r;
}

Result<wire::ObjectMeta> ClusterClient::Write(const Oid& oid, std::string_view data,
                                              const ObjectWrite& how) {
  Result<wire::WriteResponse> response =
      Osd(placement_.OsdFor(oid))->Write(MakeWrite(oid, data, how));
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
  pending->Add(2);
  for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
    const Oid copy = original.WithFlag(flag);
    Osd(placement_.OsdFor(copy))
        ->WriteAsync(MakeWrite(copy, data, how),
                     [pending](Result<wire::WriteResponse> r) { pending->Done(r.status()); });
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
  Osd(placement_.OsdFor(oid))->ReadAsync(std::move(r), std::move(done));
}

void ClusterClient::WriteAsync(const Oid& oid, std::string_view data, const ObjectWrite& how,
                               std::function<void(Status)> done) {
  Osd(placement_.OsdFor(oid))
      ->WriteAsync(MakeWrite(oid, data, how),
                   [done = std::move(done)](Result<wire::WriteResponse> r) { done(r.status()); });
}

Result<wire::ObjectMeta> ClusterClient::WriteOriginalThenReplica(
    const Oid& original, std::string_view data, std::optional<uint64_t> expected_version) {
  ObjectWrite how;
  how.replace = true;
  how.expected_version = expected_version;
  Result<wire::ObjectMeta> meta = Write(original.WithFlag(CopyFlag::kOriginal), data, how);
  if (!meta.ok()) return meta;
  wire::WriteRequest r = MakeWrite(original.WithFlag(CopyFlag::kReplica), data, ObjectWrite{});
  r.set_replace(true);
  r.set_set_version(meta->version());
  Result<wire::WriteResponse> replica =
      Osd(placement_.OsdFor(original.WithFlag(CopyFlag::kReplica)))->Write(r);
  if (!replica.ok()) return replica.status();
  return meta;
}

Status ClusterClient::SyncAll() {
  std::vector<std::thread> threads;
  std::vector<Status> results(osds_.size());
  for (size_t i = 0; i < osds_.size(); ++i) {
    threads.emplace_back([&, i] {
      wire::SyncRequest r;
      r.set_epoch(map().epoch);
      results[i] = osds_[i]->Sync(r).status();
    });
  }
  for (auto& t : threads) t.join();
  for (const Status& st : results) ORTHOFS_RETURN_IF_ERROR(st);
  return Status::Ok();
}

Status ClusterClient::DeleteBothCopies(const Oid& original,
                                       std::optional<uint64_t> expected_version) {
  Result<wire::DeleteResponse> gone =
      DeleteCopy(original.WithFlag(CopyFlag::kOriginal), expected_version, std::nullopt);
  if (!gone.ok()) return gone.status();
  // A metadata replica gets the original's tombstone version, so a late replica write from
  // another client (older by version) cannot bring the deleted object back.
  std::optional<uint64_t> tombstone;
  if (gone->version() > 0) tombstone = gone->version();
  return DeleteCopy(original.WithFlag(CopyFlag::kReplica), std::nullopt, tombstone).status();
}

Result<std::vector<std::pair<wire::ObjectMeta, std::string>>> ClusterClient::ListFileObjects(
    CopyFlag flag, uint32_t fnso, uint64_t fno, ObjectType type, uint32_t limit, bool with_data) {
  // Replicas of a file all live on one OSD; originals are spread over the others.
  std::vector<OsdClient*> targets;
  if (flag == CopyFlag::kReplica) {
    targets.push_back(Osd(placement_.ReplicaOsdFor(fnso, fno)));
  } else {
    for (auto& osd : osds_) {
      if (osd->osd_id() != placement_.ReplicaOsdFor(fnso, fno)) targets.push_back(osd.get());
    }
  }
  std::vector<std::pair<wire::ObjectMeta, std::string>> out;
  for (OsdClient* osd : targets) {
    std::string token;
    do {
      wire::ListRequest request;
      request.set_epoch(map().epoch);
      request.set_flag(static_cast<wire::CopyFlag>(flag));
      request.set_fnso(fnso);
      request.set_fno(fno);
      request.set_type(static_cast<wire::ObjectType>(type));
      request.set_with_data(with_data);
      request.set_page_token(token);
      if (limit != 0) request.set_limit(limit);
      Result<wire::ListResponse> page = osd->List(request);
      if (!page.ok()) return page.status();
      for (int i = 0; i < page->objects_size(); ++i) {
        out.emplace_back(page->objects(i), i < page->data_size() ? page->data(i) : "");
      }
      token = page->next_page_token();
      if (limit != 0 && out.size() >= limit) return out;
    } while (!token.empty());
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.first.oid().offset() < b.first.oid().offset();
  });
  return out;
}

Result<wire::DeleteResponse> ClusterClient::DeleteCopy(const Oid& oid,
                                                       std::optional<uint64_t> expected_version,
                                                       std::optional<uint64_t> set_version) {
  wire::DeleteRequest r;
  r.set_epoch(map().epoch);
  *r.mutable_oid() = ToWire(oid);
  if (expected_version) r.set_expected_version(*expected_version);
  if (set_version) r.set_set_version(*set_version);
  return Osd(placement_.OsdFor(oid))->Delete(r);
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
  Result<wire::StatResponse> response = Osd(placement_.OsdFor(oid))->Stat(r);
  if (!response.ok()) return response.status();
  return response->meta();
}

}  // namespace orthofs
