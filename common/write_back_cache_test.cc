// The client's write-back object cache: reads, fills, write-back jobs, accounting, eviction,
// truncation and invalidation.
#include "common/write_back_cache.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace orthofs {
namespace {

using RangeMap = std::map<uint64_t, uint64_t>;

constexpr uint64_t kObjectSize = 16;
constexpr uint64_t kCapacity = 1024;  // 64 whole objects
constexpr uint64_t kObjectsInCapacity = kCapacity / kObjectSize;
constexpr std::chrono::milliseconds kMaxAge{5000};

WriteBackOptions Options() {
  WriteBackOptions o;
  o.capacity_bytes = kCapacity;
  o.object_size = kObjectSize;
  o.max_dirty_age = kMaxAge;
  o.pressure_share = 0.5;
  return o;
}

CacheClock::time_point T(int64_t seconds) {
  return CacheClock::time_point{} + std::chrono::seconds(seconds);
}

// A time long after everything written in a test: every dirty object is due by age.
CacheClock::time_point Late() { return T(1000000); }

// The object's bytes if every one of them is known, nullopt on a miss.
std::optional<std::string> ReadBytes(WriteBackCache& cache, const ObjectKey& key, uint64_t offset,
                                     uint64_t length) {
  SharedBytes out;
  if (!cache.Read(key, offset, length, &out)) return std::nullopt;
  EXPECT_EQ(out.size(), length);
  return out.Join();
}

// What a reader that fetched `stored` with `token` gets.
std::string FillWithToken(WriteBackCache& cache, const ObjectKey& key, uint64_t token,
                          const std::string& stored, uint64_t offset = 0,
                          uint64_t length = kObjectSize) {
  SharedBytes out;
  cache.FillAndRead(key, token, stored, offset, length, &out);
  EXPECT_EQ(out.size(), length);
  return out.Join();
}

std::string Fill(WriteBackCache& cache, const ObjectKey& key, const std::string& stored,
                 uint64_t offset = 0, uint64_t length = kObjectSize) {
  return FillWithToken(cache, key, cache.FillToken(), stored, offset, length);
}

std::string Zeros(uint64_t n) { return std::string(n, '\0'); }

// Distinct content per object so that mixing objects up shows.
std::string Pattern(uint64_t seed, uint64_t length = kObjectSize) {
  std::string s(length, '\0');
  for (uint64_t i = 0; i < length; ++i) s[i] = static_cast<char>('A' + (seed * 7 + i) % 26);
  return s;
}

ByteRanges Ranges(const RangeMap& ranges) {
  ByteRanges r;
  for (const auto& [begin, end] : ranges) r.Add(begin, end);
  return r;
}

// Takes every job TakeFlushOf gives for the file, completing each with `ok`.
std::vector<FlushJob> DrainFile(WriteBackCache& cache, uint64_t fno, bool ok = true) {
  std::vector<FlushJob> jobs;
  for (int guard = 0; guard < 10000; ++guard) {
    std::optional<FlushJob> job = cache.TakeFlushOf(fno);
    if (!job) break;
    cache.FlushDone(*job, ok);
    jobs.push_back(*job);
  }
  return jobs;
}

// --- Reads and writes ------------------------------------------------------------------------

TEST(WriteBackCacheTest, EmptyCache) {
  WriteBackCache cache(Options());
  EXPECT_EQ(cache.options().object_size, kObjectSize);
  EXPECT_EQ(cache.options().capacity_bytes, kCapacity);
  WriteBackStats s = cache.stats();
  EXPECT_EQ(s.entries, 0u);
  EXPECT_EQ(s.bytes, 0u);
  EXPECT_EQ(s.dirty_bytes, 0u);
  EXPECT_EQ(s.pinned_bytes, 0u);
  EXPECT_FALSE(cache.HasUnwritten(1));
  EXPECT_FALSE(cache.HasInFlight(1));
  EXPECT_FALSE(cache.UnderPressure());
  EXPECT_FALSE(cache.Full());
  EXPECT_FALSE(cache.TakeFlushOf(1).has_value());
  EXPECT_FALSE(cache.TakeDueFlush(Late()).has_value());
  EXPECT_FALSE(cache.TakeOldestFlush().has_value());
}

TEST(WriteBackCacheTest, ReadOfUnknownObjectMisses) {
  WriteBackCache cache(Options());
  EXPECT_FALSE(ReadBytes(cache, {1, 0}, 0, kObjectSize).has_value());
  EXPECT_FALSE(ReadBytes(cache, {1, 0}, 3, 1).has_value());
  WriteBackStats s = cache.stats();
  EXPECT_EQ(s.read_misses, 2u);
  EXPECT_EQ(s.read_hits, 0u);
  EXPECT_EQ(s.entries, 0u);
}

TEST(WriteBackCacheTest, WrittenBytesReadBack) {
  WriteBackCache cache(Options());
  cache.Write({1, 0}, 4, "hello", T(0));
  EXPECT_EQ(ReadBytes(cache, {1, 0}, 4, 5), "hello");
  EXPECT_EQ(ReadBytes(cache, {1, 0}, 5, 3), "ell");
  EXPECT_EQ(ReadBytes(cache, {1, 0}, 8, 1), "o");
  WriteBackStats s = cache.stats();
  EXPECT_EQ(s.read_hits, 3u);
  EXPECT_EQ(s.read_misses, 0u);
  EXPECT_EQ(s.entries, 1u);
}

TEST(WriteBackCacheTest, ReadTouchingUnwrittenBytesMisses) {
  WriteBackCache cache(Options());
  cache.Write({1, 0}, 4, "abcd", T(0));
  cache.Write({1, 0}, 10, "xy", T(0));
  EXPECT_FALSE(ReadBytes(cache, {1, 0}, 3, 2).has_value());  // byte 3 unwritten
  EXPECT_FALSE(ReadBytes(cache, {1, 0}, 7, 2).has_value());  // byte 8 unwritten
  EXPECT_FALSE(ReadBytes(cache, {1, 0}, 4, 8).has_value());  // gap [8, 10)
  EXPECT_FALSE(ReadBytes(cache, {1, 0}, 0, kObjectSize).has_value());
  EXPECT_EQ(ReadBytes(cache, {1, 0}, 10, 2), "xy");
  EXPECT_EQ(cache.stats().read_misses, 4u);
  EXPECT_EQ(cache.stats().read_hits, 1u);
}

TEST(WriteBackCacheTest, LaterWriteOverwritesEarlier) {
  WriteBackCache cache(Options());
  cache.Write({1, 0}, 0, "aaaaaaaa", T(0));
  cache.Write({1, 0}, 2, "BBB", T(1));
  EXPECT_EQ(ReadBytes(cache, {1, 0}, 0, 8), "aaBBBaaa");
}

TEST(WriteBackCacheTest, ObjectsAreKeyedByFileAndIndex) {
  WriteBackCache cache(Options());
  cache.Write({1, 0}, 0, "one-zero", T(0));
  cache.Write({1, 1}, 0, "one-one!", T(0));
  cache.Write({2, 0}, 0, "two-zero", T(0));
  EXPECT_EQ(ReadBytes(cache, {1, 0}, 0, 8), "one-zero");
  EXPECT_EQ(ReadBytes(cache, {1, 1}, 0, 8), "one-one!");
  EXPECT_EQ(ReadBytes(cache, {2, 0}, 0, 8), "two-zero");
  EXPECT_FALSE(ReadBytes(cache, {2, 1}, 0, 8).has_value());
  EXPECT_EQ(cache.stats().entries, 3u);
}

// --- Fills -----------------------------------------------------------------------------------

TEST(WriteBackCacheTest, FillReturnsStoredBytesAndThenHits) {
  WriteBackCache cache(Options());
  std::string stored = Pattern(1);
  EXPECT_EQ(Fill(cache, {1, 0}, stored), stored);
  EXPECT_EQ(cache.stats().fills, 1u);
  EXPECT_EQ(ReadBytes(cache, {1, 0}, 0, kObjectSize), stored);
  EXPECT_EQ(ReadBytes(cache, {1, 0}, 5, 3), stored.substr(5, 3));
  EXPECT_EQ(cache.stats().entries, 1u);
  EXPECT_EQ(cache.stats().bytes, kObjectSize);
  EXPECT_EQ(cache.stats().dirty_bytes, 0u);
  EXPECT_EQ(cache.stats().pinned_bytes, 0u);
}

TEST(WriteBackCacheTest, FreeBytesIsTheRoomLeftBeforeAnEviction) {
  WriteBackCache cache(Options());
  EXPECT_EQ(cache.FreeBytes(), kCapacity);
  Fill(cache, {1, 0}, Pattern(1));
  EXPECT_EQ(cache.FreeBytes(), kCapacity - kObjectSize);
  for (uint64_t i = 0; i < 2 * kObjectsInCapacity; ++i) Fill(cache, {2, i}, Pattern(2));
  EXPECT_EQ(cache.FreeBytes(), 0u);
  EXPECT_EQ(cache.stats().bytes, kCapacity);
}

// --- Handing objects over to the kernel's page cache (Delivered) -------------------------------

TEST(WriteBackCacheTest, CleanObjectLeavesOnceTheKernelHadEveryByte) {
  WriteBackCache cache(Options());
  const std::string stored = Pattern(1);
  ASSERT_EQ(Fill(cache, {1, 0}, stored, 0, 4), stored.substr(0, 4));
  // Out of order, overlapping, and a zero-length read: not whole yet.
  EXPECT_FALSE(cache.Delivered({1, 0}, 8, 8, kObjectSize));
  EXPECT_FALSE(cache.Delivered({1, 0}, 2, 4, kObjectSize));
  EXPECT_FALSE(cache.Delivered({1, 0}, 0, 0, kObjectSize));
  EXPECT_EQ(ReadBytes(cache, {1, 0}, 0, kObjectSize), stored);
  EXPECT_FALSE(cache.Delivered({1, 0}, 5, 3, kObjectSize));  // [2, 16)
  EXPECT_EQ(cache.stats().delivered_drops, 0u);
  EXPECT_TRUE(cache.Delivered({1, 0}, 0, 3, kObjectSize));  // [0, 16): whole
  EXPECT_EQ(ReadBytes(cache, {1, 0}, 0, 1), std::nullopt);
  EXPECT_FALSE(cache.Has({1, 0}));
  const WriteBackStats stats = cache.stats();
  EXPECT_EQ(stats.delivered_drops, 1u);
  EXPECT_EQ(stats.entries, 0u);
  EXPECT_EQ(stats.bytes, 0u);
  EXPECT_EQ(stats.evictions, 0u);
  // Unknown objects: nothing to do.
  EXPECT_FALSE(cache.Delivered({1, 0}, 0, kObjectSize, kObjectSize));
  EXPECT_FALSE(cache.Delivered({9, 9}, 0, kObjectSize, kObjectSize));
}

TEST(WriteBackCacheTest, LastObjectOfAFileIsWholeAtTheFilesEnd) {
  WriteBackCache cache(Options());
  Fill(cache, {1, 2}, "tail");
  EXPECT_FALSE(cache.Delivered({1, 2}, 0, 3, 4));
  EXPECT_TRUE(cache.Delivered({1, 2}, 3, 1, 4));
  // An object end beyond the object size counts as the object size.
  Fill(cache, {1, 0}, Pattern(2));
  EXPECT_FALSE(cache.Delivered({1, 0}, 0, kObjectSize - 1, 1000));
  EXPECT_TRUE(cache.Delivered({1, 0}, kObjectSize - 1, 1, 1000));
}

TEST(WriteBackCacheTest, DirtyOrInFlightObjectsStayWhenDelivered) {
  WriteBackCache cache(Options());
  const std::string bytes = Pattern(3);
  cache.Write({1, 0}, 0, bytes, T(0));
  EXPECT_FALSE(cache.Delivered({1, 0}, 0, kObjectSize, kObjectSize));  // dirty
  std::optional<FlushJob> job = cache.TakeFlushOf(1);
  ASSERT_TRUE(job.has_value());
  EXPECT_FALSE(cache.Delivered({1, 0}, 0, kObjectSize, kObjectSize));  // being written back
  EXPECT_EQ(ReadBytes(cache, {1, 0}, 0, kObjectSize), bytes);
  cache.FlushDone(*job, true);
  // Clean now, and the kernel had it whole before: the next delivery drops it.
  EXPECT_EQ(cache.stats().delivered_drops, 0u);
  EXPECT_TRUE(cache.Delivered({1, 0}, 0, 1, kObjectSize));
  EXPECT_EQ(cache.stats().delivered_drops, 1u);
  EXPECT_FALSE(cache.HasUnwritten(1));
}

TEST(WriteBackCacheTest, WholeObjectWriteOverLongerBytesKeepsTheRest) {
  WriteBackCache cache(Options());
  cache.Write({1, 0}, 0, Pattern(5), T(0));
  cache.Write({1, 0}, 0, "abc", T(0));
  std::string want = Pattern(5);
  want.replace(0, 3, "abc");
  EXPECT_EQ(ReadBytes(cache, {1, 0}, 0, kObjectSize), want);
  cache.Write({1, 1}, 0, "xy", T(0));
  cache.Write({1, 1}, 0, "abcd", T(0));
  EXPECT_EQ(ReadBytes(cache, {1, 1}, 0, 4), "abcd");
}

TEST(WriteBackCacheTest, FillCopiesRequestedPart) {
  WriteBackCache cache(Options());
  std::string stored = Pattern(2);
  EXPECT_EQ(Fill(cache, {1, 0}, stored, 6, 4), stored.substr(6, 4));
  EXPECT_EQ(ReadBytes(cache, {1, 0}, 0, kObjectSize), stored);
}

TEST(WriteBackCacheTest, BytesBeyondStoredReadAsZeros) {
  WriteBackCache cache(Options());
  std::string expected = "short" + Zeros(kObjectSize - 5);
  EXPECT_EQ(Fill(cache, {1, 0}, "short"), expected);
  EXPECT_EQ(ReadBytes(cache, {1, 0}, 0, kObjectSize), expected);
  EXPECT_EQ(ReadBytes(cache, {1, 0}, 10, 6), Zeros(6));
}

TEST(WriteBackCacheTest, AbsentObjectReadsAsZeros) {
  WriteBackCache cache(Options());
  EXPECT_EQ(Fill(cache, {1, 3}, ""), Zeros(kObjectSize));
  EXPECT_EQ(ReadBytes(cache, {1, 3}, 0, kObjectSize), Zeros(kObjectSize));
}

// A read answers with the cached bytes themselves (the mount hands them to the kernel from
// there): a write, or the object leaving the cache, while the reader still holds them changes
// nothing it holds.
TEST(WriteBackCacheTest, AReadsBytesStayAsTheyWereWhileTheReaderHoldsThem) {
  WriteBackCache cache(Options());
  Fill(cache, {1, 0}, Pattern(1));
  SharedBytes read;
  ASSERT_TRUE(cache.Read({1, 0}, 0, kObjectSize, &read));
  cache.Write({1, 0}, 0, "new", T(0));
  EXPECT_EQ(read.Join(), Pattern(1));
  EXPECT_EQ(ReadBytes(cache, {1, 0}, 0, 3), "new");

  Fill(cache, {1, 1}, Pattern(2));
  SharedBytes delivered;
  ASSERT_TRUE(cache.Read({1, 1}, 0, kObjectSize, &delivered));
  ASSERT_TRUE(cache.Delivered({1, 1}, 0, kObjectSize, kObjectSize));
  Fill(cache, {1, 2}, Pattern(3));
  EXPECT_EQ(delivered.Join(), Pattern(2));
}

// Zeros past every byte stored or written are a hole, which the mount tells apart from a file
// deleted under its reader (FileIo::Read); zeros inside the stored bytes are data.
TEST(WriteBackCacheTest, ReadsSayWhenTheyReadPastTheStoredBytes) {
  WriteBackCache cache(Options());
  SharedBytes out;
  EXPECT_TRUE(cache.FillAndRead({1, 0}, cache.FillToken(), "", 0, 8, &out));
  EXPECT_FALSE(cache.FillAndRead({1, 1}, cache.FillToken(), "ab" + Zeros(8), 0, 10, &out));
  EXPECT_TRUE(cache.FillAndRead({1, 2}, cache.FillToken(), "ab", 0, 3, &out));
  bool hole = false;
  ASSERT_TRUE(cache.Read({1, 0}, 4, 4, &out, &hole));
  EXPECT_TRUE(hole);
  ASSERT_TRUE(cache.Read({1, 1}, 2, 8, &out, &hole));
  EXPECT_FALSE(hole);
  ASSERT_TRUE(cache.Read({1, 2}, 0, 2, &out, &hole));
  EXPECT_FALSE(hole);
  ASSERT_TRUE(cache.Read({1, 2}, 1, 2, &out, &hole));
  EXPECT_TRUE(hole);
  cache.Write({1, 0}, 0, "written", T(0));
  ASSERT_TRUE(cache.Read({1, 0}, 0, 7, &out, &hole));
  EXPECT_FALSE(hole) << "written bytes are no hole";
  // A fill the file changed under (kept nowhere) says the same of what it answers.
  const uint64_t token = cache.FillToken();
  cache.Truncate(2, 0);
  EXPECT_TRUE(cache.FillAndRead({2, 0}, token, "abc", 0, 4, &out));
  EXPECT_FALSE(cache.FillAndRead({2, 1}, token, "abc", 0, 3, &out));
}

TEST(WriteBackCacheTest, WrittenBytesWinOverStoredBytes) {
  WriteBackCache cache(Options());
  cache.Write({1, 0}, 2, "WW", T(0));
  cache.Write({1, 0}, 12, "XYZ", T(0));
  std::string stored(kObjectSize, 's');
  std::string expected = "ssWWssssssssXYZs";
  EXPECT_EQ(Fill(cache, {1, 0}, stored), expected);
  EXPECT_EQ(ReadBytes(cache, {1, 0}, 0, kObjectSize), expected);
  // The fill made no more bytes dirty.
  EXPECT_EQ(cache.stats().dirty_bytes, 5u);
}

TEST(WriteBackCacheTest, WrittenBytesBeyondShortStoredWin) {
  WriteBackCache cache(Options());
  cache.Write({1, 0}, 10, "tail", T(0));
  std::string expected = "abc" + Zeros(7) + "tail" + Zeros(2);
  EXPECT_EQ(Fill(cache, {1, 0}, "abc"), expected);
  EXPECT_EQ(ReadBytes(cache, {1, 0}, 0, kObjectSize), expected);
}

TEST(WriteBackCacheTest, SecondFillDoesNotOverwriteWrites) {
  WriteBackCache cache(Options());
  Fill(cache, {1, 0}, std::string(kObjectSize, 'a'));
  cache.Write({1, 0}, 0, "new", T(0));
  EXPECT_EQ(Fill(cache, {1, 0}, std::string(kObjectSize, 'b')).substr(0, 3), "new");
  EXPECT_EQ(ReadBytes(cache, {1, 0}, 0, 3), "new");
}

TEST(WriteBackCacheTest, StaleFillAfterTruncateIsNotKept) {
  WriteBackCache cache(Options());
  uint64_t token = cache.FillToken();
  cache.Truncate(1, 0);
  std::string stored = Pattern(3);
  const std::string out = FillWithToken(cache, {1, 0}, token, stored);
  EXPECT_EQ(out, stored);
  EXPECT_EQ(cache.stats().stale_fills, 1u);
  EXPECT_FALSE(ReadBytes(cache, {1, 0}, 0, kObjectSize).has_value());
  EXPECT_FALSE(ReadBytes(cache, {1, 0}, 0, 1).has_value());
}

TEST(WriteBackCacheTest, FillWithoutReaderKeepsTheObjectUnderLocalWrites) {
  WriteBackCache cache(Options());
  cache.Write({1, 0}, 2, "WW", T(0));
  EXPECT_FALSE(cache.Has({1, 0}));
  EXPECT_TRUE(cache.Fill({1, 0}, cache.FillToken(), std::string(kObjectSize, 's')));
  EXPECT_TRUE(cache.Has({1, 0}));
  EXPECT_EQ(ReadBytes(cache, {1, 0}, 0, kObjectSize), "ssWW" + std::string(kObjectSize - 4, 's'));
  // An absent object (a hole) is kept as zeros; a short one is zero-padded.
  EXPECT_TRUE(cache.Fill({1, 1}, cache.FillToken(), std::string()));
  EXPECT_EQ(ReadBytes(cache, {1, 1}, 0, kObjectSize), Zeros(kObjectSize));
  EXPECT_TRUE(cache.Fill({1, 2}, cache.FillToken(), "abc"));
  EXPECT_EQ(ReadBytes(cache, {1, 2}, 0, kObjectSize), "abc" + Zeros(kObjectSize - 3));
  EXPECT_EQ(cache.stats().fills, 3u);
}

TEST(WriteBackCacheTest, StoredBytesBeyondTheObjectSizeAreCut) {
  WriteBackCache cache(Options());
  const std::string longer = Pattern(6, kObjectSize + 5);
  EXPECT_TRUE(cache.Fill({1, 0}, cache.FillToken(), longer));
  EXPECT_EQ(cache.stats().bytes, kObjectSize);
  EXPECT_EQ(ReadBytes(cache, {1, 0}, 0, kObjectSize), longer.substr(0, kObjectSize));
  EXPECT_EQ(Fill(cache, {1, 1}, longer), longer.substr(0, kObjectSize));
  EXPECT_EQ(cache.stats().bytes, 2 * kObjectSize);
  // A stale fill answers from the stored bytes, cut the same way.
  const uint64_t token = cache.FillToken();
  cache.Truncate(2, 0);
  const std::string out = FillWithToken(cache, {2, 0}, token, longer);
  EXPECT_EQ(out, longer.substr(0, kObjectSize));
}

TEST(WriteBackCacheTest, StaleFillWithoutReaderIsNotKept) {
  WriteBackCache cache(Options());
  const uint64_t token = cache.FillToken();
  cache.Truncate(1, 0);
  EXPECT_FALSE(cache.Fill({1, 0}, token, Pattern(5)));
  EXPECT_FALSE(cache.Has({1, 0}));
  EXPECT_EQ(cache.stats().stale_fills, 1u);
}

TEST(WriteBackCacheTest, StaleFillAfterForgetIsNotKept) {
  WriteBackCache cache(Options());
  uint64_t token = cache.FillToken();
  cache.Forget(1);
  std::string stored = Pattern(4);
  const std::string out = FillWithToken(cache, {1, 0}, token, stored);
  EXPECT_EQ(out, stored);
  EXPECT_EQ(cache.stats().stale_fills, 1u);
  EXPECT_FALSE(ReadBytes(cache, {1, 0}, 0, kObjectSize).has_value());
}

TEST(WriteBackCacheTest, StaleFillAfterForgetCleanKeepsOnlyWrites) {
  WriteBackCache cache(Options());
  cache.Write({1, 0}, 0, "WWWW", T(0));
  uint64_t token = cache.FillToken();
  cache.ForgetClean(1);
  const std::string out = FillWithToken(cache, {1, 0}, token, std::string(kObjectSize, 's'));
  EXPECT_EQ(out, "WWWW" + std::string(kObjectSize - 4, 's'));
  EXPECT_EQ(cache.stats().stale_fills, 1u);
  EXPECT_FALSE(ReadBytes(cache, {1, 0}, 0, kObjectSize).has_value());
  EXPECT_FALSE(ReadBytes(cache, {1, 0}, 4, 1).has_value());
  EXPECT_EQ(ReadBytes(cache, {1, 0}, 0, 4), "WWWW");
}

TEST(WriteBackCacheTest, FreshTokenAfterTruncateIsKept) {
  WriteBackCache cache(Options());
  cache.Truncate(1, 0);
  std::string stored = Pattern(5);
  EXPECT_EQ(Fill(cache, {1, 0}, stored), stored);  // token taken after the truncate
  EXPECT_EQ(cache.stats().stale_fills, 0u);
  EXPECT_EQ(ReadBytes(cache, {1, 0}, 0, kObjectSize), stored);
}

// A fetch that began before this client wrote an object comes back after the written object
// was written back and left the cache: it carries the bytes from before the write, and must
// not bring them back.
TEST(WriteBackCacheTest, FillFetchedBeforeAWriteIsNotKeptOnceTheWrittenObjectWasEvicted) {
  WriteBackCache cache(Options());
  const ObjectKey written{1, 0};
  const uint64_t token = cache.FillToken();  // the fetch starts
  cache.Write(written, 0, Pattern(1), T(0));
  DrainFile(cache, 1);
  for (uint64_t i = 0; i <= kObjectsInCapacity; ++i) Fill(cache, {2, i}, Pattern(100 + i));
  ASSERT_FALSE(ReadBytes(cache, written, 0, kObjectSize).has_value()) << "not evicted";
  const uint64_t stale_before = cache.stats().stale_fills;
  const std::string out = FillWithToken(cache, written, token, Pattern(9));
  EXPECT_EQ(out, Pattern(9));  // the reader gets what it fetched
  EXPECT_EQ(cache.stats().stale_fills, stale_before + 1);
  EXPECT_FALSE(ReadBytes(cache, written, 0, kObjectSize).has_value()) << "the old bytes stayed";
  EXPECT_FALSE(cache.Fill(written, token, Pattern(9)));

  // Fetches that began after the drop are kept, and so are old ones of other objects.
  EXPECT_TRUE(cache.Fill(written, cache.FillToken(), Pattern(1)));
  EXPECT_EQ(ReadBytes(cache, written, 0, kObjectSize), Pattern(1));
  EXPECT_TRUE(cache.Fill({3, 0}, token, Pattern(3)));
}

TEST(WriteBackCacheTest, FillFetchedBeforeAWriteIsNotKeptOnceTheKernelTookTheObject) {
  WriteBackCache cache(Options());
  const ObjectKey written{1, 0};
  const uint64_t token = cache.FillToken();
  cache.Write(written, 0, Pattern(1), T(0));
  DrainFile(cache, 1);
  ASSERT_TRUE(cache.Delivered(written, 0, kObjectSize, kObjectSize));
  EXPECT_FALSE(cache.Fill(written, token, Pattern(9)));
  EXPECT_FALSE(ReadBytes(cache, written, 0, kObjectSize).has_value());
}

// Only so many drops are remembered one by one; a forgotten one makes every fill fetched
// before it stale (a needless refetch, never old bytes).
TEST(WriteBackCacheTest, FillFetchedBeforeAForgottenWrittenDropIsNotKept) {
  WriteBackOptions options = Options();
  options.capacity_bytes = 1ull << 30;  // no evictions: Delivered drops the objects
  WriteBackCache cache(options);
  const uint64_t token = cache.FillToken();
  constexpr uint64_t kDrops = 5000;  // more than the cache remembers one by one
  for (uint64_t i = 0; i < kDrops; ++i) {
    cache.Write({1, i}, 0, Pattern(i), T(0));
  }
  DrainFile(cache, 1);
  for (uint64_t i = 0; i < kDrops; ++i) {
    ASSERT_TRUE(cache.Delivered({1, i}, 0, kObjectSize, kObjectSize));
  }
  EXPECT_FALSE(cache.Fill({1, 0}, token, Pattern(9))) << "the first drop, forgotten";
  EXPECT_FALSE(cache.Fill({1, kDrops - 1}, token, Pattern(9))) << "the last drop, remembered";
  EXPECT_FALSE(cache.Fill({2, 0}, token, Pattern(9))) << "fetched before a forgotten drop";
  EXPECT_TRUE(cache.Fill({1, 0}, cache.FillToken(), Pattern(0)));
}

// --- Write-back jobs -------------------------------------------------------------------------

TEST(WriteBackCacheTest, PartlyWrittenObjectNotDueBeforeMaxDirtyAge) {
  WriteBackCache cache(Options());
  cache.Write({1, 0}, 0, "abc", T(10));
  EXPECT_FALSE(cache.TakeDueFlush(T(10)).has_value());
  EXPECT_FALSE(cache.TakeDueFlush(T(10) + kMaxAge - std::chrono::milliseconds(1)).has_value());
  std::optional<FlushJob> job = cache.TakeDueFlush(T(10) + kMaxAge + std::chrono::seconds(1));
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->key, (ObjectKey{1, 0}));
  EXPECT_FALSE(job->replace);
  EXPECT_EQ(job->ranges, Ranges({{0, 3}}));
}

