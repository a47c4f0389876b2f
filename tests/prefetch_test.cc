// The OSDs' prefetch engines (docs/DESIGN.md §8.3) checked end to end: real OSD
// processes, real FUSE mounts, and the counters every OSD reports through the Stats RPC.
//
// Every test builds its own TestCluster, because the prefetch mode (and the window sizes) are
// cluster-wide settings in the map. A test writes a file of kObjects objects of random bytes
// through one mount, unmounts it, and reads the file through a second, freshly created mount:
// its client object cache is empty and the kernel keeps no pages of a file that is not open,
// so every object read reaches the OSDs. The assertions are on the bytes read and on counter
// deltas taken around the read phase; never on timing. Waits poll for an event with a
// deadline (an asynchronous notify or prefetch request still in flight), nothing else.
//
// The reading mounts are the paper's client: no read-ahead of their own (--read-ahead 0), so
// each object reaches the OSDs when the reader asks for it and the counters show the OSDs'
// protocol alone. (The default client also fetches a sequential reader's next objects in
// parallel; fuse_cache_test checks that.)
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/oid.h"
#include "common/placement.h"
#include "common/prefetch_window.h"
#include "tests/posix_files.h"
#include "tests/test_cluster.h"

namespace orthofs::testing {
namespace {

constexpr uint32_t kFnso = 1;
constexpr uint64_t kObjectSize = kDefaultObjectSize;  // 128 KiB
constexpr uint64_t kObjects = 200;                    // 25 MiB per file
constexpr uint64_t kFileSize = kObjects * kObjectSize;
constexpr int kOsds = 6;
// Mount flags of the paper's client: one object at a time, as the reader asks.
const std::vector<std::string> kPaperClient = {"--read-ahead", "0"};
// Notifies and prefetch requests are sent asynchronously: how long one may still be in flight
// (a poll: generous, since a loaded machine queues them behind other work, and a notify's own
// RPC deadline is 5 s).
constexpr auto kInFlightDeadline = std::chrono::seconds(30);
constexpr auto kPollInterval = std::chrono::milliseconds(50);

using Counters = std::map<std::string, uint64_t>;

// ---- files ----

std::string ErrnoText(const std::string& what) { return what + ": " + std::strerror(errno); }

// The whole file, read sequentially with read() calls of `chunk` bytes.
std::string ReadSequentially(const std::string& path, size_t chunk) {
  Fd fd(open(path.c_str(), O_RDONLY));
  if (fd.get() < 0) throw std::runtime_error(ErrnoText("open " + path));
  std::string out;
  std::string buf(chunk, '\0');
  for (;;) {
    const ssize_t n = read(fd.get(), buf.data(), chunk);
    if (n < 0) throw std::runtime_error(ErrnoText("read " + path));
    if (n == 0) break;
    out.append(buf.data(), static_cast<size_t>(n));
  }
  return out;
}

// ---- counters ----

Counters StatsOf(TestCluster& cluster, uint32_t osd) {
  Result<wire::StatsResponse> r = cluster.client().osds().at(osd)->Stats({});
  if (!r.ok())
    throw std::runtime_error("Stats of OSD " + std::to_string(osd) + ": " + r.status().ToString());
  Counters out;
  for (const auto& [name, value] : r->counters()) out[name] = value;
  return out;
}

// Every OSD's counters; an OSD that is not running gets an empty map.
std::vector<Counters> Snapshot(TestCluster& cluster) {
  std::vector<Counters> all(cluster.map().osds.size());
  for (uint32_t i = 0; i < all.size(); ++i) {
    if (cluster.Running(i)) all[i] = StatsOf(cluster, i);
  }
  return all;
}

uint64_t Get(const Counters& c, const std::string& name) {
  auto it = c.find(name);
  return it == c.end() ? 0 : it->second;
}

// after - before of one counter of one OSD.
uint64_t Delta(const std::vector<Counters>& after, const std::vector<Counters>& before,
               uint32_t osd, const std::string& name) {
  return Get(after[osd], name) - Get(before[osd], name);
}

// The delta summed over the OSDs, optionally leaving one out.
uint64_t SumDelta(const std::vector<Counters>& after, const std::vector<Counters>& before,
                  const std::string& name, int except = -1) {
  uint64_t sum = 0;
  for (uint32_t i = 0; i < after.size(); ++i) {
    if (static_cast<int>(i) != except) sum += Delta(after, before, i, name);
  }
  return sum;
}

// No OSD has prefetch work queued or running. A read queues its notify (SPA: its read-ahead
// request), so until then sent and received counts can agree with one still to go.
bool NoPrefetchWorkPending(const std::vector<Counters>& osds) {
  for (const Counters& osd : osds) {
    if (Get(osd, "prefetch_work_pending") != 0) return false;
  }
  return true;
}

// One line per OSD with the counters a prefetch failure is explained by.
std::string Describe(const std::vector<Counters>& after, const std::vector<Counters>& before) {
  static const char* kNames[] = {"read_calls",
                                 "cache_hits",
                                 "cache_misses",
                                 "cache_prefetch_inserts",
                                 "cache_prefetch_hits",
                                 "notifies_sent",
                                 "notifies_received",
                                 "prefetch_requests_sent",
                                 "prefetch_requests_received",
                                 "objects_prefetched",
                                 "store_range_scans",
                                 "store_point_reads_prefetch",
                                 "replica_reads",
                                 "window_moves",
                                 "window_doublings",
                                 "window_max_reached",
                                 "window_updates_pushed",
                                 "readahead_marker_hits",
                                 "prefetch_dropped",
                                 "prefetch_capped"};
  std::ostringstream out;
  out << "counter deltas of the read phase:";
  for (uint32_t i = 0; i < after.size(); ++i) {
    out << "\n  OSD " << i << ":";
    for (const char* name : kNames) {
      const uint64_t d = Delta(after, before, i, name);
      if (d != 0) out << " " << name << "=" << d;
    }
    out << " windows_active=" << Get(after[i], "windows_active")
        << " subscribers=" << Get(after[i], "subscribers")
        << " prefetch_work_pending=" << Get(after[i], "prefetch_work_pending");
  }
  return out.str();
}

// With ORTHOFS_TEST_VERBOSE set, the counters of passing tests are printed too.
void Report(const std::string& text) {
  if (std::getenv("ORTHOFS_TEST_VERBOSE") != nullptr) std::cout << text << std::endl;
}

// ---- fixture ----

PrefetchConfig Config(PrefetchMode mode, uint32_t initial_window = 1, uint32_t max_window = 40) {
  PrefetchConfig c;
  c.mode = mode;
  c.initial_window = initial_window;
  c.max_window = max_window;
  return c;
}

class PrefetchTest : public ::testing::Test {
 protected:
  // A cluster of `osds` OSDs prefetching by `config`.
  void StartCluster(const PrefetchConfig& config, int osds = kOsds, uint64_t cache_mb = 64) {
    TestClusterOptions options;
    options.osds = osds;
    options.prefetch = config;
    options.cache_mb = cache_mb;
    cluster_ = std::make_unique<TestCluster>(options);
    placement_ = std::make_unique<Placement>(cluster_->map());
  }

