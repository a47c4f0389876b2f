#include "common/stall_watch.h"

#include <gtest/gtest.h>

#include <thread>

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

TEST(BootClockTest, AdvancesAtLeastAsTheSteadyClockDoes) {
  const auto boot_start = BootClock::now();
  const auto steady_start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(milliseconds(20));
  const auto steady_spent = std::chrono::steady_clock::now() - steady_start;
  const auto boot_spent = BootClock::now() - boot_start;
  EXPECT_GE(boot_spent, milliseconds(20));
  // The boot clock also counts suspended time, which steady_clock leaves out; never less.
  EXPECT_GE(boot_spent + milliseconds(1), steady_spent);
}

TEST(BootClockTest, NeverGoesBack) {
  BootClock::time_point last = BootClock::now();
  for (int i = 0; i < 10000; ++i) {
    const BootClock::time_point now = BootClock::now();
    ASSERT_GE(now, last);
    last = now;
  }
}

}  // namespace
}  // namespace orthofs