TEST(WriteBackCacheTest, PartlyWrittenObjectDueWhenItReachesMaxDirtyAge) {
  WriteBackCache cache(Options());
  cache.Write({1, 0}, 0, "abc", T(10));
  EXPECT_TRUE(cache.TakeDueFlush(T(10) + kMaxAge).has_value());
}

TEST(WriteBackCacheTest, ObjectWrittenWholeIsDueAtOnce) {
  WriteBackCache cache(Options());
  std::string data = Pattern(6);
  cache.Write({1, 2}, 0, data, T(10));
  std::optional<FlushJob> job = cache.TakeDueFlush(T(10));
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->key, (ObjectKey{1, 2}));
  EXPECT_TRUE(job->replace);
  EXPECT_EQ(job->data, data);
  EXPECT_EQ(job->bytes(), kObjectSize);
  EXPECT_FALSE(cache.TakeDueFlush(Late()).has_value());
}

// A write-back shares the cache's bytes (no copy of the object), and writes while it is in
// flight, whole or ranged, truncations and drops leave its bytes as they were when taken.
TEST(WriteBackCacheTest, WriteBackSharesTheBytesAndKeepsThemStable) {
  WriteBackCache cache(Options());
  const std::string first = Pattern(1);
  cache.Write({1, 0}, 0, first, T(0));
  std::optional<FlushJob> job = cache.TakeDueFlush(T(0));
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->owner.use_count(), 2);  // the cache's entry and the job: one buffer
  EXPECT_EQ(job->data.data(), job->owner->data());

  cache.Write({1, 0}, 4, "WXYZ", T(1));      // ranged
  cache.Write({1, 1}, 0, Pattern(2), T(1));  // another object: unrelated
  EXPECT_EQ(job->data, first);
  EXPECT_EQ(ReadBytes(cache, {1, 0}, 0, 8), first.substr(0, 4) + "WXYZ");
  EXPECT_EQ(job->owner.use_count(), 1);  // the cache took a copy of its own to change

  std::optional<FlushJob> second = cache.TakeFlushOf(1);  // object 0 is in flight
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->key, (ObjectKey{1, 1}));
  cache.Write({1, 1}, 0, Pattern(3), T(2));  // whole
  cache.Truncate(1, 10);
  cache.Forget(1);
  EXPECT_EQ(job->data, first);
  EXPECT_EQ(second->data, Pattern(2));
}