  // Writes a kObjects-object file of random bytes through a mount that is gone on return
  // (the close wrote every byte back to both copies; the unmount too). Returns its fno.
  uint64_t WriteFile(const std::string& name, uint64_t seed) {
    data_ = RandomBytes(kFileSize, seed);
    TestMount writer(cluster_.get(), kFnso);
    CreateFile(writer / name, data_);
    struct stat st = FreshStat(writer / name);
    EXPECT_EQ(static_cast<uint64_t>(st.st_size), kFileSize);
    writer.Unmount();
    return static_cast<uint64_t>(st.st_ino);
  }

  uint32_t ReplicaOsd(uint64_t fno) const { return placement_->ReplicaOsdFor(kFnso, fno); }

  // Waits until every notify the original OSDs sent has reached the replica OSD or failed; the
  // snapshot afterwards (in `after`) is the one the test asserts on. True when all arrived.
  bool WaitNotifiesDelivered(const std::vector<Counters>& before, uint32_t replica,
                             std::vector<Counters>* after) {
    const int others = static_cast<int>(replica);
    const bool settled = WaitFor(
        [&] {
          *after = Snapshot(*cluster_);
          return NoPrefetchWorkPending(*after) &&
                 Delta(*after, before, replica, "notifies_received") +
                         SumDelta(*after, before, "notifies_failed", others) ==
                     SumDelta(*after, before, "notifies_sent", others);
        },
        kInFlightDeadline, kPollInterval);
    return settled && SumDelta(*after, before, "notifies_failed", others) == 0;
  }

