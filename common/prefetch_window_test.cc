// Prefetch windows: the COR moving window ([Sui 2010] §3.2) and SPA's on-demand read-ahead.
#include "common/prefetch_window.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/prefetch_testing.h"

namespace orthofs {
namespace {

PrefetchConfig Spa(uint32_t initial = 1, uint32_t max = 40) {
  PrefetchConfig config;
  config.mode = PrefetchMode::kSpa;
  config.initial_window = initial;
  config.max_window = max;
  return config;
}

// ---- names and parsing ----

TEST(PrefetchWindowTest, PrefetchModeNamesRoundTrip) {
  EXPECT_EQ(PrefetchModeName(PrefetchMode::kNone), "none");
  EXPECT_EQ(PrefetchModeName(PrefetchMode::kSpa), "spa");
  EXPECT_EQ(PrefetchModeName(PrefetchMode::kCor), "cor");
  for (PrefetchMode m : {PrefetchMode::kNone, PrefetchMode::kSpa, PrefetchMode::kCor}) {
    Result<PrefetchMode> parsed = ParsePrefetchMode(PrefetchModeName(m));
    ASSERT_TRUE(parsed.ok()) << PrefetchModeName(m) << ": " << parsed.status().ToString();
    EXPECT_EQ(*parsed, m);
  }
}

TEST(PrefetchWindowTest, ParsePrefetchModeRejectsUnknownTextAndNamesIt) {
  for (std::string bad : {"bogus", "", "cor ", "readahead"}) {
    Result<PrefetchMode> parsed = ParsePrefetchMode(bad);
    ASSERT_FALSE(parsed.ok()) << "'" << bad << "'";
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find("'" + bad + "'"), std::string::npos)
        << parsed.status().message();
  }
}

TEST(PrefetchWindowTest, WindowPolicyNamesRoundTrip) {
  EXPECT_EQ(WindowPolicyName(WindowPolicy::kWing), "wing");
  EXPECT_EQ(WindowPolicyName(WindowPolicy::kForward), "forward");
  for (WindowPolicy p : {WindowPolicy::kWing, WindowPolicy::kForward}) {
    Result<WindowPolicy> parsed = ParseWindowPolicy(WindowPolicyName(p));
    ASSERT_TRUE(parsed.ok()) << WindowPolicyName(p) << ": " << parsed.status().ToString();
    EXPECT_EQ(*parsed, p);
  }
}

TEST(PrefetchWindowTest, ParseWindowPolicyRejectsUnknownTextAndNamesIt) {
  for (std::string bad : {"sideways", "", "wings", "spa"}) {
    Result<WindowPolicy> parsed = ParseWindowPolicy(bad);
    ASSERT_FALSE(parsed.ok()) << "'" << bad << "'";
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find("'" + bad + "'"), std::string::npos)
        << parsed.status().message();
  }
}

// ---- configuration ----

TEST(PrefetchWindowTest, DefaultConfigIsValid) {
  PrefetchConfig config;
  EXPECT_EQ(config.mode, PrefetchMode::kNone);
  EXPECT_EQ(config.policy, WindowPolicy::kWing);
  EXPECT_EQ(config.initial_window, 1u);
  EXPECT_EQ(config.max_window, 40u);
  EXPECT_FALSE(config.fixed_window);
  EXPECT_TRUE(ValidatePrefetchConfig(config).ok());
  EXPECT_TRUE(ValidatePrefetchConfig(Cor(WindowPolicy::kForward)).ok());
  EXPECT_TRUE(ValidatePrefetchConfig(Spa(40, 40)).ok());  // initial == max is fine
  EXPECT_TRUE(ValidatePrefetchConfig(Spa(8, 1024)).ok());
}

TEST(PrefetchWindowTest, ValidateRejectsZeroInitialWindow) {
  PrefetchConfig config;
  config.initial_window = 0;
  Status s = ValidatePrefetchConfig(config);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("initial_window"), std::string::npos) << s.message();
}

