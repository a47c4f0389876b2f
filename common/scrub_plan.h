// orthofs scrub's judgement of one object from what the OSDs holding its two copies listed:
// which copy (if any) must be rewritten from the other, and why. Pure logic; the walk over the
// OSDs and the rewriting live in tools/scrub.h.
#pragma once

#include <cstdint>
#include <string_view>

namespace orthofs {

struct ScrubCopy {
  enum class State { kMissing, kCorrupt, kPresent };
  State state = State::kMissing;
  uint64_t version = 0;   // kPresent only
  uint64_t checksum = 0;  // kPresent only
  uint64_t length = 0;    // kPresent only
};

enum class ScrubAction {
  kNone,             // both copies present and equal
  kRewriteOriginal,  // from the replica
  kRewriteReplica,   // from the original
  kUnrecoverable,    // no copy is intact
};

enum class ScrubReason {
  kMatch,         // equal version, checksum and length
  kCorrupt,       // one copy fails its checksum
  kMissing,       // one copy is absent (a crash between the two writes or deletes)
  kStale,         // one copy has an older version
  kDiverged,      // equal versions but different bytes: the original, the commit point, wins
  kNoIntactCopy,  // corrupt and corrupt-or-missing
};

struct ScrubVerdict {
  ScrubAction action = ScrubAction::kNone;
  ScrubReason reason = ScrubReason::kMatch;
  bool operator==(const ScrubVerdict&) const = default;
};

ScrubVerdict JudgeCopies(const ScrubCopy& original, const ScrubCopy& replica);

std::string_view ScrubReasonName(ScrubReason reason);

}  // namespace orthofs
