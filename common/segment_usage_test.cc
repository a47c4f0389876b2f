#include "common/segment_usage.h"

#include <gtest/gtest.h>

namespace orthofs {
namespace {

constexpr uint64_t kMiB = 1 << 20;

// Segments 1..3 of 64 MiB with the given live bytes; segment 4 is the active one.
SegmentUsage ThreeFullSegments(int64_t live1, int64_t live2, int64_t live3) {
  SegmentUsage usage;
  int64_t lives[] = {live1, live2, live3};
  for (uint64_t id = 1; id <= 3; ++id) {
    usage.Grew(id, 64 * kMiB);
    usage.AddLive(id, lives[id - 1]);
  }
  usage.Grew(4, 1 * kMiB);
  return usage;
}

TEST(SegmentUsageTest, CountsSizeLiveAndGarbage) {
  SegmentUsage usage = ThreeFullSegments(64 * kMiB, 10 * kMiB, 0);
  EXPECT_EQ(usage.total_bytes(), 193 * kMiB);
  EXPECT_EQ(usage.garbage_bytes(), (54 + 64 + 1) * kMiB);
  usage.AddLive(2, -static_cast<int64_t>(kMiB));
  EXPECT_EQ(usage.live(2), static_cast<int64_t>(9 * kMiB));
  usage.Forget(3);
  EXPECT_EQ(usage.segments(), (std::vector<uint64_t>{1, 2, 4}));
  EXPECT_EQ(usage.size(3), 0u);
}

TEST(SegmentUsageTest, VictimsAreMostlyGarbageFewestLiveFirst) {
  SegmentUsage usage = ThreeFullSegments(40 * kMiB, 10 * kMiB, 0);
  EXPECT_EQ(usage.Victims(4, 0.5, 1024 * kMiB), (std::vector<uint64_t>{3, 2}));
  // Any garbage at all when space is short.
  EXPECT_EQ(usage.Victims(4, 0.0, 1024 * kMiB), (std::vector<uint64_t>{3, 2, 1}));
}

TEST(SegmentUsageTest, TheActiveAndPinnedSegmentsAreNeverVictims) {
  SegmentUsage usage = ThreeFullSegments(0, 0, 0);
  usage.Pin(2);
  usage.Pin(2);
  EXPECT_EQ(usage.Victims(3, 0.5, 1024 * kMiB), (std::vector<uint64_t>{1, 4}));
  usage.Unpin(2);
  EXPECT_TRUE(usage.pinned(2));
  usage.Unpin(2);
  EXPECT_FALSE(usage.pinned(2));
  EXPECT_EQ(usage.Victims(3, 0.5, 1024 * kMiB), (std::vector<uint64_t>{1, 2, 4}));
}

TEST(SegmentUsageTest, FullyLiveSegmentsAreLeftAlone) {
  SegmentUsage usage = ThreeFullSegments(64 * kMiB, 64 * kMiB, 64 * kMiB);
  EXPECT_TRUE(usage.Victims(4, 0.0, 1024 * kMiB).empty());
}

TEST(SegmentUsageTest, TheRoomToMoveLiveBytesBoundsTheVictims) {
  SegmentUsage usage = ThreeFullSegments(30 * kMiB, 10 * kMiB, 20 * kMiB);
  EXPECT_EQ(usage.Victims(4, 0.0, 30 * kMiB), (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(usage.Victims(4, 0.0, 9 * kMiB), (std::vector<uint64_t>{}));
}

TEST(SegmentUsageTest, AnEmptySegmentFileIsCollected) {
  SegmentUsage usage;
  usage.Grew(1, 0);  // found at open, nothing appended (a crash right after it was created)
  EXPECT_EQ(usage.Victims(2, 0.5, 0), (std::vector<uint64_t>{1}));
}

}  // namespace
}  // namespace orthofs
