// Failures through the real path: OSD processes killed with SIGKILL under a real mount.
// Writes go on with one copy and a repair record, reads fail over to the other copy, EIO
// comes only when both copies are unreachable, and a restarted OSD gets its copies back
// (replayed records) so every object ends with two equal copies.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "client/file_io.h"
#include "client/namespace.h"
#include "common/oid.h"
#include "mount/mount_args.h"
#include "rpc/process_tuning.h"
#include "tests/metrics_scrape.h"
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

int RunRepair(TestCluster& cluster) { return cluster.Repair().exit_code; }

// A process's state letter from /proc (T: stopped); '?' when unknown.
char ProcessState(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("State:", 0) == 0 && line.size() > 7)
      return line[line.find_first_not_of(" \t", 6)];
  }
  return '?';
}

// A metric's sample in a scrape (-1, and a failure, when it is missing).
double Sample(const std::map<std::string, double>& samples, const std::string& name) {
  auto it = samples.find(name);
  EXPECT_NE(it, samples.end()) << name << " missing";
  return it == samples.end() ? -1 : it->second;
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

// One OSD of a 3-OSD cluster (`osd_flags`) misses writes of 1500 objects (stopped), then
// restarts after 5 s: its replicas still as before the outage once it serves reads (stale),
// and the cluster's recovery counters.
struct RestartOutcome {
  uint64_t stale = 0;
  uint64_t asks_repeated = 0;
  uint64_t limits_reached = 0;
};
void RestartAfterMissingALongReplay(std::vector<std::string> osd_flags, RestartOutcome* outcome) {
  TestCluster cluster(
      TestClusterOptions{.osds = 3, .object_size = 4096, .extra_osd_flags = std::move(osd_flags)});
  ClusterClient& client = cluster.client();
  const uint64_t fno = 77;
  const uint64_t objects = 1500;
  const uint32_t replica_osd = client.placement().ReplicaOsdFor(kFnso, fno);
  auto write_all = [&](char fill) {
    PendingCalls pending;
    for (uint64_t i = 0; i < objects; ++i) {
      client.WriteBothCopiesAsync(DataOid(fno, i), std::string(4096, fill), {.replace = true},
                                  &pending);
      if (i % 64 == 63) {
        ASSERT_TRUE(pending.Wait().ok());
      }
    }
    ASSERT_TRUE(pending.Wait().ok());
  };
  ASSERT_NO_FATAL_FAILURE(write_all('a'));
  cluster.Stop(replica_osd, SIGKILL);
  ASSERT_NO_FATAL_FAILURE(write_all('b'));  // the originals only, each with a record
  // The peers' background passes fail to push meanwhile, and their channels to the OSD back
  // off: their first pushes after the restart fail too, and must be asked for again.
  std::this_thread::sleep_for(std::chrono::seconds(5));
  cluster.Start(replica_osd);  // waits until it serves reads
  for (uint64_t i = 0; i < objects; ++i) {
    const Oid replica = DataOid(fno, i, CopyFlag::kReplica);
    Result<wire::ReadResponse> copy = client.Read(replica);
    // This client's own channel to the restarted OSD may still be in its reconnect backoff.
    for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
         !copy.ok() && ClusterClient::IsOsdFailure(copy.status()) &&
         std::chrono::steady_clock::now() < until;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      copy = client.Read(replica);
    }
    ASSERT_TRUE(copy.ok()) << i << ": " << copy.status().ToString();
    outcome->stale += copy->data() != std::string(4096, 'b');
  }
  outcome->asks_repeated = ClusterCounter(cluster, "recovery_asks_repeated");
  outcome->limits_reached = ClusterCounter(cluster, "recovery_limits_reached");
}

// A restarted OSD serves reads only once its peers have replayed what it missed, even when a
// replay outlasts the deadline of one call (--peer-timeout-ms here: 100 ms, against some
// thousand synced pushes; it asks again while the peer answers its health check) or a peer's
// pushes fail at first (its channel still backing off from the outage; asked again after a
// pause). (It used to give up at the first deadline, or at the first failed push, and serve
// the copies still to be replayed, stale.)
TEST(FailoverTest, ARestartedOsdServesReadsOnlyOnceALongReplayEnds) {
  RestartOutcome outcome;
  ASSERT_NO_FATAL_FAILURE(RestartAfterMissingALongReplay({"--peer-timeout-ms", "100"}, &outcome));
  EXPECT_EQ(outcome.stale, 0u) << "of 1500 replicas read as the restarted OSD's first";
  EXPECT_GT(outcome.asks_repeated, 0u) << "no replay outlasted one call: the test proves nothing";
  EXPECT_EQ(outcome.limits_reached, 0u);
}

// --recovery-limit-s bounds that wait: with 0, the OSD serves reads after the first call that
// outlasted its deadline, and counts the peer it stopped waiting for.
TEST(FailoverTest, ARestartedOsdStopsWaitingForAReplayAtItsRecoveryLimit) {
  RestartOutcome outcome;
  ASSERT_NO_FATAL_FAILURE(RestartAfterMissingALongReplay(
      {"--peer-timeout-ms", "100", "--recovery-limit-s", "0"}, &outcome));
  EXPECT_EQ(outcome.asks_repeated, 0u);
  EXPECT_GE(outcome.limits_reached, 1u);
}

