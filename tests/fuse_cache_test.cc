// The client's write-back object cache, checked through real mounts: one TestCluster (3 OSDs),
// a mount with the default cache and a second mount of the same namespace with a 4 MiB cache,
// shared by the suite; every test works in its own subdirectory, made through the default
// mount. Where the cache promises that bytes are on the OSDs (aged write-back, close, fsync),
// the tests read both copies of each object straight from the OSDs with the cluster's
// ClusterClient, so nothing the client still caches can hide a missing write-back.
//
// Waits are for events with generous deadlines (polling), never timing assertions: the cache
// writes a partly written object back after at most 5 s, so 30 s means the event did not
// happen.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/oid.h"
#include "tests/metrics_scrape.h"
#include "tests/posix_files.h"
#include "tests/test_cluster.h"

namespace orthofs::testing {
namespace {

constexpr uint32_t kFnso = 1;
constexpr uint64_t kObjectSize = 131072;  // the cluster map's default (kDefaultObjectSize)
constexpr uint64_t kMiB = 1024 * 1024;
// Far beyond the 5 s maximum dirty age: an event that has not happened by then never will.
constexpr auto kEventDeadline = std::chrono::seconds(30);

Oid DataOid(uint64_t fno, uint64_t index, CopyFlag flag = CopyFlag::kOriginal) {
  return Oid{kFnso, fno, index, ObjectType::kData, flag};
}
Oid InodeOid(uint64_t fno, CopyFlag flag = CopyFlag::kOriginal) {
  return Oid{kFnso, fno, 0, ObjectType::kInode, flag};
}

constexpr CopyFlag kBothCopies[] = {CopyFlag::kOriginal, CopyFlag::kReplica};

class FuseCacheTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    umask(022);
    try {
      cluster_ = new TestCluster();
      mount_ = new TestMount(cluster_, kFnso);
      small_ = new TestMount(cluster_, kFnso, {"--cache-mb", "4"});
    } catch (const std::exception& e) {
      setup_error_ = new std::string(e.what());
    }
  }

  static void TearDownTestSuite() {
    delete small_;
    small_ = nullptr;
    delete mount_;
    mount_ = nullptr;
    delete cluster_;
    cluster_ = nullptr;
    delete setup_error_;
    setup_error_ = nullptr;
  }

  void SetUp() override {
    ASSERT_EQ(setup_error_, nullptr) << *setup_error_;
    ASSERT_NE(mount_, nullptr);
    ASSERT_NE(small_, nullptr);
    ASSERT_NE(mount_->path(), small_->path());
    name_ = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    const std::string dir = *mount_ / name_;
    ASSERT_EQ(mkdir(dir.c_str(), 0755), 0) << dir << ": " << std::strerror(errno);
  }

  // A path inside this test's directory, through the default mount or the 4 MiB-cache mount.
  std::string P(const std::string& relative) const { return *mount_ / (name_ + "/" + relative); }
  std::string S(const std::string& relative) const { return *small_ / (name_ + "/" + relative); }

  static ClusterClient& Osds() { return cluster_->client(); }

  // Whether the copy is stored; *error is set for any failure other than "not found".
  static bool Exists(const Oid& oid, std::string* error) {
    Result<wire::ObjectMeta> meta = Osds().Stat(oid);
    if (meta.ok()) return true;
    if (!meta.status().Is(StatusCode::kNotFound)) {
      *error = "stat " + oid.ToString() + ": " + meta.status().ToString();
    }
    return false;
  }

  // The copy, read straight from its OSD, holds exactly `want`.
  static ::testing::AssertionResult ObjectHolds(const Oid& oid, std::string_view want) {
    Result<wire::ReadResponse> read = Osds().Read(oid);
    if (!read.ok()) {
      return ::testing::AssertionFailure()
             << "read " << oid.ToString() << " from its OSD: " << read.status().ToString();
    }
    if (read->data() != want) {
      return ::testing::AssertionFailure()
             << oid.ToString() << " on its OSD: " << Mismatch(read->data(), want);
    }
    return ::testing::AssertionSuccess();
  }

  // Both copies of every object of a file whose content is `content` hold their slice.
  static void ExpectObjectsHold(uint64_t fno, const std::string& content) {
    const uint64_t objects = (content.size() + kObjectSize - 1) / kObjectSize;
    for (uint64_t index = 0; index < objects; ++index) {
      const std::string_view slice =
          std::string_view(content).substr(index * kObjectSize, kObjectSize);
      for (CopyFlag flag : kBothCopies) {
        EXPECT_TRUE(ObjectHolds(DataOid(fno, index, flag), slice));
      }
    }
    // Nothing stored past the end of the file.
    for (CopyFlag flag : kBothCopies) {
      std::string error;
      EXPECT_FALSE(Exists(DataOid(fno, objects, flag), &error))
          << DataOid(fno, objects, flag).ToString() << " exists past the end of the file";
      EXPECT_EQ(error, "");
    }
  }

  // The sum of `field` over every OSD's Stats; *error is set if an OSD did not answer.
  static uint64_t SumOverOsds(const std::function<uint64_t(const wire::StatsResponse&)>& field,
                              std::string* error) {
    uint64_t total = 0;
    for (const auto& osd : Osds().osds()) {
      Result<wire::StatsResponse> stats = osd->Stats({});
      if (!stats.ok()) {
        *error = "stats of " + osd->name() + ": " + stats.status().ToString();
        return 0;
      }
      total += field(*stats);
    }
    return total;
  }

  // Live objects stored on all OSDs together.
  static uint64_t ObjectsOnOsds(std::string* error) {
    return SumOverOsds([](const wire::StatsResponse& s) { return s.objects(); }, error);
  }

  // A counter summed over all OSDs (e.g. "read_calls": each read, alone or in a ReadMany).
  static uint64_t CounterOnOsds(const std::string& counter, std::string* error) {
    return SumOverOsds(
        [&counter](const wire::StatsResponse& s) {
          auto it = s.counters().find(counter);
          return it != s.counters().end() ? it->second : 0;
        },
        error);
  }
  static uint64_t ReadCallsOnOsds(std::string* error) { return CounterOnOsds("read_calls", error); }