TEST(PrefetchWindowTest, ValidateRejectsMaxBelowInitial) {
  PrefetchConfig config;
  config.initial_window = 8;
  config.max_window = 7;
  Status s = ValidatePrefetchConfig(config);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("max_window"), std::string::npos) << s.message();
}

TEST(PrefetchWindowTest, ValidateRejectsHugeMaxWindow) {
  PrefetchConfig config;
  config.max_window = std::numeric_limits<uint32_t>::max();
  Status s = ValidatePrefetchConfig(config);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("max_window"), std::string::npos) << s.message();
}

// ---- RangeDifference ----

TEST(PrefetchWindowTest, IndexRangeBasics) {
  IndexRange r{3, 6};
  EXPECT_FALSE(r.empty());
  EXPECT_EQ(r.size(), 3u);
  EXPECT_FALSE(r.Contains(2));
  EXPECT_TRUE(r.Contains(3));
  EXPECT_TRUE(r.Contains(5));
  EXPECT_FALSE(r.Contains(6));
  EXPECT_TRUE((IndexRange{4, 4}).empty());
  EXPECT_EQ((IndexRange{5, 4}).size(), 0u);
}

TEST(PrefetchWindowTest, RangeDifferenceOfDisjointRangesIsTheWholeNext) {
  EXPECT_EQ(Str(RangeDifference({10, 15}, {0, 5})), "[10,15)");
  EXPECT_EQ(Str(RangeDifference({0, 5}, {10, 15})), "[0,5)");
  EXPECT_EQ(Str(RangeDifference({5, 10}, {0, 5})), "[5,10)");  // touching, not overlapping
  EXPECT_EQ(Str(RangeDifference({0, 5}, {5, 10})), "[0,5)");
}

TEST(PrefetchWindowTest, RangeDifferenceOfOverlapOnEitherSide) {
  // next moved forward: only its tail is new.
  EXPECT_EQ(Str(RangeDifference({5, 12}, {0, 8})), "[8,12)");
  // next moved backward: only its head is new.
  EXPECT_EQ(Str(RangeDifference({0, 8}, {5, 12})), "[0,5)");
}

TEST(PrefetchWindowTest, RangeDifferenceOfNextInsidePreviousIsEmpty) {
  EXPECT_TRUE(RangeDifference({3, 6}, {0, 10}).empty());
  EXPECT_TRUE(RangeDifference({0, 10}, {0, 10}).empty());
}

TEST(PrefetchWindowTest, RangeDifferenceOfPreviousInsideNextIsTwoPieces) {
  EXPECT_EQ(Str(RangeDifference({0, 10}, {3, 6})), "[0,3) [6,10)");
  // Sharing an end leaves one piece.
  EXPECT_EQ(Str(RangeDifference({0, 10}, {0, 6})), "[6,10)");
  EXPECT_EQ(Str(RangeDifference({0, 10}, {3, 10})), "[0,3)");
}

TEST(PrefetchWindowTest, RangeDifferenceWithEmptyRanges) {
  EXPECT_EQ(Str(RangeDifference({4, 9}, {})), "[4,9)");
  EXPECT_EQ(Str(RangeDifference({4, 9}, {7, 7})), "[4,9)");  // empty range inside next
  EXPECT_TRUE(RangeDifference({}, {0, 10}).empty());
  EXPECT_TRUE(RangeDifference({6, 6}, {0, 3}).empty());
  EXPECT_TRUE(RangeDifference({}, {}).empty());
}

// ---- MovingWindow: extent and membership ----

TEST(MovingWindowTest, NoPivotCoversNothing) {
  for (WindowPolicy policy : {WindowPolicy::kWing, WindowPolicy::kForward}) {
    MovingWindow w(Cor(policy));
    EXPECT_FALSE(w.has_pivot());
    EXPECT_EQ(w.size(), 1u);  // the initial window
    EXPECT_TRUE(w.Extent().empty());
    for (uint64_t i : {0u, 1u, 2u, 1000u}) EXPECT_FALSE(w.Covers(i)) << i;
  }
}