TEST(WriteBackCacheTest, ObjectWrittenWholeInPiecesIsDueAtOnce) {
  WriteBackCache cache(Options());
  EXPECT_FALSE(cache.Write({1, 0}, 0, "01234567", T(10)));
  EXPECT_FALSE(cache.TakeDueFlush(T(10)).has_value());
  EXPECT_TRUE(cache.Write({1, 0}, 8, "89abcdef", T(11)));  // written whole: say so
  std::optional<FlushJob> job = cache.TakeDueFlush(T(11));
  ASSERT_TRUE(job.has_value());
  EXPECT_TRUE(job->replace);
  EXPECT_EQ(job->data, "0123456789abcdef");
}

TEST(WriteBackCacheTest, PartlyWrittenObjectsAreDueOnceW2IsPinned) {
  WriteBackCache cache(Options());
  // W2: capacity 1024 x pressure_share 0.5 x 0.8 = 409 pinned bytes, the 52nd write of 8.
  for (uint64_t i = 0; i < 51; ++i) {
    EXPECT_FALSE(cache.Write({1, i}, 0, "01234567", T(10))) << "object " << i;
  }
  EXPECT_FALSE(cache.TakeDueFlush(T(10)).has_value());
  EXPECT_TRUE(cache.Write({1, 51}, 0, "01234567", T(10)));
  std::optional<FlushJob> job = cache.TakeDueFlush(T(10));
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->key, (ObjectKey{1, 0}));  // the oldest first
}