  static TestCluster* cluster_;
  static TestMount* mount_;  // default cache (256 MiB)
  static TestMount* small_;  // --cache-mb 4: writers hit memory pressure at 2 MiB
  static std::string* setup_error_;
  std::string name_;
};

TestCluster* FuseCacheTest::cluster_ = nullptr;
TestMount* FuseCacheTest::mount_ = nullptr;
TestMount* FuseCacheTest::small_ = nullptr;
std::string* FuseCacheTest::setup_error_ = nullptr;

// A partly written object that nobody closes or fsyncs still reaches both copies' OSDs once
// it is older than the maximum dirty age (5 s).
TEST_F(FuseCacheTest, AgedWritesReachTheOsdsWithoutClose) {
  const std::string data = RandomBytes(1000, 101);
  Fd fd(open(P("f").c_str(), O_CREAT | O_EXCL | O_RDWR, 0644));
  ASSERT_GE(fd.get(), 0) << "create: " << std::strerror(errno);
  ASSERT_TRUE(WriteFull(fd.get(), data, 0)) << "write: " << std::strerror(errno);
  struct stat st;
  ASSERT_EQ(fstat(fd.get(), &st), 0) << std::strerror(errno);
  const Oid original = DataOid(st.st_ino, 0, CopyFlag::kOriginal);
  const Oid replica = DataOid(st.st_ino, 0, CopyFlag::kReplica);

  std::string error;
  bool original_stored = false;
  bool replica_stored = false;
  WaitFor(
      [&] {
        original_stored = Exists(original, &error);
        replica_stored = Exists(replica, &error);
        return (original_stored && replica_stored) || !error.empty();
      },
      kEventDeadline);
  ASSERT_EQ(error, "");
  ASSERT_TRUE(original_stored) << original.ToString() << " not on its OSD after 30 s with the "
                               << "file still open (max dirty age is 5 s)";
  ASSERT_TRUE(replica_stored) << replica.ToString() << " not on its OSD after 30 s with the "
                              << "file still open (max dirty age is 5 s)";
  EXPECT_TRUE(ObjectHolds(original, data));
  EXPECT_TRUE(ObjectHolds(replica, data));
  EXPECT_EQ(fd.Close(), 0) << std::strerror(errno);
}

// close(2) returns only after every object, the partly written tail included, is on both
// copies' OSDs.
TEST_F(FuseCacheTest, CloseWritesBackBothCopies) {
  const std::string data = RandomBytes(kMiB + 12345, 102);
  CreateFile(P("f"), data);
  const uint64_t fno = FreshStat(P("f")).st_ino;
  // No waiting: close already wrote everything back.
  ExpectObjectsHold(fno, data);
}

// Drop-behind on the OSDs (DataLog::Options::drop_written_pages): once an fsync has made a
// file's objects durable, their bytes are out of the OSDs' page cache. A 16 MiB file is 32 MiB
// of data-log appends (both copies); kept, that would be 8192 more resident pages.
TEST_F(FuseCacheTest, FsyncedObjectsLeaveTheOsdsPageCache) {
  const std::string log_dir = cluster_->DataDir(0) + "/data-log";
  if (OnTmpfs(log_dir)) GTEST_SKIP() << log_dir << " is on tmpfs: its pages never drop";
  auto resident = [&] {
    uint64_t pages = 0;
    for (const auto& osd : Osds().osds()) {
      pages += ResidentPages(cluster_->DataDir(osd->osd_id()) + "/data-log");
    }
    return pages;
  };
  const uint64_t before = resident();
  const std::string data = RandomBytes(16 * kMiB, 103);
  Fd fd(open(P("f").c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644));
  ASSERT_GE(fd.get(), 0) << "create: " << std::strerror(errno);
  ASSERT_TRUE(WriteFull(fd.get(), data, 0)) << "write: " << std::strerror(errno);
  ASSERT_EQ(fsync(fd.get()), 0) << std::strerror(errno);
  const uint64_t after = resident();
  // At most the partly written last page of each OSD's segments, and a little metadata.
  EXPECT_LE(after, before + 64) << "resident data-log pages: " << before << " before, " << after
                                << " after 32 MiB of appends and an fsync";
  EXPECT_EQ(fd.Close(), 0) << std::strerror(errno);
  ExpectObjectsHold(FreshStat(P("f")).st_ino, data);
}

// With a 4 MiB cache, three open files written interleaved (72 MiB in all) keep writers under
// memory pressure the whole time, so they write back synchronously; small overwrites of
// already written bytes mixed in must not be lost or reordered behind older write-backs.
TEST_F(FuseCacheTest, SmallCacheUnderPressureKeepsEveryByte) {
  constexpr int kFiles = 3;
  constexpr uint64_t kChunks = 24;  // 1 MiB each
  const std::string names[kFiles] = {"f0", "f1", "f2"};
  std::vector<std::string> model(kFiles, std::string(kChunks * kMiB, '\0'));
  std::vector<std::unique_ptr<Fd>> fds;
  for (int f = 0; f < kFiles; ++f) {
    fds.push_back(std::make_unique<Fd>(open(S(names[f]).c_str(), O_CREAT | O_EXCL | O_RDWR, 0644)));
    ASSERT_GE(fds.back()->get(), 0) << "create " << names[f] << ": " << std::strerror(errno);
  }

  std::mt19937_64 rng(103);
  uint64_t seed = 1000;
  auto put = [&](int f, uint64_t offset, const std::string& data) {
    ASSERT_TRUE(WriteFull(fds[f]->get(), data, offset))
        << "pwrite " << data.size() << " bytes at " << offset << " of " << names[f] << ": "
        << std::strerror(errno);
    model[f].replace(offset, data.size(), data);
  };
  for (uint64_t chunk = 0; chunk < kChunks; ++chunk) {
    for (int f = 0; f < kFiles; ++f) {
      ASSERT_NO_FATAL_FAILURE(put(f, chunk * kMiB, RandomBytes(kMiB, ++seed)));
    }
    // Every third round, 1000 bytes at a random odd offset inside what each file already
    // holds, overwriting bytes that may be cached, in flight or already on the OSDs.
    if (chunk % 3 == 2) {
      for (int f = 0; f < kFiles; ++f) {
        const uint64_t written = (chunk + 1) * kMiB;
        const uint64_t offset = (rng() % (written - 1000)) | 1;
        ASSERT_NO_FATAL_FAILURE(put(f, offset, RandomBytes(1000, ++seed)));
      }
      // One that certainly straddles an object boundary.
      ASSERT_NO_FATAL_FAILURE(
          put(static_cast<int>(chunk % kFiles), chunk * kMiB - 501, RandomBytes(1000, ++seed)));
    }
  }
  for (int f = 0; f < kFiles; ++f) {
    EXPECT_EQ(fds[f]->Close(), 0) << "close " << names[f] << ": " << std::strerror(errno);
  }

  for (int f = 0; f < kFiles; ++f) {
    SCOPED_TRACE(names[f] + " written through the 4 MiB-cache mount, read through the other");
    EXPECT_EQ(FreshStat(P(names[f])).st_size, static_cast<off_t>(model[f].size()));
    const std::string got = ReadFile(P(names[f]));
    EXPECT_TRUE(got == model[f]) << Mismatch(got, model[f]);
  }
}