TEST(MovingWindowTest, WingMembershipIsWithinWingLengthOfPivot) {
  const uint64_t pivot = 100;
  for (uint32_t size : {1u, 2u, 3u, 4u, 5u, 40u}) {
    MovingWindow w(Cor(WindowPolicy::kWing), pivot, size);
    ASSERT_EQ(w.size(), size);
    ASSERT_EQ(w.wing_length(), size / 2);
    const uint64_t wing = size / 2;
    EXPECT_EQ(Str(w.Extent()), Str(IndexRange{pivot - wing, pivot + wing + 1})) << size;
    for (uint64_t i = pivot - 30; i <= pivot + 30; ++i) {
      const uint64_t distance = i > pivot ? i - pivot : pivot - i;
      EXPECT_EQ(w.Covers(i), distance <= wing) << "size " << size << " object " << i;
    }
  }
}

TEST(MovingWindowTest, WingOfSizeFourAroundTen) {
  MovingWindow w(Cor(WindowPolicy::kWing), 10, 4);
  EXPECT_TRUE(w.has_pivot());
  EXPECT_EQ(w.pivot(), 10u);
  EXPECT_EQ(w.wing_length(), 2u);
  EXPECT_EQ(Str(w.Extent()), "[8,13)");
  EXPECT_FALSE(w.Covers(7));
  EXPECT_TRUE(w.Covers(8));
  EXPECT_TRUE(w.Covers(10));
  EXPECT_TRUE(w.Covers(12));
  EXPECT_FALSE(w.Covers(13));
}

TEST(MovingWindowTest, WingOfSizeOneIsThePivotAlone) {
  MovingWindow w(Cor(WindowPolicy::kWing), 10, 1);
  EXPECT_EQ(w.wing_length(), 0u);
  EXPECT_EQ(Str(w.Extent()), "[10,11)");
  EXPECT_FALSE(w.Covers(9));
  EXPECT_TRUE(w.Covers(10));
  EXPECT_FALSE(w.Covers(11));
}

TEST(MovingWindowTest, ForwardMembershipIsTheSizeObjectsAfterThePivot) {
  const uint64_t pivot = 100;
  for (uint32_t size : {1u, 2u, 3u, 4u, 40u}) {
    MovingWindow w(Cor(WindowPolicy::kForward), pivot, size);
    ASSERT_EQ(w.size(), size);
    EXPECT_EQ(Str(w.Extent()), Str(IndexRange{pivot + 1, pivot + size + 1})) << size;
    for (uint64_t i = pivot - 10; i <= pivot + 50; ++i) {
      EXPECT_EQ(w.Covers(i), i > pivot && i - pivot <= size) << "size " << size << " object " << i;
    }
  }
  MovingWindow w(Cor(WindowPolicy::kForward), 10, 4);
  EXPECT_FALSE(w.Covers(10));  // the pivot itself is not in a forward window
  EXPECT_TRUE(w.Covers(11));
  EXPECT_TRUE(w.Covers(14));
  EXPECT_FALSE(w.Covers(15));
}

TEST(MovingWindowTest, WingExtentClampsAtObjectZero) {
  MovingWindow w(Cor(WindowPolicy::kWing), 1, 8);
  EXPECT_EQ(w.wing_length(), 4u);
  EXPECT_EQ(Str(w.Extent()), "[0,6)");
  EXPECT_TRUE(w.Covers(0));
  EXPECT_TRUE(w.Covers(5));
  EXPECT_FALSE(w.Covers(6));

  MovingWindow at_zero(Cor(WindowPolicy::kWing), 0, 40);
  EXPECT_EQ(Str(at_zero.Extent()), "[0,21)");

  MovingWindow forward(Cor(WindowPolicy::kForward), 0, 4);
  EXPECT_EQ(Str(forward.Extent()), "[1,5)");
}