// An OSD missed changes of a metadata object while down (its replica went from version 2 to 6,
// its original stays a tombstone at 2), and restarted: while it recovers, a client's new
// change of that object must not land on its stale original. Such a change took its expected
// version from the replica (absent: 0), passed against the stale tombstone, and committed
// there at 3; the replica's follow-up at 3 changed nothing (it holds 6), reads (of the replica
// while the OSD recovers) missed the new entry, and the replay of version 6 then deleted it
// from the original too: a create's name lost from both copies (chaos runs lost 4-27 names per
// OSD restart). The recovering OSD now refuses clients' changes, which commit on the other
// copy with a repair record.
TEST(FailoverTest, ARecoveringOsdTakesNoChangeFromClients) {
  TempDir scratch;
  const std::string hold = scratch.path() + "/hold-recovery";
  TestCluster cluster(
      TestClusterOptions{.osds = 3, .extra_osd_flags = {"--hold-recovery-while", hold}});
  const Oid entries{kFnso, 5, 42, ObjectType::kDirent};
  const uint32_t osd = cluster.client().placement().OriginalOsdFor(entries);
  auto change = [&](ClusterClient& client, const std::string& data) {
    Result<wire::ObjectMeta> made = client.WriteOriginalThenReplica(entries, data, 0);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    ASSERT_TRUE(client.DeleteBothCopies(entries, made->version()).ok());
  };
  ASSERT_NO_FATAL_FAILURE(change(cluster.client(), "a"));  // tombstones at 2
  cluster.Stop(osd, SIGKILL);
  ASSERT_NO_FATAL_FAILURE(change(cluster.client(), "b"));  // the replica's at 4, then 6
  ASSERT_NO_FATAL_FAILURE(change(cluster.client(), "b"));
  { std::ofstream(hold).put('1'); }
  cluster.Start(osd, /*wait_recovered=*/false);
  // A client that knows nothing of the outage (its channel to the OSD is fresh).
  ClusterClient fresh(cluster.client().map(), cluster.Rpc("client"));
  Result<wire::ObjectMeta> made = fresh.WriteOriginalThenReplica(entries, "c", 0);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  Result<wire::ReadResponse> read = fresh.ReadEitherCopy(entries);
  ASSERT_TRUE(read.ok()) << "the new entry is not found: " << read.status().ToString();
  EXPECT_EQ(read->data(), "c");
  // Listings are reads too: the recovering OSD's would miss the new entry (its copy is the
  // tombstone from before), so it refuses them and the client lists the replicas.
  Result<std::vector<std::pair<wire::ObjectMeta, std::string>>> originals =
      fresh.ListFileObjects(CopyFlag::kOriginal, kFnso, 5, ObjectType::kDirent, 0, true);
  EXPECT_TRUE(ClusterClient::IsRecovering(originals.status())) << originals.status().ToString();
  ClusterClient unaware(cluster.client().map(), cluster.Rpc("client"));
  Result<std::vector<std::pair<wire::ObjectMeta, std::string>>> listed =
      unaware.ListFileObjectsEitherCopy(kFnso, 5, ObjectType::kDirent);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 1u) << "the listing misses the new entry";
  EXPECT_EQ(listed->front().second, "c");
  std::filesystem::remove(hold);
  cluster.WaitRecovered(osd);
  for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
    Result<wire::ReadResponse> copy = fresh.Read(entries.WithFlag(flag));
    for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
         !(copy.ok() && copy->data() == "c") && std::chrono::steady_clock::now() < until;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      copy = fresh.Read(entries.WithFlag(flag));
    }
    ASSERT_TRUE(copy.ok()) << entries.WithFlag(flag).ToString() << " " << copy.status().ToString();
    EXPECT_EQ(copy->data(), "c") << entries.WithFlag(flag).ToString();
  }
}

// A client that cannot reach the original's OSD, which is up (its connection to it still
// backing off after an outage, here a wrong address), must not commit a namespace change on
// the replica alone: the original would take other clients' changes at the same version
// meanwhile and fork the object. (A chaos run: a rename's link count, committed on the replica
// that way, was lost, and the file freed under its new name.) The replica's OSD pings the
// original's, which answers, and refuses; the client keeps trying the original and finally
// gives up with that refusal. With the original's OSD really down, the replica takes it.
TEST(FailoverTest, NoChangeCommitsOnTheReplicaAloneWhileTheOriginalAnswers) {
  TestCluster cluster(TestClusterOptions{.osds = 3});
  const Oid inode{kFnso, 77, 0, ObjectType::kInode};
  const uint32_t original_osd = cluster.client().placement().OriginalOsdFor(inode);
  Result<wire::ObjectMeta> made = cluster.client().WriteOriginalThenReplica(inode, "v1", 0);
  ASSERT_TRUE(made.ok()) << made.status().ToString();

  ClusterMap cut_off = cluster.client().map();
  for (OsdInfo& osd : cut_off.osds) {
    if (osd.id == original_osd) osd.address = "127.0.0.1:" + std::to_string(FreePort());
  }
  ClusterClient cut_off_client(cut_off, cluster.Rpc("client"));
  Result<wire::ObjectMeta> alone =
      cut_off_client.WriteOriginalThenReplica(inode, "v2", made->version());
  ASSERT_FALSE(alone.ok());
  EXPECT_TRUE(ClusterClient::OriginalAnswers(alone.status())) << alone.status().ToString();
  for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
    Result<wire::ReadResponse> copy = cluster.client().Read(inode.WithFlag(flag));
    ASSERT_TRUE(copy.ok()) << copy.status().ToString();
    EXPECT_EQ(copy->data(), "v1") << inode.WithFlag(flag).ToString();
  }
  EXPECT_GE(ClusterCounter(cluster, "changes_alone_refused"), 1u);

  cluster.Stop(original_osd, SIGKILL);
  Result<wire::ObjectMeta> taken =
      cut_off_client.WriteOriginalThenReplica(inode, "v2", made->version());
  ASSERT_TRUE(taken.ok()) << taken.status().ToString();
  Result<wire::ReadResponse> replica = cluster.client().Read(inode.WithFlag(CopyFlag::kReplica));
  ASSERT_TRUE(replica.ok()) << replica.status().ToString();
  EXPECT_EQ(replica->data(), "v2");
}

// Two clients increment counters (DIRENT objects whose originals `victim` holds) by conditional
// changes while `disrupt` runs; then no increment may be lost, and both copies agree.
void ExpectNoConditionalChangeLost(TestCluster& cluster, uint32_t victim, const RpcOptions& rpc,
                                   const std::function<void()>& disrupt) {
  std::vector<Oid> counters;
  for (uint64_t i = 0; counters.size() < 8; ++i) {
    const Oid oid{kFnso, 7, i, ObjectType::kDirent};
    if (cluster.client().placement().OriginalOsdFor(oid) == victim) counters.push_back(oid);
  }
  for (const Oid& oid : counters) {
    ASSERT_TRUE(cluster.client().WriteOriginalThenReplica(oid, "0", 0).ok());
  }
  struct Count {
    uint64_t done = 0;
    uint64_t unknown = 0;  // failed at the transport: may have landed
  };
  constexpr int kClients = 2;
  std::vector<std::vector<Count>> counts(kClients, std::vector<Count>(counters.size()));
  std::atomic<bool> stop{false};
  auto increment = [&](int id) {
    ClusterClient client(cluster.client().map(), rpc);
    std::mt19937 random(id);
    while (!stop.load()) {
      const size_t k = random() % counters.size();
      Result<wire::ReadResponse> read = client.ReadEitherCopy(counters[k]);
      if (!read.ok()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        continue;
      }
      const std::string next = std::to_string(std::stoull(read->data()) + 1);
      Result<wire::ObjectMeta> wrote =
          client.WriteOriginalThenReplica(counters[k], next, read->meta().version());
      if (wrote.ok()) {
        ++counts[id][k].done;
      } else if (!wrote.status().Is(StatusCode::kVersionMismatch)) {
        ++counts[id][k].unknown;
      }
    }
  };
  std::vector<std::thread> clients;
  for (int id = 0; id < kClients; ++id) clients.emplace_back(increment, id);
  disrupt();
  stop = true;
  for (auto& c : clients) c.join();
  ASSERT_EQ(RunRepair(cluster), 0);
  uint64_t total = 0;
  for (size_t k = 0; k < counters.size(); ++k) {
    uint64_t done = 0;
    uint64_t unknown = 0;
    for (int id = 0; id < kClients; ++id) {
      done += counts[id][k].done;
      unknown += counts[id][k].unknown;
    }
    total += done;
    Result<wire::ReadResponse> original = cluster.client().Read(counters[k]);
    Result<wire::ReadResponse> replica =
        cluster.client().Read(counters[k].WithFlag(CopyFlag::kReplica));
    ASSERT_TRUE(original.ok() && replica.ok()) << counters[k].ToString();
    EXPECT_EQ(original->data(), replica->data()) << counters[k].ToString();
    const uint64_t value = std::stoull(original->data());
    EXPECT_GE(value, done) << counters[k].ToString() << ": changes lost";
    EXPECT_LE(value, done + unknown) << counters[k].ToString();
  }
  EXPECT_GT(total, 100u) << "too few changes to prove anything";
}

