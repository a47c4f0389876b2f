// The data log on a real directory: appends read back, segments fill and roll over, a reopen
// keeps every segment and starts a new one, collected segments are gone for readers, and a
// segment cut short reads as damaged.
#include "osd/data_log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/posix_files.h"

namespace orthofs {
namespace {

class DataLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/data_log_test";
    std::filesystem::remove_all(dir_);
    Reopen();
  }
  void TearDown() override {
    log_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Reopen() {
    log_.reset();
    Result<std::unique_ptr<DataLog>> log = DataLog::Open(dir_, {.segment_bytes = kSegmentBytes});
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    log_ = std::move(*log);
  }
  // The header and the bytes, read back as Read hands them out.
  std::pair<std::string, std::string> ReadBack(const LogExtent& extent, size_t header_size) {
    std::string header(header_size, '\0');
    std::string data;
    Status st = log_->Read(extent, &header, &data);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return {header, data};
  }

  static constexpr uint64_t kSegmentBytes = 1000;
  std::string dir_;
  std::unique_ptr<DataLog> log_;
};

// Bytes in pieces (a received message's slices) are written as they are, also more pieces
// than one pwritev takes (IOV_MAX).
TEST_F(DataLogTest, AppendsBytesInPieces) {
  std::string bytes(3000, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>('a' + i % 26);
  BytePieces pieces;
  for (size_t at = 0; at < bytes.size(); at += 2) {
    pieces.Append(std::string_view(bytes).substr(at, 2));
  }
  ASSERT_GT(pieces.pieces().size(), static_cast<size_t>(IOV_MAX));
  Result<LogExtent> extent = log_->Append("head", pieces);
  ASSERT_TRUE(extent.ok()) << extent.status().ToString();
  EXPECT_EQ(extent->length, 3004u);
  auto [header, data] = ReadBack(*extent, 4);
  EXPECT_EQ(header, "head");
  EXPECT_EQ(data, bytes);
}

// A batch of records goes side by side into one segment, each record where a separate Append
// would put it: one that does not fit the active segment starts the next one.
TEST_F(DataLogTest, AppendAllPutsABatchWhereSeparateAppendsWould) {
  Result<LogExtent> first = log_->Append("h0", std::string(600, 'x'));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  const std::string a(200, 'a');
  BytePieces b;
  b.Append("bb");
  b.Append(std::string_view("bbbb"));
  Result<std::vector<LogExtent>> batch = log_->AppendAll({{"H1", BytePieces(a)}, {"H2", b}});
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  ASSERT_EQ(batch->size(), 2u);
  // 602 + 202 + 8 fits the segment (1000 bytes): right after the first record.
  EXPECT_EQ((*batch)[0], (LogExtent{first->segment, 602, 202}));
  EXPECT_EQ((*batch)[1], (LogExtent{first->segment, 804, 8}));
  EXPECT_EQ(ReadBack((*batch)[0], 2), std::make_pair(std::string("H1"), a));
  EXPECT_EQ(ReadBack((*batch)[1], 2), std::make_pair(std::string("H2"), std::string("bbbbbb")));

  // 150 more still fit (962 bytes); the next 150 and 900 start a segment each.
  Result<std::vector<LogExtent>> next =
      log_->AppendAll({{"H3", BytePieces(std::string(148, 'c'))},
                       {"H4", BytePieces(std::string(148, 'd'))},
                       {"H5", BytePieces(std::string(898, 'e'))}});
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ((*next)[0], (LogExtent{first->segment, 812, 150}));
  EXPECT_EQ((*next)[1], (LogExtent{first->segment + 1, 0, 150}));
  EXPECT_EQ((*next)[2], (LogExtent{first->segment + 2, 0, 900}));
  EXPECT_EQ(ReadBack((*next)[0], 2).second, std::string(148, 'c'));
  EXPECT_EQ(ReadBack((*next)[1], 2).second, std::string(148, 'd'));
  EXPECT_EQ(ReadBack((*next)[2], 2).second, std::string(898, 'e'));
  EXPECT_EQ(log_->total_bytes(), 962u + 150u + 900u);
  // Each record of a batch pins its segment until it is indexed or abandoned.
  for (const LogExtent& e : {*first, (*batch)[0], (*batch)[1]}) log_->Abandoned(e);
  EXPECT_TRUE(log_->Victims(0.0, 1 << 20).empty()) << "next[0] still pins segment 1";
  log_->Abandoned((*next)[0]);
  EXPECT_EQ(log_->Victims(0.0, 1 << 20), (std::vector<uint64_t>{first->segment}));
  EXPECT_TRUE(log_->AppendAll({}).ok());
}

TEST_F(DataLogTest, AppendsReadBackAndFillSegmentsInTurn) {
  std::vector<LogExtent> extents;
  for (int i = 0; i < 5; ++i) {
    Result<LogExtent> extent = log_->Append("hed" + std::to_string(i), std::string(396, 'a' + i));
    ASSERT_TRUE(extent.ok()) << extent.status().ToString();
    extents.push_back(*extent);
  }
  // 400 bytes each: two per 1000-byte segment, then the next one.
  EXPECT_EQ(extents[0], (LogExtent{1, 0, 400}));
  EXPECT_EQ(extents[1], (LogExtent{1, 400, 400}));
  EXPECT_EQ(extents[2], (LogExtent{2, 0, 400}));
  EXPECT_EQ(extents[4].segment, 3u);
  for (int i = 0; i < 5; ++i) {
    auto [header, data] = ReadBack(extents[i], 4);
    EXPECT_EQ(header, "hed" + std::to_string(i));
    EXPECT_EQ(data, std::string(396, 'a' + i));
  }
  // A record larger than a segment gets one of its own.
  Result<LogExtent> big = log_->Append(std::string(1500, 'z'), "");
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(*big, (LogExtent{4, 0, 1500}));
  EXPECT_EQ(log_->total_bytes(), 5 * 400 + 1500u);
  EXPECT_EQ(log_->segments(), (std::vector<uint64_t>{1, 2, 3, 4}));
}

TEST_F(DataLogTest, PinnedAndActiveSegmentsAreNoVictimsAndLiveBytesCount) {
  Result<LogExtent> a = log_->Append("", std::string(600, 'a'));
  Result<LogExtent> b = log_->Append("", std::string(600, 'b'));  // segment 2, now active
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(log_->Victims(0.0, 1 << 20).empty()) << "segment 1 is pinned: not yet indexed";
  log_->Indexed({*a}, {});
  EXPECT_TRUE(log_->Victims(0.0, 1 << 20).empty()) << "segment 1 is all live";
  log_->Indexed({*b}, {*a});  // b replaced a
  EXPECT_EQ(log_->live_bytes(1), 0);
  EXPECT_EQ(log_->garbage_bytes(), 600u);
  EXPECT_EQ(log_->Victims(0.5, 1 << 20), (std::vector<uint64_t>{1}));
  ASSERT_TRUE(log_->Remove(1).ok());
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/000000000001.seg"));
  std::string header;
  std::string data;
  EXPECT_TRUE(log_->Read(*a, &header, &data).Is(StatusCode::kNotFound));
  EXPECT_FALSE(log_->Remove(2).ok()) << "the active segment stays";
  // An abandoned append (its index write failed) is garbage.
  Result<LogExtent> c = log_->Append("", std::string(100, 'c'));
  ASSERT_TRUE(c.ok());
  log_->Abandoned(*c);
  EXPECT_EQ(log_->garbage_bytes(), 100u);
}

TEST_F(DataLogTest, ReopenKeepsSegmentsAndStartsANewOne) {
  Result<LogExtent> a = log_->Append("h", "first");
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(log_->Sync().ok());
  Reopen();
  log_->RestoreLive(a->segment, a->length);
  EXPECT_EQ(ReadBack(*a, 1).second, "first");
  Result<LogExtent> b = log_->Append("h", "second");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->segment, a->segment + 1) << "never appended after a possibly torn tail";
  log_->Indexed({*b}, {});
  EXPECT_EQ(log_->garbage_bytes(), 0u);
  EXPECT_EQ(log_->Victims(0.0, 1 << 20), (std::vector<uint64_t>{})) << "segment 1 is all live";
  // Counts for a segment that is missing are reported and ignored.
  log_->RestoreLive(99, 5);
  EXPECT_EQ(log_->live_bytes(99), 0);
}

TEST_F(DataLogTest, ASegmentCutShortReadsAsDamaged) {
  Result<LogExtent> a = log_->Append("h", std::string(300, 'x'));
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(::truncate((dir_ + "/000000000001.seg").c_str(), 200), 0);
  std::string header(1, '\0');
  std::string data;
  EXPECT_TRUE(log_->Read(*a, &header, &data).Is(StatusCode::kCorruption));
  std::string too_long_header(400, '\0');
  EXPECT_TRUE(log_->Read(*a, &too_long_header, &data).Is(StatusCode::kCorruption));
}

TEST_F(DataLogTest, ConcurrentAppendsDoNotOverlap) {
  constexpr int kThreads = 4;
  constexpr int kEach = 200;
  std::vector<std::vector<LogExtent>> extents(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        Result<LogExtent> e = log_->Append(std::string(1, 'A' + t), std::string(99, 'a' + t));
        if (e.ok()) extents[t].push_back(*e);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(extents[t].size(), static_cast<size_t>(kEach));
    for (const LogExtent& e : extents[t]) {
      auto [header, data] = ReadBack(e, 1);
      ASSERT_EQ(header, std::string(1, 'A' + t));
      ASSERT_EQ(data, std::string(99, 'a' + t));
    }
  }
  EXPECT_EQ(log_->total_bytes(), kThreads * kEach * 100u);
  EXPECT_TRUE(log_->Sync().ok());
}

// An empty directory `name` under the test's temp dir.
std::string EmptyDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// `count` appends of `object` (after a 4-byte header); their places go to `extents`.
void AppendCopies(DataLog* log, const std::string& object, int count,
                  std::vector<LogExtent>* extents) {
  for (int i = 0; i < count; ++i) {
    Result<LogExtent> extent = log->Append("head", object);
    ASSERT_TRUE(extent.ok()) << extent.status().ToString();
    extents->push_back(*extent);
  }
}

// Drop-behind: once synced, appended bytes are out of the page cache (a stream of writes does
// not evict what reads use); with drop_written_pages off they stay. Either way they read back.
TEST(DataLogPageCacheTest, SyncedAppendsLeaveThePageCacheUnlessKept) {
  for (bool drop : {true, false}) {
    SCOPED_TRACE(drop ? "dropped" : "kept");
    const std::string dir = EmptyDir("data_log_page_cache_test");
    if (testing::OnTmpfs(dir)) GTEST_SKIP() << dir << " is on tmpfs: its pages never drop";
    {
      Result<std::unique_ptr<DataLog>> log =
          DataLog::Open(dir, {.segment_bytes = 64 << 20, .drop_written_pages = drop});
      ASSERT_TRUE(log.ok()) << log.status().ToString();
      const std::string object(1 << 20, 'x');
      std::vector<LogExtent> extents;
      ASSERT_NO_FATAL_FAILURE(AppendCopies(log->get(), object, 12, &extents));
      ASSERT_TRUE((*log)->Sync().ok());
      const uint64_t resident = testing::ResidentPages(dir);
      if (drop) {
        EXPECT_LE(resident, 1u);  // the partly written last page stays for the next append
      } else {
        EXPECT_GE(resident, 12u * (1 << 20) / ::sysconf(_SC_PAGESIZE));
      }
      std::string header(4, '\0');
      std::string data;
      ASSERT_TRUE((*log)->Read(extents.back(), &header, &data).ok());
      EXPECT_EQ(data, object);
    }
    std::filesystem::remove_all(dir);
  }
}

// A read brings its record into the page cache and nothing after it: the kernel's read-ahead
// would read the neighbours too, which random reads never use (the store's range scans say
// what they read ahead: DataLog::WillNeed). For the active segment and for one found at open.
TEST(DataLogPageCacheTest, AReadLoadsItsRecordAndNoMore) {
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  for (bool reopened : {false, true}) {
    SCOPED_TRACE(reopened ? "segment found at open" : "active segment");
    const std::string dir = EmptyDir("data_log_read_ahead_test");
    if (testing::OnTmpfs(dir)) GTEST_SKIP() << dir << " is on tmpfs: its pages never drop";
    Result<std::unique_ptr<DataLog>> log = DataLog::Open(dir, {.segment_bytes = 64 << 20});
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    const std::string object(16 << 10, 'r');
    std::vector<LogExtent> extents;
    ASSERT_NO_FATAL_FAILURE(AppendCopies(log->get(), object, 64, &extents));
    ASSERT_TRUE((*log)->Sync().ok());  // drop-behind: the appended pages leave the cache
    if (reopened) {
      log->reset();
      log = DataLog::Open(dir, {.segment_bytes = 64 << 20});
      ASSERT_TRUE(log.ok()) << log.status().ToString();
    }
    ASSERT_LE(testing::ResidentPages(dir), 1u);
    // Records read in a row, as objects of one file written in order: what the kernel takes
    // for a sequential reader.
    constexpr int kFirst = 10;
    constexpr int kEnd = 30;
    for (int i = kFirst; i < kEnd; ++i) {
      std::string header(4, '\0');
      std::string data;
      ASSERT_TRUE((*log)->Read(extents[i], &header, &data).ok());
      EXPECT_EQ(data, object);
    }
    const uint64_t begin = extents[kFirst].offset / page;
    const uint64_t end = (extents[kEnd - 1].offset + extents[kEnd - 1].length + page - 1) / page;
    EXPECT_LE(testing::ResidentPages(dir), end - begin + 1)  // + the last append's page
        << "pages the records span: " << end - begin;
    log->reset();
    std::filesystem::remove_all(dir);
  }
}

TEST(DataLogOpenTest, AnUnusableDirectoryIsAClearError) {
  Result<std::unique_ptr<DataLog>> log =
      DataLog::Open("/proc/no-such/dir", {.segment_bytes = 1 << 20});
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.status().message().find("/proc/no-such/dir"), std::string::npos)
      << log.status().ToString();
}

}  // namespace
}  // namespace orthofs
