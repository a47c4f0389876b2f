// Versions grow by one, or jump to the writer's clock when that is ahead.
#include "common/object_version.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <limits>

namespace orthofs {
namespace {

using std::chrono::system_clock;

TEST(ObjectVersionTest, WithoutAFloorVersionsCountUp) {
  EXPECT_EQ(NextObjectVersion(0, 0), 1u);
  EXPECT_EQ(NextObjectVersion(1, 0), 2u);
  EXPECT_EQ(NextObjectVersion(41, 0), 42u);
}

TEST(ObjectVersionTest, AFloorAheadOfTheStoredVersionIsTaken) {
  EXPECT_EQ(NextObjectVersion(4, 1000), 1000u);
  EXPECT_EQ(NextObjectVersion(0, 7), 7u);
}

TEST(ObjectVersionTest, AFloorBehindTheStoredVersionChangesNothing) {
  // A client whose clock is behind another's still moves the object forward by one.
  EXPECT_EQ(NextObjectVersion(1000, 999), 1001u);
  EXPECT_EQ(NextObjectVersion(1000, 1000), 1001u);
  EXPECT_EQ(NextObjectVersion(1000, 1001), 1001u);
}

TEST(ObjectVersionTest, TheTopVersionStays) {
  constexpr uint64_t kTop = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(NextObjectVersion(kTop, 0), kTop);
  EXPECT_EQ(NextObjectVersion(kTop - 1, 0), kTop);
}

TEST(ObjectVersionTest, TheFloorIsMicrosecondsSinceTheEpoch) {
  EXPECT_EQ(VersionFloorAt(system_clock::time_point{}), 0u);
  EXPECT_EQ(VersionFloorAt(system_clock::time_point{std::chrono::seconds(2)}), 2000000u);
  EXPECT_EQ(VersionFloorAt(system_clock::time_point{} - std::chrono::seconds(1)), 0u);
  // 2026-11-24 is about 1.8e15 microseconds: far below the top of a u64.
  const uint64_t now = VersionFloorAt(system_clock::now());
  EXPECT_GT(now, 1700000000000000u);
  EXPECT_LT(now, uint64_t{1} << 62);
}

TEST(ObjectVersionTest, AnOsdCutsAFloorFarAheadOfItsClock) {
  const auto now = system_clock::time_point{std::chrono::hours(1000)};
  const uint64_t limit = VersionFloorAt(now + kMaxVersionFloorLead);
  EXPECT_EQ(BoundedVersionFloor(VersionFloorAt(now), now), VersionFloorAt(now));
  EXPECT_EQ(BoundedVersionFloor(limit, now), limit);
  EXPECT_EQ(BoundedVersionFloor(limit + 1, now), limit);
  EXPECT_EQ(BoundedVersionFloor(std::numeric_limits<uint64_t>::max(), now), limit);
  EXPECT_EQ(BoundedVersionFloor(0, now), 0u);
}

TEST(ObjectVersionTest, TwoChangesInTurnOnTwoCopiesOrderByTheirClocks) {
  // The double outage of the header: both copies at 4; A takes a change at t, then B, which
  // missed it, takes one at t + 1 s. B's is newer, so A's replay at B changes nothing and B's
  // replay at A replaces it.
  const auto t = system_clock::now();
  const uint64_t on_a = NextObjectVersion(4, VersionFloorAt(t));
  const uint64_t on_b = NextObjectVersion(4, VersionFloorAt(t + std::chrono::seconds(1)));
  EXPECT_GT(on_b, on_a);
  // A later change written to both copies at once gives both one version, even while one of
  // them still lags (at 4, its replay pending).
  const uint64_t floor = VersionFloorAt(t + std::chrono::seconds(2));
  EXPECT_EQ(NextObjectVersion(4, floor), NextObjectVersion(on_a, floor));
}

}  // namespace
}  // namespace orthofs