// Conditional changes of metadata objects (read either copy, then write the original at the
// version read, as every namespace change does) go on from two clients while the OSD holding
// the originals is killed and restarted twice: no change is lost. The changes the restarted
// OSD refused while it recovered went to the replicas, each with a repair record. A record
// made during the peers' replay used to be left for their next pass, while the OSD served
// reads already: a change that read such an original took its old version and passed the
// version check there, and the replay then overwrote it. (A chaos run: a rename's link count,
// read that way, freed the file under its new name.) The OSD now takes changes again before
// its peers' last replay, and serves reads only after that replay.
TEST(FailoverTest, ConditionalChangesAcrossOsdRestartsLoseNone) {
  TestCluster cluster(TestClusterOptions{.osds = 3});
  const uint32_t victim = 1;
  ExpectNoConditionalChangeLost(cluster, victim, cluster.Rpc("client"), [&] {
    for (int round = 0; round < 2; ++round) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      cluster.Stop(victim, SIGKILL);
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      cluster.Start(victim);  // returns once it serves reads
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  });
}

// The same across an OSD that stops running for 3 s (SIGSTOP) and goes on (SIGCONT): the
// clients (1 s deadlines) take it for dead and commit on the replicas alone meanwhile. Without
// its stall watch (common/stall_watch.h) it went on serving its old copies, and changes read
// from them were overwritten by the replay.
TEST(FailoverTest, ConditionalChangesAcrossAnOsdStallLoseNone) {
  TestCluster cluster(TestClusterOptions{.osds = 3});
  const uint32_t victim = 1;
  struct Resume {  // before the cluster's destructor, which stops its OSDs with SIGTERM
    pid_t pid;
    ~Resume() { kill(pid, SIGCONT); }
  } resume{cluster.Pid(victim)};
  auto stall_twice = [&] {
    for (int round = 0; round < 2; ++round) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      ASSERT_EQ(kill(resume.pid, SIGSTOP), 0) << std::strerror(errno);
      std::this_thread::sleep_for(std::chrono::milliseconds(3000));
      ASSERT_EQ(kill(resume.pid, SIGCONT), 0) << std::strerror(errno);
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    }
  };
  ExpectNoConditionalChangeLost(
      cluster, victim, cluster.Rpc("client", std::chrono::milliseconds(1000)), stall_twice);
  EXPECT_GE(ClusterCounter(cluster, "stalls"), 2u);
}

// Every OSD restarted at once (a power cut): each refuses clients' changes until its peers
// have replayed what it missed (ARecoveringOsdTakesNoChangeFromClients). A client's metadata
// change and its file's write-back, made meanwhile, wait for the recovery instead of failing.
TEST(FailoverTest, ChangesDuringAClusterRestartWaitForItsRecovery) {
  TempDir scratch;
  const std::string hold = scratch.path() + "/hold-recovery";
  TestCluster cluster(
      TestClusterOptions{.osds = 3, .extra_osd_flags = {"--hold-recovery-while", hold}});
  ASSERT_TRUE(Namespace::Mkfs(&cluster.client(), kFnso, Credentials{}).ok());
  for (uint32_t osd = 0; osd < 3; ++osd) cluster.Stop(osd, SIGKILL);
  { std::ofstream(hold).put('1'); }
  for (uint32_t osd = 0; osd < 3; ++osd) cluster.Start(osd, /*wait_recovered=*/false);
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    std::filesystem::remove(hold);
  });
  ClusterClient client(cluster.client().map(), cluster.Rpc("client"));
  Namespace ns(&client, kFnso);
  Result<InodeRef> made = ns.Create(kRootFno, "f", S_IFREG | 0644, 0, Credentials{});
  EXPECT_TRUE(made.ok()) << made.status().ToString();
  FileIo io(&client, kFnso);
  const std::string data = RandomBytes(3 * kObjectSize, 3);
  if (made.ok()) {
    ASSERT_TRUE(io.Write(made->fno, 0, data).ok());
    Status flushed = io.Flush(made->fno);
    EXPECT_TRUE(flushed.ok()) << flushed.ToString();
  }
  release.join();
  if (!made.ok()) return;
  for (uint32_t osd = 0; osd < 3; ++osd) cluster.WaitRecovered(osd);
  ExpectTwoEqualCopies(cluster, kFnso, made->fno, 3);
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
  // Attributes of the open file still come (as of its open if both OSDs of its INODE are the
  // ones down): asked for explicitly, since reads inside the file do not ask.
  struct statx sx {};
  ASSERT_EQ(statx(cold_fd.get(), "", AT_EMPTY_PATH | AT_STATX_FORCE_SYNC, STATX_SIZE, &sx), 0)
      << "statx of the open file: " << std::strerror(errno);
  EXPECT_EQ(sx.stx_size, size);
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
  // The client's connections retry a dead OSD with a backoff of up to 2 s and its probes
  // with up to 5 s: reads come back within that, not necessarily at once (30 s allowed for a
  // loaded machine).
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
      std::chrono::seconds(30)));
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
  CommandResult fsck = cluster.Orthofs("fsck", {"--fnso", "1", "--dry-run"});
  EXPECT_EQ(fsck.exit_code, 0) << fsck.out << fsck.err;
}

// rm -rf frees the files' data objects in batches (DeleteMany per OSD) after it answered. With
// an OSD killed first, the batches to it fail and those objects go the careful way (the other
// copy deleted with a repair record), so once the OSD is back and repaired nothing of the tree
// is left on any OSD, and fsck is clean.
TEST(FailoverTest, ATreeRemovedWhileAnOsdIsDownLeavesNoObject) {
  TestCluster cluster(TestClusterOptions{.osds = 4});
  TestMount mount(&cluster, kFnso);
  ASSERT_EQ(mkdir((mount / "t").c_str(), 0755), 0);
  std::vector<uint64_t> fnos;
  for (int i = 0; i < 80; ++i) {
    const std::string name = "t/f" + std::to_string(i);
    CreateFile(mount / name, RandomBytes(3000 + 500 * i, i));
    fnos.push_back(FreshStat(mount / name).st_ino);
  }
  cluster.Stop(1, SIGKILL);
  std::filesystem::remove_all(mount / "t");
  struct statvfs space;
  ASSERT_EQ(statvfs((mount / "").c_str(), &space), 0) << std::strerror(errno);  // drains
  cluster.Start(1);
  EXPECT_EQ(RunRepair(cluster), 0);
  for (uint64_t fno : fnos) {
    for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
      auto left = cluster.client().ListFileObjects(flag, kFnso, fno, ObjectType::kData, 0, false);
      ASSERT_TRUE(left.ok()) << left.status().ToString();
      EXPECT_TRUE(left->empty()) << left->size() << " objects of removed file " << fno << " stay";
    }
  }
  CommandResult fsck = cluster.Orthofs("fsck", {"--fnso", "1", "--dry-run"});
  EXPECT_EQ(fsck.exit_code, 0) << fsck.out << fsck.err;
}

