#include "common/status.h"

#include <array>

namespace orthofs {
namespace {

struct CodeName {
  StatusCode code;
  std::string_view name;
};

constexpr std::array kCodeNames = {
    CodeName{StatusCode::kOk, "OK"},
    CodeName{StatusCode::kNotFound, "NOT_FOUND"},
    CodeName{StatusCode::kInvalidArgument, "INVALID_ARGUMENT"},
    CodeName{StatusCode::kWrongOsd, "WRONG_OSD"},
    CodeName{StatusCode::kStaleEpoch, "STALE_EPOCH"},
    CodeName{StatusCode::kVersionMismatch, "VERSION_MISMATCH"},
    CodeName{StatusCode::kAlreadyExists, "ALREADY_EXISTS"},
    CodeName{StatusCode::kNoSpace, "NO_SPACE"},
    CodeName{StatusCode::kIoError, "IO_ERROR"},
    CodeName{StatusCode::kCorruption, "CORRUPTION"},
    CodeName{StatusCode::kUnavailable, "UNAVAILABLE"},
    CodeName{StatusCode::kDeadlineExceeded, "DEADLINE_EXCEEDED"},
    CodeName{StatusCode::kInternal, "INTERNAL"},
    CodeName{StatusCode::kNotADirectory, "NOT_A_DIRECTORY"},
    CodeName{StatusCode::kIsADirectory, "IS_A_DIRECTORY"},
    CodeName{StatusCode::kNotEmpty, "NOT_EMPTY"},
    CodeName{StatusCode::kNameTooLong, "NAME_TOO_LONG"},
    CodeName{StatusCode::kPermissionDenied, "PERMISSION_DENIED"},
    CodeName{StatusCode::kNoAttribute, "NO_ATTRIBUTE"},
    CodeName{StatusCode::kTooBig, "TOO_BIG"},
    CodeName{StatusCode::kBusy, "BUSY"},
    CodeName{StatusCode::kStale, "STALE"},
};

struct ReasonName {
  StatusReason reason;
  std::string_view name;
};

// Only the reasons one side sends the other; the rest are the receiver's own.
constexpr std::array kWireReasonNames = {
    ReasonName{StatusReason::kRecovering, "RECOVERING"},
    ReasonName{StatusReason::kPeerRecovering, "PEER_RECOVERING"},
    ReasonName{StatusReason::kOriginalAnswers, "ORIGINAL_ANSWERS"},
};

constexpr std::array kLocalReasonNames = {
    ReasonName{StatusReason::kNotSent, "NOT_SENT"},
    ReasonName{StatusReason::kNotImplemented, "NOT_IMPLEMENTED"},
    ReasonName{StatusReason::kTooLarge, "TOO_LARGE"},
    ReasonName{StatusReason::kOverloaded, "OVERLOADED"},
};

}  // namespace

std::string_view StatusReasonName(StatusReason reason) {
  for (const auto& rn : kWireReasonNames) {
    if (rn.reason == reason) return rn.name;
  }
  for (const auto& rn : kLocalReasonNames) {
    if (rn.reason == reason) return rn.name;
  }
  return "";
}

std::string WireCode(const Status& status) {
  std::string code(StatusCodeName(status.code()));
  for (const auto& rn : kWireReasonNames) {
    if (rn.reason == status.reason()) {
      code += ':';
      code += rn.name;
    }
  }
  return code;
}

Status StatusFromWireCode(std::string_view wire_code, std::string message) {
  const size_t colon = wire_code.find(':');
  const StatusCode code = StatusCodeFromName(wire_code.substr(0, colon));
  StatusReason reason = StatusReason::kNone;
  if (colon != std::string_view::npos) {
    const std::string_view name = wire_code.substr(colon + 1);
    for (const auto& rn : kWireReasonNames) {
      if (rn.name == name) reason = rn.reason;
    }
  }
  return Status(code, std::move(message), reason);
}

Status Status::WithContext(std::string_view context) const {
  return Status(code_, std::string(context) + message_, reason_);
}

std::string_view StatusCodeName(StatusCode code) {
  for (const auto& cn : kCodeNames) {
    if (cn.code == code) return cn.name;
  }
  return "INTERNAL";
}

StatusCode StatusCodeFromName(std::string_view name) {
  for (const auto& cn : kCodeNames) {
    if (cn.name == name) return cn.code;
  }
  return StatusCode::kInternal;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string s(StatusCodeName(code_));
  if (!message_.empty()) {
    s += ": ";
    s += message_;
  }
  return s;
}

}  // namespace orthofs