TEST(WriteBackCacheTest, UnfilledPartlyWrittenObjectGivesRangeJob) {
  WriteBackCache cache(Options());
  cache.Write({1, 0}, 2, "abc", T(0));
  cache.Write({1, 0}, 9, "XYZ", T(0));
  cache.Write({1, 0}, 5, "d", T(0));  // touches [2, 5)
  std::optional<FlushJob> job = cache.TakeFlushOf(1);
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->key, (ObjectKey{1, 0}));
  EXPECT_FALSE(job->replace);
  EXPECT_EQ(job->ranges, Ranges({{2, 6}, {9, 12}}));
  EXPECT_EQ(job->bytes(), 7u);
  ASSERT_GE(job->data.size(), 12u);
  EXPECT_EQ(job->data.substr(2, 4), "abcd");
  EXPECT_EQ(job->data.substr(9, 3), "XYZ");
}

TEST(WriteBackCacheTest, FilledObjectWithSmallWriteGivesWholeObjectData) {
  WriteBackCache cache(Options());
  std::string stored = Pattern(7);
  Fill(cache, {1, 0}, stored);
  cache.Write({1, 0}, 5, "!!", T(0));
  std::optional<FlushJob> job = cache.TakeFlushOf(1);
  ASSERT_TRUE(job.has_value());
  std::string expected = stored;
  expected.replace(5, 2, "!!");
  EXPECT_EQ(job->ranges, Ranges({{5, 7}}));
  EXPECT_EQ(job->data, expected);
  // Either a ranged write or a replacing one is right: the cache knows the whole object.
  EXPECT_EQ(job->bytes(), job->replace ? kObjectSize : 2u);
  cache.FlushDone(*job, true);
  EXPECT_EQ(ReadBytes(cache, {1, 0}, 0, kObjectSize), expected);
  EXPECT_EQ(cache.stats().pinned_bytes, 0u);
}

TEST(WriteBackCacheTest, FilledShortObjectJobDataIsMergedObject) {
  WriteBackCache cache(Options());
  Fill(cache, {1, 0}, "stored");
  cache.Write({1, 0}, 8, "w", T(0));
  std::optional<FlushJob> job = cache.TakeFlushOf(1);
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->ranges, Ranges({{8, 9}}));
  ASSERT_GE(job->data.size(), 9u);
  ASSERT_LE(job->data.size(), kObjectSize);
  std::string merged = "stored" + Zeros(2) + "w" + Zeros(kObjectSize - 9);
  EXPECT_EQ(job->data, merged.substr(0, job->data.size()));
}

TEST(WriteBackCacheTest, TakeFlushOfTakesOnlyThatFile) {
  WriteBackCache cache(Options());
  cache.Write({1, 0}, 0, "a", T(0));
  cache.Write({2, 0}, 0, "b", T(1));
  cache.Write({1, 1}, 0, "c", T(2));
  cache.Write({3, 0}, 0, "d", T(3));

  std::optional<FlushJob> job = cache.TakeFlushOf(2);
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->key, (ObjectKey{2, 0}));
  EXPECT_FALSE(cache.TakeFlushOf(2).has_value());

  std::set<ObjectKey> taken;
  for (int i = 0; i < 2; ++i) {
    std::optional<FlushJob> j = cache.TakeFlushOf(1);
    ASSERT_TRUE(j.has_value());
    EXPECT_EQ(j->key.fno, 1u);
    taken.insert(j->key);
  }
  EXPECT_EQ(taken, (std::set<ObjectKey>{{1, 0}, {1, 1}}));
  EXPECT_FALSE(cache.TakeFlushOf(1).has_value());
  EXPECT_FALSE(cache.TakeFlushOf(4).has_value());
  EXPECT_TRUE(cache.HasUnwritten(3));
  std::optional<FlushJob> rest = cache.TakeOldestFlush();
  ASSERT_TRUE(rest.has_value());
  EXPECT_EQ(rest->key, (ObjectKey{3, 0}));
}

TEST(WriteBackCacheTest, TakeOldestFlushTakesObjectDirtiedFirst) {
  WriteBackCache cache(Options());
  cache.Write({5, 9}, 0, "first", T(0));
  cache.Write({1, 0}, 0, "second", T(1));
  cache.Write({3, 2}, 0, "third", T(2));
  cache.Write({5, 9}, 8, "again", T(3));  // still dirty since T(0)

  std::optional<FlushJob> job = cache.TakeOldestFlush();
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->key, (ObjectKey{5, 9}));
  EXPECT_EQ(job->ranges, Ranges({{0, 5}, {8, 13}}));
  job = cache.TakeOldestFlush();
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->key, (ObjectKey{1, 0}));
  job = cache.TakeOldestFlush();
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->key, (ObjectKey{3, 2}));
  EXPECT_FALSE(cache.TakeOldestFlush().has_value());
}

// A writer skips the files whose write-back just failed, and goes on with the next oldest.
TEST(WriteBackCacheTest, TakeOldestFlushSkipsTheFilesAskedTo) {
  WriteBackCache cache(Options());
  cache.Write({5, 9}, 0, "first", T(0));
  cache.Write({5, 1}, 0, "second", T(1));
  cache.Write({3, 2}, 0, "third", T(2));
  std::optional<FlushJob> job = cache.TakeOldestFlush({5});
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->key, (ObjectKey{3, 2}));
  EXPECT_FALSE(cache.TakeOldestFlush({5}).has_value());
  job = cache.TakeOldestFlush({3});
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->key, (ObjectKey{5, 9}));
}

