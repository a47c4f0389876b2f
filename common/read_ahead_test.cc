#include "common/read_ahead.h"

#include <gtest/gtest.h>

#include <set>

namespace orthofs {
namespace {

constexpr uint32_t kNoCap = 1000;

TEST(ReadAheadTest, FileReadFromItsStartFetchesAheadAtOnce) {
  ReadAhead ra;
  EXPECT_EQ(ra.OnRead(7, 0, 0, 100, kNoCap), (ObjectRange{1, 3}));
}

TEST(ReadAheadTest, ReadInTheMiddleStartsAStreamOnlyWhenContinued) {
  ReadAhead ra;
  EXPECT_TRUE(ra.OnRead(7, 50, 50, 100, kNoCap).empty());
  EXPECT_EQ(ra.OnRead(7, 51, 51, 100, kNoCap), (ObjectRange{52, 54}));
}

TEST(ReadAheadTest, SequentialReaderIsKeptAheadInDoublingBatches) {
  ReadAhead ra;
  std::vector<std::pair<uint64_t, ObjectRange>> fetches;
  for (uint64_t i = 0; i < 40; ++i) {
    // Each object read twice (two FUSE requests per object), as a 64 KiB reader would.
    for (int twice = 0; twice < 2; ++twice) {
      ObjectRange r = ra.OnRead(1, i, i, 1000, kNoCap);
      if (!r.empty()) fetches.emplace_back(i, r);
    }
  }
  ASSERT_GE(fetches.size(), 4u);
  EXPECT_EQ(fetches[0], (std::pair<uint64_t, ObjectRange>{0, {1, 3}}));
  EXPECT_EQ(fetches[1], (std::pair<uint64_t, ObjectRange>{1, {3, 6}}));
  EXPECT_EQ(fetches[2], (std::pair<uint64_t, ObjectRange>{3, {6, 12}}));
  EXPECT_EQ(fetches[3], (std::pair<uint64_t, ObjectRange>{7, {12, 24}}));
  // Every object after the first is fetched exactly once, in order, and never more than the
  // maximum window ahead of the reader.
  uint64_t next = 1;
  for (const auto& [at, r] : fetches) {
    EXPECT_EQ(r.begin, next);
    EXPECT_LE(r.end, at + 1 + ReadAheadOptions{}.max_objects);
    next = r.end;
  }
  EXPECT_GE(next, 41u);
}

TEST(ReadAheadTest, NeverFetchesBeyondTheEndOfTheFile) {
  ReadAhead ra;
  EXPECT_EQ(ra.OnRead(1, 0, 0, 2, kNoCap), (ObjectRange{1, 2}));
  EXPECT_TRUE(ra.OnRead(1, 1, 1, 2, kNoCap).empty());
  ReadAhead single;
  EXPECT_TRUE(single.OnRead(1, 0, 0, 1, kNoCap).empty());
}

TEST(ReadAheadTest, CapLimitsTheWindowAndZeroStopsReadAhead) {
  ReadAhead ra;
  EXPECT_EQ(ra.OnRead(1, 0, 0, 1000, 1), (ObjectRange{1, 2}));
  for (uint64_t i = 1; i < 20; ++i) {
    const ObjectRange r = ra.OnRead(1, i, i, 1000, 1);
    EXPECT_LE(r.end, i + 2) << i;
  }
  ReadAhead pressured;
  EXPECT_TRUE(pressured.OnRead(1, 0, 0, 1000, 0).empty());
  EXPECT_TRUE(pressured.OnRead(1, 1, 1, 1000, 0).empty());
}

TEST(ReadAheadTest, RandomReaderFetchesNothing) {
  ReadAhead ra;
  uint64_t fetched = 0;
  uint64_t x = 12345;
  for (int i = 0; i < 10000; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const uint64_t object = 1 + (x >> 33) % 800;  // never object 0
    fetched += ra.OnRead(1, object, object, 801, kNoCap).size();
  }
  // Only a jump that happens to land on the next object starts a (short) stream.
  EXPECT_LT(fetched, 200u);
}

TEST(ReadAheadTest, JumpEndsTheStreamAndTheNewPlaceStartsOver) {
  ReadAhead ra;
  for (uint64_t i = 0; i < 10; ++i) ra.OnRead(1, i, i, 1000, kNoCap);
  EXPECT_TRUE(ra.OnRead(1, 500, 500, 1000, kNoCap).empty());
  EXPECT_EQ(ra.OnRead(1, 501, 501, 1000, kNoCap), (ObjectRange{502, 504}));
  // Far back is a jump too.
  EXPECT_TRUE(ra.OnRead(1, 3, 3, 1000, kNoCap).empty());
  EXPECT_EQ(ra.OnRead(1, 4, 4, 1000, kNoCap), (ObjectRange{5, 7}));
}

TEST(ReadAheadTest, RequestsSlightlyOutOfOrderKeepTheStream) {
  ReadAhead ra;
  for (uint64_t i = 0; i < 8; ++i) ra.OnRead(1, i, i, 1000, kNoCap);
  // 9 before 8 (inside what was fetched ahead), then the late 8: neither a jump.
  std::set<uint64_t> fetched;
  for (uint64_t object : {9, 8, 10, 12, 11, 13, 14, 16, 15, 17}) {
    const ObjectRange r = ra.OnRead(1, object, object, 1000, kNoCap);
    for (uint64_t o = r.begin; o < r.end; ++o) EXPECT_TRUE(fetched.insert(o).second) << o;
  }
  EXPECT_FALSE(fetched.empty());
  EXPECT_GT(*fetched.rbegin(), 20u);
}

TEST(ReadAheadTest, ReadSpanningObjectsCountsItsLastObject) {
  ReadAhead ra;
  EXPECT_EQ(ra.OnRead(1, 0, 1, 1000, kNoCap), (ObjectRange{2, 4}));
}

TEST(ReadAheadTest, FilesHaveTheirOwnStreamsAndTheOldestIsDropped) {
  ReadAhead ra(ReadAheadOptions{.initial_objects = 2, .max_objects = 16, .max_files = 2});
  EXPECT_FALSE(ra.OnRead(1, 0, 0, 100, kNoCap).empty());
  EXPECT_FALSE(ra.OnRead(2, 0, 0, 100, kNoCap).empty());
  EXPECT_FALSE(ra.OnRead(3, 0, 0, 100, kNoCap).empty());
  EXPECT_EQ(ra.tracked_files(), 2u);
  // File 1's stream was dropped: object 1 is a first read in the middle of the file.
  EXPECT_TRUE(ra.OnRead(1, 1, 1, 100, kNoCap).empty());
  // File 3 still streams.
  EXPECT_EQ(ra.OnRead(3, 1, 1, 100, kNoCap), (ObjectRange{3, 6}));
}

TEST(ReadAheadTest, ForgetEndsTheStream) {
  ReadAhead ra;
  ra.OnRead(1, 0, 0, 100, kNoCap);
  ra.Forget(1);
  ra.Forget(99);
  EXPECT_EQ(ra.tracked_files(), 0u);
  EXPECT_TRUE(ra.OnRead(1, 1, 1, 100, kNoCap).empty());
}

ReadAheadOptions FillingUpTo(uint64_t max_fill_objects) {
  ReadAheadOptions o;
  o.max_fill_objects = max_fill_objects;
  return o;
}

// Every object NextToFill hands out for the file, in order.
std::vector<uint64_t> DrainFill(ReadAhead* ra, uint64_t fno) {
  std::vector<uint64_t> out;
  while (std::optional<uint64_t> next = ra->NextToFill(fno)) out.push_back(*next);
  return out;
}

std::vector<uint64_t> Iota(uint64_t n) {
  std::vector<uint64_t> v(n);
  for (uint64_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

TEST(ReadAheadTest, SmallFileReadAtRandomIsFilledWholeOnce) {
  ReadAhead ra(FillingUpTo(100));
  const uint64_t jumps[] = {40, 7, 90, 13};  // the fourth jump starts the fill
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_FALSE(ra.NextToFill(1).has_value()) << "before jump " << i;
    EXPECT_TRUE(ra.OnRead(1, jumps[i], jumps[i], 100, kNoCap).empty());
  }
  EXPECT_EQ(DrainFill(&ra, 1), Iota(100));
  // Further jumps do not start it over.
  for (uint64_t object : {3, 70, 20, 55, 81}) ra.OnRead(1, object, object, 100, kNoCap);
  EXPECT_FALSE(ra.NextToFill(1).has_value());
}

TEST(ReadAheadTest, FillIsHandedOutPieceByPieceAndStopsWhenAsked) {
  ReadAhead ra(FillingUpTo(100));
  for (uint64_t object : {40, 7, 90, 13}) ra.OnRead(1, object, object, 50, kNoCap);
  EXPECT_EQ(ra.NextToFill(1), 0u);
  EXPECT_EQ(ra.NextToFill(1), 1u);
  EXPECT_FALSE(ra.NextToFill(2).has_value()) << "another file";
  ra.StopFilling(1, 1);
  EXPECT_FALSE(ra.NextToFill(1).has_value());
}

// A failed fetch pauses the fill; it resumes from the lowest failed object after another
// jumps_to_fill jumps (the outage may be over), and pauses again if that fails too.
TEST(ReadAheadTest, FillPausedByAFailedFetchResumesAfterMoreJumps) {
  ReadAhead ra(FillingUpTo(100));
  for (uint64_t object : {40, 7, 90, 13}) ra.OnRead(1, object, object, 50, kNoCap);
  for (uint64_t i = 0; i < 10; ++i) EXPECT_EQ(ra.NextToFill(1), i);
  ra.StopFilling(1, 8);
  ra.StopFilling(1, 6);  // fetches in flight fail too
  ra.StopFilling(1, 9);
  for (uint64_t object : {30, 2, 44}) {
    EXPECT_FALSE(ra.NextToFill(1).has_value()) << "paused, before jump to " << object;
    ra.OnRead(1, object, object, 50, kNoCap);
  }
  EXPECT_FALSE(ra.NextToFill(1).has_value());
  ra.OnRead(1, 17, 17, 50, kNoCap);  // the fourth jump since the pause
  EXPECT_EQ(DrainFill(&ra, 1).front(), 6u);
  ra.StopFilling(1, 20);
  for (uint64_t object : {3, 33, 11, 48}) ra.OnRead(1, object, object, 50, kNoCap);
  std::vector<uint64_t> rest = DrainFill(&ra, 1);
  ASSERT_FALSE(rest.empty());
  EXPECT_EQ(rest.front(), 20u);
  EXPECT_EQ(rest.back(), 49u);
  ra.StopFilling(7, 3);  // a file never filled: nothing to pause or resume
  for (uint64_t object : {1, 9, 5, 12, 2}) ra.OnRead(7, object, object, 500, kNoCap);
  EXPECT_FALSE(ra.NextToFill(7).has_value());
}

TEST(ReadAheadTest, LargeFilesAndSequentialReadersAreNotFilled) {
  ReadAhead ra(FillingUpTo(100));
  for (uint64_t object : {40, 7, 90, 13, 60, 2}) ra.OnRead(1, object, object, 101, kNoCap);
  EXPECT_FALSE(ra.NextToFill(1).has_value()) << "101 objects, at most 100 filled";
  for (uint64_t i = 0; i < 100; ++i) ra.OnRead(2, i, i, 100, kNoCap);
  EXPECT_FALSE(ra.NextToFill(2).has_value()) << "a sequential reader";
  ReadAhead off;  // max_fill_objects 0: never
  for (uint64_t object : {40, 7, 90, 13, 60, 2}) off.OnRead(1, object, object, 100, kNoCap);
  EXPECT_FALSE(off.NextToFill(1).has_value());
}

TEST(ReadAheadTest, ForgetEndsTheFill) {
  ReadAhead ra(FillingUpTo(100));
  for (uint64_t object : {40, 7, 90, 13}) ra.OnRead(1, object, object, 100, kNoCap);
  EXPECT_EQ(ra.NextToFill(1), 0u);
  ra.Forget(1);  // the file changed
  EXPECT_FALSE(ra.NextToFill(1).has_value());
}

}  // namespace
}  // namespace orthofs