// A listing's attributes (readdirplus) are read together, a call per OSD; with an OSD down, each
// INODE whose original it held comes from its replica, so every entry still has its attributes.
TEST(FailoverTest, AListingsAttributesComeFromEitherCopy) {
  TestCluster cluster(TestClusterOptions{.osds = 4});
  constexpr int kFiles = 150;  // more than one readdirplus reply, more than one ReadMany call
  {
    TestMount writer(&cluster, kFnso);
    ASSERT_EQ(mkdir((writer / "d").c_str(), 0755), 0) << std::strerror(errno);
    for (int i = 0; i < kFiles; ++i) {
      CreateFile(writer / ("d/f" + std::to_string(i)), std::string(i, 'x'));
    }
  }
  for (bool osd_down : {false, true}) {
    SCOPED_TRACE(osd_down ? "an OSD down" : "every OSD up");
    if (osd_down) cluster.Stop(1, SIGKILL);
    const int port = FreePort();
    TestMount mount(&cluster, kFnso, {"--metrics", "127.0.0.1:" + std::to_string(port)});
    std::vector<std::pair<std::string, off_t>> listed;
    std::vector<uint64_t> fnos;
    const std::string lookups = "orthofs_client_fuse_requests_total{fnso=\"1\",op=\"lookup\"}";
    const std::string plus = "orthofs_client_fuse_requests_total{fnso=\"1\",op=\"readdirplus\"}";
    struct stat looked_up {};  // "d" itself, before the counting starts
    ASSERT_EQ(stat((mount / "d").c_str(), &looked_up), 0) << std::strerror(errno);
    const std::map<std::string, double> before = ScrapeMetrics(port);
    {
      struct CloseDir {
        void operator()(DIR* d) const { closedir(d); }
      };
      std::unique_ptr<DIR, CloseDir> dir(opendir((mount / "d").c_str()));
      ASSERT_NE(dir, nullptr) << std::strerror(errno);
      while (dirent* e = readdir(dir.get())) {
        if (e->d_name[0] == '.') continue;
        struct stat st {};
        ASSERT_EQ(fstatat(dirfd(dir.get()), e->d_name, &st, AT_SYMLINK_NOFOLLOW), 0)
            << e->d_name << ": " << std::strerror(errno);
        listed.emplace_back(e->d_name, st.st_size);
        fnos.push_back(st.st_ino);
      }
    }
    const std::map<std::string, double> after = ScrapeMetrics(port);
    ASSERT_EQ(listed.size(), static_cast<size_t>(kFiles));
    for (const auto& [name, size] : listed) {
      EXPECT_EQ(size, std::stoi(name.substr(1))) << name;
    }
    EXPECT_GE(Sample(after, plus) - Sample(before, plus), 1) << "the kernel listed with attributes";
    // An entry that came without attributes costs a lookup at its stat; these came with theirs
    // (a few may be asked again if the machine stalls past the kernel's 1 s attribute cache).
    EXPECT_LT(Sample(after, lookups) - Sample(before, lookups), kFiles / 2);
    if (!osd_down) continue;
    // A client that does not know the OSD is down yet: the reads it sent there fail, and each
    // goes to its other copy.
    ClusterClient unaware(cluster.client().map(), cluster.Rpc("client"));
    std::vector<Oid> inodes;
    int on_the_dead_osd = 0;
    for (uint64_t fno : fnos) {
      inodes.push_back(Oid{kFnso, fno, 0, ObjectType::kInode, CopyFlag::kOriginal});
      on_the_dead_osd += unaware.placement().OsdFor(inodes.back()) == 1 ? 1 : 0;
    }
    ASSERT_GT(on_the_dead_osd, 0);
    std::vector<Result<wire::ReadResponse>> reads = unaware.ReadEitherCopyMany(inodes);
    for (size_t i = 0; i < reads.size(); ++i) {
      EXPECT_TRUE(reads[i].ok()) << inodes[i].ToString() << ": " << reads[i].status().ToString();
    }
  }
  cluster.Start(1);
}

