// orthofs scrub's per-object judgement (common/scrub_plan.h).
#include "common/scrub_plan.h"

#include <gtest/gtest.h>

namespace orthofs {
namespace {

using State = ScrubCopy::State;

ScrubCopy Present(uint64_t version, uint64_t checksum = 7, uint64_t length = 100) {
  return {State::kPresent, version, checksum, length};
}
const ScrubCopy kMissing{};
const ScrubCopy kCorrupt{State::kCorrupt};

TEST(JudgeCopiesTest, EqualCopiesNeedNothing) {
  EXPECT_EQ(JudgeCopies(Present(3), Present(3)), (ScrubVerdict{}));
  EXPECT_EQ(JudgeCopies(kMissing, kMissing), (ScrubVerdict{}));
}

TEST(JudgeCopiesTest, ACorruptCopyIsRewrittenFromTheIntactOne) {
  EXPECT_EQ(JudgeCopies(kCorrupt, Present(3)),
            (ScrubVerdict{ScrubAction::kRewriteOriginal, ScrubReason::kCorrupt}));
  EXPECT_EQ(JudgeCopies(Present(3), kCorrupt),
            (ScrubVerdict{ScrubAction::kRewriteReplica, ScrubReason::kCorrupt}));
}

TEST(JudgeCopiesTest, AMissingCopyIsRewrittenFromThePresentOne) {
  EXPECT_EQ(JudgeCopies(kMissing, Present(1)),
            (ScrubVerdict{ScrubAction::kRewriteOriginal, ScrubReason::kMissing}));
  EXPECT_EQ(JudgeCopies(Present(1), kMissing),
            (ScrubVerdict{ScrubAction::kRewriteReplica, ScrubReason::kMissing}));
}

TEST(JudgeCopiesTest, TheOlderVersionIsRewrittenWhicheverCopyItIs) {
  EXPECT_EQ(JudgeCopies(Present(4, 1), Present(5, 2)),
            (ScrubVerdict{ScrubAction::kRewriteOriginal, ScrubReason::kStale}));
  EXPECT_EQ(JudgeCopies(Present(9, 1), Present(5, 2)),
            (ScrubVerdict{ScrubAction::kRewriteReplica, ScrubReason::kStale}));
}

TEST(JudgeCopiesTest, EqualVersionsWithDifferentBytesFollowTheOriginal) {
  EXPECT_EQ(JudgeCopies(Present(5, 1), Present(5, 2)),
            (ScrubVerdict{ScrubAction::kRewriteReplica, ScrubReason::kDiverged}));
  EXPECT_EQ(JudgeCopies(Present(5, 1, 10), Present(5, 1, 11)),
            (ScrubVerdict{ScrubAction::kRewriteReplica, ScrubReason::kDiverged}));
}

TEST(JudgeCopiesTest, NoIntactCopyIsUnrecoverable) {
  const ScrubVerdict lost{ScrubAction::kUnrecoverable, ScrubReason::kNoIntactCopy};
  EXPECT_EQ(JudgeCopies(kCorrupt, kCorrupt), lost);
  EXPECT_EQ(JudgeCopies(kCorrupt, kMissing), lost);
  EXPECT_EQ(JudgeCopies(kMissing, kCorrupt), lost);
}

TEST(JudgeCopiesTest, EveryReasonHasAName) {
  for (ScrubReason r : {ScrubReason::kMatch, ScrubReason::kCorrupt, ScrubReason::kMissing,
                        ScrubReason::kStale, ScrubReason::kDiverged, ScrubReason::kNoIntactCopy}) {
    EXPECT_NE(ScrubReasonName(r), "?");
  }
}

}  // namespace
}  // namespace orthofs