// Truncation drops cached bytes beyond the new size, dirty ones included, and keeps the dirty
// bytes below it: after growing the file again with a write far beyond, the gap reads as
// zeros in this client and in another one.
TEST_F(FuseCacheTest, TruncateWithUnwrittenDataReadsZerosBeyond) {
  std::string model = RandomBytes(kMiB, 104);
  Fd fd(open(P("f").c_str(), O_CREAT | O_EXCL | O_RDWR, 0644));
  ASSERT_GE(fd.get(), 0) << "create: " << std::strerror(errno);
  ASSERT_TRUE(WriteFull(fd.get(), model, 0)) << "write: " << std::strerror(errno);
  // Small unaligned overwrites leave partly dirty objects in the cache (for up to 5 s): one
  // below the cut, which must survive, and one beyond it, which must vanish.
  for (uint64_t offset : {uint64_t{50001}, uint64_t{300001}}) {
    const std::string patch = RandomBytes(1000, 104 + offset);
    ASSERT_TRUE(WriteFull(fd.get(), patch, offset)) << "write: " << std::strerror(errno);
    model.replace(offset, patch.size(), patch);
  }
  ASSERT_EQ(ftruncate(fd.get(), 100000), 0) << "ftruncate: " << std::strerror(errno);
  ASSERT_TRUE(WriteFull(fd.get(), "xyz", 600000)) << "write: " << std::strerror(errno);
  ASSERT_EQ(fd.Close(), 0) << "close: " << std::strerror(errno);

  const std::string want = model.substr(0, 100000) + std::string(500000, '\0') + "xyz";
  for (const std::string& path : {P("f"), S("f")}) {
    SCOPED_TRACE(path == P("f") ? "reopened through the same mount"
                                : "opened through the other mount");
    EXPECT_EQ(FreshStat(path).st_size, 600003);
    const std::string got = ReadFile(path);
    ASSERT_EQ(got.size(), want.size()) << Mismatch(got, want);
    EXPECT_TRUE(got.compare(0, 100000, want, 0, 100000) == 0)
        << "bytes [0, 100000) differ from what was written: " << Mismatch(got, want);
    const size_t nonzero = got.find_first_not_of('\0', 100000);
    EXPECT_EQ(nonzero, 600000u) << "bytes [100000, 600000) must be zeros; first nonzero at "
                                << nonzero;
    EXPECT_EQ(got.substr(600000), "xyz");
  }
}

// A file unlinked while open keeps its bytes for the open descriptor; at the last close its
// cached bytes are dropped and its objects freed, and no write-back of them lands afterwards
// (which would leave orphaned objects on the OSDs).
TEST_F(FuseCacheTest, UnlinkWhileOpenWithUnwrittenDataLeavesNoObjects) {
  std::string error;
  // After SetUp made this test's directory, so its objects are part of the baseline.
  const uint64_t baseline = ObjectsOnOsds(&error);
  ASSERT_EQ(error, "");

  constexpr uint64_t kSize = 3 * kMiB;
  std::string model = RandomBytes(kSize, 105);
  Fd fd(open(P("f").c_str(), O_CREAT | O_EXCL | O_RDWR, 0644));
  ASSERT_GE(fd.get(), 0) << "create: " << std::strerror(errno);
  // Unaligned pieces, then small overwrites at odd offsets: some objects stay partly dirty.
  for (uint64_t offset = 0; offset < kSize; offset += 100000) {
    const uint64_t n = std::min<uint64_t>(100000, kSize - offset);
    ASSERT_TRUE(WriteFull(fd.get(), model.substr(offset, n), offset))
        << "write at " << offset << ": " << std::strerror(errno);
  }
  for (uint64_t offset : {uint64_t{1}, uint64_t{131071}, uint64_t{777777}, uint64_t{2000001},
                          uint64_t{kSize - 1001}}) {
    const std::string patch = RandomBytes(1000, 105 + offset);
    ASSERT_TRUE(WriteFull(fd.get(), patch, offset)) << "write: " << std::strerror(errno);
    model.replace(offset, patch.size(), patch);
  }
  struct stat st;
  ASSERT_EQ(fstat(fd.get(), &st), 0) << std::strerror(errno);
  const uint64_t fno = st.st_ino;

  ASSERT_EQ(unlink(P("f").c_str()), 0) << "unlink: " << std::strerror(errno);
  {
    const std::string got = ReadAt(fd.get(), 0, kSize + 10);
    EXPECT_TRUE(got == model) << "read through the descriptor after unlink: "
                              << Mismatch(got, model);
  }
  ASSERT_EQ(fd.Close(), 0) << "close: " << std::strerror(errno);

  // Release after the last close is asynchronous to close(2).
  uint64_t objects = 0;
  WaitFor(
      [&] {
        objects = ObjectsOnOsds(&error);
        return objects == baseline || !error.empty();
      },
      kEventDeadline);
  ASSERT_EQ(error, "");
  EXPECT_EQ(objects, baseline) << "objects on the OSDs 30 s after the last close of an "
                               << "unlinked file, compared with before it was created";

  // Outlast the maximum dirty age: a write-back of the dropped bytes must not land late.
  std::this_thread::sleep_for(std::chrono::seconds(6));
  EXPECT_EQ(ObjectsOnOsds(&error), baseline) << "objects reappeared after the release";
  ASSERT_EQ(error, "");
  for (CopyFlag flag : kBothCopies) {
    EXPECT_FALSE(Exists(InodeOid(fno, flag), &error)) << InodeOid(fno, flag).ToString();
    for (uint64_t index = 0; index < kSize / kObjectSize; ++index) {
      EXPECT_FALSE(Exists(DataOid(fno, index, flag), &error))
          << DataOid(fno, index, flag).ToString() << " still stored";
    }
  }
  EXPECT_EQ(error, "");
}