// An OSD that hangs (SIGSTOP: its sockets stay open and nothing answers) costs one deadline,
// to the requests in flight when it stopped. Later ones go to the other copy at once, however
// many backoffs pass (writes, reads, listings, deletes), and only Health probes (with their own
// short deadline) ask the OSD until it answers again; then both copies are written again.
TEST(FailoverTest, AHungOsdCostsOneDeadlineNotOnePerBackoff) {
  TestCluster cluster(TestClusterOptions{.osds = 4});
  // The deadline the hung OSD costs once; long enough for a loaded machine's healthy OSDs.
  ClusterClient client(cluster.map(), cluster.Rpc("admin", std::chrono::milliseconds(2000)));
  constexpr uint32_t kVictim = 1;
  std::vector<Oid> oids;  // originals on the victim, replicas elsewhere (orthogonal layout)
  for (uint64_t fno = 100; oids.size() < 6; ++fno) {
    if (client.placement().OsdFor(DataOid(fno, 0)) == kVictim) oids.push_back(DataOid(fno, 0));
  }
  const std::string data = RandomBytes(4096, 5);
  // Before the cluster's destructor, which stops its OSDs with SIGTERM.
  struct Resume {
    pid_t pid;
    ~Resume() { kill(pid, SIGCONT); }
  } resume{cluster.Pid(kVictim)};
  ASSERT_EQ(kill(resume.pid, SIGSTOP), 0) << std::strerror(errno);
  OsdClient* victim = client.Osd(kVictim);

  ASSERT_TRUE(client.WriteBothCopies(oids[0], data).ok());  // waits out one deadline
  EXPECT_EQ(victim->transport_failures(), 1u);
  EXPECT_TRUE(victim->down());
  for (size_t i = 1; i < 4; ++i) {
    // Past the backoff (1 s, then 2): before, the next request went to the OSD as the probe.
    std::this_thread::sleep_for(std::chrono::milliseconds(1300));
    Status written = client.WriteBothCopies(oids[i], data);
    ASSERT_TRUE(written.ok()) << written.ToString();
    Result<wire::ReadResponse> read = client.ReadEitherCopy(oids[i]);
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    EXPECT_TRUE(read->data() == data);
    // Listed from the replica OSD, not through the hung one.
    auto listed = client.ListFileObjectsEitherCopy(kFnso, oids[i].fno, ObjectType::kData, 0, false);
    ASSERT_TRUE(listed.ok()) << listed.status().ToString();
    EXPECT_EQ(listed->size(), 1u);
  }
  // A truncate's deletes: the replica with a repair record for the original.
  ASSERT_TRUE(client.DeleteBothCopiesOfEach({oids[3]}).ok());
  EXPECT_EQ(victim->transport_failures(), 1u) << "a request waited for the hung OSD again";
  EXPECT_EQ(victim->marked_down(), 1u);
  // The first probe's 2 s deadline has passed (two backoffs of 1.3 s); its failure lands on a
  // gRPC thread, which a loaded machine may run late.
  EXPECT_TRUE(WaitFor([&] { return victim->failed_probes() >= 1; }, std::chrono::seconds(10)))
      << "failed probes: " << victim->failed_probes();
  EXPECT_GE(client.degraded_writes(), 4u);

  ASSERT_EQ(kill(resume.pid, SIGCONT), 0) << std::strerror(errno);
  // Asking sends the probes; the backoff is at most 5 s.
  for (int i = 0; i < 300 && victim->down(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_FALSE(victim->down()) << "no probe got through after SIGCONT";
  const uint64_t degraded = client.degraded_writes();
  ASSERT_TRUE(client.WriteBothCopies(oids[4], data).ok());
  EXPECT_EQ(client.degraded_writes(), degraded) << "both copies written, no repair record";
  for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
    Result<wire::ReadResponse> copy = client.Read(oids[4].WithFlag(flag));
    ASSERT_TRUE(copy.ok()) << copy.status().ToString();
    EXPECT_TRUE(copy->data() == data);
  }
  // The writes it missed come back from the repair records.
  EXPECT_EQ(RunRepair(cluster), 0);
  EXPECT_TRUE(client.Read(oids[3]).status().Is(StatusCode::kNotFound));
  EXPECT_TRUE(client.Read(oids[3].OtherCopy()).status().Is(StatusCode::kNotFound));
  for (size_t i = 0; i < 3; ++i) {
    Result<wire::ReadResponse> original = client.Read(oids[i]);
    ASSERT_TRUE(original.ok()) << oids[i].ToString() << ": " << original.status().ToString();
    EXPECT_TRUE(original->data() == data) << oids[i].ToString();
  }
}

// A hung OSD is found silent (no answer to calls, nor to a ping) long before any deadline, and
// what waited on it goes to the other copy: with a one-minute deadline, every operation below
// would wait a minute for the stopped OSD otherwise. Data writes, reads and deletes, a
// metadata commit whose original is there and one whose replica is, a negative lookup.
TEST(FailoverTest, AHungOsdIsFoundSilentBeforeAnyDeadline) {
  TestCluster cluster(TestClusterOptions{.osds = 4});
  ClusterClient client(cluster.map(), cluster.Rpc("admin", std::chrono::milliseconds(60000)));
  constexpr uint32_t kVictim = 2;
  Oid data_on_victim;
  Oid inode_on_victim;
  Oid inode_replica_on_victim;
  bool found_data = false, found_inode = false, found_replica = false;
  for (uint64_t fno = 100; !(found_data && found_inode && found_replica); ++fno) {
    if (!found_data && client.placement().OsdFor(DataOid(fno, 0)) == kVictim) {
      data_on_victim = DataOid(fno, 0);
      found_data = true;
    }
    const Oid inode{kFnso, fno, 0, ObjectType::kInode, CopyFlag::kOriginal};
    if (!found_inode && client.placement().OsdFor(inode) == kVictim) {
      inode_on_victim = inode;
      found_inode = true;
    } else if (!found_replica && client.placement().OsdFor(inode.OtherCopy()) == kVictim) {
      inode_replica_on_victim = inode;
      found_replica = true;
    }
  }
  const std::string data = RandomBytes(4096, 7);
  ASSERT_TRUE(client.WriteBothCopies(data_on_victim, data).ok());
  OsdClient* victim = client.Osd(kVictim);
  // Up and done recovering, so that the read below asks the victim first.
  ASSERT_TRUE(WaitFor([&] { return !victim->down() && client.Read(data_on_victim).ok(); },
                      std::chrono::seconds(30)));
  struct Resume {
    pid_t pid;
    ~Resume() { kill(pid, SIGCONT); }
  } resume{cluster.Pid(kVictim)};
  ASSERT_EQ(kill(resume.pid, SIGSTOP), 0) << std::strerror(errno);
  ASSERT_TRUE(WaitFor([&] { return ProcessState(resume.pid) == 'T'; }, std::chrono::seconds(10)))
      << "state " << ProcessState(resume.pid);

  Result<wire::ReadResponse> read = client.ReadEitherCopy(data_on_victim);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_TRUE(read->data() == data);
  EXPECT_EQ(victim->silences(), 1u) << "found silent, not failed at a deadline";
  EXPECT_GE(victim->calls_failed_silent(), 1u);
  EXPECT_TRUE(victim->down());

  ASSERT_TRUE(client.WriteBothCopies(data_on_victim, data + data).ok());
  Result<wire::ObjectMeta> committed =
      client.WriteOriginalThenReplica(inode_on_victim, "inode one", 0);
  ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  committed = client.WriteOriginalThenReplica(inode_replica_on_victim, "inode two", 0);
  ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  const Oid absent{kFnso, inode_on_victim.fno + 1000000, 0, ObjectType::kInode,
                   CopyFlag::kOriginal};
  EXPECT_TRUE(client.ReadEitherCopy(absent).status().Is(StatusCode::kNotFound));
  ASSERT_TRUE(client.DeleteBothCopiesOfEach({data_on_victim}).ok());
  EXPECT_EQ(victim->silences(), 1u);
  EXPECT_EQ(victim->transport_failures(), 1u) << "nothing waited for the hung OSD again";

  // Back: the repair records bring its copies along.
  ASSERT_EQ(kill(resume.pid, SIGCONT), 0) << std::strerror(errno);
  EXPECT_TRUE(WaitFor([&] { return !victim->down(); }, std::chrono::seconds(30)));
  EXPECT_EQ(RunRepair(cluster), 0);
  for (const Oid& inode : {inode_on_victim, inode_replica_on_victim}) {
    for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
      Result<wire::ReadResponse> copy = client.Read(inode.WithFlag(flag));
      ASSERT_TRUE(copy.ok()) << inode.WithFlag(flag).ToString() << ": " << copy.status().ToString();
    }
  }
  EXPECT_TRUE(client.Read(data_on_victim).status().Is(StatusCode::kNotFound));
  EXPECT_TRUE(client.Read(data_on_victim.OtherCopy()).status().Is(StatusCode::kNotFound));
}

