// Status and Result<T>: how errors cross module boundaries (no exceptions), after
// LevelDB/RocksDB's Status and absl::StatusOr.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace orthofs {

enum class StatusCode {
  kOk = 0,
  kNotFound,
  kInvalidArgument,
  kWrongOsd,         // the object is not placed on this OSD under the current map
  kStaleEpoch,       // the request was placed with another cluster-map epoch
  kVersionMismatch,  // a conditional operation's expected version did not hold
  kAlreadyExists,
  kNoSpace,
  kIoError,
  kCorruption,   // checksum mismatch or undecodable stored record
  kUnavailable,  // the peer could not be reached
  kDeadlineExceeded,
  kInternal,
  // File system errors (the client maps them to errno).
  kNotADirectory,
  kIsADirectory,
  kNotEmpty,
  kNameTooLong,
  kPermissionDenied,
  kNoAttribute,  // ENODATA: no such extended attribute
  kTooBig,       // E2BIG: an extended attribute value over the limit
  kBusy,         // EBUSY: another change of the object is under way
  kStale,        // ESTALE: a name no longer names the file the caller meant
};

// Why a refusal happened, where the receiver decides by it: retry, use the other copy, mark
// the OSD down. Decisions read this, never the message, which is for people. Most statuses
// carry none.
enum class StatusReason {
  kNone = 0,
  // UNAVAILABLE: the answering OSD restarted and waits for its repair records to be replayed;
  // the other copy serves meanwhile.
  kRecovering,
  // UNAVAILABLE: the other copy's OSD recovers and takes this change itself in a moment; the
  // answering OSD is well.
  kPeerRecovering,
  // BUSY: the replica's OSD reaches the original's, so a change committed on the replica alone
  // would fork the object: only the sender's connection to the original failed.
  kOriginalAnswers,
  // UNAVAILABLE (never on the wire): queued while the OSD was believed down, and never sent.
  kNotSent,
  // INTERNAL (never on the wire): the OSD does not know the call (an older version).
  kNotImplemented,
  // INVALID_ARGUMENT (never on the wire): the message is over gRPC's size limit.
  kTooLarge,
  // UNAVAILABLE (never on the wire): the OSD had no thread free for the call.
  kOverloaded,
};

// Stable upper-case name ("STALE_EPOCH"); also the code's form on the wire.
std::string_view StatusCodeName(StatusCode code);
// Inverse of StatusCodeName; unknown names map to kInternal.
StatusCode StatusCodeFromName(std::string_view name);
// "RECOVERING"; "" for kNone.
std::string_view StatusReasonName(StatusReason reason);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message, StatusReason reason = StatusReason::kNone)
      : code_(code), reason_(reason), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status InvalidArgument(std::string m) {
    return {StatusCode::kInvalidArgument, std::move(m)};
  }
  static Status WrongOsd(std::string m) { return {StatusCode::kWrongOsd, std::move(m)}; }
  static Status StaleEpoch(std::string m) { return {StatusCode::kStaleEpoch, std::move(m)}; }
  static Status VersionMismatch(std::string m) {
    return {StatusCode::kVersionMismatch, std::move(m)};
  }
  static Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
  static Status NoSpace(std::string m) { return {StatusCode::kNoSpace, std::move(m)}; }
  static Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
  static Status Corruption(std::string m) { return {StatusCode::kCorruption, std::move(m)}; }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
  static Status NotADirectory(std::string m) { return {StatusCode::kNotADirectory, std::move(m)}; }
  static Status IsADirectory(std::string m) { return {StatusCode::kIsADirectory, std::move(m)}; }
  static Status NotEmpty(std::string m) { return {StatusCode::kNotEmpty, std::move(m)}; }
  static Status Busy(std::string m) { return {StatusCode::kBusy, std::move(m)}; }
  static Status Stale(std::string m) { return {StatusCode::kStale, std::move(m)}; }
  static Status NameTooLong(std::string m) { return {StatusCode::kNameTooLong, std::move(m)}; }
  static Status PermissionDenied(std::string m) {
    return {StatusCode::kPermissionDenied, std::move(m)};
  }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  bool Is(StatusCode c) const { return code_ == c; }
  StatusReason reason() const { return reason_; }
  bool Is(StatusReason r) const { return reason_ == r; }
  // The same status, its message prefixed with `context` (code and reason kept).
  Status WithContext(std::string_view context) const;

  // "STALE_EPOCH: request epoch 3, OSD epoch 4"
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  StatusReason reason_ = StatusReason::kNone;
  std::string message_;
};

// A status's code on the wire (gRPC status details, a batched call's item): its code name, and
// after a colon its reason when it has one ("UNAVAILABLE:RECOVERING").
std::string WireCode(const Status& status);
// The status a wire code and message stand for. An unknown code is kInternal; an unknown
// reason (a later version's) is dropped, the code kept.
Status StatusFromWireCode(std::string_view wire_code, std::string message);

// A value or the Status explaining why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    assert(!status_.ok());
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & {
    assert(ok());
    return *value_;
  }
  const T& value() const& {
    assert(ok());
    return *value_;
  }
  T&& value() && {
    assert(ok());
    return std::move(*value_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace orthofs

#define ORTHOFS_RETURN_IF_ERROR(expr) \
  do {                                \
    ::orthofs::Status _st = (expr);   \
    if (!_st.ok()) return _st;        \
  } while (0)