TEST(WriteBackCacheTest, TakeDueFlushTakesOnlyAgedObjects) {
  WriteBackCache cache(Options());
  cache.Write({1, 0}, 0, "old", T(0));
  cache.Write({1, 1}, 0, "new", T(100));
  std::optional<FlushJob> job = cache.TakeDueFlush(T(50));
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->key, (ObjectKey{1, 0}));
  EXPECT_FALSE(cache.TakeDueFlush(T(50)).has_value());
  job = cache.TakeDueFlush(T(200));
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->key, (ObjectKey{1, 1}));
}

TEST(WriteBackCacheTest, InFlightObjectIsNotTakenAgain) {
  WriteBackCache cache(Options());
  cache.Write({1, 0}, 0, "abcd", T(0));
  std::optional<FlushJob> job = cache.TakeFlushOf(1);
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->ranges, Ranges({{0, 4}}));

  cache.Write({1, 0}, 8, "efgh", T(1));
  EXPECT_EQ(ReadBytes(cache, {1, 0}, 8, 4), "efgh");
  EXPECT_FALSE(cache.TakeFlushOf(1).has_value());
  EXPECT_FALSE(cache.TakeDueFlush(Late()).has_value());
  EXPECT_FALSE(cache.TakeOldestFlush().has_value());

  cache.FlushDone(*job, true);
  std::optional<FlushJob> next = cache.TakeFlushOf(1);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->key, (ObjectKey{1, 0}));
  EXPECT_EQ(next->ranges, Ranges({{8, 12}}));
  ASSERT_GE(next->data.size(), 12u);
  EXPECT_EQ(next->data.substr(8, 4), "efgh");
  cache.FlushDone(*next, true);
  EXPECT_FALSE(cache.TakeFlushOf(1).has_value());
  EXPECT_EQ(ReadBytes(cache, {1, 0}, 0, 4), "abcd");
}

TEST(WriteBackCacheTest, InFlightObjectWrittenWholeIsNotTakenAgain) {
  WriteBackCache cache(Options());
  cache.Write({1, 0}, 0, Pattern(1), T(0));
  std::optional<FlushJob> job = cache.TakeDueFlush(T(0));
  ASSERT_TRUE(job.has_value());
  cache.Write({1, 0}, 0, Pattern(2), T(1));
  EXPECT_FALSE(cache.TakeDueFlush(T(1)).has_value());
  EXPECT_FALSE(cache.TakeDueFlush(Late()).has_value());
  EXPECT_FALSE(cache.TakeOldestFlush().has_value());
  EXPECT_FALSE(cache.TakeFlushOf(1).has_value());
  cache.FlushDone(*job, true);
  std::optional<FlushJob> next = cache.TakeDueFlush(T(1));
  ASSERT_TRUE(next.has_value());
  EXPECT_TRUE(next->replace);
  EXPECT_EQ(next->data, Pattern(2));
}

TEST(WriteBackCacheTest, JobDataIsSnapshotAtTake) {
  WriteBackCache cache(Options());
  cache.Write({1, 0}, 0, "abcd", T(0));
  std::optional<FlushJob> job = cache.TakeFlushOf(1);
  ASSERT_TRUE(job.has_value());
  cache.Write({1, 0}, 0, "WXYZ", T(1));
  EXPECT_EQ(job->data.substr(0, 4), "abcd");
  EXPECT_EQ(ReadBytes(cache, {1, 0}, 0, 4), "WXYZ");
  cache.FlushDone(*job, true);
  std::optional<FlushJob> next = cache.TakeFlushOf(1);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->ranges, Ranges({{0, 4}}));
  EXPECT_EQ(next->data.substr(0, 4), "WXYZ");
}

TEST(WriteBackCacheTest, FailedFlushLeavesBytesDirty) {
  WriteBackCache cache(Options());
  cache.Write({1, 0}, 2, "abc", T(0));
  std::optional<FlushJob> job = cache.TakeFlushOf(1);
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(cache.stats().dirty_bytes, 0u);
  cache.FlushDone(*job, false);
  EXPECT_EQ(cache.stats().flush_failures, 1u);
  EXPECT_EQ(cache.stats().dirty_bytes, 3u);
  EXPECT_TRUE(cache.HasUnwritten(1));
  EXPECT_FALSE(cache.HasInFlight(1));

  std::optional<FlushJob> retry = cache.TakeFlushOf(1);
  ASSERT_TRUE(retry.has_value());
  EXPECT_EQ(retry->ranges, Ranges({{2, 5}}));
  EXPECT_EQ(retry->data.substr(2, 3), "abc");
  cache.FlushDone(*retry, true);
  EXPECT_FALSE(cache.HasUnwritten(1));
  EXPECT_EQ(cache.stats().flush_failures, 1u);
}

TEST(WriteBackCacheTest, RefusedFlushDropsItsBytesFromTheCache) {
  WriteBackCache cache(Options());
  cache.Write({1, 0}, 2, "abc", T(0));
  std::optional<FlushJob> job = cache.TakeFlushOf(1);
  ASSERT_TRUE(job.has_value());
  cache.FlushRefused(*job);
  EXPECT_EQ(cache.stats().refused_flushes, 1u);
  EXPECT_EQ(cache.stats().refused_bytes, 3u);
  EXPECT_EQ(cache.stats().dirty_bytes, 0u);
  EXPECT_FALSE(cache.HasUnwritten(1));
  EXPECT_FALSE(cache.TakeFlushOf(1).has_value());
  // Not served from the cache: a read goes to the OSDs, which never took the bytes.
  EXPECT_FALSE(ReadBytes(cache, {1, 0}, 2, 3).has_value());
}

// One copy may have stored a refused write-back (the other was full): a fetch begun before
// the write (read-ahead) brings bytes older than either copy may hold, and is not kept.
TEST(WriteBackCacheTest, FetchBegunBeforeARefusedWriteIsNotKept) {
  WriteBackCache cache(Options());
  const uint64_t token = cache.FillToken();
  cache.Write({1, 0}, 0, "new", T(0));
  std::optional<FlushJob> job = cache.TakeFlushOf(1);
  ASSERT_TRUE(job.has_value());
  cache.FlushRefused(*job);
  EXPECT_FALSE(cache.Fill({1, 0}, token, "old"));
  EXPECT_FALSE(ReadBytes(cache, {1, 0}, 0, 3).has_value());
}

TEST(WriteBackCacheTest, RefusedFlushOfAReDirtiedObjectIsRetriedWithTheNewerWrites) {
  WriteBackCache cache(Options());
  cache.Write({1, 0}, 0, "abcd", T(0));
  std::optional<FlushJob> job = cache.TakeFlushOf(1);
  ASSERT_TRUE(job.has_value());
  cache.Write({1, 0}, 8, "efgh", T(1));
  cache.FlushRefused(*job);
  std::optional<FlushJob> retry = cache.TakeFlushOf(1);
  ASSERT_TRUE(retry.has_value());
  EXPECT_EQ(retry->ranges, Ranges({{0, 4}, {8, 12}}));
  cache.FlushRefused(*retry);
  EXPECT_FALSE(cache.HasUnwritten(1));
  EXPECT_FALSE(ReadBytes(cache, {1, 0}, 0, 4).has_value());
}

TEST(WriteBackCacheTest, FailedFlushMergesWithNewerWrites) {
  WriteBackCache cache(Options());
  cache.Write({1, 0}, 0, "abcd", T(0));
  std::optional<FlushJob> job = cache.TakeFlushOf(1);
  ASSERT_TRUE(job.has_value());
  cache.Write({1, 0}, 8, "efgh", T(1));
  cache.FlushDone(*job, false);
  std::optional<FlushJob> retry = cache.TakeFlushOf(1);
  ASSERT_TRUE(retry.has_value());
  EXPECT_EQ(retry->ranges, Ranges({{0, 4}, {8, 12}}));
  EXPECT_EQ(retry->data.substr(0, 4), "abcd");
  EXPECT_EQ(retry->data.substr(8, 4), "efgh");
}

TEST(WriteBackCacheTest, FailedFlushIsDueByAgeBehindYoungerDirtyObject) {
  WriteBackCache cache(Options());
  cache.Write({1, 0}, 0, "old", T(0));
  std::optional<FlushJob> job = cache.TakeDueFlush(T(10));
  ASSERT_TRUE(job.has_value());
  cache.Write({1, 1}, 0, "young", T(100));
  cache.FlushDone(*job, false);
  // Object 0 has been dirty since T(0); object 1 only since T(100).
  std::optional<FlushJob> retry = cache.TakeDueFlush(T(101));
  ASSERT_TRUE(retry.has_value());
  EXPECT_EQ(retry->key, (ObjectKey{1, 0}));
  EXPECT_EQ(retry->ranges, Ranges({{0, 3}}));
}

TEST(WriteBackCacheTest, FailedWholeObjectFlushIsDueAgain) {
  WriteBackCache cache(Options());
  cache.Write({1, 0}, 0, Pattern(3), T(0));
  std::optional<FlushJob> job = cache.TakeDueFlush(T(0));
  ASSERT_TRUE(job.has_value());
  cache.FlushDone(*job, false);
  std::optional<FlushJob> retry = cache.TakeDueFlush(T(0));
  ASSERT_TRUE(retry.has_value());
  EXPECT_TRUE(retry->replace);
  EXPECT_EQ(retry->data, Pattern(3));
}

