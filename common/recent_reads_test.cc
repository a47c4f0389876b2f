#include "common/recent_reads.h"

#include <gtest/gtest.h>

#include <string>

namespace orthofs {
namespace {

using Clock = RecentReads<int>::Clock;
constexpr auto kAge = std::chrono::milliseconds(500);

Clock::time_point At(int ms) { return Clock::time_point{} + std::chrono::milliseconds(ms); }

TEST(RecentReadsTest, TakeReturnsAFreshValueOnce) {
  RecentReads<int> recent(kAge, 8);
  recent.Put("a", 1, At(0));
  EXPECT_EQ(recent.Take("a", At(100)), 1);
  EXPECT_EQ(recent.Take("a", At(100)), std::nullopt);  // one read starts one change
  EXPECT_EQ(recent.Take("b", At(100)), std::nullopt);
}

TEST(RecentReadsTest, OldValuesAreNotReturnedAndLeave) {
  RecentReads<int> recent(kAge, 8);
  recent.Put("a", 1, At(0));
  EXPECT_EQ(recent.Take("a", At(500)), 1);  // exactly max_age still counts
  recent.Put("a", 2, At(0));
  EXPECT_EQ(recent.Take("a", At(501)), std::nullopt);
  EXPECT_EQ(recent.size(), 0u);
}

TEST(RecentReadsTest, ALaterReadReplacesTheEarlier) {
  RecentReads<int> recent(kAge, 8);
  recent.Put("a", 1, At(0));
  recent.Put("a", 2, At(400));
  EXPECT_EQ(recent.size(), 1u);
  EXPECT_EQ(recent.Take("a", At(800)), 2);  // aged from the later read
}

TEST(RecentReadsTest, CapacityDropsTheOldestRead) {
  RecentReads<int> recent(kAge, 2);
  recent.Put("a", 1, At(0));
  recent.Put("b", 2, At(1));
  recent.Put("a", 3, At(2));  // a is now the newest
  recent.Put("c", 4, At(3));  // b goes
  EXPECT_EQ(recent.size(), 2u);
  EXPECT_EQ(recent.Take("b", At(4)), std::nullopt);
  EXPECT_EQ(recent.Take("a", At(4)), 3);
  EXPECT_EQ(recent.Take("c", At(4)), 4);
  RecentReads<int> none(kAge, 0);
  none.Put("a", 1, At(0));
  EXPECT_EQ(none.Take("a", At(0)), std::nullopt);
}

TEST(RecentReadsTest, ForgetDropsAValue) {
  RecentReads<int> recent(kAge, 8);
  recent.Put("a", 1, At(0));
  recent.Put("b", 2, At(0));
  recent.Forget("a");
  recent.Forget("zz");
  EXPECT_EQ(recent.Take("a", At(1)), std::nullopt);
  EXPECT_EQ(recent.Take("b", At(1)), 2);
}

TEST(RecentReadsTest, PeekLeavesTheValueWithItsTime) {
  RecentReads<int> recent(kAge, 8);
  recent.Put("a", 1, At(0));
  auto first = recent.Peek("a", At(1));
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->first, 1);
  EXPECT_EQ(first->second, At(0));
  EXPECT_EQ(recent.Peek("a", At(2)), first) << "still there";
  EXPECT_EQ(recent.Peek("zz", At(1)), std::nullopt);
  EXPECT_EQ(recent.Peek("a", At(0) + kAge + std::chrono::milliseconds(1)), std::nullopt)
      << "too old";
  EXPECT_EQ(recent.Take("a", At(3)), 1);
  EXPECT_EQ(recent.Peek("a", At(3)), std::nullopt) << "taken";
}

}  // namespace
}  // namespace orthofs