  std::unique_ptr<TestCluster> cluster_;
  std::unique_ptr<Placement> placement_;
  std::string data_;
};

// ---- COR ----

// A sequential reader of a 200-object file: after the first objects the client's window
// covers what it reads next, so the replica OSD serves nearly everything from the objects it
// prefetched with range scans, and the original OSDs see almost no data reads.
TEST_F(PrefetchTest, CorSequentialReadIsServedByTheReplicaOsd) {
  ASSERT_NO_FATAL_FAILURE(StartCluster(Config(PrefetchMode::kCor, 1, 40)));
  const uint64_t fno = WriteFile("seq", 1);
  const uint32_t replica = ReplicaOsd(fno);
  TestMount reader(cluster_.get(), kFnso, kPaperClient);

  const std::vector<Counters> before = Snapshot(*cluster_);
  const std::string got = ReadSequentially(reader / "seq", kObjectSize);
  ASSERT_TRUE(got == data_) << Mismatch(got, data_);
  std::vector<Counters> after;
  const bool delivered = WaitNotifiesDelivered(before, replica, &after);
  const std::string described = Describe(after, before);
  Report(described);
  SCOPED_TRACE("file fno " + std::to_string(fno) + ", replica OSD " + std::to_string(replica) +
               "\n" + described);

  const uint64_t notifies = Delta(after, before, replica, "notifies_received");
  EXPECT_TRUE(delivered) << "notifies_received on the replica OSD " << notifies
                         << ", notifies_failed on the other OSDs "
                         << SumDelta(after, before, "notifies_failed", replica)
                         << ", notifies_sent by them "
                         << SumDelta(after, before, "notifies_sent", replica);
  const uint64_t replica_reads = Delta(after, before, replica, "replica_reads");
  // Every object was read once: from the replica OSD inside the window, or from its original,
  // which notified the replica OSD.
  EXPECT_EQ(replica_reads + notifies, kObjects);
  // All but the first objects (before the window covered the reader) come from the replica OSD:
  // at rest about 185 of 200. How soon the client learns its window depends on thread wake-ups
  // (a notify, a push); on a loaded machine it was 171.
  EXPECT_GE(replica_reads, kObjects / 2);
  const uint64_t prefetch_hits = Delta(after, before, replica, "cache_prefetch_hits");
  EXPECT_GE(prefetch_hits * 10, replica_reads * 9)
      << "prefetch hits " << prefetch_hits << " of " << replica_reads << " replica reads";
  EXPECT_GE(Delta(after, before, replica, "objects_prefetched"), kObjects * 9 / 10);
  EXPECT_GE(Delta(after, before, replica, "notifies_received"), 1u);
  EXPECT_GE(Delta(after, before, replica, "window_doublings"), 1u);
  EXPECT_GE(Delta(after, before, replica, "store_range_scans"), 1u);
  // A 64 MiB cache never sees half of itself being loaded at once: no thrashing control.
  EXPECT_EQ(Delta(after, before, replica, "thrashing_pressure_episodes"), 0u);
  // The original OSDs served nothing else: each data read notified, and the rest was the
  // file's metadata (5 at rest).
  EXPECT_LE(SumDelta(after, before, "read_calls", replica),
            SumDelta(after, before, "notifies_sent", replica) + 10);
  for (uint32_t i = 0; i < after.size(); ++i) {
    if (i == replica) continue;
    EXPECT_EQ(Delta(after, before, i, "replica_reads"), 0u) << "OSD " << i;
    EXPECT_EQ(Delta(after, before, i, "notifies_received"), 0u) << "OSD " << i;
  }
}

// Thrashing control on the OSD ([Wu 1993]): with a 2 MiB cache, a window's range read of 8 or
// more objects is half the cache being loaded at once (W1), so the replica OSD halves its
// prefetch quantity; orthofs stats reports the degree of thrashing and the synchronous read
// ratio. Bytes stay right.
// Files of one object have nothing for a replica OSD to prefetch: their cold reads go out
// without the client's name (ClusterClient::ReadAsync's `windowed`), so no OSD notifies.
TEST_F(PrefetchTest, CorReadsOfOneObjectFilesSendNoNotifies) {
  ASSERT_NO_FATAL_FAILURE(StartCluster(Config(PrefetchMode::kCor, 1, 40)));
  constexpr int kFiles = 24;
  std::vector<std::string> contents;
  {
    TestMount writer(cluster_.get(), kFnso);
    for (int i = 0; i < kFiles; ++i) {
      contents.push_back(RandomBytes(1000 + 5000 * i, 100 + i));  // up to 116 KiB: one object
      CreateFile(writer / ("small" + std::to_string(i)), contents.back());
    }
    writer.Unmount();
  }
  TestMount reader(cluster_.get(), kFnso, kPaperClient);
  const std::vector<Counters> before = Snapshot(*cluster_);
  for (int i = 0; i < kFiles; ++i) {
    ASSERT_EQ(ReadFile(reader / ("small" + std::to_string(i))), contents[i]) << "file " << i;
  }
  std::vector<Counters> after;
  ASSERT_TRUE(WaitFor(
      [&] {
        after = Snapshot(*cluster_);
        return NoPrefetchWorkPending(after);
      },
      kInFlightDeadline, kPollInterval));
  SCOPED_TRACE(Describe(after, before));
  EXPECT_EQ(SumDelta(after, before, "notifies_sent"), 0u);
  EXPECT_EQ(SumDelta(after, before, "objects_prefetched"), 0u);
}

TEST_F(PrefetchTest, SmallOsdCacheTriggersThrashingControl) {
  // Initial window 8: the first notify already loads 9 or more objects (over 1 MiB) at once.
  ASSERT_NO_FATAL_FAILURE(StartCluster(Config(PrefetchMode::kCor, 8, 40), kOsds, 2));
  const uint64_t fno = WriteFile("small", 9);
  const uint32_t replica = ReplicaOsd(fno);
  TestMount reader(cluster_.get(), kFnso, kPaperClient);

  const std::vector<Counters> before = Snapshot(*cluster_);
  const std::string got = ReadSequentially(reader / "small", 4 << 20);
  ASSERT_TRUE(got == data_) << Mismatch(got, data_);
  std::vector<Counters> after;
  EXPECT_TRUE(WaitNotifiesDelivered(before, replica, &after));
  SCOPED_TRACE("replica OSD " + std::to_string(replica) + "\n" + Describe(after, before));

  // Each episode halved the quantity once; it doubles back when the pressure is gone.
  EXPECT_GE(Delta(after, before, replica, "thrashing_pressure_episodes"), 1u);
  // (With the default 64 MiB cache the same read never gets there: see
  // CorSequentialReadIsServedByTheReplicaOsd.)

  // orthofs stats computes the degree of thrashing from the same counters.
  CommandResult stats = cluster_->Orthofs("stats", {"--json"});
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_NE(stats.out.find("\"degree_of_thrashing\":"), std::string::npos) << stats.out;
  EXPECT_NE(stats.out.find("\"synchronous_read_ratio\":"), std::string::npos) << stats.out;
}

// A small maximum: large reads make the original OSDs notify often enough that the window
// doubles up to its maximum, and the replica OSD pushes the new windows to the client, which
// then reads replicas.
TEST_F(PrefetchTest, CorWindowReachesItsMaximum) {
  ASSERT_NO_FATAL_FAILURE(StartCluster(Config(PrefetchMode::kCor, 1, 8)));
  const uint64_t fno = WriteFile("max", 2);
  const uint32_t replica = ReplicaOsd(fno);
  TestMount reader(cluster_.get(), kFnso, kPaperClient);

  const std::vector<Counters> before = Snapshot(*cluster_);
  const std::string got = ReadSequentially(reader / "max", 4 << 20);
  ASSERT_TRUE(got == data_) << Mismatch(got, data_);
  std::vector<Counters> after;
  EXPECT_TRUE(WaitNotifiesDelivered(before, replica, &after));
  SCOPED_TRACE("replica OSD " + std::to_string(replica) + "\n" + Describe(after, before));
  Report("replica OSD " + std::to_string(replica) + "\n" + Describe(after, before));

  EXPECT_GE(Delta(after, before, replica, "window_max_reached"), 1u);
  // One (client, file) window grows 1 -> 2 -> 4 -> 8 and never shrinks: exactly 3 doublings
  // and one arrival at the maximum.
  EXPECT_EQ(Delta(after, before, replica, "window_doublings"), 3u);
  EXPECT_LE(Delta(after, before, replica, "window_max_reached"), 1u);
  EXPECT_GE(Delta(after, before, replica, "window_updates_pushed"), 1u);
  // The client used the pushed windows: it read replicas there.
  EXPECT_GE(Delta(after, before, replica, "replica_reads"), 1u);
}

// Random object-aligned reads: each read outside the window widens it (up to the maximum);
// the prefetching stays bounded by the window, and every byte is right.
TEST_F(PrefetchTest, CorRandomReadsBoundedWindow) {
  constexpr uint32_t kMaxWindow = 40;
  constexpr uint64_t kReads = 100;
  ASSERT_NO_FATAL_FAILURE(StartCluster(Config(PrefetchMode::kCor, 1, kMaxWindow)));
  const uint64_t fno = WriteFile("random", 3);
  const uint32_t replica = ReplicaOsd(fno);
  TestMount reader(cluster_.get(), kFnso, kPaperClient);

  std::vector<uint64_t> order(kObjects);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(12345);
  std::shuffle(order.begin(), order.end(), rng);
  order.resize(kReads);

  const std::vector<Counters> before = Snapshot(*cluster_);
  {
    Fd fd(open((reader / "random").c_str(), O_RDONLY));
    ASSERT_GE(fd.get(), 0) << ErrnoText("open");
    // No kernel read-ahead: exactly the objects asked for reach the client.
    ASSERT_EQ(posix_fadvise(fd.get(), 0, 0, POSIX_FADV_RANDOM), 0);
    for (uint64_t index : order) {
      const std::string got = ReadAt(fd.get(), index * kObjectSize, kObjectSize, kObjectSize);
      ASSERT_TRUE(got == std::string_view(data_).substr(index * kObjectSize, kObjectSize))
          << "object " << index << ": "
          << Mismatch(got, std::string_view(data_).substr(index * kObjectSize, kObjectSize));
    }
  }
  std::vector<Counters> after;
  EXPECT_TRUE(WaitNotifiesDelivered(before, replica, &after));
  SCOPED_TRACE("replica OSD " + std::to_string(replica) + "\n" + Describe(after, before));
  Report("replica OSD " + std::to_string(replica) + "\n" + Describe(after, before));

  const uint64_t prefetched = Delta(after, before, replica, "objects_prefetched");
  EXPECT_LE(prefetched, kReads * kMaxWindow);
  // One window (this client, this file) grows 1, 2, 4, 8, 16, 32, 40 and never shrinks.
  const uint64_t max_doublings =
      static_cast<uint64_t>(std::ceil(std::log2(static_cast<double>(kMaxWindow))));
  EXPECT_LE(Delta(after, before, replica, "window_doublings"), max_doublings);
  EXPECT_LE(Delta(after, before, replica, "window_max_reached"), 1u);
  EXPECT_EQ(Get(after[replica], "windows_active"), 1u);
  // Every object was read once: from its original (a notify) or from the replica OSD.
  const uint64_t replica_reads = Delta(after, before, replica, "replica_reads");
  const uint64_t notifies = Delta(after, before, replica, "notifies_received");
  EXPECT_GE(replica_reads + notifies, kReads);

  const uint64_t hits = Delta(after, before, replica, "cache_prefetch_hits");
  const double ratio = replica_reads == 0 ? 0.0 : static_cast<double>(hits) / replica_reads;
  std::ostringstream report;
  report << "random reads: " << kReads << " objects, " << replica_reads
         << " read from the replica OSD (" << hits << " prefetch hits, ratio " << ratio << "), "
         << notifies << " notifies, " << prefetched << " objects prefetched";
  std::cout << report.str() << std::endl;
  RecordProperty("prefetch_hit_ratio", std::to_string(ratio));
  RecordProperty("replica_reads", std::to_string(replica_reads));
  RecordProperty("objects_prefetched", std::to_string(prefetched));
}

// Two clients reading the same file at once keep a window each on the replica OSD.
TEST_F(PrefetchTest, TwoClientsHaveSeparateWindows) {
  ASSERT_NO_FATAL_FAILURE(StartCluster(Config(PrefetchMode::kCor, 1, 40)));
  const uint64_t fno = WriteFile("shared", 6);
  const uint32_t replica = ReplicaOsd(fno);
  TestMount a(cluster_.get(), kFnso, kPaperClient);
  TestMount b(cluster_.get(), kFnso, kPaperClient);
  // The writer's mount is gone; its Subscribe streams end within moments.
  ASSERT_TRUE(WaitFor([&] { return Get(StatsOf(*cluster_, replica), "subscribers") == 2; },
                      kInFlightDeadline, kPollInterval))
      << "subscribers " << Get(StatsOf(*cluster_, replica), "subscribers")
      << " with two cor mounts alive";

  const std::vector<Counters> before = Snapshot(*cluster_);
  std::string got_a, got_b, error_a, error_b;
  auto reader = [](const std::string& path, std::string* got, std::string* error) {
    try {
      *got = ReadSequentially(path, kObjectSize);
    } catch (const std::exception& e) {
      *error = e.what();
    }
  };
  std::thread ta(reader, a / "shared", &got_a, &error_a);
  std::thread tb(reader, b / "shared", &got_b, &error_b);
  ta.join();
  tb.join();
  ASSERT_EQ(error_a, "");
  ASSERT_EQ(error_b, "");
  EXPECT_TRUE(got_a == data_) << "client A: " << Mismatch(got_a, data_);
  EXPECT_TRUE(got_b == data_) << "client B: " << Mismatch(got_b, data_);

  std::vector<Counters> after;
  EXPECT_TRUE(WaitNotifiesDelivered(before, replica, &after));
  SCOPED_TRACE("replica OSD " + std::to_string(replica) + "\n" + Describe(after, before));
  Report("replica OSD " + std::to_string(replica) + "\n" + Describe(after, before));
  // Windows expire after 60 s idle: both are still there.
  EXPECT_EQ(Get(after[replica], "windows_active"), 2u);
  EXPECT_EQ(Get(after[replica], "subscribers"), 2u);
  EXPECT_GE(Delta(after, before, replica, "replica_reads"), kObjects);
}

// The replica OSD dies in the middle of a sequential read: the client reads the rest from the
// originals, and every byte is right.
TEST_F(PrefetchTest, CorReadSurvivesKillOfReplicaOsd) {
  constexpr uint64_t kBeforeKill = 50;
  ASSERT_NO_FATAL_FAILURE(StartCluster(Config(PrefetchMode::kCor, 1, 40)));
  const uint64_t fno = WriteFile("kill", 7);
  const uint32_t replica = ReplicaOsd(fno);
  TestMount reader(cluster_.get(), kFnso, kPaperClient);

  const std::vector<Counters> before = Snapshot(*cluster_);
  Fd fd(open((reader / "kill").c_str(), O_RDONLY));
  ASSERT_GE(fd.get(), 0) << ErrnoText("open");
  std::string got = ReadAt(fd.get(), 0, kBeforeKill * kObjectSize, kObjectSize);
  ASSERT_TRUE(got == std::string_view(data_).substr(0, got.size()))
      << Mismatch(got, std::string_view(data_).substr(0, kBeforeKill * kObjectSize));
  // The window was in use: the replica OSD was serving this reader when it died.
  const std::vector<Counters> at_kill = Snapshot(*cluster_);
  EXPECT_GE(Delta(at_kill, before, replica, "replica_reads"), 1u) << Describe(at_kill, before);

  cluster_->Stop(replica, SIGKILL);
  got += ReadAt(fd.get(), got.size(), kFileSize - got.size(), kObjectSize);
  ASSERT_TRUE(got == data_) << Mismatch(got, data_);
  // And once more through a fresh descriptor (nothing cached by the kernel between opens).
  const std::string again = ReadSequentially(reader / "kill", kObjectSize);
  EXPECT_TRUE(again == data_) << "second read: " << Mismatch(again, data_);
  Report("replica OSD " + std::to_string(replica) + " killed after object " +
         std::to_string(kBeforeKill) + "; before the kill:\n" + Describe(at_kill, before) +
         "\nafter:\n" + Describe(Snapshot(*cluster_), before));
}

// ---- SPA ----

// Linux-style read-ahead spread over the OSDs: the OSD serving a read asks the owners of the
// next originals to load them, and the reader's next reads hit those caches. No replica is
// ever read and no notify is ever sent.
TEST_F(PrefetchTest, SpaSequentialReadPrefetchesOnOwners) {
  ASSERT_NO_FATAL_FAILURE(StartCluster(Config(PrefetchMode::kSpa, 1, 40)));
  const uint64_t fno = WriteFile("spa", 4);
  const uint32_t replica = ReplicaOsd(fno);
  TestMount reader(cluster_.get(), kFnso, kPaperClient);

  const std::vector<Counters> before = Snapshot(*cluster_);
  const std::string got = ReadSequentially(reader / "spa", kObjectSize);
  ASSERT_TRUE(got == data_) << Mismatch(got, data_);
  std::vector<Counters> after;
  const bool delivered = WaitFor(
      [&] {
        after = Snapshot(*cluster_);
        return NoPrefetchWorkPending(after) &&
               SumDelta(after, before, "prefetch_requests_received") ==
                   SumDelta(after, before, "prefetch_requests_sent");
      },
      kInFlightDeadline, kPollInterval);
  SCOPED_TRACE("replica OSD " + std::to_string(replica) + "\n" + Describe(after, before));
  Report("replica OSD " + std::to_string(replica) + "\n" + Describe(after, before));

  const uint64_t sent = SumDelta(after, before, "prefetch_requests_sent");
  EXPECT_GE(sent, 5u);
  EXPECT_TRUE(delivered) << "prefetch requests received "
                         << SumDelta(after, before, "prefetch_requests_received") << " != sent "
                         << sent;
  EXPECT_GE(SumDelta(after, before, "cache_prefetch_hits"), 100u);
  EXPECT_GE(SumDelta(after, before, "readahead_marker_hits"), 3u);
  for (uint32_t i = 0; i < after.size(); ++i) {
    EXPECT_EQ(Delta(after, before, i, "replica_reads"), 0u) << "OSD " << i;
    EXPECT_EQ(Delta(after, before, i, "notifies_sent"), 0u) << "OSD " << i;
    EXPECT_EQ(Delta(after, before, i, "notifies_received"), 0u) << "OSD " << i;
    EXPECT_EQ(Delta(after, before, i, "store_range_scans"), 0u) << "OSD " << i;
  }
  // The replica OSD holds none of the file's originals: nobody asks it to prefetch, and the
  // client reads nothing of the file's data there (a handful of reads of other metadata at
  // most, against 200 objects).
  EXPECT_EQ(Delta(after, before, replica, "prefetch_requests_received"), 0u);
  EXPECT_EQ(Delta(after, before, replica, "objects_prefetched"), 0u);
  EXPECT_LT(Delta(after, before, replica, "read_calls"), 10u);
}

// ---- none ----

TEST_F(PrefetchTest, NoneModeHasNoPrefetchTraffic) {
  ASSERT_NO_FATAL_FAILURE(StartCluster(Config(PrefetchMode::kNone)));
  WriteFile("none", 5);
  TestMount reader(cluster_.get(), kFnso, kPaperClient);

  const std::vector<Counters> before = Snapshot(*cluster_);
  const std::string got = ReadSequentially(reader / "none", kObjectSize);
  ASSERT_TRUE(got == data_) << Mismatch(got, data_);
  // Anything asynchronous would have had time to show up.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const std::vector<Counters> after = Snapshot(*cluster_);
  SCOPED_TRACE(Describe(after, before));
  Report(Describe(after, before));
  // The file was read from the OSDs at all (otherwise "no prefetch traffic" proves nothing).
  EXPECT_GE(SumDelta(after, before, "read_calls"), kObjects);
  for (uint32_t i = 0; i < after.size(); ++i) {
    for (const char* name :
         {"objects_prefetched", "notifies_sent", "notifies_received", "prefetch_requests_sent",
          "prefetch_requests_received", "replica_reads", "cache_prefetch_inserts",
          "store_range_scans", "window_updates_pushed"}) {
      EXPECT_EQ(Delta(after, before, i, name), 0u) << "OSD " << i << " " << name;
    }
    EXPECT_EQ(Get(after[i], "windows_active"), 0u) << "OSD " << i;
    EXPECT_EQ(Get(after[i], "subscribers"), 0u) << "OSD " << i;
  }
}

// ---- configuration ----

// The whole cluster prefetches one way: a daemon or a client that expects another mode than
// the map's refuses to start, before it binds or mounts anything.
TEST_F(PrefetchTest, MismatchedPrefetchFlagIsRefused) {
  ASSERT_NO_FATAL_FAILURE(StartCluster(Config(PrefetchMode::kCor), 2));
  TempDir scratch;
  const std::string data_dir = scratch.path() + "/osd-0";

  CommandResult osd =
      RunCommand({BinDir() + "/orthofs-osd", "--id", "0", "--map", cluster_->map_path(),
                  "--data-dir", data_dir, "--prefetch", "spa", "--log-level", "warn"});
  EXPECT_NE(osd.exit_code, 0);
  EXPECT_NE((osd.out + osd.err).find("does not match the cluster map"), std::string::npos)
      << "stdout: " << osd.out << "\nstderr: " << osd.err;

  const std::string mountpoint = scratch.path() + "/mnt";
  ASSERT_EQ(mkdir(mountpoint.c_str(), 0755), 0) << ErrnoText("mkdir");
  CommandResult mount = RunCommand({BinDir() + "/orthofs-mount", "--map", cluster_->map_path(),
                                    "--prefetch", "spa", mountpoint});
  EXPECT_NE(mount.exit_code, 0);
  EXPECT_NE((mount.out + mount.err).find("does not match the cluster map"), std::string::npos)
      << "stdout: " << mount.out << "\nstderr: " << mount.err;
  if (mount.exit_code == 0) RunCommand({"/usr/bin/fusermount3", "-u", mountpoint});

  // The matching mode is accepted (the refusal is about the mode, nothing else).
  EXPECT_NO_THROW({ TestMount ok(cluster_.get(), kFnso, {"--prefetch", "cor"}); });
  // And an OSD with the matching mode gets past the check: it fails on the next one (an id
  // the map does not have), with that message.
  CommandResult matching =
      RunCommand({BinDir() + "/orthofs-osd", "--id", "99", "--map", cluster_->map_path(),
                  "--data-dir", data_dir + "-b", "--prefetch", "cor", "--log-level", "warn"});
  EXPECT_NE(matching.exit_code, 0);
  EXPECT_NE(matching.err.find("is not in cluster map"), std::string::npos) << matching.err;
  EXPECT_EQ(matching.err.find("does not match the cluster map"), std::string::npos) << matching.err;
}

}  // namespace
}  // namespace orthofs::testing