TEST(WriteBackCacheTest, HasUnwrittenAndHasInFlightThroughWriteBack) {
  WriteBackCache cache(Options());
  EXPECT_FALSE(cache.HasUnwritten(1));
  EXPECT_FALSE(cache.HasInFlight(1));

  Fill(cache, {1, 0}, Pattern(1));  // clean bytes are not unwritten
  EXPECT_FALSE(cache.HasUnwritten(1));
  EXPECT_FALSE(cache.HasInFlight(1));

  cache.Write({1, 0}, 0, "x", T(0));
  EXPECT_TRUE(cache.HasUnwritten(1));
  EXPECT_FALSE(cache.HasInFlight(1));
  EXPECT_FALSE(cache.HasUnwritten(2));

  std::optional<FlushJob> job = cache.TakeFlushOf(1);
  ASSERT_TRUE(job.has_value());
  EXPECT_TRUE(cache.HasUnwritten(1));  // in flight counts
  EXPECT_TRUE(cache.HasInFlight(1));
  EXPECT_FALSE(cache.HasInFlight(2));

  cache.FlushDone(*job, true);
  EXPECT_FALSE(cache.HasUnwritten(1));
  EXPECT_FALSE(cache.HasInFlight(1));
  EXPECT_EQ(ReadBytes(cache, {1, 0}, 0, 1), "x");  // stays cached, clean
}

TEST(WriteBackCacheTest, SuccessfulFlushCountsStats) {
  WriteBackCache cache(Options());
  cache.Write({1, 0}, 0, "abcde", T(0));
  std::optional<FlushJob> job = cache.TakeFlushOf(1);
  ASSERT_TRUE(job.has_value());
  cache.FlushDone(*job, true);
  WriteBackStats s = cache.stats();
  EXPECT_EQ(s.flushes, 1u);
  EXPECT_EQ(s.flushed_bytes, job->bytes());
  EXPECT_EQ(s.flushed_bytes, 5u);
  EXPECT_EQ(s.flush_failures, 0u);
}

// --- Accounting ------------------------------------------------------------------------------

TEST(WriteBackCacheTest, ByteAccountingThroughLifecycle) {
  WriteBackCache cache(Options());
  constexpr uint64_t k = kObjectSize;
  cache.Write({1, 0}, 0, Pattern(0), T(0));
  WriteBackStats s = cache.stats();
  EXPECT_EQ(s.bytes, k);
  EXPECT_EQ(s.dirty_bytes, k);
  EXPECT_EQ(s.pinned_bytes, k);
  EXPECT_EQ(s.entries, 1u);

  Fill(cache, {1, 1}, Pattern(1));
  s = cache.stats();
  EXPECT_EQ(s.bytes, 2 * k);
  EXPECT_EQ(s.dirty_bytes, k);
  EXPECT_EQ(s.pinned_bytes, k);
  EXPECT_EQ(s.entries, 2u);

  // A small write pins the whole filled object.
  cache.Write({1, 1}, 8, "xy", T(1));
  s = cache.stats();
  EXPECT_EQ(s.bytes, 2 * k);
  EXPECT_EQ(s.dirty_bytes, k + 2);
  EXPECT_EQ(s.pinned_bytes, 2 * k);

  // Rewriting dirty bytes adds nothing.
  cache.Write({1, 1}, 8, "XY", T(2));
  EXPECT_EQ(cache.stats().dirty_bytes, k + 2);

  std::optional<FlushJob> first = cache.TakeOldestFlush();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->key, (ObjectKey{1, 0}));
  s = cache.stats();
  EXPECT_EQ(s.dirty_bytes, 2u);      // taken bytes are no longer dirty
  EXPECT_EQ(s.pinned_bytes, 2 * k);  // but stay pinned while in flight
  cache.FlushDone(*first, true);
  s = cache.stats();
  EXPECT_EQ(s.dirty_bytes, 2u);
  EXPECT_EQ(s.pinned_bytes, k);
  EXPECT_EQ(s.bytes, 2 * k);

  std::optional<FlushJob> second = cache.TakeOldestFlush();
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->key, (ObjectKey{1, 1}));
  cache.FlushDone(*second, true);
  s = cache.stats();
  EXPECT_EQ(s.dirty_bytes, 0u);
  EXPECT_EQ(s.pinned_bytes, 0u);
  EXPECT_EQ(s.bytes, 2 * k);
  EXPECT_EQ(s.entries, 2u);
}

TEST(WriteBackCacheTest, FailedFlushRestoresDirtyBytes) {
  WriteBackCache cache(Options());
  Fill(cache, {1, 0}, Pattern(1));
  cache.Write({1, 0}, 0, "abc", T(0));
  std::optional<FlushJob> job = cache.TakeFlushOf(1);
  ASSERT_TRUE(job.has_value());
  cache.FlushDone(*job, false);
  WriteBackStats s = cache.stats();
  EXPECT_EQ(s.dirty_bytes, 3u);
  EXPECT_EQ(s.pinned_bytes, kObjectSize);
  EXPECT_EQ(s.bytes, kObjectSize);
}

TEST(WriteBackCacheTest, UnderPressureAndFullFollowPinnedBytes) {
  WriteBackCache cache(Options());
  const uint64_t pressure_objects = kObjectsInCapacity / 2;  // pressure_share 0.5
  uint64_t i = 0;
  for (; i + 1 < pressure_objects; ++i) cache.Write({1, i}, 0, Pattern(i), T(0));
  EXPECT_EQ(cache.stats().pinned_bytes, (pressure_objects - 1) * kObjectSize);
  EXPECT_FALSE(cache.UnderPressure());
  EXPECT_FALSE(cache.Full());

  cache.Write({1, i}, 0, Pattern(i), T(0));
  ++i;
  EXPECT_EQ(cache.stats().pinned_bytes, kCapacity / 2);
  EXPECT_TRUE(cache.UnderPressure());
  EXPECT_FALSE(cache.Full());

  for (; i + 1 < kObjectsInCapacity; ++i) cache.Write({1, i}, 0, Pattern(i), T(0));
  EXPECT_TRUE(cache.UnderPressure());
  EXPECT_FALSE(cache.Full());
  cache.Write({1, i}, 0, Pattern(i), T(0));
  EXPECT_EQ(cache.stats().pinned_bytes, kCapacity);
  EXPECT_TRUE(cache.Full());

  // In flight still pins; done frees.
  std::optional<FlushJob> job = cache.TakeOldestFlush();
  ASSERT_TRUE(job.has_value());
  EXPECT_TRUE(cache.Full());
  EXPECT_EQ(cache.stats().pinned_bytes, kCapacity);
  cache.FlushDone(*job, true);
  EXPECT_FALSE(cache.Full());
  EXPECT_EQ(cache.stats().pinned_bytes, kCapacity - kObjectSize);

  // Write back everything: no pressure left.
  while (std::optional<FlushJob> j = cache.TakeOldestFlush()) cache.FlushDone(*j, true);
  EXPECT_EQ(cache.stats().pinned_bytes, 0u);
  EXPECT_FALSE(cache.UnderPressure());
  EXPECT_FALSE(cache.Full());
}

TEST(WriteBackCacheTest, ReadAheadQuantityHalvesUnderPressure) {
  WriteBackCache cache(Options());
  const uint32_t full_quantity = cache.ReadAheadQuantity();
  EXPECT_EQ(full_quantity, ThrashingConfig{}.p_max);
  for (uint64_t i = 0; i < kObjectsInCapacity / 2; ++i) cache.Write({1, i}, 0, Pattern(i), T(0));
  ASSERT_TRUE(cache.UnderPressure());
  EXPECT_EQ(cache.ReadAheadQuantity(), full_quantity / 2);
  while (std::optional<FlushJob> j = cache.TakeOldestFlush()) cache.FlushDone(*j, true);
  EXPECT_FALSE(cache.UnderPressure());
  EXPECT_GE(cache.ReadAheadQuantity(), full_quantity / 2);
}

TEST(WriteBackCacheTest, SmallWritesToFilledObjectsCauseUnderPressure) {
  WriteBackCache cache(Options());
  const uint64_t pressure_objects = kObjectsInCapacity / 2;
  for (uint64_t i = 0; i < pressure_objects; ++i) Fill(cache, {1, i}, Pattern(i));
  EXPECT_FALSE(cache.UnderPressure());
  for (uint64_t i = 0; i + 1 < pressure_objects; ++i) cache.Write({1, i}, 3, "x", T(0));
  EXPECT_FALSE(cache.UnderPressure());
  cache.Write({1, pressure_objects - 1}, 3, "x", T(0));
  EXPECT_EQ(cache.stats().dirty_bytes, pressure_objects);
  EXPECT_EQ(cache.stats().pinned_bytes, kCapacity / 2);
  EXPECT_TRUE(cache.UnderPressure());
  // Under pressure, partly written objects are due for write-back before they age.
  EXPECT_TRUE(cache.TakeDueFlush(T(0)).has_value());
}

TEST(WriteBackCacheTest, FewDirtyBytesAreNotDueEarly) {
  WriteBackCache cache(Options());
  Fill(cache, {1, 0}, Pattern(0));
  cache.Write({1, 0}, 3, "x", T(0));
  EXPECT_FALSE(cache.UnderPressure());
  EXPECT_FALSE(cache.TakeDueFlush(T(1)).has_value());
}

// --- Eviction --------------------------------------------------------------------------------

