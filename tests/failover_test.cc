// Failures through the real path: OSD processes killed with SIGKILL under a real mount.
// Writes go on with one copy and a repair record, reads fail over to the other copy, EIO
// comes only when both copies are unreachable, and a restarted OSD gets its copies back
// (replayed records) so every object ends with two equal copies.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "common/oid.h"
#include "tests/posix_files.h"
#include "tests/test_cluster.h"

namespace orthofs::testing {
namespace {

constexpr uint32_t kFnso = 1;
constexpr uint64_t kObjectSize = 131072;
constexpr uint64_t kMiB = 1024 * 1024;

Oid DataOid(uint64_t fno, uint64_t index, CopyFlag flag = CopyFlag::kOriginal) {
  return Oid{kFnso, fno, index, ObjectType::kData, flag};
}

uint64_t ClusterCounter(TestCluster& cluster, const std::string& name) {
  uint64_t total = 0;
  for (const auto& osd : cluster.client().osds()) {
    Result<wire::StatsResponse> stats = osd->Stats({});
    if (stats.ok() && stats->counters().count(name)) total += stats->counters().at(name);
  }
  return total;
}

void ExpectSameBytes(const std::string& got, const std::string& want) {
  EXPECT_TRUE(got == want) << Mismatch(got, want, kObjectSize);
}

int RunRepair(TestCluster& cluster) {
  return RunCommand({BinDir() + "/orthofs", "repair", "--map", cluster.map_path()}).exit_code;
}

// For each OSD that holds originals of the file in turn: killed in the middle of writing it;
// the writes, fsync and close succeed, the file reads back whole while the OSD is down, and
// after a restart (whose recovery replays the records) both copies of every object are equal.
TEST(FailoverTest, KillingAnOsdWhileWritingLosesNothing) {
  TestCluster cluster(TestClusterOptions{.osds = 4});
  TestMount mount(&cluster, kFnso);
  const uint64_t size = 12 * kMiB;
  const uint64_t objects = size / kObjectSize;
  for (uint32_t victim = 0; victim < 4; ++victim) {
    SCOPED_TRACE("OSD " + std::to_string(victim) + " killed");
    const std::string path = mount / ("file-" + std::to_string(victim));
    const std::string data = RandomBytes(size, victim);
    Fd fd(open(path.c_str(), O_CREAT | O_RDWR, 0644));
    ASSERT_GE(fd.get(), 0) << std::strerror(errno);
    ASSERT_TRUE(WriteFull(fd.get(), data.substr(0, size / 3), 0));
    ASSERT_EQ(fsync(fd.get()), 0);
    cluster.Stop(victim, SIGKILL);
    ASSERT_TRUE(WriteFull(fd.get(), data.substr(size / 3), size / 3)) << std::strerror(errno);
    ASSERT_EQ(fsync(fd.get()), 0) << std::strerror(errno);
    ExpectSameBytes(ReadAt(fd.get(), 0, size), data);
    ASSERT_EQ(fd.Close(), 0) << std::strerror(errno);
    const uint64_t fno = FreshStat(path).st_ino;
    cluster.Start(victim);
    // The restarted OSD asked the others to replay their records before serving reads; what
    // is left (none) is forced by orthofs repair.
    EXPECT_EQ(RunRepair(cluster), 0);
    ExpectTwoEqualCopies(cluster, kFnso, fno, objects);
    ExpectSameBytes(ReadFile(path), data);
  }
  EXPECT_GT(ClusterCounter(cluster, "repair_records_written"), 0u);
  EXPECT_GT(ClusterCounter(cluster, "repair_copies_repaired"), 0u);
  EXPECT_EQ(ClusterCounter(cluster, "repair_records_left"), 0u);
}

// Reads fail over to the other copy while one OSD is down; with the file's replica OSD down
// too, exactly the objects whose original sat on the first OSD fail with EIO.
TEST(FailoverTest, ReadsFailOverAndEioOnlyWhenBothCopiesAreGone) {
  TestCluster cluster(TestClusterOptions{.osds = 4});
  const uint64_t size = 4 * kMiB;
  const uint64_t objects = size / kObjectSize;
  const std::string data = RandomBytes(size, 7);
  uint64_t fno = 0;
  {
    TestMount writer(&cluster, kFnso);
    CreateFile(writer / "f", data);
    fno = FreshStat(writer / "f").st_ino;
  }
  TestMount mount(&cluster, kFnso);  // a cold client cache
  const Placement& placement = cluster.client().placement();
  const uint32_t replica_osd = placement.OsdFor(DataOid(fno, 0, CopyFlag::kReplica));
  const uint32_t victim = placement.OsdFor(DataOid(fno, 0));
  ASSERT_NE(victim, replica_osd);
  Fd fd(open((mount / "f").c_str(), O_RDONLY));
  ASSERT_GE(fd.get(), 0) << std::strerror(errno);

  // A second client with a cold cache, its file open before the second OSD goes.
  TestMount cold(&cluster, kFnso);
  Fd cold_fd(open((cold / "f").c_str(), O_RDONLY));
  ASSERT_GE(cold_fd.get(), 0) << std::strerror(errno);

  cluster.Stop(victim, SIGKILL);
  ExpectSameBytes(ReadAt(fd.get(), 0, size), data);

  cluster.Stop(replica_osd, SIGKILL);
  int lost = 0;
  for (uint64_t i = 0; i < objects; ++i) {
    std::vector<char> buf(kObjectSize);
    const ssize_t n = pread(cold_fd.get(), buf.data(), buf.size(), i * kObjectSize);
    if (placement.OsdFor(DataOid(fno, i)) == victim) {
      ++lost;
      EXPECT_EQ(n, -1) << "object " << i;
      EXPECT_EQ(errno, EIO) << "object " << i;
    } else {
      ASSERT_EQ(n, static_cast<ssize_t>(kObjectSize))
          << "object " << i << ": " << std::strerror(errno);
      EXPECT_EQ(std::string(buf.data(), n), data.substr(i * kObjectSize, kObjectSize))
          << "object " << i;
    }
  }
  EXPECT_GT(lost, 0);
  cluster.Start(victim);
  cluster.Start(replica_osd);
  // The client's connections retry a dead OSD with a backoff of up to 2 s: reads come back
  // within that, not necessarily at once.
  std::string got;
  EXPECT_TRUE(WaitFor(
      [&] {
        try {
          got = ReadAt(cold_fd.get(), 0, size);
          return true;
        } catch (const std::exception&) {
          return false;
        }
      },
      std::chrono::seconds(10)));
  ExpectSameBytes(got, data);
}

// Namespace changes go on with an OSD down (the replica is the commit point where the
// original's OSD is gone); after the restart fsck finds nothing dangling and every entry
// reads back.
TEST(FailoverTest, MetadataChangesWhileAnOsdIsDown) {
  TestCluster cluster(TestClusterOptions{.osds = 4});
  TestMount mount(&cluster, kFnso);
  ASSERT_EQ(mkdir((mount / "a").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((mount / "b").c_str(), 0755), 0);
  cluster.Stop(2, SIGKILL);
  for (int i = 0; i < 60; ++i) {
    const std::string name = "f" + std::to_string(i);
    CreateFile(mount / ("a/" + name), name);
    if (i % 3 == 0) {
      ASSERT_EQ(rename((mount / ("a/" + name)).c_str(), (mount / ("b/" + name)).c_str()), 0)
          << name << ": " << std::strerror(errno);
    }
    if (i % 5 == 0 && i % 3 != 0) {
      ASSERT_EQ(unlink((mount / ("a/" + name)).c_str()), 0) << name << ": " << std::strerror(errno);
    }
  }
  ASSERT_EQ(mkdir((mount / "a/sub").c_str(), 0755), 0) << std::strerror(errno);
  ASSERT_EQ(rmdir((mount / "a/sub").c_str()), 0) << std::strerror(errno);
  const std::multiset<std::string> a_before = ListDir(mount / "a", false);
  const std::multiset<std::string> b_before = ListDir(mount / "b", false);
  EXPECT_EQ(a_before.size(), 32u);
  EXPECT_EQ(b_before.size(), 20u);
  cluster.Start(2);
  EXPECT_EQ(RunRepair(cluster), 0);
  mount.Unmount();
  TestMount again(&cluster, kFnso);
  EXPECT_EQ(ListDir(again / "a", false), a_before);
  EXPECT_EQ(ListDir(again / "b", false), b_before);
  for (const std::string& name : b_before) EXPECT_EQ(ReadFile(again / ("b/" + name)), name);
  CommandResult fsck = RunCommand(
      {BinDir() + "/orthofs", "fsck", "--map", cluster.map_path(), "--fnso", "1", "--dry-run"});
  EXPECT_EQ(fsck.exit_code, 0) << fsck.out << fsck.err;
}

// The durability policy through a mount: once fsync returned, kill -9 of every OSD at once
// (each copy's process dies with whatever it had not flushed) loses none of it.
TEST(FailoverTest, FsyncedDataSurvivesEveryOsdKilledAtOnce) {
  TestCluster cluster(TestClusterOptions{.osds = 3});
  const std::string data = RandomBytes(3 * kMiB + 12345, 21);
  {
    TestMount mount(&cluster, kFnso);
    Fd fd(open((mount / "f").c_str(), O_CREAT | O_WRONLY, 0644));
    ASSERT_GE(fd.get(), 0) << std::strerror(errno);
    ASSERT_TRUE(WriteFull(fd.get(), data, 0)) << std::strerror(errno);
    ASSERT_EQ(fsync(fd.get()), 0) << std::strerror(errno);
    for (uint32_t id = 0; id < 3; ++id) cluster.Stop(id, SIGKILL);
    ASSERT_EQ(fd.Close(), 0) << std::strerror(errno);  // nothing left to flush
  }
  for (uint32_t id = 0; id < 3; ++id) cluster.Start(id);
  TestMount mount(&cluster, kFnso);
  ExpectSameBytes(ReadFile(mount / "f"), data);
  EXPECT_EQ(RunCommand({BinDir() + "/orthofs", "scrub", "--map", cluster.map_path()}).exit_code, 0);
}

}  // namespace
}  // namespace orthofs::testing