TEST(MovingWindowTest, ConstructorClampsSizeIntoInitialAndMax) {
  const PrefetchConfig config = Cor(WindowPolicy::kWing, 2, 16);
  EXPECT_EQ(MovingWindow(config, 5, 0).size(), 2u);
  EXPECT_EQ(MovingWindow(config, 5, 1).size(), 2u);
  EXPECT_EQ(MovingWindow(config, 5, 2).size(), 2u);
  EXPECT_EQ(MovingWindow(config, 5, 7).size(), 7u);
  EXPECT_EQ(MovingWindow(config, 5, 16).size(), 16u);
  EXPECT_EQ(MovingWindow(config, 5, 17).size(), 16u);
  EXPECT_EQ(MovingWindow(config, 5, 1000).size(), 16u);
  MovingWindow w(config, 5, 1000);
  EXPECT_TRUE(w.has_pivot());
  EXPECT_EQ(w.pivot(), 5u);
  EXPECT_EQ(Str(w.Extent()), "[0,14)");  // wing 8 around 5, clamped at 0
}

// ---- MovingWindow: Widen ----

TEST(MovingWindowTest, WidenDoublesFromInitialUpToMax) {
  MovingWindow w(Cor(WindowPolicy::kWing));
  ASSERT_EQ(w.size(), 1u);
  std::vector<uint32_t> sizes;
  for (int i = 0; i < 7; ++i) {
    w.Widen(1000);
    sizes.push_back(w.size());
  }
  EXPECT_EQ(sizes, (std::vector<uint32_t>{2, 4, 8, 16, 32, 40, 40}));
  EXPECT_EQ(w.pivot(), 1000u);
}

TEST(MovingWindowTest, WidenDoublesWithOtherLimits) {
  {
    MovingWindow w(Cor(WindowPolicy::kForward, 3, 20));
    std::vector<uint32_t> sizes;
    for (int i = 0; i < 5; ++i) {
      w.Widen(50);
      sizes.push_back(w.size());
    }
    EXPECT_EQ(sizes, (std::vector<uint32_t>{6, 12, 20, 20, 20}));
  }
  {
    MovingWindow w(Cor(WindowPolicy::kWing, 5, 5));  // initial == max: nothing to grow
    w.Widen(50);
    EXPECT_EQ(w.size(), 5u);
  }
  {
    MovingWindow w(Cor(WindowPolicy::kWing, 1, 1u << 20));
    for (int i = 0; i < 20; ++i) w.Widen(7);
    EXPECT_EQ(w.size(), 1u << 20);
    w.Widen(7);
    EXPECT_EQ(w.size(), 1u << 20);
  }
}

TEST(MovingWindowTest, FixedWindowKeepsItsSizeUnderWiden) {
  PrefetchConfig config = Cor(WindowPolicy::kWing, 8, 40);
  config.fixed_window = true;
  MovingWindow w(config);
  EXPECT_EQ(Str(w.Widen(100)), "[96,105)");
  EXPECT_EQ(w.size(), 8u);
  EXPECT_EQ(Str(w.Widen(200)), "[196,205)");
  EXPECT_EQ(w.size(), 8u);
  EXPECT_TRUE(w.Widen(200).empty());  // same pivot, same size: nothing new
  EXPECT_EQ(w.size(), 8u);
  EXPECT_EQ(w.pivot(), 200u);
}

TEST(MovingWindowTest, FirstWidenPrefetchesTheWholeNewWindow) {
  MovingWindow wing(Cor(WindowPolicy::kWing));
  EXPECT_EQ(Str(wing.Widen(10)), "[9,12)");  // size 2, wing 1
  EXPECT_TRUE(wing.has_pivot());
  EXPECT_EQ(wing.pivot(), 10u);

  MovingWindow forward(Cor(WindowPolicy::kForward));
  EXPECT_EQ(Str(forward.Widen(10)), "[11,13)");  // size 2 after the pivot
}