// A file truncated (O_TRUNC) and written again while one OSD of its copies is down: the copy
// deleted for the missed one keeps a tombstone, so the rewrite's version passes the missed
// copy's and the replay after the restart replaces the old bytes there. (It used to be a no-op,
// the new version being no newer: the missed copy kept the old bytes, and with originals that
// is what reads return.) Once with an OSD of originals down, once with the file's replica OSD.
TEST(FailoverTest, TruncateAndRewriteWhileACopyIsDown) {
  TestCluster cluster(TestClusterOptions{.osds = 4});
  constexpr uint64_t kObjects = 6;
  for (CopyFlag down_copy : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
    const bool replica = down_copy == CopyFlag::kReplica;
    SCOPED_TRACE(replica ? "the replica OSD down" : "an OSD of originals down");
    const std::string name = replica ? "replica-down" : "original-down";
    const std::string before = RandomBytes(kObjects * kObjectSize, replica ? 23 : 21);
    const std::string after = RandomBytes(kObjects * kObjectSize, replica ? 24 : 22);
    uint64_t fno = 0;
    uint32_t victim = 0;
    {
      TestMount mount(&cluster, kFnso);
      CreateFile(mount / name, before);
      fno = FreshStat(mount / name).st_ino;
      victim = cluster.client().placement().OsdFor(DataOid(fno, 0, down_copy));
      cluster.Stop(victim, SIGKILL);
      Fd fd(open((mount / name).c_str(), O_WRONLY | O_TRUNC));
      ASSERT_GE(fd.get(), 0) << std::strerror(errno);
      ASSERT_TRUE(WriteFull(fd.get(), after, 0));
      ASSERT_EQ(fd.Close(), 0) << std::strerror(errno);
    }
    cluster.Start(victim);
    EXPECT_EQ(RunRepair(cluster), 0);
    for (uint64_t i = 0; i < kObjects; ++i) {
      for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
        const Oid oid = DataOid(fno, i, flag);
        Result<wire::ReadResponse> copy = cluster.client().Read(oid);
        ASSERT_TRUE(copy.ok()) << oid.ToString() << ": " << copy.status().ToString();
        EXPECT_TRUE(copy->data() == after.substr(i * kObjectSize, kObjectSize)) << oid.ToString();
      }
    }
    TestMount again(&cluster, kFnso);
    ExpectSameBytes(ReadFile(again / name), after);
  }
}

// A close whose size cannot be published (both copies of the file's INODE unreachable) reports
// the error, but the mount keeps the size and publishes it once the INODE's OSDs are back:
// another client then sees the whole file.
TEST(FailoverTest, ASizeUnpublishedAtCloseIsPublishedWhenItsOsdsAreBack) {
  TestCluster cluster(TestClusterOptions{.osds = 4});
  TestMount mount(&cluster, kFnso);
  CreateFile(mount / "f", "start");
  const uint64_t fno = FreshStat(mount / "f").st_ino;
  const Placement& placement = cluster.client().placement();
  const Oid inode{kFnso, fno, 0, ObjectType::kInode, CopyFlag::kOriginal};
  const std::set<uint32_t> inode_osds = {placement.OsdFor(inode),
                                         placement.OsdFor(inode.WithFlag(CopyFlag::kReplica))};
  ASSERT_EQ(inode_osds.size(), 2u);
  // An object whose original lives on neither: its write lands (with a repair record where
  // its replica's OSD is down), only the size cannot be published.
  uint64_t index = 1;
  while (inode_osds.contains(placement.OsdFor(DataOid(fno, index)))) ++index;
  const uint64_t end = index * kObjectSize + 100;
  Fd fd(open((mount / "f").c_str(), O_WRONLY));
  ASSERT_GE(fd.get(), 0) << std::strerror(errno);
  ASSERT_EQ(pwrite(fd.get(), "tail", 4, static_cast<off_t>(end - 4)), 4) << std::strerror(errno);
  for (uint32_t osd : inode_osds) cluster.Stop(osd, SIGKILL);
  EXPECT_NE(fd.Close(), 0) << "the close could not publish the size";
  for (uint32_t osd : inode_osds) cluster.Start(osd);
  TestMount other(&cluster, kFnso);
  EXPECT_TRUE(WaitFor([&] { return FreshStat(other / "f").st_size == static_cast<off_t>(end); },
                      std::chrono::seconds(30)))
      << "size " << FreshStat(other / "f").st_size << ", written up to " << end;
  std::string want = "start" + std::string(end - 9, '\0') + "tail";
  ExpectSameBytes(ReadFile(other / "f"), want);
}

