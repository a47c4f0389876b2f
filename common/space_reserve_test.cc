// The OSD's free-space guard (common/space_reserve.h).
#include "common/space_reserve.h"

#include <gtest/gtest.h>

namespace orthofs {
namespace {

using std::chrono::seconds;
constexpr uint64_t kMiB = 1 << 20;

TEST(SpaceReserveTest, ProbesFirstAndAfterTheInterval) {
  SpaceReserve guard(100 * kMiB, seconds(1));
  const auto t0 = SpaceReserve::Clock::time_point{};
  EXPECT_TRUE(guard.NeedsProbe(t0));
  guard.Probed(1000 * kMiB, t0);
  EXPECT_FALSE(guard.NeedsProbe(t0 + std::chrono::milliseconds(999)));
  EXPECT_TRUE(guard.NeedsProbe(t0 + seconds(1)));
}

TEST(SpaceReserveTest, AdmitsWritesAboveTheReserveOnly) {
  SpaceReserve guard(100 * kMiB, seconds(1));
  guard.Probed(110 * kMiB, {});
  EXPECT_TRUE(guard.Admits(6 * kMiB));
  EXPECT_EQ(guard.estimated_available(), 104 * kMiB);
  EXPECT_FALSE(guard.Admits(5 * kMiB));  // would leave 99 MiB
  EXPECT_TRUE(guard.Admits(4 * kMiB));   // exactly the reserve left
  EXPECT_FALSE(guard.Admits(1));
}

TEST(SpaceReserveTest, ADiskUnderTheReserveAdmitsNothing) {
  SpaceReserve guard(100 * kMiB, seconds(1));
  guard.Probed(50 * kMiB, {});
  EXPECT_FALSE(guard.Admits(1));
  EXPECT_FALSE(guard.Admits(0));
}

TEST(SpaceReserveTest, WritesUsingHalfTheMarginAskForAProbe) {
  SpaceReserve guard(100 * kMiB, seconds(60));
  guard.Probed(110 * kMiB, {});  // margin 10 MiB
  ASSERT_TRUE(guard.Admits(4 * kMiB));
  EXPECT_FALSE(guard.NeedsProbe({}));
  ASSERT_TRUE(guard.Admits(1 * kMiB));
  EXPECT_TRUE(guard.NeedsProbe({}));
  // Space freed meanwhile (a probe finds more): writes go on.
  guard.Probed(500 * kMiB, {});
  EXPECT_FALSE(guard.NeedsProbe({}));
  EXPECT_TRUE(guard.Admits(300 * kMiB));
}

// A large margin does not let much be admitted on an old figure: something else may be
// filling the disk (osd_full_test's ballast went past the reserve this way).
TEST(SpaceReserveTest, ALargeMarginIsProbedAgainAfterAFewMiB) {
  SpaceReserve guard(100 * kMiB, seconds(1));
  guard.Probed(100000 * kMiB, {});
  EXPECT_TRUE(guard.Admits(SpaceReserve::kMaxAdmittedUnprobed - 1));
  EXPECT_FALSE(guard.NeedsProbe({}));
  EXPECT_TRUE(guard.Admits(1));
  EXPECT_TRUE(guard.NeedsProbe({}));
}

TEST(SpaceReserveTest, MetadataMayUseHalfTheReserve) {
  SpaceReserve guard(100 * kMiB, seconds(1));
  guard.Probed(90 * kMiB, {});
  EXPECT_FALSE(guard.Admits(1, SpaceReserve::Use::kData));
  EXPECT_TRUE(guard.Admits(40 * kMiB, SpaceReserve::Use::kMetadata));
  EXPECT_FALSE(guard.Admits(1, SpaceReserve::Use::kMetadata));  // down to half the reserve
}

TEST(SpaceReserveTest, NoReserveAdmitsUpToTheLastByte) {
  SpaceReserve guard(0, seconds(1));
  guard.Probed(10, {});
  EXPECT_TRUE(guard.Admits(10));
  EXPECT_FALSE(guard.Admits(1));
}

}  // namespace
}  // namespace orthofs
