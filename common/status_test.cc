// Status, StatusCode names (the wire form of errors) and Result<T>.
#include "common/status.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace orthofs {
namespace {

// Every code, in enum order, with the name the wire uses for it.
const std::vector<std::pair<StatusCode, std::string>>& AllCodes() {
  static const auto* codes = new std::vector<std::pair<StatusCode, std::string>>{
      {StatusCode::kOk, "OK"},
      {StatusCode::kNotFound, "NOT_FOUND"},
      {StatusCode::kInvalidArgument, "INVALID_ARGUMENT"},
      {StatusCode::kWrongOsd, "WRONG_OSD"},
      {StatusCode::kStaleEpoch, "STALE_EPOCH"},
      {StatusCode::kVersionMismatch, "VERSION_MISMATCH"},
      {StatusCode::kAlreadyExists, "ALREADY_EXISTS"},
      {StatusCode::kNoSpace, "NO_SPACE"},
      {StatusCode::kIoError, "IO_ERROR"},
      {StatusCode::kCorruption, "CORRUPTION"},
      {StatusCode::kUnavailable, "UNAVAILABLE"},
      {StatusCode::kDeadlineExceeded, "DEADLINE_EXCEEDED"},
      {StatusCode::kInternal, "INTERNAL"},
      {StatusCode::kNotADirectory, "NOT_A_DIRECTORY"},
      {StatusCode::kIsADirectory, "IS_A_DIRECTORY"},
      {StatusCode::kNotEmpty, "NOT_EMPTY"},
      {StatusCode::kNameTooLong, "NAME_TOO_LONG"},
      {StatusCode::kPermissionDenied, "PERMISSION_DENIED"},
      {StatusCode::kNoAttribute, "NO_ATTRIBUTE"},
      {StatusCode::kTooBig, "TOO_BIG"},
      {StatusCode::kBusy, "BUSY"},
      {StatusCode::kStale, "STALE"},
  };
  return *codes;
}

TEST(StatusCodeTest, ListCoversEveryCode) {
  // The enum is dense from kOk (0) to kStale; the table above lists each once.
  ASSERT_EQ(AllCodes().size(), static_cast<size_t>(StatusCode::kStale) + 1);
  for (size_t i = 0; i < AllCodes().size(); ++i) {
    EXPECT_EQ(static_cast<size_t>(AllCodes()[i].first), i);
  }
}

TEST(StatusCodeTest, NamesAreStableAndUnique) {
  std::set<std::string> seen;
  for (const auto& [code, name] : AllCodes()) {
    EXPECT_EQ(StatusCodeName(code), name);
    EXPECT_TRUE(seen.insert(std::string(StatusCodeName(code))).second) << name;
  }
}

TEST(StatusCodeTest, NameRoundTripsForEveryCode) {
  for (const auto& [code, name] : AllCodes()) {
    EXPECT_EQ(StatusCodeFromName(StatusCodeName(code)), code) << name;
    EXPECT_EQ(StatusCodeFromName(name), code) << name;
  }
}

TEST(StatusCodeTest, UnknownNamesMapToInternal) {
  EXPECT_EQ(StatusCodeFromName(""), StatusCode::kInternal);
  EXPECT_EQ(StatusCodeFromName("NO_SUCH_CODE"), StatusCode::kInternal);
  // Names are exact, case-sensitive wire tokens.
  EXPECT_EQ(StatusCodeFromName("not_found"), StatusCode::kInternal);
  EXPECT_EQ(StatusCodeFromName("NOT_FOUND "), StatusCode::kInternal);
  EXPECT_EQ(StatusCodeFromName("ok"), StatusCode::kInternal);
}

TEST(StatusCodeTest, OutOfRangeCodeIsNamedInternal) {
  EXPECT_EQ(StatusCodeName(static_cast<StatusCode>(999)), "INTERNAL");
}

TEST(StatusReasonTest, WireCodeCarriesTheReasonsPeersSend) {
  EXPECT_EQ(WireCode(Status::NotFound("m")), "NOT_FOUND");
  EXPECT_EQ(WireCode(Status(StatusCode::kUnavailable, "m", StatusReason::kRecovering)),
            "UNAVAILABLE:RECOVERING");
  EXPECT_EQ(WireCode(Status(StatusCode::kUnavailable, "m", StatusReason::kPeerRecovering)),
            "UNAVAILABLE:PEER_RECOVERING");
  EXPECT_EQ(WireCode(Status(StatusCode::kBusy, "m", StatusReason::kOriginalAnswers)),
            "BUSY:ORIGINAL_ANSWERS");
  // A receiver's own reasons never go out: they say what happened on this side.
  for (StatusReason local : {StatusReason::kNotSent, StatusReason::kNotImplemented,
                             StatusReason::kTooLarge, StatusReason::kOverloaded}) {
    EXPECT_EQ(WireCode(Status(StatusCode::kUnavailable, "m", local)), "UNAVAILABLE")
        << StatusReasonName(local);
  }
}

TEST(StatusReasonTest, WireCodeRoundTrips) {
  for (StatusReason reason : {StatusReason::kNone, StatusReason::kRecovering,
                              StatusReason::kPeerRecovering, StatusReason::kOriginalAnswers}) {
    for (const auto& [code, name] : AllCodes()) {
      if (code == StatusCode::kOk) continue;
      const Status back = StatusFromWireCode(WireCode(Status(code, "m", reason)), "why");
      EXPECT_EQ(back.code(), code) << name;
      EXPECT_EQ(back.reason(), reason) << name;
      EXPECT_EQ(back.message(), "why");
    }
  }
}

TEST(StatusReasonTest, UnknownReasonKeepsTheCode) {
  // A later version's reason: the code still decides what this side does.
  const Status later = StatusFromWireCode("UNAVAILABLE:SOMETHING_NEW", "m");
  EXPECT_TRUE(later.Is(StatusCode::kUnavailable));
  EXPECT_TRUE(later.Is(StatusReason::kNone));
  EXPECT_TRUE(StatusFromWireCode("NO_SUCH:RECOVERING", "m").Is(StatusCode::kInternal));
  // A local reason's name is not accepted from the wire.
  EXPECT_TRUE(StatusFromWireCode("UNAVAILABLE:NOT_SENT", "m").Is(StatusReason::kNone));
}

TEST(StatusReasonTest, WithContextKeepsCodeAndReason) {
  const Status s =
      Status(StatusCode::kBusy, "m", StatusReason::kOriginalAnswers).WithContext("x: ");
  EXPECT_TRUE(s.Is(StatusCode::kBusy));
  EXPECT_TRUE(s.Is(StatusReason::kOriginalAnswers));
  EXPECT_EQ(s.message(), "x: m");
}

TEST(StatusTest, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.message(), "");
  EXPECT_TRUE(s.Is(StatusCode::kOk));
  EXPECT_EQ(s.ToString(), "OK");
  EXPECT_TRUE(Status::Ok().ok());
  EXPECT_EQ(Status::Ok().ToString(), "OK");
}