TEST(WriteBackCacheTest, CleanObjectsEvictedLeastRecentlyUsedFirst) {
  WriteBackCache cache(Options());
  const uint64_t first_batch = kObjectsInCapacity * 3 / 4;  // 48 objects fit easily
  for (uint64_t i = 0; i < first_batch; ++i) Fill(cache, {1, i}, Pattern(i));
  EXPECT_EQ(cache.stats().evictions, 0u);
  EXPECT_EQ(cache.stats().bytes, first_batch * kObjectSize);

  ASSERT_EQ(ReadBytes(cache, {1, 0}, 0, kObjectSize), Pattern(0));  // refreshes object 0

  const uint64_t total = kObjectsInCapacity + 16;
  for (uint64_t i = first_batch; i < total; ++i) Fill(cache, {1, i}, Pattern(i));
  WriteBackStats s = cache.stats();
  EXPECT_LE(s.bytes, kCapacity);
  EXPECT_GE(s.evictions, 16u);
  EXPECT_LE(s.evictions, 17u);

  EXPECT_EQ(ReadBytes(cache, {1, 0}, 0, kObjectSize), Pattern(0));
  for (uint64_t i = 1; i <= 16; ++i) {
    EXPECT_FALSE(ReadBytes(cache, {1, i}, 0, 1).has_value()) << "object " << i;
  }
  for (uint64_t i = 18; i < total; ++i) {
    EXPECT_EQ(ReadBytes(cache, {1, i}, 0, kObjectSize), Pattern(i)) << "object " << i;
  }
}

TEST(WriteBackCacheTest, DirtyObjectsAreNeverEvicted) {
  WriteBackCache cache(Options());
  const uint64_t n = 2 * kObjectsInCapacity;
  for (uint64_t i = 0; i < n; ++i) cache.Write({1, i}, 0, Pattern(i), T(0));
  EXPECT_TRUE(cache.Full());
  EXPECT_EQ(cache.stats().evictions, 0u);
  EXPECT_EQ(cache.stats().dirty_bytes, n * kObjectSize);
  for (uint64_t i = 0; i < n; ++i) {
    EXPECT_EQ(ReadBytes(cache, {1, i}, 0, kObjectSize), Pattern(i)) << "object " << i;
  }
}

TEST(WriteBackCacheTest, PartlyDirtyObjectsAreNeverEvicted) {
  WriteBackCache cache(Options());
  const uint64_t n = 2 * kObjectsInCapacity;
  for (uint64_t i = 0; i < n; ++i) cache.Write({1, i}, 0, "dirty", T(0));
  for (uint64_t i = 0; i < n; ++i) Fill(cache, {2, i}, Pattern(i));  // pushes on the cache
  for (uint64_t i = 0; i < n; ++i) {
    EXPECT_EQ(ReadBytes(cache, {1, i}, 0, 5), "dirty") << "object " << i;
  }
}

TEST(WriteBackCacheTest, InFlightObjectsAreNeverEvicted) {
  WriteBackCache cache(Options());
  for (uint64_t i = 0; i < kObjectsInCapacity; ++i) cache.Write({1, i}, 0, Pattern(i), T(0));
  std::vector<FlushJob> jobs;
  while (std::optional<FlushJob> j = cache.TakeOldestFlush()) jobs.push_back(*j);
  ASSERT_EQ(jobs.size(), kObjectsInCapacity);
  EXPECT_EQ(cache.stats().dirty_bytes, 0u);
  EXPECT_EQ(cache.stats().pinned_bytes, kCapacity);

  for (uint64_t i = 0; i < kObjectsInCapacity; ++i) Fill(cache, {2, i}, Pattern(100 + i));
  for (uint64_t i = 0; i < kObjectsInCapacity; ++i) {
    EXPECT_EQ(ReadBytes(cache, {1, i}, 0, kObjectSize), Pattern(i)) << "object " << i;
  }
  for (const FlushJob& j : jobs) cache.FlushDone(j, true);
  EXPECT_EQ(cache.stats().pinned_bytes, 0u);
}

// --- Truncate --------------------------------------------------------------------------------

TEST(WriteBackCacheTest, TruncateDropsObjectsBeyondSize) {
  WriteBackCache cache(Options());
  cache.Write({2, 3}, 0, "other", T(0));
  const WriteBackStats other = cache.stats();
  for (uint64_t i = 0; i < 4; ++i) Fill(cache, {1, i}, Pattern(i));
  cache.Write({1, 3}, 0, "d", T(0));
  cache.Write({1, 2}, 0, "d", T(0));
  cache.Truncate(1, 2 * kObjectSize);  // at an object boundary

  EXPECT_EQ(ReadBytes(cache, {1, 0}, 0, kObjectSize), Pattern(0));
  EXPECT_EQ(ReadBytes(cache, {1, 1}, 0, kObjectSize), Pattern(1));
  EXPECT_FALSE(ReadBytes(cache, {1, 2}, 0, 1).has_value());
  EXPECT_FALSE(ReadBytes(cache, {1, 3}, 0, 1).has_value());
  EXPECT_EQ(ReadBytes(cache, {2, 3}, 0, 5), "other");
  EXPECT_FALSE(cache.HasUnwritten(1));
  EXPECT_FALSE(cache.TakeFlushOf(1).has_value());
  WriteBackStats s = cache.stats();
  EXPECT_EQ(s.bytes, other.bytes + 2 * kObjectSize);
  EXPECT_EQ(s.dirty_bytes, other.dirty_bytes);
  EXPECT_EQ(s.pinned_bytes, other.pinned_bytes);
  EXPECT_EQ(s.entries, other.entries + 2);
}

TEST(WriteBackCacheTest, TruncateToZeroDropsWholeFile) {
  WriteBackCache cache(Options());
  cache.Write({1, 0}, 0, "abc", T(0));
  Fill(cache, {1, 1}, Pattern(1));
  cache.Truncate(1, 0);
  EXPECT_FALSE(ReadBytes(cache, {1, 0}, 0, 3).has_value());
  EXPECT_FALSE(ReadBytes(cache, {1, 1}, 0, 1).has_value());
  EXPECT_FALSE(cache.TakeFlushOf(1).has_value());
  EXPECT_EQ(cache.stats().bytes, 0u);
  EXPECT_EQ(cache.stats().pinned_bytes, 0u);
}

TEST(WriteBackCacheTest, TruncateCutsBoundaryObject) {
  WriteBackCache cache(Options());
  Fill(cache, {1, 1}, std::string(kObjectSize, 's'));
  cache.Write({1, 1}, 4, "WWWW", T(0));
  cache.Write({1, 1}, 12, "XX", T(0));
  cache.Truncate(1, kObjectSize + 10);  // object 1 keeps [0, 10)

  std::string expected = "ssssWWWWss" + Zeros(6);
  EXPECT_EQ(ReadBytes(cache, {1, 1}, 0, kObjectSize), expected);
  EXPECT_EQ(ReadBytes(cache, {1, 1}, 12, 2), Zeros(2));
  EXPECT_EQ(cache.stats().dirty_bytes, 4u);

  std::optional<FlushJob> job = cache.TakeFlushOf(1);
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->key, (ObjectKey{1, 1}));
  EXPECT_EQ(job->ranges, Ranges({{4, 8}}));
  ASSERT_GE(job->data.size(), 8u);
  ASSERT_LE(job->data.size(), kObjectSize);
  EXPECT_EQ(job->data, expected.substr(0, job->data.size()));
  EXPECT_FALSE(cache.TakeFlushOf(1).has_value());
}

TEST(WriteBackCacheTest, TruncateCutsPartlyKnownBoundaryObject) {
  WriteBackCache cache(Options());
  cache.Write({1, 0}, 2, "abcd", T(0));
  cache.Write({1, 0}, 10, "efgh", T(0));
  cache.Truncate(1, 8);
  EXPECT_EQ(ReadBytes(cache, {1, 0}, 2, 4), "abcd");
  EXPECT_EQ(cache.stats().dirty_bytes, 4u);
  std::optional<FlushJob> job = cache.TakeFlushOf(1);
  ASSERT_TRUE(job.has_value());
  EXPECT_FALSE(job->replace);
  EXPECT_EQ(job->ranges, Ranges({{2, 6}}));
  EXPECT_EQ(job->data.substr(2, 4), "abcd");
}

TEST(WriteBackCacheTest, TruncateThenExtendReadsZeros) {
  WriteBackCache cache(Options());
  Fill(cache, {1, 0}, std::string(kObjectSize, 's'));
  cache.Truncate(1, 4);
  cache.Write({1, 0}, 12, "ee", T(0));  // extends the file again
  EXPECT_EQ(ReadBytes(cache, {1, 0}, 0, kObjectSize), "ssss" + Zeros(8) + "ee" + Zeros(2));
}

TEST(WriteBackCacheTest, TruncateDuringWriteBackThenFailureKeepsOnlyBytesBeforeCut) {
  WriteBackCache cache(Options());
  cache.Write({1, 0}, 0, Pattern(1), T(0));
  std::optional<FlushJob> job = cache.TakeFlushOf(1);
  ASSERT_TRUE(job.has_value());
  cache.Truncate(1, 8);
  cache.FlushDone(*job, false);
  // The bytes before the cut are still to be written; the ones beyond are gone.
  EXPECT_TRUE(cache.HasUnwritten(1));
  EXPECT_EQ(cache.stats().dirty_bytes, 8u);
  std::optional<FlushJob> retry = cache.TakeFlushOf(1);
  ASSERT_TRUE(retry.has_value());
  EXPECT_EQ(retry->ranges, Ranges({{0, 8}}));
  EXPECT_EQ(retry->data.substr(0, 8), Pattern(1).substr(0, 8));
}