TEST(MovingWindowTest, WidenAroundSamePivotReturnsBothNewEnds) {
  MovingWindow w(Cor(WindowPolicy::kWing), 10, 4);  // [8,13)
  EXPECT_EQ(Str(w.Widen(10)), "[6,8) [13,15)");     // size 8: [6,15)
  EXPECT_EQ(w.size(), 8u);
  EXPECT_EQ(w.pivot(), 10u);
  EXPECT_EQ(Str(w.Widen(10)), "[2,6) [15,19)");  // size 16: [2,19)
}

TEST(MovingWindowTest, WidenAtFileStartReturnsOnlyTheRightEnd) {
  MovingWindow w(Cor(WindowPolicy::kWing), 0, 4);     // [0,3)
  EXPECT_EQ(Str(w.Widen(0)), "[3,5)");                // size 8: [0,5)
  MovingWindow near(Cor(WindowPolicy::kWing), 1, 4);  // [0,4)
  EXPECT_EQ(Str(near.Widen(1)), "[4,6)");             // size 8: [0,6)
}

TEST(MovingWindowTest, WidenToAnotherPivotReturnsNewMinusOld) {
  MovingWindow w(Cor(WindowPolicy::kWing), 10, 4);           // [8,13)
  EXPECT_EQ(Str(w.Widen(14)), "[13,19)");                    // size 8: [10,19)
  MovingWindow forward(Cor(WindowPolicy::kForward), 10, 4);  // [11,15)
  EXPECT_EQ(Str(forward.Widen(12)), "[15,21)");              // size 8: [13,21)
  MovingWindow far(Cor(WindowPolicy::kWing), 10, 4);
  EXPECT_EQ(Str(far.Widen(500)), "[496,505)");
}

// ---- MovingWindow: MoveTo ----

TEST(MovingWindowTest, MoveToForwardByOnePrefetchesOneObjectAtTheFront) {
  MovingWindow w(Cor(WindowPolicy::kWing), 10, 4);  // [8,13)
  for (uint64_t next = 11; next < 30; ++next) {
    EXPECT_EQ(Str(w.MoveTo(next)), Str(IndexRange{next + 2, next + 3})) << next;
    EXPECT_EQ(w.size(), 4u);
    EXPECT_EQ(w.pivot(), next);
  }
}

TEST(MovingWindowTest, MoveToBackwardPrefetchesAtTheBack) {
  MovingWindow w(Cor(WindowPolicy::kWing), 10, 4);  // [8,13)
  EXPECT_EQ(Str(w.MoveTo(9)), "[7,8)");
  EXPECT_EQ(Str(w.MoveTo(7)), "[5,7)");
  EXPECT_EQ(w.size(), 4u);
  EXPECT_EQ(Str(w.Extent()), "[5,10)");
}

TEST(MovingWindowTest, MoveToFarAwayPrefetchesTheWholeNewExtent) {
  MovingWindow w(Cor(WindowPolicy::kWing), 10, 4);
  EXPECT_EQ(Str(w.MoveTo(100)), "[98,103)");
  EXPECT_EQ(Str(w.MoveTo(3)), "[1,6)");
  EXPECT_EQ(w.size(), 4u);
}

TEST(MovingWindowTest, MoveToSamePivotPrefetchesNothing) {
  MovingWindow w(Cor(WindowPolicy::kWing), 10, 4);
  EXPECT_TRUE(w.MoveTo(10).empty());
  EXPECT_EQ(w.size(), 4u);
}

TEST(MovingWindowTest, MoveToTowardsFileStartClampsAtZero) {
  MovingWindow w(Cor(WindowPolicy::kWing), 4, 8);  // [0,9)
  EXPECT_TRUE(w.MoveTo(3).empty());                // [0,8) is inside [0,9)
  EXPECT_EQ(Str(w.Extent()), "[0,8)");
  EXPECT_EQ(Str(w.MoveTo(6)), "[8,11)");  // [2,11)
}