// Bytes a reader cached must not shadow this client's own later writes.
TEST_F(FuseCacheTest, RewriteAfterReadSeesNewBytesInSameClient) {
  std::string model = RandomBytes(400000, 106);
  CreateFile(P("f"), model);
  {
    const std::string got = ReadFile(P("f"));  // fills the cache
    ASSERT_TRUE(got == model) << "first read: " << Mismatch(got, model);
  }
  // 5000 bytes straddling the boundary of objects 1 and 2 (262144).
  const uint64_t offset = 260000;
  const std::string patch = RandomBytes(5000, 107);
  Fd fd(open(P("f").c_str(), O_WRONLY));
  ASSERT_GE(fd.get(), 0) << "open: " << std::strerror(errno);
  ASSERT_TRUE(WriteFull(fd.get(), patch, offset)) << "write: " << std::strerror(errno);
  ASSERT_EQ(fd.Close(), 0) << "close: " << std::strerror(errno);
  model.replace(offset, patch.size(), patch);

  {
    SCOPED_TRACE("read again through the same mount");
    EXPECT_EQ(FreshStat(P("f")).st_size, 400000);
    const std::string got = ReadFile(P("f"));
    EXPECT_TRUE(got == model) << Mismatch(got, model);
  }
  {
    SCOPED_TRACE("read through the other mount");
    const std::string got = ReadFile(S("f"));
    EXPECT_TRUE(got == model) << Mismatch(got, model);
  }
}

// Close-to-open keeps the kernel's page cache of a file nobody changed: opening it again and
// reading it whole asks the client for nothing (its cache's hit and miss counters stand still),
// while a change by another client, or by this one, is read at the next open.
TEST_F(FuseCacheTest, ReopeningAnUnchangedFileReadsFromThePageCache) {
  const int port = FreePort();
  TestMount reader(cluster_, kFnso, {"--metrics", "127.0.0.1:" + std::to_string(port)});
  const std::string path = reader / (name_ + "/f");
  auto object_reads = [&] {
    std::map<std::string, double> samples = ScrapeMetrics(port);
    return samples["orthofs_client_cache_hits_total{fnso=\"1\"}"] +
           samples["orthofs_client_cache_misses_total{fnso=\"1\"}"];
  };
  std::string model = RandomBytes(3 * kObjectSize + 1000, 109);
  CreateFile(P("f"), model);
  ASSERT_TRUE(ReadFile(path) == model);
  const double first = object_reads();
  ASSERT_GT(first, 0);
  for (int again = 0; again < 2; ++again) {
    const std::string got = ReadFile(path);
    EXPECT_TRUE(got == model) << "re-read " << again << ": " << Mismatch(got, model);
  }
  EXPECT_EQ(object_reads(), first) << "re-reading an unchanged file reached the client";

  {
    SCOPED_TRACE("another client rewrote the file, longer");
    model = RandomBytes(4 * kObjectSize + 77, 110);
    Fd fd(open(P("f").c_str(), O_WRONLY | O_TRUNC));
    ASSERT_GE(fd.get(), 0) << "open: " << std::strerror(errno);
    ASSERT_TRUE(WriteFull(fd.get(), model, 0)) << std::strerror(errno);
    ASSERT_EQ(fd.Close(), 0) << "close: " << std::strerror(errno);
    const std::string got = ReadFile(path);
    EXPECT_TRUE(got == model) << Mismatch(got, model);
    EXPECT_GT(object_reads(), first);
  }
  {
    SCOPED_TRACE("this client patched the file; both clients read the patch");
    const std::string patch = RandomBytes(3000, 111);
    Fd fd(open(path.c_str(), O_WRONLY));
    ASSERT_GE(fd.get(), 0) << "open: " << std::strerror(errno);
    ASSERT_TRUE(WriteFull(fd.get(), patch, kObjectSize - 1000)) << std::strerror(errno);
    ASSERT_EQ(fd.Close(), 0) << "close: " << std::strerror(errno);
    model.replace(kObjectSize - 1000, patch.size(), patch);
    std::string got = ReadFile(path);
    EXPECT_TRUE(got == model) << "this client: " << Mismatch(got, model);
    got = ReadFile(P("f"));
    EXPECT_TRUE(got == model) << "the other client: " << Mismatch(got, model);
  }
  {
    SCOPED_TRACE("another client truncated the file");
    ASSERT_EQ(truncate(P("f").c_str(), 1234), 0) << std::strerror(errno);
    model.resize(1234);
    const std::string got = ReadFile(path);
    EXPECT_TRUE(got == model) << Mismatch(got, model);
  }
  {
    SCOPED_TRACE("another client patched the file while this one had it open and appended");
    Fd fd(open(path.c_str(), O_RDWR));
    ASSERT_GE(fd.get(), 0) << "open: " << std::strerror(errno);
    ASSERT_TRUE(ReadAt(fd.get(), 0, model.size()) == model);  // in the kernel's pages now
    const std::string patch = RandomBytes(1000, 112);
    {
      Fd other(open(P("f").c_str(), O_WRONLY));
      ASSERT_GE(other.get(), 0) << "open: " << std::strerror(errno);
      ASSERT_TRUE(WriteFull(other.get(), patch, 0)) << std::strerror(errno);
      ASSERT_EQ(other.Close(), 0) << "close: " << std::strerror(errno);
    }
    model.replace(0, patch.size(), patch);
    const std::string tail = RandomBytes(500, 113);
    ASSERT_TRUE(WriteFull(fd.get(), tail, model.size())) << std::strerror(errno);
    ASSERT_EQ(fd.Close(), 0) << "close: " << std::strerror(errno);
    model += tail;
    const std::string got = ReadFile(path);
    EXPECT_TRUE(got == model) << Mismatch(got, model);
  }
}