// --- Forget ----------------------------------------------------------------------------------

TEST(WriteBackCacheTest, ForgetDropsEveryByteOfTheFile) {
  WriteBackCache cache(Options());
  Fill(cache, {2, 0}, Pattern(2));
  cache.Write({2, 1}, 0, "keep", T(0));
  const WriteBackStats other = cache.stats();
  Fill(cache, {1, 0}, Pattern(0));
  cache.Write({1, 0}, 0, "x", T(0));
  cache.Write({1, 1}, 0, Pattern(1), T(0));
  cache.Write({1, 2}, 3, "partial", T(0));

  cache.Forget(1);
  for (uint64_t i = 0; i < 3; ++i) {
    EXPECT_FALSE(ReadBytes(cache, {1, i}, 0, 1).has_value()) << "object " << i;
  }
  EXPECT_FALSE(ReadBytes(cache, {1, 2}, 3, 7).has_value());
  EXPECT_FALSE(cache.HasUnwritten(1));
  EXPECT_FALSE(cache.TakeFlushOf(1).has_value());

  EXPECT_EQ(ReadBytes(cache, {2, 0}, 0, kObjectSize), Pattern(2));
  EXPECT_EQ(ReadBytes(cache, {2, 1}, 0, 4), "keep");
  EXPECT_TRUE(cache.HasUnwritten(2));
  WriteBackStats s = cache.stats();
  EXPECT_EQ(s.entries, other.entries);
  EXPECT_EQ(s.bytes, other.bytes);
  EXPECT_EQ(s.dirty_bytes, other.dirty_bytes);
  EXPECT_EQ(s.pinned_bytes, other.pinned_bytes);
  EXPECT_EQ(s.dirty_bytes, 4u);

  std::optional<FlushJob> job = cache.TakeOldestFlush();
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->key, (ObjectKey{2, 1}));
  EXPECT_FALSE(cache.TakeOldestFlush().has_value());
}

TEST(WriteBackCacheTest, ForgetDuringWriteBackKeepsNothing) {
  WriteBackCache cache(Options());
  cache.Write({1, 0}, 0, "abcd", T(0));
  std::optional<FlushJob> job = cache.TakeFlushOf(1);
  ASSERT_TRUE(job.has_value());
  cache.Forget(1);
  EXPECT_FALSE(ReadBytes(cache, {1, 0}, 0, 4).has_value());
  EXPECT_FALSE(cache.TakeFlushOf(1).has_value());

  cache.FlushDone(*job, false);
  EXPECT_FALSE(cache.TakeFlushOf(1).has_value());
  EXPECT_FALSE(cache.TakeOldestFlush().has_value());
  EXPECT_FALSE(cache.TakeDueFlush(Late()).has_value());
  EXPECT_FALSE(cache.HasInFlight(1));
  EXPECT_FALSE(cache.HasUnwritten(1));
  EXPECT_FALSE(ReadBytes(cache, {1, 0}, 0, 4).has_value());
  WriteBackStats s = cache.stats();
  EXPECT_EQ(s.entries, 0u);
  EXPECT_EQ(s.bytes, 0u);
  EXPECT_EQ(s.dirty_bytes, 0u);
  EXPECT_EQ(s.pinned_bytes, 0u);
}

TEST(WriteBackCacheTest, ForgetDuringSuccessfulWriteBackKeepsNothing) {
  WriteBackCache cache(Options());
  cache.Write({1, 0}, 0, Pattern(0), T(0));
  std::optional<FlushJob> job = cache.TakeDueFlush(T(0));
  ASSERT_TRUE(job.has_value());
  cache.Forget(1);
  cache.FlushDone(*job, true);
  EXPECT_FALSE(cache.HasInFlight(1));
  EXPECT_FALSE(ReadBytes(cache, {1, 0}, 0, 1).has_value());
  EXPECT_EQ(cache.stats().entries, 0u);
  EXPECT_EQ(cache.stats().bytes, 0u);
  EXPECT_EQ(cache.stats().pinned_bytes, 0u);
}

TEST(WriteBackCacheTest, WriteAfterForgetDuringWriteBackSurvivesFailure) {
  WriteBackCache cache(Options());
  cache.Write({1, 0}, 0, "old!", T(0));
  std::optional<FlushJob> job = cache.TakeFlushOf(1);
  ASSERT_TRUE(job.has_value());
  cache.Forget(1);
  cache.Write({1, 0}, 8, "new!", T(1));
  cache.FlushDone(*job, false);
  EXPECT_FALSE(ReadBytes(cache, {1, 0}, 0, 4).has_value());
  EXPECT_EQ(ReadBytes(cache, {1, 0}, 8, 4), "new!");
  std::optional<FlushJob> next = cache.TakeFlushOf(1);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->ranges, Ranges({{8, 12}}));
  EXPECT_EQ(next->data.substr(8, 4), "new!");
}

// --- ForgetClean -----------------------------------------------------------------------------

TEST(WriteBackCacheTest, ForgetCleanDropsFilledBytesKeepsDirtyOnes) {
  WriteBackCache cache(Options());
  Fill(cache, {1, 0}, Pattern(0));                     // clean only
  Fill(cache, {1, 1}, std::string(kObjectSize, 's'));  // clean with a dirty range
  cache.Write({1, 1}, 2, "ab", T(0));
  cache.Write({1, 2}, 5, "xyz", T(0));  // dirty only
  Fill(cache, {2, 0}, Pattern(2));      // another file

  cache.ForgetClean(1);
  EXPECT_FALSE(ReadBytes(cache, {1, 0}, 0, 1).has_value());
  EXPECT_FALSE(ReadBytes(cache, {1, 1}, 0, kObjectSize).has_value());
  EXPECT_FALSE(ReadBytes(cache, {1, 1}, 0, 1).has_value());
  EXPECT_EQ(ReadBytes(cache, {1, 1}, 2, 2), "ab");
  EXPECT_EQ(ReadBytes(cache, {1, 2}, 5, 3), "xyz");
  EXPECT_EQ(ReadBytes(cache, {2, 0}, 0, kObjectSize), Pattern(2));
  EXPECT_TRUE(cache.HasUnwritten(1));
  EXPECT_EQ(cache.stats().dirty_bytes, 5u);

  std::map<ObjectKey, FlushJob> jobs;
  for (const FlushJob& j : DrainFile(cache, 1)) jobs.emplace(j.key, j);
  ASSERT_EQ(jobs.size(), 2u);
  ASSERT_EQ(jobs.count({1, 1}), 1u);
  ASSERT_EQ(jobs.count({1, 2}), 1u);
  const FlushJob& one = jobs.at({1, 1});
  EXPECT_FALSE(one.replace);  // the rest of the object is no longer known
  EXPECT_EQ(one.ranges, Ranges({{2, 4}}));
  EXPECT_EQ(one.data.substr(2, 2), "ab");
  const FlushJob& two = jobs.at({1, 2});
  EXPECT_FALSE(two.replace);
  EXPECT_EQ(two.ranges, Ranges({{5, 8}}));
  EXPECT_EQ(two.data.substr(5, 3), "xyz");
}

TEST(WriteBackCacheTest, ForgetCleanThenFillMergesDirtyBytes) {
  WriteBackCache cache(Options());
  Fill(cache, {1, 0}, std::string(kObjectSize, 'o'));
  cache.Write({1, 0}, 0, "mine", T(0));
  cache.ForgetClean(1);
  std::string fresh(kObjectSize, 'n');
  std::string expected = "mine" + std::string(kObjectSize - 4, 'n');
  EXPECT_EQ(Fill(cache, {1, 0}, fresh), expected);
  EXPECT_EQ(ReadBytes(cache, {1, 0}, 0, kObjectSize), expected);
}

TEST(WriteBackCacheTest, ForgetCleanDuringWriteBackDropsFilledBytes) {
  WriteBackCache cache(Options());
  Fill(cache, {1, 0}, std::string(kObjectSize, 's'));
  cache.Write({1, 0}, 2, "ab", T(0));
  std::optional<FlushJob> job = cache.TakeFlushOf(1);
  ASSERT_TRUE(job.has_value());
  cache.ForgetClean(1);
  // Byte 8 came from the OSDs, not from this client: another client may have changed it.
  EXPECT_FALSE(ReadBytes(cache, {1, 0}, 8, 1).has_value());
  EXPECT_FALSE(ReadBytes(cache, {1, 0}, 0, kObjectSize).has_value());
  EXPECT_EQ(ReadBytes(cache, {1, 0}, 2, 2), "ab");
  cache.FlushDone(*job, true);
  EXPECT_FALSE(ReadBytes(cache, {1, 0}, 8, 1).has_value());
  EXPECT_FALSE(ReadBytes(cache, {1, 0}, 0, kObjectSize).has_value());
}

TEST(WriteBackCacheTest, ForgetCleanKeepsInFlightBytes) {
  WriteBackCache cache(Options());
  cache.Write({1, 0}, 0, "abcd", T(0));
  std::optional<FlushJob> job = cache.TakeFlushOf(1);
  ASSERT_TRUE(job.has_value());
  cache.ForgetClean(1);
  EXPECT_TRUE(cache.HasInFlight(1));
  cache.FlushDone(*job, false);
  std::optional<FlushJob> retry = cache.TakeFlushOf(1);
  ASSERT_TRUE(retry.has_value());
  EXPECT_EQ(retry->ranges, Ranges({{0, 4}}));
  EXPECT_EQ(retry->data.substr(0, 4), "abcd");
}

}  // namespace
}  // namespace orthofs