TEST(MovingWindowTest, ForwardMoveToPrefetchesTheNewTail) {
  MovingWindow w(Cor(WindowPolicy::kForward), 10, 4);  // [11,15)
  EXPECT_EQ(Str(w.MoveTo(11)), "[15,16)");
  EXPECT_EQ(Str(w.MoveTo(14)), "[16,19)");
  EXPECT_EQ(Str(w.MoveTo(12)), "[13,15)");  // backwards: [13,17)
  EXPECT_EQ(w.size(), 4u);
}

TEST(MovingWindowTest, MoveToReturnsExactlyNewExtentMinusOld) {
  // Exhaustive over small pivots: the returned ranges are ascending, disjoint, inside the new
  // extent, outside the old one, and together with the old extent cover the new one.
  for (WindowPolicy policy : {WindowPolicy::kWing, WindowPolicy::kForward}) {
    for (uint32_t size : {1u, 2u, 3u, 8u}) {
      for (uint64_t from = 0; from < 24; ++from) {
        for (uint64_t to = 0; to < 24; ++to) {
          MovingWindow w(Cor(policy), from, size);
          const IndexRange old_extent = w.Extent();
          const std::vector<IndexRange> diff = w.MoveTo(to);
          const IndexRange new_extent = w.Extent();
          std::set<uint64_t> got;
          uint64_t last_end = 0;
          for (const IndexRange& r : diff) {
            EXPECT_FALSE(r.empty());
            EXPECT_GE(r.begin, last_end);
            last_end = r.end;
            for (uint64_t i = r.begin; i < r.end; ++i) got.insert(i);
          }
          std::set<uint64_t> want;
          for (uint64_t i = new_extent.begin; i < new_extent.end; ++i) {
            if (!old_extent.Contains(i)) want.insert(i);
          }
          EXPECT_EQ(got, want) << WindowPolicyName(policy) << " size " << size << " " << from
                               << " -> " << to << ": " << Str(diff);
        }
      }
    }
  }
}

// ---- COR: a sequential client and its replica OSD ----

// The client keeps a copy of the replica OSD's window. A read inside the window goes to the
// replica OSD, which moves the pivot (the client moves its copy on the reply); a read outside
// it goes to the original OSD, which notifies the replica OSD, which widens the window and
// announces it to the client.
struct CorSimulation {
  explicit CorSimulation(const PrefetchConfig& config)
      : config(config), osd(config), client(config) {}

  void Read(uint64_t index) {
    // Everything read after the first object must already have been prefetched.
    if (prefetched.count(index) > 0) ++prefetched_before_read;
    if (client.Covers(index)) {
      ++replica_reads;
      Prefetch(osd.MoveTo(index));
      client.MoveTo(index);
    } else {
      ++original_reads;
      Prefetch(osd.Widen(index));
      client = MovingWindow(config, osd.pivot(), osd.size());
    }
  }

  void Prefetch(const std::vector<IndexRange>& ranges) {
    for (const IndexRange& r : ranges) {
      for (uint64_t i = r.begin; i < r.end; ++i) {
        if (!prefetched.insert(i).second) ++prefetched_twice;
      }
    }
  }

  PrefetchConfig config;
  MovingWindow osd;
  MovingWindow client;
  std::set<uint64_t> prefetched;
  uint64_t prefetched_twice = 0;
  uint64_t prefetched_before_read = 0;
  uint64_t replica_reads = 0;
  uint64_t original_reads = 0;
};