// Linux forgets a file's attributes at each write and asks for them at the next stat; a
// write-stat loop (a database checking its file's size, a writer's progress) must not cost an
// INODE read per block. The attributes answered meanwhile still carry this client's own changes
// at once.
TEST_F(FuseCacheTest, WriteStatLoopDoesNotReadTheInodeEachTime) {
  std::string model = RandomBytes(2 * kObjectSize, 114);
  CreateFile(P("f"), model);
  Fd fd(open(P("f").c_str(), O_RDWR));
  ASSERT_GE(fd.get(), 0) << "open: " << std::strerror(errno);
  ASSERT_TRUE(ReadAt(fd.get(), 0, model.size()) == model);
  constexpr int kBlocks = 200;
  constexpr uint64_t kBlock = 1024;
  std::string error;
  const uint64_t reads_before = ReadCallsOnOsds(&error);
  ASSERT_EQ(error, "");
  for (int i = 0; i < kBlocks; ++i) {
    const uint64_t offset = i * kBlock;
    std::string block = ReadAt(fd.get(), offset, kBlock);
    ASSERT_TRUE(block == model.substr(offset, kBlock)) << "block " << i;
    block[0] = static_cast<char>(block[0] ^ 0x5a);
    ASSERT_TRUE(WriteFull(fd.get(), block, offset))
        << "block " << i << ": " << std::strerror(errno);
    model.replace(offset, kBlock, block);
    struct stat st;
    ASSERT_EQ(fstat(fd.get(), &st), 0) << "block " << i << ": " << std::strerror(errno);
    ASSERT_EQ(st.st_size, static_cast<off_t>(model.size())) << "block " << i;
  }
  const uint64_t reads = ReadCallsOnOsds(&error) - reads_before;
  ASSERT_EQ(error, "");
  // One per second of the loop at most (kAttrTimeout); the loop takes far less here.
  EXPECT_LT(reads, kBlocks / 4) << "OSD reads during " << kBlocks << " read-write rounds";

  // This client's own changes of the INODE show at once, also when the kernel asks again
  // after a write (it takes a setattr's answer as is; the write makes it ask the client).
  auto patch_first_byte = [&] {
    model[0] = static_cast<char>(model[0] ^ 0x33);
    return WriteFull(fd.get(), model.substr(0, 1), 0);
  };
  ASSERT_EQ(fchmod(fd.get(), 0600), 0) << std::strerror(errno);
  ASSERT_TRUE(patch_first_byte()) << std::strerror(errno);
  struct stat st;
  ASSERT_EQ(fstat(fd.get(), &st), 0) << std::strerror(errno);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  const std::string tail = RandomBytes(5000, 115);
  ASSERT_TRUE(WriteFull(fd.get(), tail, model.size())) << std::strerror(errno);
  model += tail;
  ASSERT_EQ(fstat(fd.get(), &st), 0) << std::strerror(errno);
  EXPECT_EQ(st.st_size, static_cast<off_t>(model.size()));
  ASSERT_EQ(ftruncate(fd.get(), 1000), 0) << std::strerror(errno);
  model.resize(1000);
  ASSERT_TRUE(patch_first_byte()) << std::strerror(errno);
  ASSERT_EQ(fstat(fd.get(), &st), 0) << std::strerror(errno);
  EXPECT_EQ(st.st_size, 1000);
  ASSERT_EQ(fd.Close(), 0) << "close: " << std::strerror(errno);
  const std::string got = ReadFile(S("f"));
  EXPECT_TRUE(got == model) << "the other client: " << Mismatch(got, model);
  EXPECT_EQ(FreshStat(S("f")).st_mode & 07777, 0600u);
}

// An open with O_TRUNC truncates through a setattr, which Linux sends holding the inode's lock,
// so it cannot run beside another descriptor's write. (With libfuse's atomic O_TRUNC the
// truncating open came unlocked: `: > log` beside an appender dropped bytes the appender had
// just written and left zeros in their place.)
TEST_F(FuseCacheTest, TruncatingOpenComesAsASetattr) {
  const int port = FreePort();
  TestMount mount(cluster_, kFnso, {"--metrics", "127.0.0.1:" + std::to_string(port)});
  const std::string path = mount / (name_ + "/log");
  auto setattrs = [&] {
    return ScrapeMetrics(port)["orthofs_client_fuse_requests_total{fnso=\"1\",op=\"setattr\"}"];
  };
  CreateFile(path, "0123456789");
  const double before = setattrs();
  Fd fd(open(path.c_str(), O_WRONLY | O_TRUNC));
  ASSERT_GE(fd.get(), 0) << "open: " << std::strerror(errno);
  EXPECT_EQ(setattrs() - before, 1) << "setattr requests for the truncating open";
  ASSERT_TRUE(WriteFull(fd.get(), "ab", 0));
  ASSERT_EQ(fd.Close(), 0) << "close: " << std::strerror(errno);
  EXPECT_EQ(ReadFile(S("log")), "ab") << "the other client";
}

