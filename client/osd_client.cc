#include "client/osd_client.h"

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
Result<wire::HealthResponse> OsdClient::Health(const wire::HealthRequest& r) {
  return Call<wire::HealthRequest, wire::HealthResponse>(&wire::Osd::Stub::Health, r);
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
  r.set_offset(offset);
  r.set_length(length);
  return Osd(placement_.OsdFor(oid))->Read(r);
}

Result<wire::ObjectMeta> ClusterClient::Write(const Oid& oid, std::string_view data,
                                              const ObjectWrite& how) {
  wire::WriteRequest r;
  r.set_epoch(map().epoch);
  *r.mutable_oid() = ToWire(oid);
  r.set_offset(how.offset);
  r.set_data(std::string(data));
  r.set_replace(how.replace);
  if (how.expected_version) r.set_expected_version(*how.expected_version);
  r.set_sync(how.sync);
  Result<wire::WriteResponse> response = Osd(placement_.OsdFor(oid))->Write(r);
  if (!response.ok()) return response.status();
  return response->meta();
}

Result<bool> ClusterClient::Delete(const Oid& oid, std::optional<uint64_t> expected_version) {
  wire::DeleteRequest r;
  r.set_epoch(map().epoch);
  *r.mutable_oid() = ToWire(oid);
  if (expected_version) r.set_expected_version(*expected_version);
  Result<wire::DeleteResponse> response = Osd(placement_.OsdFor(oid))->Delete(r);
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
