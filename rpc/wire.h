// Conversions between common/ types and the wire (proto) types, and between Status and
// grpc::Status. The one place both sides of every RPC translate through.
#pragma once

#include <grpcpp/grpcpp.h>

#include <string>

#include "common/oid.h"
#include "common/status.h"
#include "orthofs.pb.h"

namespace orthofs {

wire::Oid ToWire(const Oid& oid);
// kInvalidArgument for an unknown type or flag.
Result<Oid> FromWire(const wire::Oid& oid);

// The details string carries WireCode (code and reason), so the peer recovers both exactly.
grpc::Status ToGrpc(const Status& status);
// `peer` names the other side in messages ("OSD 3 (127.0.0.1:7003)"). A refusal by gRPC
// itself (no details) gets the nearest code, and a reason where the receiver decides by it:
// UNIMPLEMENTED is kNotImplemented, RESOURCE_EXHAUSTED kOverloaded or kTooLarge.
Status FromGrpc(const grpc::Status& status, const std::string& peer);

// One result of a batched call (WriteManyResult, ReadManyResult): a refused write or read
// carries its code (WireCode) and message instead of a response.
template <typename ManyResult>
void SetRefusal(const Status& status, ManyResult* result) {
  result->set_error_code(WireCode(status));
  result->set_error_message(status.message());
}
// The refusal a result carries (Ok if none); `peer` names the OSD in the message.
template <typename ManyResult>
Status RefusalOf(const ManyResult& result, const std::string& peer) {
  if (result.error_code().empty()) return Status::Ok();
  return StatusFromWireCode(result.error_code(), peer + ": " + result.error_message());
}

}  // namespace orthofs
