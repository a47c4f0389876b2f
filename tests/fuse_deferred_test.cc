// What a mount finishes after it has answered, through two real mounts of one namespace: the
// directory times unlinks change (Namespace::EnableDeferredDirectoryTimes: this client shows
// them at once, the OSDs get them within kDirectoryTimesDelay, fsyncdir writes them now, and
// times set by utimes after an unlink stay), and the deletion of an unlinked file's data
// objects (client/deferred_releases.h: done by the time statfs answers), and attribute changes
// of a file being written (common/deferred_attributes.h: shown here at once, on the OSDs with
// the writes' publish at close or within a second, unless they take access away).
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

// An open descriptor of a new file, closed by the test or at the end of its scope.
class OpenFile {
 public:
  OpenFile(const std::string& path, mode_t mode)
      : fd_(open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY, mode)) {}
  ~OpenFile() { Close(); }
  int fd() const { return fd_; }
  int Close() {
    const int r = fd_ >= 0 ? close(fd_) : 0;
    fd_ = -1;
    return r;
  }

 private:
  int fd_;
};

// tar -x: write, then times, owner and mode through the descriptor, then close.
TEST_F(FuseDeferredTest, AttributesSetWhileWritingShowHereAtOnceAndOnTheOsdsAtClose) {
  OpenFile f(A("f"), 0600);
  ASSERT_GE(f.fd(), 0) << std::strerror(errno);
  ASSERT_EQ(write(f.fd(), "hello", 5), 5) << std::strerror(errno);
  const timespec times[2] = {{900000000, 7}, {1000000000, 9}};
  ASSERT_EQ(futimens(f.fd(), times), 0) << std::strerror(errno);
  ASSERT_EQ(fchown(f.fd(), getuid(), getgid()), 0) << std::strerror(errno);
  ASSERT_EQ(fchmod(f.fd(), 0644), 0) << std::strerror(errno);
  const auto deferred_at = std::chrono::steady_clock::now();
  struct stat here;
  ASSERT_EQ(fstat(f.fd(), &here), 0) << std::strerror(errno);
  EXPECT_EQ(here.st_mode & 07777, 0644u);
  EXPECT_TRUE(Same(here.st_mtim, times[1]));
  EXPECT_TRUE(Same(here.st_atim, times[0]));
  EXPECT_EQ(here.st_size, 5);
  const uint64_t fno = here.st_ino;
  Result<InodeRef> stored = StoredInode(fno);
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  if (std::chrono::steady_clock::now() - deferred_at < std::chrono::milliseconds(500)) {
    EXPECT_EQ(stored->inode.mode & 07777, 0600u) << "the chmod did not wait for the close";
  }
  ASSERT_EQ(f.Close(), 0) << std::strerror(errno);
  stored = StoredInode(fno);
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_EQ(stored->inode.mode & 07777, 0644u);
  EXPECT_EQ(stored->inode.size, 5u);
  EXPECT_EQ(stored->inode.mtime.sec, times[1].tv_sec);
  EXPECT_EQ(stored->inode.mtime.nsec, static_cast<uint32_t>(times[1].tv_nsec));
  EXPECT_EQ(stored->inode.atime.sec, times[0].tv_sec);
  const struct stat there = FreshStat(B("f"));
  EXPECT_EQ(there.st_mode & 07777, 0644u);
  EXPECT_TRUE(Same(there.st_mtim, times[1]));
  EXPECT_FALSE(Later(here.st_ctim, there.st_ctim)) << "B's ctime is older than the changes";
  EXPECT_EQ(ReadFile(B("f")), "hello");
}

TEST_F(FuseDeferredTest, AWriteAfterTheTimesStampsItsOwnMtime) {
  OpenFile f(A("f"), 0600);
  ASSERT_GE(f.fd(), 0) << std::strerror(errno);
  ASSERT_EQ(write(f.fd(), "ab", 2), 2) << std::strerror(errno);
  const timespec times[2] = {{1000000000, 0}, {1000000000, 0}};
  ASSERT_EQ(futimens(f.fd(), times), 0) << std::strerror(errno);
  ASSERT_EQ(write(f.fd(), "cd", 2), 2) << std::strerror(errno);
  ASSERT_EQ(f.Close(), 0) << std::strerror(errno);
  const struct stat there = FreshStat(B("f"));
  EXPECT_GT(there.st_mtim.tv_sec, times[1].tv_sec + 1000) << "the later write kept the old mtime";
  EXPECT_EQ(there.st_atim.tv_sec, times[0].tv_sec);
  EXPECT_EQ(ReadFile(B("f")), "abcd");
}

// Changes that take access away, or give the file away, reach the OSDs before they answer.
TEST_F(FuseDeferredTest, ANarrowingChmodOrARealChownIsWrittenAtOnce) {
  OpenFile f(A("f"), 0644);
  ASSERT_GE(f.fd(), 0) << std::strerror(errno);
  ASSERT_EQ(write(f.fd(), "secret", 6), 6) << std::strerror(errno);
  const uint64_t fno = FreshStat(A("f")).st_ino;
  ASSERT_EQ(fchmod(f.fd(), 0600), 0) << std::strerror(errno);
  Result<InodeRef> stored = StoredInode(fno);
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_EQ(stored->inode.mode & 07777, 0600u);
  EXPECT_EQ(FreshStat(B("f")).st_mode & 07777, 0600u);
  ASSERT_EQ(fchown(f.fd(), 4321, static_cast<gid_t>(-1)), 0) << std::strerror(errno);
  stored = StoredInode(fno);
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_EQ(stored->inode.uid, 4321u);
  ASSERT_EQ(f.Close(), 0) << std::strerror(errno);
  EXPECT_EQ(FreshStat(B("f")).st_uid, 4321u);
  EXPECT_EQ(ReadFile(B("f")), "secret");
}

// A file held open does not keep its changes from others for long: its writes and the changes
// are published (data first) within about a second, as at a close.
TEST_F(FuseDeferredTest, ChangesOfAFileHeldOpenArePublishedWithinASecond) {
  OpenFile f(A("f"), 0600);
  ASSERT_GE(f.fd(), 0) << std::strerror(errno);
  ASSERT_EQ(write(f.fd(), "data", 4), 4) << std::strerror(errno);
  ASSERT_EQ(fchmod(f.fd(), 0640), 0) << std::strerror(errno);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  struct stat there {};
  do {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    there = FreshStat(B("f"));
  } while ((there.st_mode & 07777) != 0640 && std::chrono::steady_clock::now() < until);
  EXPECT_EQ(there.st_mode & 07777, 0640u) << "B never saw the chmod of the open file";
  EXPECT_EQ(there.st_size, 4);
  EXPECT_EQ(ReadFile(B("f")), "data");
}

}  // namespace
}  // namespace orthofs::testing
