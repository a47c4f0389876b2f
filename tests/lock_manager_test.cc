// The lock manager against real OSDs (a TestCluster of 3), without FUSE: several managers
// stand for several clients, each with its own ClusterClient. What the FUSE mount adds on top
// (owners from the kernel, close and release) is tested in fuse_locks_test.
#include "client/lock_manager.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>

#include "common/placement.h"
#include "tests/test_cluster.h"

namespace orthofs::testing {
namespace {

using std::chrono::milliseconds;

constexpr uint32_t kFnso = 1;
constexpr uint64_t kFile = 4242;

FileLock Exclusive(uint64_t owner, uint64_t start = 0, uint64_t end = kLockToEnd) {
  FileLock lock;
  lock.owner.owner = owner;
  lock.mode = LockMode::kExclusive;
  lock.start = start;
  lock.end = end;
  return lock;
}

FileLock Unlock(uint64_t owner) {
  FileLock lock = Exclusive(owner);
  lock.mode = LockMode::kUnlock;
  return lock;
}

// A client: its own connections and lock manager.
struct Client {
  Client(TestCluster& cluster, milliseconds lease)
      : cluster_client(cluster.client().map(), cluster.Rpc("client")),
        locks(std::make_unique<LockManager>(&cluster_client, kFnso,
                                            LockManagerOptions{.lease = lease})) {}
  ClusterClient cluster_client;
  std::unique_ptr<LockManager> locks;
};

class LockManagerTest : public ::testing::Test {
 protected:
  TestCluster cluster_;
  Client a_{cluster_, milliseconds(1500)};
  Client b_{cluster_, milliseconds(1500)};

