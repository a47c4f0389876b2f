#include "common/file_locks.h"

#include <gtest/gtest.h>

#include <random>

namespace orthofs {
namespace {

using std::chrono::milliseconds;

constexpr LockOwner kA{1, 10};
constexpr LockOwner kA2{1, 11};  // another process of client 1
constexpr LockOwner kB{2, 10};   // same kernel owner value, another client

FileLock Posix(LockOwner owner, LockMode mode, uint64_t start, uint64_t end, uint32_t pid = 7) {
  return FileLock{owner, LockKind::kPosix, mode, start, end, pid};
}
FileLock Flock(LockOwner owner, LockMode mode) {
  return FileLock{owner, LockKind::kFlock, mode, 0, kLockToEnd, 7};
}

// The encoding of a table holding `held` as given, whether or not Apply would keep them so.
std::string RawTable(const std::vector<FileLock>& held) {
  std::string out = EncodeFileLocks(FileLocks{}).substr(0, 1);  // the format byte
  AppendBigEndian32(&out, static_cast<uint32_t>(held.size()));
  for (const FileLock& lock : held) {
    FileLocks one;
    one.Apply(lock);
    out += EncodeFileLocks(one).substr(1 + 4);
  }
  return out;
}

constexpr LockMode kSh = LockMode::kShared;
constexpr LockMode kEx = LockMode::kExclusive;
constexpr LockMode kUn = LockMode::kUnlock;

TEST(FileLocksTest, AnEmptyTableGrantsEverything) {
  FileLocks locks;
  EXPECT_FALSE(locks.Conflict(Posix(kA, kEx, 0, kLockToEnd)));
  EXPECT_FALSE(locks.Conflict(Flock(kA, kEx)));
  EXPECT_TRUE(locks.empty());
}

TEST(FileLocksTest, ExclusiveConflictsWithAnyOtherOwnerOverlapping) {
  FileLocks locks;
  locks.Apply(Posix(kA, kEx, 100, 199));
  EXPECT_EQ(locks.Conflict(Posix(kB, kSh, 150, 150)), Posix(kA, kEx, 100, 199));
  EXPECT_TRUE(locks.Conflict(Posix(kA2, kEx, 0, 100))) << "other process, same client";
  EXPECT_TRUE(locks.Conflict(Posix(kB, kSh, 199, kLockToEnd)));
  EXPECT_FALSE(locks.Conflict(Posix(kB, kEx, 0, 99))) << "adjacent is no overlap";
  EXPECT_FALSE(locks.Conflict(Posix(kB, kEx, 200, kLockToEnd)));
  EXPECT_FALSE(locks.Conflict(Posix(kA, kEx, 0, kLockToEnd))) << "own locks never conflict";
  EXPECT_FALSE(locks.Conflict(Posix(kB, kUn, 0, kLockToEnd))) << "an unlock never conflicts";
}

TEST(FileLocksTest, SharedLocksShare) {
  FileLocks locks;
  locks.Apply(Posix(kA, kSh, 0, kLockToEnd));
  EXPECT_FALSE(locks.Conflict(Posix(kB, kSh, 5, 10)));
  EXPECT_TRUE(locks.Conflict(Posix(kB, kEx, 5, 10)));
}

TEST(FileLocksTest, FlockAndFcntlLocksNeverConflict) {
  FileLocks locks;
  locks.Apply(Posix(kA, kEx, 0, kLockToEnd));
  EXPECT_FALSE(locks.Conflict(Flock(kB, kEx)));
  locks.Apply(Flock(kB, kEx));
  EXPECT_TRUE(locks.Conflict(Flock(kA, kSh)));
  EXPECT_TRUE(locks.Conflict(Posix(kB, kSh, 3, 3)));
}

TEST(FileLocksTest, UnlockingTheMiddleSplitsALock) {
  FileLocks locks;
  locks.Apply(Posix(kA, kEx, 0, 99));
  locks.Apply(Posix(kA, kUn, 40, 59));
  EXPECT_EQ(locks.locks(), (std::vector<FileLock>{Posix(kA, kEx, 0, 39), Posix(kA, kEx, 60, 99)}));
  EXPECT_FALSE(locks.Conflict(Posix(kB, kEx, 40, 59)));
}

TEST(FileLocksTest, ConvertingARangeSplitsAndKeepsTheRest) {
  FileLocks locks;
  locks.Apply(Posix(kA, kEx, 0, kLockToEnd));
  locks.Apply(Posix(kA, kSh, 10, 19));
  EXPECT_EQ(locks.locks(), (std::vector<FileLock>{Posix(kA, kEx, 0, 9), Posix(kA, kSh, 10, 19),
                                                  Posix(kA, kEx, 20, kLockToEnd)}));
  EXPECT_FALSE(locks.Conflict(Posix(kB, kSh, 10, 19)));
  EXPECT_TRUE(locks.Conflict(Posix(kB, kSh, 9, 10)));
}

TEST(FileLocksTest, AdjoiningLocksOfOneModeMerge) {
  FileLocks locks;
  locks.Apply(Posix(kA, kSh, 0, 9));
  locks.Apply(Posix(kA, kSh, 20, 29));
  locks.Apply(Posix(kA, kSh, 10, 19, 8));
  EXPECT_EQ(locks.locks(), (std::vector<FileLock>{Posix(kA, kSh, 0, 29, 8)}));
  locks.Apply(Posix(kA, kSh, 25, kLockToEnd));
  EXPECT_EQ(locks.locks(), (std::vector<FileLock>{Posix(kA, kSh, 0, kLockToEnd)}));
}

TEST(FileLocksTest, LocksOfOtherModesOrOwnersDoNotMerge) {
  FileLocks locks;
  locks.Apply(Posix(kA, kSh, 0, 9));
  locks.Apply(Posix(kA, kEx, 10, 19));
  locks.Apply(Posix(kA2, kSh, 20, 29));
  EXPECT_EQ(locks.locks().size(), 3u);
}

TEST(FileLocksTest, AFlockIsReplacedByTheOwnersNextOne) {
  FileLocks locks;
  locks.Apply(Flock(kA, kSh));
  locks.Apply(Flock(kB, kSh));
  locks.Apply(Flock(kA, kEx));  // Conflict would refuse it; Apply just replaces
  EXPECT_EQ(locks.locks(), (std::vector<FileLock>{Flock(kA, kEx), Flock(kB, kSh)}));
  locks.Apply(Flock(kA, kUn));
  EXPECT_EQ(locks.locks(), (std::vector<FileLock>{Flock(kB, kSh)}));
}

TEST(FileLocksTest, ReleasingAnOwnerLeavesItsOtherKindAndOthers) {
  FileLocks locks;
  locks.Apply(Posix(kA, kEx, 0, 9));
  locks.Apply(Posix(kA, kEx, 20, 29));
  locks.Apply(Flock(kA, kEx));
  locks.Apply(Posix(kB, kEx, 10, 19));
  EXPECT_TRUE(locks.ReleaseOwner(kA, LockKind::kPosix));
  EXPECT_FALSE(locks.ReleaseOwner(kA, LockKind::kPosix)) << "nothing left to release";
  EXPECT_EQ(locks.locks(), (std::vector<FileLock>{Posix(kB, kEx, 10, 19), Flock(kA, kEx)}));
  EXPECT_EQ(locks.Clients(), (std::set<uint64_t>{1, 2}));
  EXPECT_TRUE(locks.ReleaseClient(1));
  EXPECT_EQ(locks.locks(), (std::vector<FileLock>{Posix(kB, kEx, 10, 19)}));
}

TEST(FileLocksTest, TablesRoundTrip) {
  FileLocks locks;
  EXPECT_EQ(*DecodeFileLocks(EncodeFileLocks(locks)), locks);
  locks.Apply(Posix(kA, kEx, 0, 9, 123));
  locks.Apply(Posix(kB, kSh, 10, kLockToEnd, 456));
  locks.Apply(Flock(kA2, kSh));
  Result<FileLocks> back = DecodeFileLocks(EncodeFileLocks(locks));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, locks);
}

TEST(FileLocksTest, DamagedTablesAreRefused) {
  FileLocks locks;
  locks.Apply(Posix(kA, kEx, 0, 9));
  const std::string good = EncodeFileLocks(locks);
  for (size_t cut = 0; cut < good.size(); ++cut) {
    EXPECT_FALSE(DecodeFileLocks(good.substr(0, cut)).ok()) << cut;
  }
  EXPECT_FALSE(DecodeFileLocks(good + "x").ok());
  std::string bad_mode = good;
  bad_mode[1 + 4 + 8 + 8 + 1] = 0;  // a held "unlock"
  EXPECT_FALSE(DecodeFileLocks(bad_mode).ok());
  std::string backwards = good;  // start 2^56 > end 9
  backwards[1 + 4 + 8 + 8 + 2] = 1;
  EXPECT_FALSE(DecodeFileLocks(backwards).ok());
  // Two owners' exclusive locks over one range: no client writes that.
  EXPECT_FALSE(DecodeFileLocks(RawTable({Posix(kA, kEx, 0, 9), Posix(kB, kEx, 5, 5)})).ok());
  // One owner's overlapping locks, unmerged: no client writes that either.
  EXPECT_FALSE(DecodeFileLocks(RawTable({Posix(kA, kEx, 0, 9), Posix(kA, kSh, 6, 8)})).ok());
  // The same locks apart are fine.
  EXPECT_TRUE(DecodeFileLocks(RawTable({Posix(kA, kEx, 0, 9), Posix(kA, kSh, 11, 12)})).ok());
  // More locks than a table holds.
  std::string too_many = good;
  too_many[1] = 0;
  too_many[2] = 0;
  too_many[3] = 0x08;
  too_many[4] = 0x01;  // 2049
  EXPECT_FALSE(DecodeFileLocks(too_many).ok());
}

TEST(FileLocksTest, RandomChangesKeepOneOwnersLocksApartAndMatchAByteMap) {
  // Against a model: per owner, the mode of each of 64 bytes (the last lock reaches the end).
  std::mt19937 random(42);
  FileLocks locks;
  const LockOwner owners[] = {kA, kA2, kB};
  std::map<LockOwner, std::vector<LockMode>> model;
  for (const LockOwner& o : owners) model[o].assign(65, kUn);
  for (int step = 0; step < 5000; ++step) {
    const LockOwner& owner = owners[random() % 3];
    const uint64_t start = random() % 64;
    const bool to_end = random() % 8 == 0;
    const uint64_t end = to_end ? kLockToEnd : start + random() % (64 - start);
    const LockMode mode = static_cast<LockMode>(random() % 3);
    const FileLock change = Posix(owner, mode, start, end);
    if (locks.Conflict(change)) continue;
    locks.Apply(change);
    for (uint64_t b = start; b <= std::min<uint64_t>(end, 64); ++b) model[owner][b] = mode;
    // Compare.
    std::map<LockOwner, std::vector<LockMode>> got;
    for (const LockOwner& o : owners) got[o].assign(65, kUn);
    const FileLock* previous = nullptr;
    for (const FileLock& held : locks.locks()) {
      ASSERT_NE(held.mode, kUn);
      if (previous && previous->owner == held.owner) {
        ASSERT_GT(held.start, previous->end) << "one owner's locks overlap";
        if (previous->mode == held.mode) {
          ASSERT_GT(held.start, previous->end + 1) << "one owner's same-mode locks touch";
        }
      }
      for (uint64_t b = held.start; b <= std::min<uint64_t>(held.end, 64); ++b) {
        got[held.owner][b] = held.mode;
      }
      previous = &held;
    }
    ASSERT_EQ(got, model) << "step " << step;
    ASSERT_EQ(*DecodeFileLocks(EncodeFileLocks(locks)), locks);
  }
}

TEST(LockSessionTest, RoundTripsAndRefusesDamage) {
  const LockSession session{0x1234567890abcdef, 42, 1764400000};
  const std::string bytes = EncodeLockSession(session);
  EXPECT_EQ(*DecodeLockSession(bytes), session);
  EXPECT_FALSE(DecodeLockSession(bytes.substr(0, bytes.size() - 1)).ok());
  EXPECT_FALSE(DecodeLockSession(bytes + "x").ok());
  EXPECT_FALSE(DecodeLockSession("").ok());
}

TEST(LockSessionTest, ObjectsSitApartFromEveryFilesOwn) {
  EXPECT_EQ(FileLocksOid(3, 42), (Oid{3, 42, 0, ObjectType::kLock}));
  EXPECT_EQ(LockSessionOid(3, 99), (Oid{3, 0, 99, ObjectType::kLock}));
  EXPECT_TRUE(IsLockSession(LockSessionOid(3, 99)));
  EXPECT_FALSE(IsLockSession(FileLocksOid(3, 42)));
}

TEST(SessionWatchTest, AHolderIsDeadOnlyAfterItsBeatsStoodStillForALease) {
  SessionWatch watch(milliseconds(1000));
  const auto t0 = SessionWatch::Clock::now();
  EXPECT_FALSE(watch.Dead(5, 1, t0)) << "first sight";
  EXPECT_FALSE(watch.Dead(5, 1, t0 + milliseconds(999)));
  EXPECT_FALSE(watch.Dead(5, 2, t0 + milliseconds(1500))) << "it beat";
  EXPECT_FALSE(watch.Dead(5, 2, t0 + milliseconds(2499)));
  EXPECT_TRUE(watch.Dead(5, 2, t0 + milliseconds(2500)));
  EXPECT_FALSE(watch.Dead(6, 2, t0 + milliseconds(2500))) << "another client starts afresh";
}

TEST(SessionWatchTest, AGoneSessionIsDeadAtOnceAndAForgottenOneStartsAfresh) {
  SessionWatch watch(milliseconds(1000));
  const auto t0 = SessionWatch::Clock::now();
  EXPECT_TRUE(watch.Dead(5, std::nullopt, t0));
  EXPECT_FALSE(watch.Dead(5, 3, t0));
  EXPECT_TRUE(watch.Dead(5, 3, t0 + milliseconds(1000)));
  watch.Forget(5);
  EXPECT_FALSE(watch.Dead(5, 3, t0 + milliseconds(1000)));
}

}  // namespace
}  // namespace orthofs