// A file read and written in place by the client that has it open (a database's pages,
// bonnie++'s rewrite): the kernel serves the reads from its page cache and asks the mount for
// neither bytes nor attributes. (With libfuse's automatic invalidation Linux asked for the
// attributes before every read that followed a write: a round trip per block.) The FUSE
// request counters of --metrics show it.
TEST_F(FuseCacheTest, ReadModifyWriteLoopIsServedByThePageCache) {
  const int port = FreePort();
  TestMount mount(cluster_, kFnso, {"--metrics", "127.0.0.1:" + std::to_string(port)});
  const std::string path = mount / (name_ + "/f");
  auto metric = [&](const std::string& sample) { return ScrapeMetrics(port)[sample]; };
  auto requests = [&](const char* op) {
    return metric("orthofs_client_fuse_requests_total{fnso=\"1\",op=\"" + std::string(op) + "\"}");
  };
  std::string model = RandomBytes(2 * kObjectSize, 117);
  CreateFile(path, model);
  Fd fd(open(path.c_str(), O_RDWR));
  ASSERT_GE(fd.get(), 0) << "open: " << std::strerror(errno);
  ASSERT_TRUE(ReadAt(fd.get(), 0, model.size()) == model);
  constexpr int kBlocks = 200;
  constexpr uint64_t kBlock = 1024;
  const double getattrs_before = requests("getattr");
  const double reads_before = requests("read");
  const double writes_before = requests("write");
  const double getxattrs_before = requests("getxattr");
  for (int i = 0; i < kBlocks; ++i) {
    const uint64_t offset = i * kBlock;
    std::string block = ReadAt(fd.get(), offset, kBlock);
    ASSERT_TRUE(block == model.substr(offset, kBlock)) << "block " << i;
    block[1] = static_cast<char>(block[1] ^ 0x77);
    ASSERT_TRUE(WriteFull(fd.get(), block, offset))
        << "block " << i << ": " << std::strerror(errno);
    model.replace(offset, kBlock, block);
  }
  EXPECT_GE(requests("write") - writes_before, kBlocks) << "every write reaches the mount";
  EXPECT_LT(requests("getattr") - getattrs_before, kBlocks / 4) << "getattrs during the loop";
  EXPECT_LT(requests("read") - reads_before, kBlocks / 4) << "reads the page cache did not serve";
  // Nor for security.capability before each write: the mount drops set-ID bits itself
  // (mount/fuse_killpriv.h; Linux 5.11 and later).
  EXPECT_EQ(metric("orthofs_client_drops_set_id_bits{fnso=\"1\"}"), 1)
      << "FUSE_HANDLE_KILLPRIV_V2 negotiated";
  EXPECT_LT(requests("getxattr") - getxattrs_before, kBlocks / 4) << "getxattrs during the loop";
  ASSERT_EQ(fd.Close(), 0) << "close: " << std::strerror(errno);
  const std::string got = ReadFile(P("f"));
  EXPECT_TRUE(got == model) << "the other client: " << Mismatch(got, model);
}