TEST(CorProtocolTest, SequentialWingReaderIsPrefetchedAheadAndNeverTwice) {
  CorSimulation sim(Cor(WindowPolicy::kWing));
  for (uint64_t i = 0; i < 200; ++i) {
    if (i > 0) {
      EXPECT_TRUE(sim.prefetched.count(i) > 0) << "object " << i << " read before prefetched";
      EXPECT_TRUE(sim.client.Covers(i)) << "object " << i << " read from the original OSD";
    }
    sim.Read(i);
    EXPECT_EQ(sim.client.pivot(), sim.osd.pivot());
    EXPECT_EQ(sim.client.size(), sim.osd.size());
    EXPECT_EQ(Str(sim.client.Extent()), Str(sim.osd.Extent()));
  }
  EXPECT_EQ(sim.prefetched_twice, 0u);
  EXPECT_EQ(sim.prefetched_before_read, 199u);  // all but object 0
  EXPECT_EQ(sim.original_reads, 1u);            // only the first read missed the window
  EXPECT_EQ(sim.replica_reads, 199u);
  // Sequential in-window reads never widen: the window stays at the first doubled size.
  EXPECT_EQ(sim.osd.size(), 2u);
  // Objects 0..200 were prefetched (the last move prefetched one object past the end read).
  EXPECT_EQ(sim.prefetched.size(), 201u);
  EXPECT_EQ(*sim.prefetched.begin(), 0u);
  EXPECT_EQ(*sim.prefetched.rbegin(), 200u);
}

TEST(CorProtocolTest, SequentialForwardReaderIsPrefetchedAheadAndNeverTwice) {
  CorSimulation sim(Cor(WindowPolicy::kForward));
  for (uint64_t i = 0; i < 200; ++i) {
    if (i > 0) {
      EXPECT_TRUE(sim.prefetched.count(i) > 0) << "object " << i << " read before prefetched";
    }
    sim.Read(i);
    EXPECT_EQ(Str(sim.client.Extent()), Str(sim.osd.Extent()));
  }
  EXPECT_EQ(sim.prefetched_twice, 0u);
  EXPECT_EQ(sim.prefetched_before_read, 199u);
  EXPECT_EQ(sim.original_reads, 1u);
  EXPECT_EQ(sim.prefetched.count(0), 0u);  // a forward window never holds its pivot
}

TEST(CorProtocolTest, StridedReaderWidensOnEveryMissUpToMax) {
  // Reads 10 objects apart always leave a small window, so the OSD widens until the window
  // reaches the next read; from then on the reads hit the replica.
  CorSimulation sim(Cor(WindowPolicy::kWing));
  std::vector<uint32_t> sizes;
  for (uint64_t i = 0; i < 400; i += 10) {
    sim.Read(i);
    sizes.push_back(sim.osd.size());
  }
  // wing lengths 1, 2, 4, 8 miss the next read 10 away; 16 (size 32) covers it.
  EXPECT_EQ(std::vector<uint32_t>(sizes.begin(), sizes.begin() + 6),
            (std::vector<uint32_t>{2, 4, 8, 16, 32, 32}));
  EXPECT_EQ(sim.original_reads, 5u);
  EXPECT_EQ(sim.prefetched_twice, 0u);
}

// ---- SPA ----

TEST(SpaTest, DemandMissStartsInitialWindowAfterTheObject) {
  std::optional<Readahead> ra = SpaOnDemandRead(Spa(), 5, /*was_cached=*/false, std::nullopt);
  ASSERT_TRUE(ra.has_value());
  EXPECT_EQ(Str(ra->window), "[6,7)");
  EXPECT_EQ(ra->marker, (ReadaheadMarker{6, 1}));

  ra = SpaOnDemandRead(Spa(4, 40), 0, false, std::nullopt);
  ASSERT_TRUE(ra.has_value());
  EXPECT_EQ(Str(ra->window), "[1,5)");
  EXPECT_EQ(ra->marker.window_start, ra->window.begin);  // the marker sits on the first object
  EXPECT_EQ(ra->marker.window_size, 4u);
}

TEST(SpaTest, CachedObjectWithoutMarkerPrefetchesNothing) {
  EXPECT_FALSE(SpaOnDemandRead(Spa(), 5, /*was_cached=*/true, std::nullopt).has_value());
  EXPECT_FALSE(SpaOnDemandRead(Spa(4, 40), 0, true, std::nullopt).has_value());
}

