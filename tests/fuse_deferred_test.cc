// What a mount finishes after it has answered, through two real mounts of one namespace: the
// directory times unlinks change (Namespace::EnableDeferredDirectoryTimes: this client shows
// them at once, the OSDs get them within kDirectoryTimesDelay, fsyncdir writes them now, and
// times set by utimes after an unlink stay), and the deletion of an unlinked file's data
// objects (client/deferred_releases.h: done by the time statfs answers).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "client/namespace.h"
#include "tests/posix_files.h"
#include "tests/test_cluster.h"

namespace orthofs::testing {
namespace {

constexpr uint32_t kFnso = 1;

bool Later(const timespec& a, const timespec& b) {
  return a.tv_sec != b.tv_sec ? a.tv_sec > b.tv_sec : a.tv_nsec > b.tv_nsec;
}
bool Same(const timespec& a, const timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

class FuseDeferredTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { suite_.Start(kFnso, {{}, {}}); }
  static void TearDownTestSuite() { suite_.Stop(); }
  void SetUp() override {
    ASSERT_EQ(suite_.error(), "");
    name_ = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ASSERT_EQ(mkdir(A("").c_str(), 0755), 0) << std::strerror(errno);
  }
  std::string A(const std::string& relative) const {
    return suite_.mount(0) / (name_ + "/" + relative);
  }
  std::string B(const std::string& relative) const {
    return suite_.mount(1) / (name_ + "/" + relative);
  }
  // The directory's INODE as the OSDs hold it, read by a client of its own (no mount's cache).
  Result<InodeRef> StoredInode(uint64_t fno) {
    Namespace ns(&suite_.cluster().client(), kFnso);
    return ns.GetInode(fno);
  }
  // B's view of `path` once its mtime is `want`, within `limit` (false if never).
  bool EventuallySeenByB(const std::string& relative, const timespec& want,
                         std::chrono::milliseconds limit) {
    const auto until = std::chrono::steady_clock::now() + limit;
    do {
      if (Same(FreshStat(B(relative)).st_mtim, want)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    } while (std::chrono::steady_clock::now() < until);
    return false;
  }

  static SuiteCluster suite_;
  std::string name_;
};
SuiteCluster FuseDeferredTest::suite_;

TEST_F(FuseDeferredTest, AnUnlinkSetsItsDirectoryTimesHereAtOnceAndElsewhereSoon) {
  ASSERT_EQ(mkdir(A("d").c_str(), 0755), 0) << std::strerror(errno);
  for (const char* f : {"f1", "f2"}) CreateFile(A(std::string("d/") + f), "x");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const struct stat before = FreshStat(A("d"));
  ASSERT_EQ(unlink(A("d/f1").c_str()), 0) << std::strerror(errno);
  const struct stat here = FreshStat(A("d"));
  EXPECT_TRUE(Later(here.st_mtim, before.st_mtim)) << "the unlink did not show in mtime here";
  EXPECT_TRUE(Same(here.st_ctim, here.st_mtim));
  // The OSDs get them a moment later: another client sees the same times.
  EXPECT_TRUE(EventuallySeenByB("d", here.st_mtim, std::chrono::seconds(3)))
      << "B never saw A's unlink in the directory's mtime";
  Result<InodeRef> stored = StoredInode(here.st_ino);
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_EQ(stored->inode.mtime.sec, here.st_mtim.tv_sec);
  EXPECT_EQ(stored->inode.mtime.nsec, static_cast<uint32_t>(here.st_mtim.tv_nsec));
}

TEST_F(FuseDeferredTest, FsyncOfTheDirectoryWritesItsTimesNow) {
  ASSERT_EQ(mkdir(A("d").c_str(), 0755), 0) << std::strerror(errno);
  CreateFile(A("d/f"), "x");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(unlink(A("d/f").c_str()), 0) << std::strerror(errno);
  const int fd = open(A("d").c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_EQ(fsync(fd), 0) << std::strerror(errno);
  close(fd);
  const struct stat here = FreshStat(A("d"));
  Result<InodeRef> stored = StoredInode(here.st_ino);
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_EQ(stored->inode.mtime.sec, here.st_mtim.tv_sec) << "fsyncdir left the times pending";
  EXPECT_EQ(stored->inode.mtime.nsec, static_cast<uint32_t>(here.st_mtim.tv_nsec));
}

// tar sets a directory's times after it extracted its entries; one removed just before must not
// overwrite them a moment later.
TEST_F(FuseDeferredTest, TimesSetAfterAnUnlinkStay) {
  ASSERT_EQ(mkdir(A("d").c_str(), 0755), 0) << std::strerror(errno);
  CreateFile(A("d/f"), "x");
  ASSERT_EQ(unlink(A("d/f").c_str()), 0) << std::strerror(errno);
  const timespec set[2] = {{1000000000, 0}, {1000000000, 500}};
  ASSERT_EQ(utimensat(AT_FDCWD, A("d").c_str(), set, 0), 0) << std::strerror(errno);
  EXPECT_TRUE(Same(FreshStat(A("d")).st_mtim, set[1]));
  std::this_thread::sleep_for(Namespace::kDirectoryTimesDelay * 6);
  EXPECT_TRUE(Same(FreshStat(A("d")).st_mtim, set[1])) << "the unlink's time came back here";
  EXPECT_TRUE(EventuallySeenByB("d", set[1], std::chrono::seconds(3)))
      << "B sees another mtime than the one set";
}

// rm -rf answers before the files' data objects are deleted; statfs waits for them, so df
// right after counts the space, and nothing of the files stays on the OSDs.
TEST_F(FuseDeferredTest, RemovingATreeFreesItsObjectsByTheTimeStatfsAnswers) {
  ASSERT_EQ(mkdir(A("t").c_str(), 0755), 0) << std::strerror(errno);
  std::vector<uint64_t> fnos;
  for (int i = 0; i < 40; ++i) {
    const std::string name = "t/f" + std::to_string(i);
    CreateFile(A(name), RandomBytes(10000 + 1000 * i, i));
    fnos.push_back(FreshStat(A(name)).st_ino);
  }
  std::filesystem::remove_all(A("t"));
  struct statvfs space;
  ASSERT_EQ(statvfs(A("").c_str(), &space), 0) << std::strerror(errno);
  for (uint64_t fno : fnos) {
    for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
      auto left =
          suite_.cluster().client().ListFileObjects(flag, kFnso, fno, ObjectType::kData, 0, false);
      ASSERT_TRUE(left.ok()) << left.status().ToString();
      EXPECT_TRUE(left->empty()) << left->size() << " objects of removed file " << fno
                                 << " stay after statfs";
    }
  }
  struct stat st;
  EXPECT_EQ(Errno(stat(B("t").c_str(), &st)), "ENOENT") << "B still sees the tree";
}

}  // namespace
}  // namespace orthofs::testing
