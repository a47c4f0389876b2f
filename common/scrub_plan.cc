#include "common/scrub_plan.h"

namespace orthofs {

ScrubVerdict JudgeCopies(const ScrubCopy& original, const ScrubCopy& replica) {
  using State = ScrubCopy::State;
  const bool original_intact = original.state == State::kPresent;
  const bool replica_intact = replica.state == State::kPresent;
  if (!original_intact && !replica_intact) {
    const bool any_corrupt = original.state == State::kCorrupt || replica.state == State::kCorrupt;
    if (!any_corrupt) return {};  // neither exists: nothing to check
    return {ScrubAction::kUnrecoverable, ScrubReason::kNoIntactCopy};
  }
  if (!original_intact) {
    return {ScrubAction::kRewriteOriginal,
            original.state == State::kCorrupt ? ScrubReason::kCorrupt : ScrubReason::kMissing};
  }
  if (!replica_intact) {
    return {ScrubAction::kRewriteReplica,
            replica.state == State::kCorrupt ? ScrubReason::kCorrupt : ScrubReason::kMissing};
  }
  if (original.version < replica.version) {
    return {ScrubAction::kRewriteOriginal, ScrubReason::kStale};
  }
  if (replica.version < original.version) {
    return {ScrubAction::kRewriteReplica, ScrubReason::kStale};
  }
  if (original.checksum != replica.checksum || original.length != replica.length) {
    return {ScrubAction::kRewriteReplica, ScrubReason::kDiverged};
  }
  return {};
}

std::string_view ScrubReasonName(ScrubReason reason) {
  switch (reason) {
    case ScrubReason::kMatch:
      return "match";
    case ScrubReason::kCorrupt:
      return "corrupt";
    case ScrubReason::kMissing:
      return "missing";
    case ScrubReason::kStale:
      return "stale";
    case ScrubReason::kDiverged:
      return "diverged";
    case ScrubReason::kNoIntactCopy:
      return "no intact copy";
  }
  return "?";
}

}  // namespace orthofs
