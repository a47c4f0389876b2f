#include "rpc/wire.h"

namespace orthofs {

wire::Oid ToWire(const Oid& oid) {
  wire::Oid w;
  w.set_fnso(oid.fnso);
  w.set_fno(oid.fno);
  w.set_offset(oid.offset);
  w.set_type(static_cast<wire::ObjectType>(oid.type));
  w.set_flag(static_cast<wire::CopyFlag>(oid.flag));
  return w;
}

Result<Oid> FromWire(const wire::Oid& w) {
  if (!IsValidObjectType(static_cast<uint32_t>(w.type()))) {
    return Status::InvalidArgument("OID has invalid object type " + std::to_string(w.type()));
  }
  if (w.flag() != wire::ORIGINAL && w.flag() != wire::REPLICA) {
    return Status::InvalidArgument("OID has invalid copy flag " + std::to_string(w.flag()));
  }
  Oid oid;
  oid.fnso = w.fnso();
  oid.fno = w.fno();
  oid.offset = w.offset();
  oid.type = static_cast<ObjectType>(w.type());
  oid.flag = static_cast<CopyFlag>(w.flag());
  return oid;
}

namespace {

grpc::StatusCode GrpcCodeFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return grpc::StatusCode::OK;
    case StatusCode::kNotFound:
      return grpc::StatusCode::NOT_FOUND;
    case StatusCode::kInvalidArgument:
      return grpc::StatusCode::INVALID_ARGUMENT;
    case StatusCode::kWrongOsd:
    case StatusCode::kStaleEpoch:
      return grpc::StatusCode::FAILED_PRECONDITION;
    case StatusCode::kVersionMismatch:
      return grpc::StatusCode::ABORTED;
    case StatusCode::kAlreadyExists:
      return grpc::StatusCode::ALREADY_EXISTS;
    case StatusCode::kNoSpace:
      return grpc::StatusCode::RESOURCE_EXHAUSTED;
    case StatusCode::kCorruption:
      return grpc::StatusCode::DATA_LOSS;
    case StatusCode::kUnavailable:
      return grpc::StatusCode::UNAVAILABLE;
    case StatusCode::kDeadlineExceeded:
      return grpc::StatusCode::DEADLINE_EXCEEDED;
    case StatusCode::kNotADirectory:
    case StatusCode::kIsADirectory:
    case StatusCode::kNotEmpty:
    case StatusCode::kNameTooLong:
      return grpc::StatusCode::FAILED_PRECONDITION;
    case StatusCode::kNoAttribute:
    case StatusCode::kTooBig:
    case StatusCode::kBusy:
    case StatusCode::kStale:
      return grpc::StatusCode::FAILED_PRECONDITION;
    case StatusCode::kPermissionDenied:
      return grpc::StatusCode::PERMISSION_DENIED;
    case StatusCode::kIoError:
    case StatusCode::kInternal:
      return grpc::StatusCode::INTERNAL;
  }
  return grpc::StatusCode::INTERNAL;
}

}  // namespace

grpc::Status ToGrpc(const Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(GrpcCodeFor(status.code()), status.message(), WireCode(status));
}

Status FromGrpc(const grpc::Status& status, const std::string& peer) {
  if (status.ok()) return Status::Ok();
  std::string message = peer + ": " + status.error_message();
  if (!status.error_details().empty()) {
    Status decoded = StatusFromWireCode(status.error_details(), message);
    if (!decoded.ok()) return decoded;
  }
  // No OrthoFS code: the transport or gRPC itself refused.
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
      return Status::Unavailable(message);
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return Status(StatusCode::kDeadlineExceeded, message);
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      // gRPC itself says both "message too big" (the request is wrong) and "out of threads"
      // (the OSD is busy; try again) with this code and no details; only its own message tells
      // them apart, so this is the one place that reads it.
      if (status.error_message().find("larger than max") != std::string::npos) {
        return Status(StatusCode::kInvalidArgument, message + " (request too large)",
                      StatusReason::kTooLarge);
      }
      return Status(StatusCode::kUnavailable, message + " (OSD overloaded)",
                    StatusReason::kOverloaded);
    case grpc::StatusCode::INVALID_ARGUMENT:
      return Status::InvalidArgument(message);
    case grpc::StatusCode::UNIMPLEMENTED:
      return Status(StatusCode::kInternal, message + " (not implemented by this OSD)",
                    StatusReason::kNotImplemented);
    default:
      return Status::Internal(message + " (gRPC code " +
                              std::to_string(static_cast<int>(status.error_code())) + ")");
  }
}

}  // namespace orthofs