// A double outage: the replica's OSD is down while the original takes writes, and the
// original's OSD goes down before their records were replayed, so the replica (back, still
// at the versions before them) takes the next writes alone. Once both are back, the later
// writes are what both copies hold and what a reader gets: versions carry the writers' clocks
// (common/object_version.h). Before, both copies reached one version with different bytes,
// each replay was a no-op at the other copy, and the original's older bytes were read. Two
// objects on one original OSD: one written by the mounts, which know the OSD is down before
// they write data (their metadata calls found out) and send it to the live copy alone; the
// other by a client that finds out on the way, so the copy that took the write is moved up to
// the floor when the client asks it for the repair record.
TEST(FailoverTest, TheLaterWriteWinsWhenEachCopyWasDownInTurn) {
  TestCluster cluster(TestClusterOptions{.osds = 4});
  constexpr uint64_t kObjects = 16;
  const std::string first = RandomBytes(kObjects * kObjectSize, 31);
  uint64_t fno = 0;
  uint32_t original_osd = 0;
  uint32_t replica_osd = 0;
  std::vector<uint64_t> targets;  // two objects whose original is on original_osd
  std::string want = first;
  auto write_unaware = [&](uint64_t index, int seed) {
    ClusterClient unaware(cluster.client().map(), cluster.Rpc("client"));
    const std::string bytes = RandomBytes(kObjectSize, seed);
    want.replace(index * kObjectSize, kObjectSize, bytes);
    PendingCalls pending;
    unaware.WriteBothCopiesAsync(DataOid(fno, index), bytes, ObjectWrite{.replace = true},
                                 &pending);
    ASSERT_TRUE(pending.Wait().ok());
    EXPECT_EQ(unaware.degraded_writes(), 1u) << "found out on the way: one repair record asked";
  };
  auto overwrite = [&](const std::string& path, uint64_t index, int seed) {
    const std::string bytes = RandomBytes(kObjectSize, seed);
    want.replace(index * kObjectSize, kObjectSize, bytes);
    Fd fd(open(path.c_str(), O_WRONLY));
    ASSERT_GE(fd.get(), 0) << std::strerror(errno);
    ASSERT_TRUE(WriteFull(fd.get(), bytes, index * kObjectSize)) << std::strerror(errno);
    ASSERT_EQ(fsync(fd.get()), 0) << std::strerror(errno);
    ASSERT_EQ(fd.Close(), 0) << std::strerror(errno);
  };
  {
    TestMount mount(&cluster, kFnso);
    CreateFile(mount / "f", first);
    fno = FreshStat(mount / "f").st_ino;
    const Placement& placement = cluster.client().placement();
    replica_osd = placement.OsdFor(DataOid(fno, 0, CopyFlag::kReplica));
    std::map<uint32_t, std::vector<uint64_t>> by_osd;
    for (uint64_t i = 0; i < kObjects; ++i) by_osd[placement.OsdFor(DataOid(fno, i))].push_back(i);
    for (const auto& [osd, indexes] : by_osd) {
      if (indexes.size() >= 2) {
        original_osd = osd;
        targets = {indexes[0], indexes[1]};
        break;
      }
    }
    ASSERT_EQ(targets.size(), 2u) << "16 objects on 3 OSDs: one holds two";
    cluster.Stop(replica_osd, SIGKILL);
    // The original alone, with records for the replica.
    write_unaware(targets[0], 40 + static_cast<int>(targets[0]));
    overwrite(mount / "f", targets[1], 40 + static_cast<int>(targets[1]));
  }
  cluster.Stop(original_osd, SIGKILL);
  cluster.Start(replica_osd);  // its recovery cannot reach the original: it keeps `first`
  {
    TestMount mount(&cluster, kFnso);
    // The replica alone, with records for the original.
    write_unaware(targets[0], 60 + static_cast<int>(targets[0]));
    overwrite(mount / "f", targets[1], 60 + static_cast<int>(targets[1]));
  }
  cluster.Start(original_osd);
  EXPECT_EQ(RunRepair(cluster), 0);
  for (uint64_t index : targets) {
    const std::string later = want.substr(index * kObjectSize, kObjectSize);
    const std::string earlier = RandomBytes(kObjectSize, 40 + static_cast<int>(index));
    for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
      Result<wire::ReadResponse> copy = cluster.client().Read(DataOid(fno, index, flag));
      ASSERT_TRUE(copy.ok()) << copy.status().ToString();
      EXPECT_TRUE(copy->data() == later)
          << "object " << index << ": the "
          << (flag == CopyFlag::kOriginal ? "original" : "replica") << " holds "
          << (copy->data() == earlier ? "the earlier write" : "other bytes");
    }
  }
  TestMount mount(&cluster, kFnso);
  ExpectSameBytes(ReadFile(mount / "f"), want);
  EXPECT_EQ(cluster.Orthofs("scrub").exit_code, 0);
}

// The SUPER object forked by a double outage: while its original's OSD is down one client
// reserves file numbers on the replica; then the replica's OSD goes down before that is
// replayed, and another client reserves on the original, which still holds the old counter.
// Each batch jumps a random distance ahead (common/fno_batch.h), so the two files do not share
// a number and with it their objects.
TEST(FailoverTest, TwoClientsGetDifferentFileNumbersWhenEachSuperCopyWasDownInTurn) {
  TestCluster cluster(TestClusterOptions{.osds = 4});
  const Oid super{kFnso, 0, 0, ObjectType::kSuper, CopyFlag::kOriginal};
  const uint32_t original_osd = cluster.client().placement().OsdFor(super);
  const uint32_t replica_osd = cluster.client().placement().OsdFor(super.OtherCopy());
  const std::string a = RandomBytes(3 * kObjectSize, 71);
  const std::string b = RandomBytes(3 * kObjectSize, 72);
  const std::string c = RandomBytes(3 * kObjectSize, 73);
  uint64_t fno_a = 0, fno_b = 0, fno_c = 0;
  {
    TestMount mount(&cluster, kFnso);
    CreateFile(mount / "a", a);
    fno_a = FreshStat(mount / "a").st_ino;
  }
  cluster.Stop(original_osd, SIGKILL);
  {
    TestMount mount(&cluster, kFnso);  // a new mount reserves a batch of its own
    CreateFile(mount / "b", b);
    fno_b = FreshStat(mount / "b").st_ino;
  }
  cluster.Stop(replica_osd, SIGKILL);
  cluster.Start(original_osd);  // its recovery cannot reach the replica: the old counter
  {
    TestMount mount(&cluster, kFnso);  // finds the replica's OSD down before or while it increments
    CreateFile(mount / "c", c);
    fno_c = FreshStat(mount / "c").st_ino;
    ExpectSameBytes(ReadFile(mount / "c"), c);
  }
  // The batch after fno_a's with all copies up would start at fno_a + 1024: neither side may
  // take it, since the other side could have taken it too.
  EXPECT_NE(fno_b, fno_c);
  EXPECT_GE(fno_b, fno_a + 2 * 1024) << "the batch reserved on the replica alone did not jump";
  EXPECT_GE(fno_c, fno_a + 2 * 1024) << "the batch reserved on the original alone did not jump";
  cluster.Start(replica_osd);
  EXPECT_EQ(RunRepair(cluster), 0);
  TestMount mount(&cluster, kFnso);
  ExpectSameBytes(ReadFile(mount / "a"), a);
  // The root directory's objects forked too and may have kept only one of the two names; a
  // name that stayed holds its own file's bytes.
  for (const auto& [name, bytes] : {std::pair{"b", &b}, std::pair{"c", &c}}) {
    struct stat st {};
    if (stat((mount / name).c_str(), &st) != 0) continue;
    EXPECT_EQ(static_cast<uint64_t>(st.st_ino), name == std::string("b") ? fno_b : fno_c);
    ExpectSameBytes(ReadFile(mount / name), *bytes);
  }
}

// A client that finds the SUPER replica's OSD down only while it increments the counter: the
// increment lands on the original alone, so those numbers could be a fork's too. It leaves
// them unused and reserves a batch that jumps.
TEST(FailoverTest, FileNumbersReservedWhileASuperCopyFailsAreLeftUnused) {
  TestCluster cluster(TestClusterOptions{.osds = 3});
  const Oid super{kFnso, 0, 0, ObjectType::kSuper, CopyFlag::kOriginal};
  const uint32_t replica_osd = cluster.client().placement().OsdFor(super.OtherCopy());
  uint64_t fno_a = 0;
  {
    TestMount mount(&cluster, kFnso);
    CreateFile(mount / "a", "a");
    fno_a = FreshStat(mount / "a").st_ino;
  }
  EXPECT_EQ(fno_a, kRootFno + 1) << "with every OSD up the first batch does not jump";
  ClusterClient client(cluster.client().map(), cluster.Rpc("client"));
  std::atomic<bool> killed{false};
  client.SetTestHooks({.before_writing_original_then_replica = [&](const Oid& original) {
    if (original.type == ObjectType::kSuper && !killed.exchange(true)) {
      cluster.Stop(replica_osd, SIGKILL);
    }
  }});
  Namespace ns(&client, kFnso);
  Result<InodeRef> made = ns.Create(kRootFno, "b", S_IFREG | 0644, 0, Credentials{});
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_TRUE(killed.load());
  // Not the batch after fno_a's (left unused), nor the one after that (the next one jumps).
  EXPECT_GE(made->fno, fno_a + 3 * 1024) << "no jump after the batch left unused";
  cluster.Start(replica_osd);
  EXPECT_EQ(RunRepair(cluster), 0);
  TestMount mount(&cluster, kFnso);
  EXPECT_EQ(static_cast<uint64_t>(FreshStat(mount / "b").st_ino), made->fno);
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
  EXPECT_EQ(cluster.Orthofs("scrub").exit_code, 0);
}

}  // namespace
}  // namespace orthofs::testing

