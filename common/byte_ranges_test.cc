// The minimal set of disjoint half-open byte ranges.
#include "common/byte_ranges.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

namespace orthofs {
namespace {

using RangeMap = std::map<uint64_t, uint64_t>;

ByteRanges Make(const RangeMap& ranges) {
  ByteRanges r;
  for (const auto& [begin, end] : ranges) r.Add(begin, end);
  return r;
}

TEST(ByteRangesTest, EmptySet) {
  ByteRanges r;
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(r.bytes(), 0u);
  EXPECT_EQ(r.end(), 0u);
  EXPECT_TRUE(r.ranges().empty());
  EXPECT_TRUE(r.Covers(0, 0));
  EXPECT_TRUE(r.Covers(5, 5));
  EXPECT_FALSE(r.Covers(0, 1));
  EXPECT_EQ(r, ByteRanges());
}

TEST(ByteRangesTest, AddSingleRange) {
  ByteRanges r;
  r.Add(3, 7);
  EXPECT_FALSE(r.empty());
  EXPECT_EQ(r.ranges(), (RangeMap{{3, 7}}));
  EXPECT_EQ(r.bytes(), 4u);
  EXPECT_EQ(r.end(), 7u);
}

TEST(ByteRangesTest, EmptyRangeIsIgnored) {
  ByteRanges r;
  r.Add(5, 5);
  r.Add(9, 2);
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(r.end(), 0u);

  r.Add(10, 20);
  r.Add(20, 20);  // touches [10, 20) but is empty
  r.Add(30, 30);
  r.Add(25, 15);
  EXPECT_EQ(r.ranges(), (RangeMap{{10, 20}}));
  EXPECT_EQ(r.bytes(), 10u);
}

TEST(ByteRangesTest, DisjointRangesStaySeparateAndSorted) {
  ByteRanges r;
  r.Add(40, 50);
  r.Add(0, 10);
  r.Add(20, 30);
  EXPECT_EQ(r.ranges(), (RangeMap{{0, 10}, {20, 30}, {40, 50}}));
  EXPECT_EQ(r.bytes(), 30u);
  EXPECT_EQ(r.end(), 50u);
}

TEST(ByteRangesTest, AdjacentRangesMerge) {
  ByteRanges r;
  r.Add(0, 10);
  r.Add(10, 20);
  EXPECT_EQ(r.ranges(), (RangeMap{{0, 20}}));

  ByteRanges l;
  l.Add(10, 20);
  l.Add(0, 10);  // touches on the left
  EXPECT_EQ(l.ranges(), (RangeMap{{0, 20}}));
}

TEST(ByteRangesTest, RangeFillingGapExactlyMergesNeighbours) {
  ByteRanges r;
  r.Add(0, 10);
  r.Add(20, 30);
  r.Add(10, 20);
  EXPECT_EQ(r.ranges(), (RangeMap{{0, 30}}));
  EXPECT_EQ(r.bytes(), 30u);
}

TEST(ByteRangesTest, OverlappingRangesMerge) {
  ByteRanges r;
  r.Add(0, 10);
  r.Add(5, 15);
  EXPECT_EQ(r.ranges(), (RangeMap{{0, 15}}));

  r.Add(12, 13);  // inside: no change
  EXPECT_EQ(r.ranges(), (RangeMap{{0, 15}}));

  ByteRanges l;
  l.Add(10, 20);
  l.Add(5, 12);  // overlaps on the left
  EXPECT_EQ(l.ranges(), (RangeMap{{5, 20}}));
  EXPECT_EQ(l.bytes(), 15u);
}

TEST(ByteRangesTest, SameBeginKeepsLongerRange) {
  ByteRanges r;
  r.Add(10, 20);
  r.Add(10, 15);
  EXPECT_EQ(r.ranges(), (RangeMap{{10, 20}}));
  r.Add(10, 25);
  EXPECT_EQ(r.ranges(), (RangeMap{{10, 25}}));
}

TEST(ByteRangesTest, AddCoveringManyRanges) {
  ByteRanges r;
  r.Add(10, 12);
  r.Add(20, 22);
  r.Add(30, 32);
  r.Add(40, 42);
  r.Add(60, 70);
  r.Add(15, 41);  // swallows [20,22), [30,32), overlaps [40,42), not [10,12)
  EXPECT_EQ(r.ranges(), (RangeMap{{10, 12}, {15, 42}, {60, 70}}));
  EXPECT_EQ(r.bytes(), 2u + 27u + 10u);

  r.Add(0, 100);
  EXPECT_EQ(r.ranges(), (RangeMap{{0, 100}}));
  EXPECT_EQ(r.bytes(), 100u);
  EXPECT_EQ(r.end(), 100u);
}

TEST(ByteRangesTest, AddSpanningFromTouchToTouch) {
  ByteRanges r;
  r.Add(0, 5);
  r.Add(10, 15);
  r.Add(20, 25);
  r.Add(5, 20);  // touches [0,5) and [20,25), covers [10,15)
  EXPECT_EQ(r.ranges(), (RangeMap{{0, 25}}));
}

TEST(ByteRangesTest, CoversInsideAndAtBoundaries) {
  ByteRanges r = Make({{10, 20}, {30, 40}});
  EXPECT_TRUE(r.Covers(10, 20));
  EXPECT_TRUE(r.Covers(12, 18));
  EXPECT_TRUE(r.Covers(10, 11));
  EXPECT_TRUE(r.Covers(19, 20));
  EXPECT_TRUE(r.Covers(30, 40));
  EXPECT_FALSE(r.Covers(9, 10));
  EXPECT_FALSE(r.Covers(9, 20));
  EXPECT_FALSE(r.Covers(10, 21));
  EXPECT_FALSE(r.Covers(20, 21));
  EXPECT_FALSE(r.Covers(29, 31));
  EXPECT_FALSE(r.Covers(39, 41));
  EXPECT_FALSE(r.Covers(40, 41));
  EXPECT_FALSE(r.Covers(100, 200));
}

TEST(ByteRangesTest, CoversIsFalseAcrossGap) {
  ByteRanges r = Make({{10, 20}, {21, 40}});
  EXPECT_EQ(r.ranges().size(), 2u);
  EXPECT_FALSE(r.Covers(10, 40));
  EXPECT_FALSE(r.Covers(19, 22));
  EXPECT_TRUE(r.Covers(21, 40));
  r.Add(20, 21);
  EXPECT_TRUE(r.Covers(10, 40));
}

TEST(ByteRangesTest, EmptyRangeIsAlwaysCovered) {
  ByteRanges r = Make({{10, 20}});
  EXPECT_TRUE(r.Covers(0, 0));
  EXPECT_TRUE(r.Covers(25, 25));
  EXPECT_TRUE(r.Covers(15, 15));
  EXPECT_TRUE(r.Covers(30, 5));  // begin > end: empty
}

TEST(ByteRangesTest, TrimInsideRange) {
  ByteRanges r = Make({{0, 10}, {20, 30}, {40, 50}});
  r.TrimTo(25);
  EXPECT_EQ(r.ranges(), (RangeMap{{0, 10}, {20, 25}}));
  EXPECT_EQ(r.bytes(), 15u);
  EXPECT_EQ(r.end(), 25u);
  EXPECT_FALSE(r.Covers(25, 26));
}

TEST(ByteRangesTest, TrimAtRangeEndKeepsRange) {
  ByteRanges r = Make({{0, 10}, {20, 30}});
  r.TrimTo(30);
  EXPECT_EQ(r.ranges(), (RangeMap{{0, 10}, {20, 30}}));
  r.TrimTo(20);  // at a range's begin: drops it entirely
  EXPECT_EQ(r.ranges(), (RangeMap{{0, 10}}));
  r.TrimTo(15);  // inside a gap
  EXPECT_EQ(r.ranges(), (RangeMap{{0, 10}}));
  EXPECT_EQ(r.end(), 10u);
}

TEST(ByteRangesTest, TrimBeyondEndChangesNothing) {
  ByteRanges r = Make({{5, 10}, {20, 30}});
  ByteRanges before = r;
  r.TrimTo(31);
  EXPECT_EQ(r, before);
  r.TrimTo(1000);
  EXPECT_EQ(r, before);
}

TEST(ByteRangesTest, TrimToZeroEmpties) {
  ByteRanges r = Make({{0, 10}, {20, 30}});
  r.TrimTo(0);
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(r.bytes(), 0u);
  EXPECT_EQ(r.end(), 0u);
}

TEST(ByteRangesTest, TrimInsideFirstRange) {
  ByteRanges r = Make({{5, 10}, {20, 30}});
  r.TrimTo(6);
  EXPECT_EQ(r.ranges(), (RangeMap{{5, 6}}));
  r.TrimTo(5);
  EXPECT_TRUE(r.empty());
}

TEST(ByteRangesTest, ClearEmpties) {
  ByteRanges r = Make({{0, 10}, {20, 30}});
  r.Clear();
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(r, ByteRanges());
  r.Add(1, 2);
  EXPECT_EQ(r.ranges(), (RangeMap{{1, 2}}));
}

TEST(ByteRangesTest, AddOtherSet) {
  ByteRanges a = Make({{0, 10}, {30, 40}, {70, 80}});
  ByteRanges b = Make({{10, 20}, {35, 50}, {90, 95}});
  a.Add(b);
  EXPECT_EQ(a.ranges(), (RangeMap{{0, 20}, {30, 50}, {70, 80}, {90, 95}}));
  EXPECT_EQ(a.bytes(), 20u + 20u + 10u + 5u);
  EXPECT_EQ(b.ranges(), (RangeMap{{10, 20}, {35, 50}, {90, 95}}));  // unchanged
}

TEST(ByteRangesTest, AddEmptyAndIntoEmpty) {
  ByteRanges a = Make({{3, 9}});
  ByteRanges before = a;
  a.Add(ByteRanges());
  EXPECT_EQ(a, before);

  ByteRanges e;
  e.Add(a);
  EXPECT_EQ(e, a);
}

TEST(ByteRangesTest, AddSelfCopyIsIdempotent) {
  ByteRanges a = Make({{0, 4}, {8, 12}});
  ByteRanges copy = a;
  a.Add(copy);
  EXPECT_EQ(a, copy);
}

TEST(ByteRangesTest, EqualityComparesRanges) {
  EXPECT_EQ(Make({{0, 10}, {10, 20}}), Make({{0, 20}}));
  EXPECT_EQ(Make({{5, 8}, {0, 3}}), Make({{0, 3}, {5, 8}}));
  EXPECT_FALSE(Make({{0, 10}}) == Make({{0, 11}}));
  EXPECT_FALSE(Make({{0, 10}}) == Make({{0, 5}, {6, 10}}));
}

TEST(ByteRangesTest, LargeOffsets) {
  constexpr uint64_t kBig = uint64_t{1} << 62;
  ByteRanges r;
  r.Add(kBig, kBig + 100);
  r.Add(0, 1);
  EXPECT_EQ(r.bytes(), 101u);
  EXPECT_EQ(r.end(), kBig + 100);
  EXPECT_TRUE(r.Covers(kBig + 50, kBig + 100));
  EXPECT_FALSE(r.Covers(0, kBig));
  r.TrimTo(kBig + 1);
  EXPECT_EQ(r.ranges(), (RangeMap{{0, 1}, {kBig, kBig + 1}}));
}

// A bitmap over [0, kSpace) is the model. The set must match it byte for byte and always be
// in its minimal form (sorted, disjoint, non-adjacent, non-empty ranges).
constexpr uint64_t kSpace = 200;

RangeMap ModelRanges(const std::vector<bool>& model) {
  RangeMap out;
  uint64_t i = 0;
  while (i < model.size()) {
    if (!model[i]) {
      ++i;
      continue;
    }
    uint64_t begin = i;
    while (i < model.size() && model[i]) ++i;
    out[begin] = i;
  }
  return out;
}

void ExpectMatchesModel(const ByteRanges& r, const std::vector<bool>& model, std::mt19937& rng,
                        int step) {
  SCOPED_TRACE(testing::Message() << "step " << step);
  uint64_t prev_end = 0;
  bool first = true;
  for (const auto& [begin, end] : r.ranges()) {
    ASSERT_LT(begin, end) << "empty range";
    if (!first) {
      ASSERT_GT(begin, prev_end) << "ranges overlap or touch";
    }
    first = false;
    prev_end = end;
  }
  ASSERT_EQ(r.ranges(), ModelRanges(model));

  uint64_t bytes = 0;
  uint64_t last = 0;
  for (uint64_t i = 0; i < model.size(); ++i) {
    if (model[i]) {
      ++bytes;
      last = i + 1;
    }
  }
  EXPECT_EQ(r.bytes(), bytes);
  EXPECT_EQ(r.end(), last);
  EXPECT_EQ(r.empty(), bytes == 0);

  std::uniform_int_distribution<uint64_t> pos(0, kSpace + 10);
  for (int i = 0; i < 20; ++i) {
    uint64_t a = pos(rng);
    uint64_t b = pos(rng);
    bool covered = true;
    for (uint64_t x = a; x < b; ++x) covered = covered && x < kSpace && model[x];
    EXPECT_EQ(r.Covers(a, b), covered) << "Covers(" << a << ", " << b << ")";
  }
}

TEST(ByteRangesTest, RandomOperationsMatchBitmapModel) {
  std::mt19937 rng(42);
  std::uniform_int_distribution<uint64_t> pos(0, kSpace);
  std::uniform_int_distribution<int> op(0, 99);
  std::uniform_int_distribution<uint64_t> len(0, 12);

  ByteRanges r;
  std::vector<bool> model(kSpace, false);
  for (int step = 0; step < 4000; ++step) {
    int o = op(rng);
    if (o < 60) {
      // Add, mostly short ranges so that gaps and touches are common; sometimes reversed.
      uint64_t a = pos(rng);
      uint64_t b = o < 50 ? std::min<uint64_t>(a + len(rng), kSpace) : pos(rng);
      r.Add(a, b);
      for (uint64_t x = a; x < b; ++x) model[x] = true;
    } else if (o < 80) {
      // Add another set.
      ByteRanges other;
      std::vector<bool> other_model(kSpace, false);
      int n = static_cast<int>(len(rng) % 5);
      for (int i = 0; i < n; ++i) {
        uint64_t a = pos(rng);
        uint64_t b = std::min<uint64_t>(a + len(rng), kSpace);
        other.Add(a, b);
        for (uint64_t x = a; x < b; ++x) other_model[x] = true;
      }
      ASSERT_EQ(other.ranges(), ModelRanges(other_model));
      r.Add(other);
      for (uint64_t x = 0; x < kSpace; ++x) model[x] = model[x] || other_model[x];
    } else if (o < 97) {
      // Trim, usually near the end so that the set does not stay tiny.
      uint64_t end = r.end();
      uint64_t cut = o < 92 && end > 0 ? end - std::min<uint64_t>(end, len(rng)) : pos(rng);
      r.TrimTo(cut);
      for (uint64_t x = cut; x < kSpace; ++x) model[x] = false;
    } else {
      r.Clear();
      model.assign(kSpace, false);
    }
    ExpectMatchesModel(r, model, rng, step);
    if (testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace orthofs
