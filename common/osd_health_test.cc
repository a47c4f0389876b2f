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
  EXPECT_FALSE(health_.IsDown(3, At(0)));
  EXPECT_TRUE(health_.DownOsds(At(0)).empty());
  EXPECT_EQ(health_.failures(3), 0);
  EXPECT_FALSE(health_.RecordSuccess(3));
}

TEST_F(OsdHealthTest, AFailureMarksDownForTheInitialBackoff) {
  EXPECT_TRUE(health_.RecordFailure(2, At(0)));
  EXPECT_TRUE(health_.IsDown(2, At(0)));
  EXPECT_TRUE(health_.IsDown(2, At(999)));
  EXPECT_FALSE(health_.IsDown(2, At(1000)));  // the next request probes
  EXPECT_FALSE(health_.IsDown(1, At(0)));     // others unaffected
  EXPECT_EQ(health_.DownOsds(At(10)), std::vector<uint32_t>{2});
}

TEST_F(OsdHealthTest, FailuresInsideTheBackoffDoNotExtendIt) {
  // Requests already in flight when the OSD died fail one after another.
  EXPECT_TRUE(health_.RecordFailure(2, At(0)));
  EXPECT_FALSE(health_.RecordFailure(2, At(500)));
  EXPECT_FALSE(health_.RecordFailure(2, At(900)));
  EXPECT_EQ(health_.failures(2), 1);
  EXPECT_FALSE(health_.IsDown(2, At(1000)));
}

TEST_F(OsdHealthTest, FailedProbesDoubleTheBackoffUpToTheCap) {
  int now = 0;
  const int expected_backoffs_ms[] = {1000, 2000, 4000, 8000, 8000, 8000};
  for (int backoff : expected_backoffs_ms) {
    EXPECT_TRUE(health_.RecordFailure(7, At(now)));
    EXPECT_TRUE(health_.IsDown(7, At(now + backoff - 1))) << backoff;
    EXPECT_FALSE(health_.IsDown(7, At(now + backoff))) << backoff;
    now += backoff;
  }
  EXPECT_EQ(health_.failures(7), 6);
}

TEST_F(OsdHealthTest, SuccessBringsItBackAndResetsTheBackoff) {
  health_.RecordFailure(4, At(0));
  health_.RecordFailure(4, At(1000));  // failed probe: 2 s now
  EXPECT_TRUE(health_.RecordSuccess(4));
  EXPECT_FALSE(health_.IsDown(4, At(1001)));
  EXPECT_EQ(health_.failures(4), 0);
  EXPECT_FALSE(health_.RecordSuccess(4));  // already up: no transition
  EXPECT_TRUE(health_.RecordFailure(4, At(5000)));
  EXPECT_FALSE(health_.IsDown(4, At(6000)));  // back to the initial backoff
}

TEST_F(OsdHealthTest, DownOsdsListsOnlyThoseInsideTheirBackoff) {
  health_.RecordFailure(9, At(0));
  health_.RecordFailure(1, At(0));
  health_.RecordFailure(5, At(600));
  EXPECT_EQ(health_.DownOsds(At(700)), (std::vector<uint32_t>{1, 5, 9}));
  EXPECT_EQ(health_.DownOsds(At(1100)), std::vector<uint32_t>{5});
  EXPECT_TRUE(health_.DownOsds(At(1600)).empty());
}

}  // namespace
}  // namespace orthofs
