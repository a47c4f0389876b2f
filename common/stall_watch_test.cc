#include "common/stall_watch.h"

#include <gtest/gtest.h>

namespace orthofs {
namespace {

using std::chrono::milliseconds;

class StallWatchTest : public ::testing::Test {
 protected:
  StallWatch::Clock::time_point At(int ms) { return start_ + milliseconds(ms); }
  StallWatch::Clock::time_point start_ = StallWatch::Clock::now();
  StallWatch watch_{milliseconds(1500)};
};

TEST_F(StallWatchTest, TheFirstTickIsNoStall) { EXPECT_FALSE(watch_.Tick(At(100000))); }

TEST_F(StallWatchTest, RegularTicksAreNoStall) {
  for (int ms = 0; ms <= 10000; ms += 100) EXPECT_FALSE(watch_.Tick(At(ms))) << ms;
}

TEST_F(StallWatchTest, ALateTickReportsTheGapOnce) {
  watch_.Tick(At(0));
  watch_.Tick(At(100));
  EXPECT_FALSE(watch_.Tick(At(1600))) << "exactly the threshold is no stall";
  const std::optional<StallWatch::Clock::duration> stall = watch_.Tick(At(4600));
  ASSERT_TRUE(stall);
  EXPECT_EQ(*stall, milliseconds(3000));
  EXPECT_FALSE(watch_.Tick(At(4700))) << "reported once; ticking again";
}

TEST_F(StallWatchTest, ATickFromThePastChangesNothing) {
  watch_.Tick(At(5000));
  EXPECT_FALSE(watch_.Tick(At(1000)));
  EXPECT_FALSE(watch_.Tick(At(6000)));
  EXPECT_TRUE(watch_.Tick(At(7600)));
}

TEST_F(StallWatchTest, OverdueOncePastTheThreshold) {
  EXPECT_FALSE(watch_.Overdue(At(0), At(1500)));
  EXPECT_TRUE(watch_.Overdue(At(0), At(1501)));
  EXPECT_FALSE(watch_.Overdue(At(2000), At(1000))) << "a tick after now is not overdue";
}

}  // namespace
}  // namespace orthofs
