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

// The details string carries StatusCodeName, so the peer recovers the exact code.
grpc::Status ToGrpc(const Status& status);
// `peer` names the other side in messages ("OSD 3 (127.0.0.1:7003)").
Status FromGrpc(const grpc::Status& status, const std::string& peer);
// The OSD does not know the call (an older version): FromGrpc's status for UNIMPLEMENTED.
bool IsNotImplemented(const Status& status);

// One result of a batched call (WriteManyResult, ReadManyResult): a refused write or read
// carries its code (StatusCodeName) and message instead of a response.
template <typename ManyResult>
void SetRefusal(const Status& status, ManyResult* result) {
  result->set_error_code(std::string(StatusCodeName(status.code())));
  result->set_error_message(status.message());
}
// The refusal a result carries (Ok if none); `peer` names the OSD in the message.
template <typename ManyResult>
Status RefusalOf(const ManyResult& result, const std::string& peer) {
  if (result.error_code().empty()) return Status::Ok();
  return Status(StatusCodeFromName(result.error_code()), peer + ": " + result.error_message());
}

}  // namespace orthofs