TEST(SpaTest, MarkerHitPrefetchesTheFollowingWindowDoubled) {
  std::optional<Readahead> ra = SpaOnDemandRead(Spa(), 6, true, ReadaheadMarker{6, 4});
  ASSERT_TRUE(ra.has_value());
  EXPECT_EQ(Str(ra->window), "[10,18)");
  EXPECT_EQ(ra->marker, (ReadaheadMarker{10, 8}));

  ra = SpaOnDemandRead(Spa(), 1, true, ReadaheadMarker{1, 1});
  ASSERT_TRUE(ra.has_value());
  EXPECT_EQ(Str(ra->window), "[2,4)");
  EXPECT_EQ(ra->marker, (ReadaheadMarker{2, 2}));
}

TEST(SpaTest, MarkerHitWindowIsCappedAtMax) {
  std::optional<Readahead> ra = SpaOnDemandRead(Spa(), 100, true, ReadaheadMarker{100, 32});
  ASSERT_TRUE(ra.has_value());
  EXPECT_EQ(Str(ra->window), "[132,172)");
  EXPECT_EQ(ra->marker, (ReadaheadMarker{132, 40}));

  ra = SpaOnDemandRead(Spa(), 100, true, ReadaheadMarker{100, 40});
  ASSERT_TRUE(ra.has_value());
  EXPECT_EQ(Str(ra->window), "[140,180)");
  EXPECT_EQ(ra->marker, (ReadaheadMarker{140, 40}));
}

TEST(SpaTest, FixedModeKeepsTheWindowSize) {
  PrefetchConfig config = Spa(4, 40);
  config.fixed_window = true;
  std::optional<Readahead> ra = SpaOnDemandRead(config, 6, true, ReadaheadMarker{6, 4});
  ASSERT_TRUE(ra.has_value());
  EXPECT_EQ(Str(ra->window), "[10,14)");
  EXPECT_EQ(ra->marker, (ReadaheadMarker{10, 4}));

  ra = SpaOnDemandRead(config, 20, false, std::nullopt);
  ASSERT_TRUE(ra.has_value());
  EXPECT_EQ(Str(ra->window), "[21,25)");
}

TEST(SpaTest, SequentialReaderWindowsGrowToMaxAndStayAhead) {
  const PrefetchConfig config = Spa();
  std::set<uint64_t> cached;
  std::map<uint64_t, ReadaheadMarker> markers;  // object -> the marker it carries
  std::vector<uint32_t> sizes;
  uint64_t prefetched_twice = 0;
  for (uint64_t i = 0; i <= 300; ++i) {
    const bool was_cached = cached.count(i) > 0;
    if (i > 0) {
      EXPECT_TRUE(was_cached) << "object " << i << " read before prefetched";
    }
    std::optional<ReadaheadMarker> marker;
    if (auto it = markers.find(i); it != markers.end()) {
      marker = it->second;
      markers.erase(it);  // consumed
    }
    std::optional<Readahead> ra = SpaOnDemandRead(config, i, was_cached, marker);
    cached.insert(i);
    if (!ra) continue;
    EXPECT_EQ(ra->marker.window_start, ra->window.begin);
    EXPECT_EQ(ra->marker.window_size, ra->window.size());
    EXPECT_GT(ra->window.begin, i);  // never behind the reader
    sizes.push_back(static_cast<uint32_t>(ra->window.size()));
    for (uint64_t j = ra->window.begin; j < ra->window.end; ++j) {
      if (!cached.insert(j).second) ++prefetched_twice;
    }
    markers[ra->window.begin] = ra->marker;
  }
  // Windows start at 1, 2, 4, 8, 16, 32, 64, 104, ..., 304 (opened by the read of 264).
  EXPECT_EQ(sizes, (std::vector<uint32_t>{1, 2, 4, 8, 16, 32, 40, 40, 40, 40, 40, 40, 40}));
  EXPECT_EQ(prefetched_twice, 0u);
}

}  // namespace
}  // namespace orthofs