TEST(StatusTest, FactoriesSetCodeAndMessage) {
  const std::vector<std::pair<Status, StatusCode>> cases = {
      {Status::NotFound("m"), StatusCode::kNotFound},
      {Status::InvalidArgument("m"), StatusCode::kInvalidArgument},
      {Status::WrongOsd("m"), StatusCode::kWrongOsd},
      {Status::StaleEpoch("m"), StatusCode::kStaleEpoch},
      {Status::VersionMismatch("m"), StatusCode::kVersionMismatch},
      {Status::AlreadyExists("m"), StatusCode::kAlreadyExists},
      {Status::NoSpace("m"), StatusCode::kNoSpace},
      {Status::IoError("m"), StatusCode::kIoError},
      {Status::Corruption("m"), StatusCode::kCorruption},
      {Status::Unavailable("m"), StatusCode::kUnavailable},
      {Status::Internal("m"), StatusCode::kInternal},
  };
  for (const auto& [status, code] : cases) {
    EXPECT_FALSE(status.ok());
    EXPECT_EQ(status.code(), code);
    EXPECT_TRUE(status.Is(code));
    EXPECT_FALSE(status.Is(StatusCode::kOk));
    EXPECT_EQ(status.message(), "m");
    EXPECT_EQ(status.ToString(), std::string(StatusCodeName(code)) + ": m");
  }
  Status deadline(StatusCode::kDeadlineExceeded, "slow");
  EXPECT_EQ(deadline.ToString(), "DEADLINE_EXCEEDED: slow");
}