namespace orthofs::testing {
namespace {

// orthofs-mount --metrics: Prometheus text whose cache, flush and failover counters move with
// what the mount did, scraped from a real mount while an OSD is killed under it.
TEST(MountMetricsTest, CountersMoveWithIoAndFailover) {
  TestCluster cluster(TestClusterOptions{.osds = 3});
  const std::string data = RandomBytes(2 * kMiB, 11);
  uint64_t fno = 0;
  {
    TestMount writer(&cluster, kFnso);
    CreateFile(writer / "f", data);
    fno = FreshStat(writer / "f").st_ino;
  }
  const int port = FreePort();
  TestMount mount(&cluster, kFnso, {"--metrics", "127.0.0.1:" + std::to_string(port)});
  const std::string ns = "{fnso=\"1\"}";
  auto scrape = [&] { return ScrapeMetrics(port); };
  std::map<std::string, double> before = scrape();
  // No --cache-mb: 1/16 of this machine's memory within 256 MiB..4 GiB.
  EXPECT_EQ(Sample(before, "orthofs_client_cache_capacity_bytes" + ns),
            static_cast<double>(DefaultCacheMb(PhysicalMemoryBytes()) * kMiB));
  EXPECT_EQ(Sample(before, "orthofs_client_flushes_total" + ns), 0);
  EXPECT_EQ(Sample(before, "orthofs_client_metadata_conflicts_total" + ns), 0);
  EXPECT_GT(Sample(before, "orthofs_client_tls_certificate_expiry_timestamp_seconds" + ns),
            static_cast<double>(std::time(nullptr)) + 3600.0 * 24 * 3600);

  // A cold read from the start: every object fetched from an OSD, the first on demand and the
  // next ones ahead of the reader.
  ExpectSameBytes(ReadFile(mount / "f"), data);
  std::map<std::string, double> read = scrape();
  const double objects = static_cast<double>(data.size() / kObjectSize);
  EXPECT_GE(Sample(read, "orthofs_client_object_reads_total{fnso=\"1\",copy=\"original\"}") +
                Sample(read, "orthofs_client_object_reads_total{fnso=\"1\",copy=\"replica\"}"),
            objects);
  EXPECT_GE(Sample(read, "orthofs_client_cache_misses_total" + ns), 1);
  EXPECT_GE(Sample(read, "orthofs_client_read_ahead_objects_total" + ns), 2);
  EXPECT_LE(Sample(read, "orthofs_client_read_ahead_objects_total" + ns), objects - 1);
  // The kernel's page cache had every object whole: none stays in the client's cache too.
  EXPECT_GE(Sample(read, "orthofs_client_cache_handed_to_kernel_total" + ns), objects);
  EXPECT_EQ(Sample(read, "orthofs_client_cache_bytes" + ns), 0);
  // An O_DIRECT reader bypasses the page cache: what it read stays in the client's cache.
  {
    Fd direct(open((mount / "f").c_str(), O_RDONLY | O_DIRECT));
    ASSERT_GE(direct.get(), 0) << std::strerror(errno);
    void* buffer = nullptr;
    ASSERT_EQ(posix_memalign(&buffer, 4096, kObjectSize), 0);
    std::unique_ptr<void, decltype(&free)> owned(buffer, &free);
    ASSERT_EQ(pread(direct.get(), buffer, kObjectSize, 0), static_cast<ssize_t>(kObjectSize))
        << std::strerror(errno);
    EXPECT_EQ(std::string(static_cast<const char*>(buffer), kObjectSize),
              data.substr(0, kObjectSize));
  }
  std::map<std::string, double> direct_read = scrape();
  EXPECT_EQ(Sample(direct_read, "orthofs_client_cache_handed_to_kernel_total" + ns),
            Sample(read, "orthofs_client_cache_handed_to_kernel_total" + ns));
  EXPECT_GE(Sample(direct_read, "orthofs_client_cache_bytes" + ns), kObjectSize);

  // Writes reach both copies through write-backs.
  CreateFile(mount / "g", data);
  std::map<std::string, double> wrote = scrape();
  EXPECT_GE(Sample(wrote, "orthofs_client_flushes_total" + ns), objects);
  EXPECT_GE(Sample(wrote, "orthofs_client_flushed_bytes_total" + ns), 2.0 * kMiB);
  EXPECT_GT(Sample(wrote, "orthofs_client_writes_total" + ns), 0);
  EXPECT_EQ(Sample(wrote, "orthofs_client_degraded_writes_total" + ns), 0);
  // Written objects stay in the client's cache (the kernel drops its pages of the file once it
  // sees the mtime the close published): reading the file back fetches nothing.
  const double fetched = Sample(wrote, "orthofs_client_cache_misses_total" + ns);
  ExpectSameBytes(ReadFile(mount / "g"), data);
  std::map<std::string, double> read_back = scrape();
  EXPECT_EQ(Sample(read_back, "orthofs_client_cache_misses_total" + ns), fetched);

  // Kill the OSD of object 0's original: reads fail over, writes go degraded, and the mount
  // says so.
  const uint32_t victim = cluster.client().placement().OsdFor(DataOid(fno, 0));
  const std::string osd = "{fnso=\"1\",osd=\"" + std::to_string(victim) + "\"}";
  EXPECT_EQ(Sample(wrote, "orthofs_client_osd_marked_down_total" + osd), 0);
  cluster.Stop(victim, SIGKILL);
  CreateFile(mount / "h", data);
  std::map<std::string, double> failed = scrape();
  EXPECT_GE(Sample(failed, "orthofs_client_osd_marked_down_total" + osd), 1);
  EXPECT_GE(Sample(failed, "orthofs_client_osd_transport_failures_total" + osd), 1);
  EXPECT_GT(Sample(failed, "orthofs_client_degraded_writes_total" + ns), 0);
  // Counters never go down.
  for (const auto& [name, value] : wrote) {
    if (name.find("_total") != std::string::npos) {
      EXPECT_GE(failed[name], value) << name;
    }
  }
  EXPECT_EQ(HttpGet(port, "/other").first, 404);
  cluster.Start(victim);
}

}  // namespace
}  // namespace orthofs::testing
