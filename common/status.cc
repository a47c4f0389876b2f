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

}  // namespace

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
