#include "common/sparse_seek.h"

#include <gtest/gtest.h>

#include <limits>

namespace orthofs {
namespace {

constexpr uint64_t S = 100;  // object size
constexpr SeekTarget kData = SeekTarget::kData;
constexpr SeekTarget kHole = SeekTarget::kHole;

TEST(SparseSeekTest, DenseFileIsDataToItsEnd) {
  const std::set<uint64_t> stored = {0, 1, 2};
  EXPECT_EQ(SeekInObjects(stored, S, 250, 0, kData), 0u);
  EXPECT_EQ(SeekInObjects(stored, S, 250, 123, kData), 123u);
  EXPECT_EQ(SeekInObjects(stored, S, 250, 0, kHole), 250u);
  EXPECT_EQ(SeekInObjects(stored, S, 250, 249, kHole), 250u);
}

TEST(SparseSeekTest, HolesBetweenStoredObjects) {
  // Data in objects 0, 3, 4 and 9; the file ends inside object 9.
  const std::set<uint64_t> stored = {0, 3, 4, 9};
  const uint64_t size = 950;
  EXPECT_EQ(SeekInObjects(stored, S, size, 0, kHole), 100u);
  EXPECT_EQ(SeekInObjects(stored, S, size, 50, kHole), 100u);
  EXPECT_EQ(SeekInObjects(stored, S, size, 100, kHole), 100u) << "already in a hole";
  EXPECT_EQ(SeekInObjects(stored, S, size, 150, kHole), 150u);
  EXPECT_EQ(SeekInObjects(stored, S, size, 100, kData), 300u);
  EXPECT_EQ(SeekInObjects(stored, S, size, 299, kData), 300u);
  EXPECT_EQ(SeekInObjects(stored, S, size, 310, kData), 310u);
  EXPECT_EQ(SeekInObjects(stored, S, size, 300, kHole), 500u) << "objects 3 and 4 are one run";
  EXPECT_EQ(SeekInObjects(stored, S, size, 500, kData), 900u);
  EXPECT_EQ(SeekInObjects(stored, S, size, 900, kHole), size) << "the end is a hole";
  EXPECT_EQ(SeekInObjects(stored, S, size, 949, kData), 949u);
}

TEST(SparseSeekTest, AtOrPastTheEndIsEnxio) {
  const std::set<uint64_t> stored = {0, 1};
  EXPECT_EQ(SeekInObjects(stored, S, 150, 150, kData), std::nullopt);
  EXPECT_EQ(SeekInObjects(stored, S, 150, 150, kHole), std::nullopt);
  EXPECT_EQ(SeekInObjects(stored, S, 150, 10000, kHole), std::nullopt);
  EXPECT_EQ(SeekInObjects({}, S, 0, 0, kData), std::nullopt) << "an empty file";
  EXPECT_EQ(SeekInObjects({}, S, 0, 0, kHole), std::nullopt);
}

TEST(SparseSeekTest, NoDataAfterTheOffsetIsEnxio) {
  // A file grown by truncate or fallocate past its last stored object.
  const std::set<uint64_t> stored = {0};
  EXPECT_EQ(SeekInObjects(stored, S, 1000, 100, kData), std::nullopt);
  EXPECT_EQ(SeekInObjects(stored, S, 1000, 100, kHole), 100u);
  EXPECT_EQ(SeekInObjects({}, S, 1000, 0, kData), std::nullopt) << "all hole";
  EXPECT_EQ(SeekInObjects({}, S, 1000, 0, kHole), 0u);
}

TEST(SparseSeekTest, ObjectsPastTheSizeAreIgnored) {
  // Left by a shrink another client has not finished, or listed beyond what was asked.
  const std::set<uint64_t> stored = {0, 5};
  EXPECT_EQ(SeekInObjects(stored, S, 250, 100, kData), std::nullopt);
  EXPECT_EQ(SeekInObjects({0, 1, 2, 3}, S, 250, 0, kHole), 250u);
}

TEST(SparseSeekTest, HugeOffsetsDoNotOverflow) {
  constexpr uint64_t kMax = std::numeric_limits<int64_t>::max();
  const uint64_t last = (kMax - 1) / S;
  const std::set<uint64_t> stored = {last};
  EXPECT_EQ(SeekInObjects(stored, S, kMax, 0, kData), last * S);
  EXPECT_EQ(SeekInObjects(stored, S, kMax, last * S, kHole), kMax);
  EXPECT_EQ(SeekInObjects(stored, S, kMax, kMax - 1, kData), kMax - 1);
}

// A listing in ascending order stops as soon as what it has read decides the answer, and
// gives the same answer as the whole listing would.
TEST(SparseSeekTest, AListingStopsOnceTheAnswerIsDecided) {
  EXPECT_FALSE(SeekDecided({}, 4, kData));
  EXPECT_FALSE(SeekDecided({}, 4, kHole));
  EXPECT_FALSE(SeekDecided({1, 2}, 4, kData));  // before `first`: not listed from there
  EXPECT_TRUE(SeekDecided({9}, 4, kData));
  EXPECT_TRUE(SeekDecided({9}, 4, kHole));         // 4..8 are holes
  EXPECT_FALSE(SeekDecided({4, 5, 6}, 4, kHole));  // 7 may still come
  EXPECT_TRUE(SeekDecided({4, 5, 7}, 4, kHole));
  EXPECT_FALSE(SeekDecided({2, 3, 4, 5}, 4, kHole));  // indexes before `first` do not count

  // Fed one index at a time, it stops where the answer over the whole set is already known.
  const std::set<uint64_t> whole = {0, 1, 2, 6, 7, 8, 9, 20};
  for (uint64_t first : {0, 3, 6, 9, 10, 20}) {
    for (SeekTarget target : {kData, kHole}) {
      std::set<uint64_t> read;
      for (uint64_t index : whole) {
        if (index < first) continue;
        read.insert(index);
        if (SeekDecided(read, first, target)) break;
      }
      EXPECT_EQ(SeekInObjects(read, S, 30 * S, first * S, target),
                SeekInObjects(whole, S, 30 * S, first * S, target))
          << "first " << first << (target == kData ? " data" : " hole");
    }
  }
}

}  // namespace
}  // namespace orthofs