  bool Exists(const Oid& oid) { return cluster_.client().ReadEitherCopy(oid).ok(); }
};

TEST_F(LockManagerTest, OneClientsLockKeepsTheOtherOutUntilReleased) {
  ASSERT_EQ(*a_.locks->Set(kFile, Exclusive(1, 0, 99), false), LockOutcome::kGranted);
  EXPECT_EQ(*b_.locks->Set(kFile, Exclusive(1, 50, 50), false), LockOutcome::kConflict);
  Result<std::optional<FileLock>> holder = b_.locks->Test(kFile, Exclusive(1, 0, 0));
  // An unlock of nothing changes nothing, and is no error.
  EXPECT_EQ(*b_.locks->Set(kFile + 9, Unlock(1), false), LockOutcome::kGranted);
  ASSERT_TRUE(holder.ok()) << holder.status().ToString();
  ASSERT_TRUE(*holder);
  EXPECT_EQ((*holder)->owner.client, a_.locks->client());
  EXPECT_EQ(a_.locks->files_held(), 1u);
  EXPECT_TRUE(Exists(FileLocksOid(kFnso, kFile)));
  EXPECT_TRUE(Exists(LockSessionOid(kFnso, a_.locks->client())));
  ASSERT_TRUE(a_.locks->ReleaseOwner(kFile, 1, LockKind::kPosix).ok());
  EXPECT_EQ(a_.locks->files_held(), 0u);
  EXPECT_FALSE(Exists(FileLocksOid(kFnso, kFile))) << "an empty table is deleted";
  EXPECT_EQ(*b_.locks->Set(kFile, Exclusive(1, 50, 50), false), LockOutcome::kGranted);
}

TEST_F(LockManagerTest, ReleaseAllLeavesNoLockAndNoSession) {
  ASSERT_EQ(*a_.locks->Set(kFile, Exclusive(1), false), LockOutcome::kGranted);
  ASSERT_EQ(*a_.locks->Set(kFile + 1, Exclusive(2), false), LockOutcome::kGranted);
  a_.locks->ReleaseAll();
  EXPECT_FALSE(Exists(FileLocksOid(kFnso, kFile)));
  EXPECT_FALSE(Exists(FileLocksOid(kFnso, kFile + 1)));
  EXPECT_FALSE(Exists(LockSessionOid(kFnso, a_.locks->client())));
}

TEST_F(LockManagerTest, ALiveHoldersLocksStayPastTheLeaseAndADeadOnesGo) {
  ASSERT_EQ(*a_.locks->Set(kFile, Exclusive(1), false), LockOutcome::kGranted);
  std::this_thread::sleep_for(milliseconds(2000));  // longer than the lease: A's beats count
  EXPECT_EQ(*b_.locks->Set(kFile, Exclusive(1), false), LockOutcome::kConflict);
  std::this_thread::sleep_for(milliseconds(2000));
  EXPECT_EQ(*b_.locks->Set(kFile, Exclusive(1), false), LockOutcome::kConflict);
  // A dies: its session stops beating, and is never deleted.
  const uint64_t dead = a_.locks->client();
  a_.locks.reset();
  EXPECT_TRUE(Exists(LockSessionOid(kFnso, dead)));
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(*b_.locks->Set(kFile, Exclusive(1), true), LockOutcome::kGranted);
  // B last saw A's session change at its try above, a moment before `start`.
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(1000))
      << "taken long before the lease ran out, as B measures it";
  EXPECT_EQ(b_.locks->stats().taken_from_dead, 1u);
  EXPECT_EQ(b_.locks->stats().granted, 1u);
  EXPECT_EQ(b_.locks->stats().refused, 2u);
}

TEST_F(LockManagerTest, AWaitEndsWhenTheCallerIsInterrupted) {
  ASSERT_EQ(*a_.locks->Set(kFile, Exclusive(1), false), LockOutcome::kGranted);
  int polls = 0;
  EXPECT_EQ(*b_.locks->Set(kFile, Exclusive(1), true, [&] { return ++polls == 3; }),
            LockOutcome::kInterrupted);
  ASSERT_EQ(*a_.locks->Set(kFile, Unlock(1), false), LockOutcome::kGranted);
  EXPECT_EQ(*b_.locks->Set(kFile, Exclusive(1), false), LockOutcome::kGranted);
}

TEST_F(LockManagerTest, WaitersBeyondTheLimitAreRefused) {
  Client c(cluster_, milliseconds(1500));
  c.locks =
      std::make_unique<LockManager>(&c.cluster_client, kFnso, LockManagerOptions{.max_waiters = 1});
  ASSERT_EQ(*a_.locks->Set(kFile, Exclusive(1), false), LockOutcome::kGranted);
  std::atomic<bool> stop = false;
  std::atomic<int> polls = 0;  // the first waiter asks between polls: it waits then
  std::thread waiter([&] {
    (void)c.locks->Set(kFile, Exclusive(1), true, [&] {
      ++polls;
      return stop.load();
    });
  });
  while (polls == 0) std::this_thread::sleep_for(milliseconds(10));
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  EXPECT_EQ(*c.locks->Set(kFile, Exclusive(2), true,
                          [&] { return std::chrono::steady_clock::now() > give_up; }),
            LockOutcome::kTooManyWaiters);
  stop = true;
  waiter.join();
}

TEST_F(LockManagerTest, ADeletionCutShortByItsClientsDeathDoesNotBlockTheNextLock) {
  ASSERT_EQ(*a_.locks->Set(kFile, Exclusive(1), false), LockOutcome::kGranted);
  // A's unlock deletes the table: the original, then the replica. A dies in between.
  const Oid original = FileLocksOid(kFnso, kFile);
  ASSERT_TRUE(cluster_.client().DeleteCopy(original, std::nullopt, std::nullopt).ok());
  ASSERT_TRUE(cluster_.client().Read(original.OtherCopy()).ok()) << "the replica stays";
  a_.locks.reset();
  // The unlock committed on the original: B's read finds the table deleted (and finishes the
  // deletion), and B locks.
  ASSERT_EQ(*b_.locks->Set(kFile, Exclusive(1), false), LockOutcome::kGranted);
  Result<std::optional<FileLock>> holder = b_.locks->Test(kFile, Exclusive(9));
  ASSERT_TRUE(holder.ok());
  ASSERT_TRUE(*holder);
  EXPECT_EQ((*holder)->owner.client, b_.locks->client());
}

// An OSD holding a lock table's copy dies and comes back: locks go on from the other copy (a
// commit there alone, with a repair record), and the restarted OSD's copy catches up, so no
// two clients ever hold conflicting locks.
TEST_F(LockManagerTest, LocksGoOnWhileAnOsdOfTheTableIsDownAndAfterItReturns) {
  ASSERT_EQ(*a_.locks->Set(kFile, Exclusive(1), false), LockOutcome::kGranted);
  const uint32_t original_osd =
      Placement(cluster_.client().map()).OsdFor(FileLocksOid(kFnso, kFile));
  cluster_.Stop(original_osd, SIGKILL);
  EXPECT_EQ(*b_.locks->Set(kFile, Exclusive(1), false), LockOutcome::kConflict)
      << "the replica answers with A's lock";
  ASSERT_EQ(*a_.locks->Set(kFile, Unlock(1), false), LockOutcome::kGranted);
  ASSERT_EQ(*b_.locks->Set(kFile, Exclusive(1, 0, 99), false), LockOutcome::kGranted);
  cluster_.Start(original_osd);  // waits until its repair records are replayed
  EXPECT_EQ(*a_.locks->Set(kFile, Exclusive(1, 50, 50), false), LockOutcome::kConflict)
      << "B's lock, taken while the OSD was down, holds on its copy too";
  ASSERT_EQ(*a_.locks->Set(kFile, Exclusive(1, 100, 199), false), LockOutcome::kGranted);
  // Both copies hold both locks, at once or once a repair record A's client left (if it still
  // took the OSD for down) is replayed.
  auto locks_in = [&](CopyFlag flag) -> size_t {
    Result<wire::ReadResponse> copy =
        cluster_.client().Read(FileLocksOid(kFnso, kFile).WithFlag(flag));
    if (!copy.ok()) return 0;
    Result<FileLocks> table = DecodeFileLocks(copy->data());
    return table.ok() ? table->locks().size() : 0;
  };
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while ((locks_in(CopyFlag::kOriginal) != 2 || locks_in(CopyFlag::kReplica) != 2) &&
         std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(milliseconds(100));
  }
  EXPECT_EQ(locks_in(CopyFlag::kOriginal), 2u);
  EXPECT_EQ(locks_in(CopyFlag::kReplica), 2u);
}

}  // namespace
}  // namespace orthofs::testing
