#include "common/osd_health.h"

#include <gtest/gtest.h>

namespace orthofs {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class OsdHealthTest : public ::testing::Test {
 protected:
  OsdHealth::Clock::time_point At(int ms) { return start_ + milliseconds(ms); }
  OsdHealth::Clock::time_point start_ = OsdHealth::Clock::now();
  OsdHealth health_{OsdHealth::Options{seconds(1), seconds(8)}};
};

TEST_F(OsdHealthTest, UnknownOsdsAreUp) {
  EXPECT_FALSE(health_.IsDown(3));
  EXPECT_TRUE(health_.DownOsds().empty());
  EXPECT_EQ(health_.failures(3), 0);
  EXPECT_FALSE(health_.RecordSuccess(3));
  EXPECT_FALSE(health_.ClaimProbe(3, At(100000))) << "nothing to probe";
}

TEST_F(OsdHealthTest, AFailureMarksDownUntilASuccess) {
  EXPECT_TRUE(health_.RecordFailure(2, At(0)));
  EXPECT_TRUE(health_.IsDown(2));
  EXPECT_FALSE(health_.IsDown(1));  // others unaffected
  EXPECT_EQ(health_.DownOsds(), std::vector<uint32_t>{2});
  // Past the backoff it stays down: only a probe's (or any call's) success brings it back.
  const uint64_t outage = health_.ClaimProbe(2, At(5000));
  EXPECT_NE(outage, 0u);
  EXPECT_TRUE(health_.IsDown(2));
  EXPECT_TRUE(health_.RecordProbeAnswered(2, outage));
  EXPECT_FALSE(health_.IsDown(2));
  EXPECT_TRUE(health_.DownOsds().empty());
}

TEST_F(OsdHealthTest, NeverTwoProbesAtOnce) {
  health_.RecordFailure(3, At(0));
  ASSERT_TRUE(health_.ClaimProbe(3, At(1000)));
  // Back through another call, and down again, while the probe is still out.
  EXPECT_TRUE(health_.RecordSuccess(3));
  EXPECT_TRUE(health_.RecordFailure(3, At(1500)));
  EXPECT_FALSE(health_.ClaimProbe(3, At(9000))) << "the first probe has not reported";
  health_.RecordProbeFailure(3, At(9000));
  EXPECT_EQ(health_.failures(3), 2) << "its failure counts against the new outage";
  EXPECT_TRUE(health_.ClaimProbe(3, At(11000)));
}

TEST_F(OsdHealthTest, AnAnswerFromBeforeANewerOutageDoesNotEndIt) {
  health_.RecordFailure(8, At(0));
  const uint64_t first = health_.ClaimProbe(8, At(1000));
  ASSERT_NE(first, 0u);
  health_.RecordSuccess(8);
  health_.RecordFailure(8, At(1200));
  EXPECT_FALSE(health_.RecordProbeAnswered(8, first));
  EXPECT_TRUE(health_.IsDown(8));
  const uint64_t second = health_.ClaimProbe(8, At(2200));
  EXPECT_GT(second, first);
  EXPECT_TRUE(health_.RecordProbeAnswered(8, second));
  EXPECT_FALSE(health_.IsDown(8));
}

TEST_F(OsdHealthTest, FailuresWhileDownChangeNothing) {
  // Requests already in flight when the OSD died fail one after another.
  EXPECT_TRUE(health_.RecordFailure(2, At(0)));
  EXPECT_FALSE(health_.RecordFailure(2, At(500)));
  EXPECT_FALSE(health_.RecordFailure(2, At(1500)));
  EXPECT_EQ(health_.failures(2), 1);
  EXPECT_TRUE(health_.ClaimProbe(2, At(1000))) << "the first backoff, not restarted by them";
}

TEST_F(OsdHealthTest, OneProbeAtATimeAfterTheBackoff) {
  health_.RecordFailure(5, At(0));
  EXPECT_FALSE(health_.ClaimProbe(5, At(999)));
  EXPECT_TRUE(health_.ClaimProbe(5, At(1000)));
  EXPECT_FALSE(health_.ClaimProbe(5, At(1000))) << "one is in flight";
  EXPECT_FALSE(health_.ClaimProbe(5, At(60000)));
  health_.RecordProbeFailure(5, At(3000));
  EXPECT_FALSE(health_.ClaimProbe(5, At(4999)));
  EXPECT_TRUE(health_.ClaimProbe(5, At(5000))) << "2 s after the failed probe";
}

TEST_F(OsdHealthTest, FailedProbesDoubleTheBackoffUpToTheCap) {
  health_.RecordFailure(7, At(0));
  int now = 0;
  const int expected_backoffs_ms[] = {1000, 2000, 4000, 8000, 8000, 8000};
  for (int backoff : expected_backoffs_ms) {
    EXPECT_FALSE(health_.ClaimProbe(7, At(now + backoff - 1))) << backoff;
    EXPECT_TRUE(health_.ClaimProbe(7, At(now + backoff))) << backoff;
    now += backoff;
    health_.RecordProbeFailure(7, At(now));
  }
  EXPECT_EQ(health_.failures(7), 7);
  EXPECT_TRUE(health_.IsDown(7));
}

TEST_F(OsdHealthTest, SuccessBringsItBackAndResetsTheBackoff) {
  health_.RecordFailure(4, At(0));
  ASSERT_TRUE(health_.ClaimProbe(4, At(1000)));
  health_.RecordProbeFailure(4, At(1000));  // 2 s now
  EXPECT_TRUE(health_.RecordSuccess(4));    // another call got through
  EXPECT_FALSE(health_.IsDown(4));
  EXPECT_EQ(health_.failures(4), 0);
  EXPECT_FALSE(health_.RecordSuccess(4));  // already up: no transition
  EXPECT_TRUE(health_.RecordFailure(4, At(5000)));
  EXPECT_TRUE(health_.ClaimProbe(4, At(6000)));  // back to the initial backoff
}

TEST_F(OsdHealthTest, AProbeFailingAfterTheOsdCameBackChangesNothing) {
  health_.RecordFailure(6, At(0));
  ASSERT_TRUE(health_.ClaimProbe(6, At(1000)));
  EXPECT_TRUE(health_.RecordSuccess(6));  // a request answered while the probe was out
  health_.RecordProbeFailure(6, At(2000));
  EXPECT_FALSE(health_.IsDown(6));
  EXPECT_EQ(health_.failures(6), 0);
}

TEST_F(OsdHealthTest, DownOsdsListsEveryOsdDownInIdOrder) {
  health_.RecordFailure(9, At(0));
  health_.RecordFailure(1, At(0));
  health_.RecordFailure(5, At(600));
  EXPECT_EQ(health_.DownOsds(), (std::vector<uint32_t>{1, 5, 9}));
  health_.RecordSuccess(1);
  EXPECT_EQ(health_.DownOsds(), (std::vector<uint32_t>{5, 9}));
}

TEST_F(OsdHealthTest, ARecoveringOsdIsBackOnlyWhenAProbeSaysSo) {
  using Cause = OsdHealth::Cause;
  EXPECT_TRUE(health_.RecordFailure(3, At(0), Cause::kRecovering));
  EXPECT_TRUE(health_.IsDown(3));
  EXPECT_TRUE(health_.IsRecovering(3));
  // Copy updates it takes while recovering succeed: they do not bring it back.
  EXPECT_FALSE(health_.RecordSuccess(3));
  EXPECT_TRUE(health_.IsDown(3));
  // Probed every 100 ms, not after the transport backoff.
  EXPECT_FALSE(health_.ClaimProbe(3, At(99)));
  uint64_t outage = health_.ClaimProbe(3, At(100));
  ASSERT_NE(outage, 0u);
  health_.RecordProbeFailure(3, At(110), Cause::kRecovering);  // still recovering
  EXPECT_FALSE(health_.ClaimProbe(3, At(209)));
  outage = health_.ClaimProbe(3, At(210));
  ASSERT_NE(outage, 0u) << "no doubling while it recovers";
  EXPECT_TRUE(health_.RecordProbeAnswered(3, outage));
  EXPECT_FALSE(health_.IsDown(3));
  EXPECT_FALSE(health_.IsRecovering(3));
  // A later transport failure is an ordinary one again.
  EXPECT_TRUE(health_.RecordFailure(3, At(5000)));
  EXPECT_FALSE(health_.IsRecovering(3));
  EXPECT_FALSE(health_.ClaimProbe(3, At(5100)));
  EXPECT_TRUE(health_.RecordSuccess(3));
}

TEST_F(OsdHealthTest, ARecoveringOsdThatStopsAnsweringBacksOffAsUsual) {
  using Cause = OsdHealth::Cause;
  health_.RecordFailure(2, At(0), Cause::kRecovering);
  ASSERT_TRUE(health_.ClaimProbe(2, At(100)));
  health_.RecordProbeFailure(2, At(100));  // killed again: the transport fails
  EXPECT_FALSE(health_.IsRecovering(2));
  EXPECT_FALSE(health_.ClaimProbe(2, At(2099)));
  EXPECT_TRUE(health_.ClaimProbe(2, At(2100))) << "the doubled backoff after two failures";
  EXPECT_TRUE(health_.IsDown(2));
}

}  // namespace
}  // namespace orthofs