TEST(StatusTest, ToStringFormats) {
  EXPECT_EQ(Status::StaleEpoch("request epoch 3, OSD epoch 4").ToString(),
            "STALE_EPOCH: request epoch 3, OSD epoch 4");
  // No message: just the code name, no dangling ": ".
  EXPECT_EQ(Status::NotFound("").ToString(), "NOT_FOUND");
  // An OK status prints "OK" even if it was given a message.
  EXPECT_EQ(Status(StatusCode::kOk, "ignored").ToString(), "OK");
  for (const auto& [code, name] : AllCodes()) {
    if (code == StatusCode::kOk) continue;
    EXPECT_EQ(Status(code, "x").ToString(), name + ": x");
    EXPECT_EQ(Status(code, "").ToString(), name);
  }
}

TEST(StatusTest, CopyAndMovePreserveContents) {
  Status a = Status::IoError("disk");
  Status b = a;
  EXPECT_EQ(b.code(), StatusCode::kIoError);
  EXPECT_EQ(b.message(), "disk");
  Status c = std::move(a);
  EXPECT_EQ(c.code(), StatusCode::kIoError);
  EXPECT_EQ(c.message(), "disk");
}

TEST(ResultTest, ValuePath) {
  Result<int> r = 42;
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.status().ok());
  EXPECT_EQ(r.value(), 42);
  EXPECT_EQ(*r, 42);
  r.value() = 7;
  EXPECT_EQ(*r, 7);
  const Result<int>& cr = r;
  EXPECT_EQ(cr.value(), 7);
  EXPECT_EQ(*cr, 7);
}

TEST(ResultTest, ValuePathWithClassType) {
  Result<std::string> r = std::string("hello");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->size(), 5u);
  EXPECT_EQ(*r, "hello");
  r->append("!");
  EXPECT_EQ(r.value(), "hello!");
  std::string moved = std::move(r).value();
  EXPECT_EQ(moved, "hello!");
}

TEST(ResultTest, MoveOnlyValue) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(5);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(**r, 5);
  std::unique_ptr<int> p = std::move(r).value();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(*p, 5);
}

TEST(ResultTest, ErrorPath) {
  Result<int> r = Status::NotFound("no such object");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(), "no such object");
  EXPECT_EQ(r.status().ToString(), "NOT_FOUND: no such object");

  Result<std::string> e = Status::Corruption("bad");
  EXPECT_FALSE(e.ok());
  EXPECT_TRUE(e.status().Is(StatusCode::kCorruption));
}

Result<int> ParsePositive(int v) {
  if (v <= 0) return Status::InvalidArgument("not positive: " + std::to_string(v));
  return v;
}

TEST(ResultTest, ReturnedFromFunctions) {
  Result<int> good = ParsePositive(3);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 3);
  Result<int> bad = ParsePositive(-1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "not positive: -1");
}

Status Step(bool fail, int* counter) {
  ++*counter;
  return fail ? Status::Unavailable("step failed") : Status::Ok();
}

Status Pipeline(bool fail_first, int* counter) {
  ORTHOFS_RETURN_IF_ERROR(Step(fail_first, counter));
  ORTHOFS_RETURN_IF_ERROR(Step(false, counter));
  return Status::Ok();
}

TEST(ReturnIfErrorTest, PropagatesErrorsAndContinuesOnOk) {
  int counter = 0;
  Status ok = Pipeline(false, &counter);
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(counter, 2);

  counter = 0;
  Status failed = Pipeline(true, &counter);
  EXPECT_EQ(failed.code(), StatusCode::kUnavailable);
  EXPECT_EQ(failed.message(), "step failed");
  EXPECT_EQ(counter, 1);  // the second step never ran
}

}  // namespace
}  // namespace orthofs