// The kernel forgets a directory's attributes whenever an entry is made in it and asks again at
// the next path walk: the mount answers from the directory INODE it has just written itself,
// without an OSD read, for up to the attribute timeout (1 s); another client's change shows
// once that is over.
TEST_F(FuseCacheTest, DirectoryJustChangedAnswersGetattrWithoutAnOsdRead) {
  ASSERT_EQ(mkdir(P("d").c_str(), 0755), 0) << std::strerror(errno);
  ASSERT_EQ(mkdir(P("d/warm").c_str(), 0755), 0) << std::strerror(errno);  // fno range, paths
  std::string error;
  // mkdir then getattr back to back: the mkdir reads the new name's bucket (both copies, it is
  // absent) and the parent, the getattr nothing (the mkdir just wrote the parent): 2, at most
  // 4 (5 without the answers from writes). A machine that stalls for the 1 s the kernel trusts
  // its entries makes the path walk look up the test's directory and d again, and read them:
  // of three tries, one must not have stalled.
  std::vector<uint64_t> tries;
  nlink_t subdirs = 1;  // warm
  struct stat fresh {};
  for (int i = 0; i < 3; ++i) {
    const uint64_t reads_before = ReadCallsOnOsds(&error);
    ASSERT_EQ(error, "");
    ASSERT_EQ(mkdir(P("d/sub" + std::to_string(i)).c_str(), 0755), 0) << std::strerror(errno);
    ++subdirs;
    fresh = FreshStat(P("d"));  // statx AT_STATX_FORCE_SYNC: a FUSE getattr
    tries.push_back(ReadCallsOnOsds(&error) - reads_before);
    if (tries.back() <= 4) break;
  }
  EXPECT_LE(*std::min_element(tries.begin(), tries.end()), 4u)
      << "OSD reads of a mkdir and a getattr of its parent: " << ::testing::PrintToString(tries);
  EXPECT_EQ(fresh.st_nlink, 2 + subdirs) << "the new subdirectories' links";
  EXPECT_EQ(FreshStat(S("d")).st_nlink, 2 + subdirs) << "the other client reads it";
  // Creates in a row: the lookup (both copies of the bucket) and the create's read of the
  // parent, but no getattr read of the parent between them.
  const uint64_t creates_before = ReadCallsOnOsds(&error);
  constexpr int kCreates = 20;
  for (int i = 0; i < kCreates; ++i) {
    const int fd = open(P("d/f" + std::to_string(i)).c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    ASSERT_EQ(close(fd), 0) << std::strerror(errno);
  }
  const uint64_t per_create = (ReadCallsOnOsds(&error) - creates_before) / kCreates;
  EXPECT_LE(per_create, 3u) << "OSD reads per create";

  // A newer INODE this client read (an open, close-to-open) replaces what it wrote itself.
  CreateFile(P("d/g"), "g");
  ASSERT_EQ(chmod(P("d/g").c_str(), 0600), 0) << std::strerror(errno);
  ASSERT_EQ(chmod(S("d/g").c_str(), 0640), 0) << std::strerror(errno);
  const int fd = open(P("d/g").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_EQ(close(fd), 0) << std::strerror(errno);
  EXPECT_EQ(FreshStat(P("d/g")).st_mode & 07777, 0640u) << "attributes older than an open saw";

  ASSERT_EQ(mkdir(S("d/other").c_str(), 0755), 0) << std::strerror(errno);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  EXPECT_EQ(FreshStat(P("d")).st_nlink, 3 + subdirs)
      << "another client's change, after the timeout";
}

// A small file read at random (common/read_ahead.h: four jumps) is fetched whole in the
// background: afterwards every read of it is served by the client without fetching an object,
// and with the right bytes. O_DIRECT, so that the kernel's page cache does not answer for it.
TEST_F(FuseCacheTest, SmallFileReadAtRandomIsFilledInTheBackground) {
  const int port = FreePort();
  TestMount reader(cluster_, kFnso, {"--metrics", "127.0.0.1:" + std::to_string(port)});
  const uint64_t objects = 24;
  const std::string model = RandomBytes(objects * kObjectSize - 500, 116);
  CreateFile(P("f"), model);  // through the other mount: the reader has nothing cached
  Fd fd(open((reader / (name_ + "/f")).c_str(), O_RDONLY | O_DIRECT));
  ASSERT_GE(fd.get(), 0) << "open: " << std::strerror(errno);
  void* buffer = nullptr;
  ASSERT_EQ(posix_memalign(&buffer, 4096, kObjectSize), 0);
  std::unique_ptr<void, decltype(&free)> owned(buffer, &free);
  auto read_object = [&](uint64_t index) {
    const uint64_t offset = index * kObjectSize;
    const uint64_t length = std::min<uint64_t>(kObjectSize, model.size() - offset);
    const ssize_t n = pread(fd.get(), buffer, kObjectSize, static_cast<off_t>(offset));
    if (n != static_cast<ssize_t>(length)) {
      return ::testing::AssertionFailure()
             << "object " << index << ": read " << n << ": " << std::strerror(errno);
    }
    const std::string got(static_cast<const char*>(buffer), length);
    const std::string want = model.substr(offset, length);
    if (got != want) {
      return ::testing::AssertionFailure() << "object " << index << ": " << Mismatch(got, want);
    }
    return ::testing::AssertionSuccess();
  };
  auto sample = [&](const std::string& name) { return ScrapeMetrics(port)[name + "{fnso=\"1\"}"]; };
  auto filled = [&] { return sample("orthofs_client_filled_objects_total"); };
  // O_DIRECT reads leave their objects in the client cache, and so does the fill.
  auto cached = [&] { return sample("orthofs_client_cache_objects"); };
  for (uint64_t index : {20, 3, 15, 9}) ASSERT_TRUE(read_object(index));
  // The other 20 objects arrive without anyone asking.
  const auto deadline = std::chrono::steady_clock::now() + kEventDeadline;
  while (cached() < objects && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(cached(), objects) << "objects in the client cache";
  EXPECT_EQ(filled(), objects - 4) << "objects fetched to fill the file";
  // Objects this client fetched (not INODE reads: a read past the end the kernel knows asks
  // for the file's attributes).
  auto object_reads = [&] {
    std::map<std::string, double> metrics = ScrapeMetrics(port);
    return metrics["orthofs_client_object_reads_total{fnso=\"1\",copy=\"original\"}"] +
           metrics["orthofs_client_object_reads_total{fnso=\"1\",copy=\"replica\"}"];
  };
  const double reads_before = object_reads();
  EXPECT_GE(reads_before, static_cast<double>(objects)) << "the objects fetched so far";
  for (uint64_t index : {7, 0, 23, 11, 1, 22, 5, 13}) EXPECT_TRUE(read_object(index));
  EXPECT_EQ(object_reads(), reads_before) << "objects fetched after the fill";
}

// A sequential reader's read-ahead reaches the OSDs as ReadMany calls of several objects each
// (here, without prefetching, the originals' OSDs; under cor the file's replica OSD holds all
// of them), not one call per object.
TEST_F(FuseCacheTest, ReadAheadFetchesObjectsInBatches) {
  const std::string model = RandomBytes(8 * kMiB, 111);
  CreateFile(S("f"), model);
  std::string error;
  const uint64_t reads_before = ReadCallsOnOsds(&error);
  const uint64_t calls_before = CounterOnOsds("read_many_calls", &error);
  Fd fd(open(P("f").c_str(), O_RDONLY));  // the mount that did not write it: a cold cache
  ASSERT_GE(fd.get(), 0) << "open: " << std::strerror(errno);
  const std::string got = ReadAt(fd.get(), 0, model.size(), 16384);
  EXPECT_TRUE(got == model) << Mismatch(got, model, kObjectSize);
  const uint64_t reads = ReadCallsOnOsds(&error) - reads_before;
  const uint64_t calls = CounterOnOsds("read_many_calls", &error) - calls_before;
  ASSERT_EQ(error, "");
  EXPECT_GE(reads, model.size() / kObjectSize) << "every object is read";
  EXPECT_GE(calls, 1u);
  // Read-ahead windows grow to 16 objects, spread over the OSDs that hold the originals: most
  // objects come several to a call (one call per object would make `calls` about `reads`).
  EXPECT_LE(calls * 3, reads) << calls << " ReadMany calls for " << reads << " reads";
}

// Read-ahead (common/read_ahead.h) through real mounts: sequential readers get every byte,
// whether an object came on demand, ahead of them, or from a fetch another reader started,
// and bytes fetched ahead never outlive a change of the file (another client's close, a
// truncate).
TEST_F(FuseCacheTest, ReadAheadServesEveryByteAndNoStaleOnes) {
  std::string model = RandomBytes(6 * kMiB + 12345, 108);
  CreateFile(P("f"), model);
  // Sequential readers from four unaligned starts, at once through the 4 MiB-cache mount,
  // where objects fetched ahead compete with the other readers' for room.
  auto read_concurrently = [&](const std::string& path) {
    constexpr int kReaders = 4;
    std::vector<std::string> got(kReaders), errors(kReaders);
    std::vector<std::thread> readers;
    for (int i = 0; i < kReaders; ++i) {
      readers.emplace_back([&, i] {
        try {
          Fd fd(open(path.c_str(), O_RDONLY));
          if (fd.get() < 0) throw std::runtime_error("open: " + std::string(std::strerror(errno)));
          const uint64_t start = i * (kMiB + 1000);
          got[i] = ReadAt(fd.get(), start, model.size() - start, 16384);
        } catch (const std::exception& e) {
          errors[i] = e.what();
        }
      });
    }
    for (auto& t : readers) t.join();
    for (int i = 0; i < kReaders; ++i) {
      const uint64_t start = i * (kMiB + 1000);
      EXPECT_EQ(errors[i], "") << "reader " << i;
      EXPECT_TRUE(got[i] == model.substr(start))
          << "reader " << i << ": " << Mismatch(got[i], model.substr(start), kObjectSize);
    }
  };
  {
    SCOPED_TRACE("cold");
    read_concurrently(S("f"));
  }
  {
    SCOPED_TRACE("the other mount rewrote the middle and closed");
    const std::string patch = RandomBytes(kMiB, 109);
    Fd fd(open(P("f").c_str(), O_WRONLY));
    ASSERT_GE(fd.get(), 0) << "open: " << std::strerror(errno);
    ASSERT_TRUE(WriteFull(fd.get(), patch, 3 * kMiB - 77)) << "write: " << std::strerror(errno);
    ASSERT_EQ(fd.Close(), 0) << "close: " << std::strerror(errno);
    model.replace(3 * kMiB - 77, patch.size(), patch);
    read_concurrently(S("f"));
  }
  {
    SCOPED_TRACE("truncated and extended with a hole");
    ASSERT_EQ(truncate(S("f").c_str(), kMiB + 5), 0) << std::strerror(errno);
    const std::string tail = RandomBytes(300000, 110);
    Fd fd(open(S("f").c_str(), O_WRONLY));
    ASSERT_GE(fd.get(), 0) << "open: " << std::strerror(errno);
    ASSERT_TRUE(WriteFull(fd.get(), tail, 5 * kMiB)) << "write: " << std::strerror(errno);
    ASSERT_EQ(fd.Close(), 0) << "close: " << std::strerror(errno);
    model.resize(kMiB + 5);
    model.resize(5 * kMiB, '\0');
    model += tail;
    read_concurrently(S("f"));
    const std::string whole = ReadFile(P("f"));
    EXPECT_TRUE(whole == model) << "the other mount: " << Mismatch(whole, model, kObjectSize);
  }
}

// fsync(2) returns only after every object of the file, the partly written tail included, is
// on both copies' OSDs, even though the file stays open.
TEST_F(FuseCacheTest, FsyncReturnsOnlyWhenBothCopiesAreOnTheOsds) {
  // Two whole objects and a 37856-byte tail.
  const std::string data = RandomBytes(300000, 108);
  Fd fd(open(P("f").c_str(), O_CREAT | O_EXCL | O_RDWR, 0644));
  ASSERT_GE(fd.get(), 0) << "create: " << std::strerror(errno);
  ASSERT_TRUE(WriteFull(fd.get(), data, 0)) << "write: " << std::strerror(errno);
  ASSERT_EQ(fsync(fd.get()), 0) << "fsync: " << std::strerror(errno);
  struct stat st;
  ASSERT_EQ(fstat(fd.get(), &st), 0) << std::strerror(errno);
  // No waiting and no close: fsync already wrote everything back.
  ExpectObjectsHold(st.st_ino, data);
  EXPECT_EQ(fd.Close(), 0) << "close: " << std::strerror(errno);
}

// A read is answered with the cached objects' bytes in place: one piece per object span and
// per run of zeros, handed to the kernel as they are (OpRead). With 4 KiB objects a 1 MiB read
// is hundreds of pieces: written objects, holes between them, unwritten heads and tails of
// objects, the file's end inside an object. O_DIRECT and page-cache reads, from a cold and a
// warm client cache, read what was written.
TEST(FuseSmallObjectsTest, ReadsOfHundredsOfObjectsAndHolesReadWhatWasWritten) {
  constexpr uint64_t kSmallObject = 4096;
  TestCluster cluster(TestClusterOptions{.osds = 3, .object_size = kSmallObject});
  std::string model(3 * kMiB + 100, '\0');
  {
    TestMount writer(&cluster);
    Fd fd(open((writer / "f").c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644));
    ASSERT_GE(fd.get(), 0) << std::strerror(errno);
    for (uint64_t index = 0; index * kSmallObject < model.size(); ++index) {
      if (index % 3 == 1) continue;  // a hole
      const uint64_t start = index * kSmallObject + (index % 5 == 0 ? 1000 : 0);
      const uint64_t end = std::min<uint64_t>(
          model.size(), index * kSmallObject + (index % 7 == 0 ? 3000 : kSmallObject));
      const std::string bytes = RandomBytes(end - start, index);
      model.replace(start, bytes.size(), bytes);
      ASSERT_TRUE(WriteFull(fd.get(), bytes, start)) << std::strerror(errno);
    }
    ASSERT_EQ(ftruncate(fd.get(), static_cast<off_t>(model.size())), 0) << std::strerror(errno);
    ASSERT_EQ(fd.Close(), 0) << std::strerror(errno);
  }

  TestMount reader(&cluster);  // a client cache that holds nothing of the file
  const std::string path = reader / "f";
  for (int round = 0; round < 2; ++round) {  // cold, then warm
    Fd direct(open(path.c_str(), O_RDONLY | O_DIRECT));
    ASSERT_GE(direct.get(), 0) << std::strerror(errno);
    void* aligned = nullptr;
    ASSERT_EQ(posix_memalign(&aligned, 4096, kMiB), 0);
    std::unique_ptr<void, decltype(&free)> buffer(aligned, &free);
    std::string got;
    for (;;) {
      const ssize_t n = pread(direct.get(), aligned, kMiB, static_cast<off_t>(got.size()));
      ASSERT_GE(n, 0) << std::strerror(errno);
      if (n == 0) break;
      got.append(static_cast<const char*>(aligned), static_cast<size_t>(n));
    }
    EXPECT_TRUE(got == model) << "O_DIRECT, round " << round << ": "
                              << Mismatch(got, model, kSmallObject);
    Fd cached(open(path.c_str(), O_RDONLY));
    ASSERT_GE(cached.get(), 0) << std::strerror(errno);
    got = ReadAt(cached.get(), 0, model.size() + 1, kMiB);
    EXPECT_TRUE(got == model) << "page cache, round " << round << ": "
                              << Mismatch(got, model, kSmallObject);
  }
}

}  // namespace
}  // namespace orthofs::testing
