// POSIX behaviour of the OrthoFS FUSE client, checked through a real mount: one TestCluster
// (3 OSDs) and one mount (with allow_other, so a second user can reach it) shared by the
// suite; every test works in its own subdirectory. Everything goes through plain syscalls and
// checks errno exactly. Where the kernel may answer from its attribute cache (attributes and
// entries are trusted for 1 s), statx(AT_STATX_FORCE_SYNC) asks the file system itself.
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <linux/fs.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <functional>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/oid.h"
#include "tests/posix_files.h"
#include "tests/test_cluster.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

namespace orthofs::testing {
namespace {

constexpr uint32_t kFnso = 1;
constexpr uint64_t kObjectSize = 131072;  // the cluster map's default
constexpr uint64_t kMiB = 1024 * 1024;
constexpr uint64_t kGiB = 1024 * kMiB;
constexpr uid_t kUser = 1000;
constexpr gid_t kGroup = 1000;

// open() that closes what it opened: 0 on success, -1 with errno on failure.
int OpenAndClose(const std::string& path, int flags, mode_t mode = 0644) {
  int fd = open(path.c_str(), flags, mode);
  if (fd < 0) return -1;
  close(fd);
  return 0;
}

// Runs `fn` in a forked child as uid/gid 1000 (no supplementary groups); its result, 0 or an
// errno, comes back as the exit code. Only async-signal-safe calls belong in `fn`.
int AsUser(const std::function<int()>& fn) {
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    if (setgroups(0, nullptr) != 0 || setgid(kGroup) != 0 || setuid(kUser) != 0) _exit(254);
    _exit(fn());
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 255;
}

// As that user: opens `name` under `dir_fd` with `flags` (a file it creates gets mode 0644),
// runs `use` on the descriptor (0 or an errno), closes it.
int AsUserWithFile(int dir_fd, const char* name, int flags, const std::function<int(int)>& use) {
  return AsUser([&]() {
    int fd = openat(dir_fd, name, flags, 0644);
    if (fd < 0) return errno;
    const int rc = use(fd);
    close(fd);
    return rc;
  });
}

class FusePosixTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    umask(022);
    try {
      cluster_ = new TestCluster();
      // allow_other: without it the kernel shuts every other user out before
      // default_permissions is even consulted, and the EACCES tests would prove nothing.
      mount_ = new TestMount(cluster_, kFnso, {"-o", "allow_other"});
    } catch (const std::exception& e) {
      setup_error_ = new std::string(e.what());
    }
  }

  static void TearDownTestSuite() {
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
    name_ = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = *mount_ / name_;
    ASSERT_EQ(mkdir(dir_.c_str(), 0755), 0) << dir_ << ": " << std::strerror(errno);
  }

  // A path inside this test's directory.
  std::string P(const std::string& relative) const { return dir_ + "/" + relative; }

  // Whether either copy of an object is still stored.
  static bool AnyCopyExists(Oid oid) {
    for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
      auto st = cluster_->client().Stat(oid.WithFlag(flag));
      if (st.ok()) return true;
      if (!st.status().Is(StatusCode::kNotFound)) {
        throw std::runtime_error("stat " + oid.ToString() + ": " + st.status().ToString());
      }
    }
    return false;
  }
  static Oid InodeOid(uint64_t fno) { return Oid{kFnso, fno, 0, ObjectType::kInode}; }
  static Oid DataOid(uint64_t fno, uint64_t index) {
    return Oid{kFnso, fno, index, ObjectType::kData};
  }
  // Release after the last close is asynchronous to close(2): wait a bounded time (30 s, for
  // a loaded machine).
  static bool EventuallyGone(Oid oid) {
    for (int i = 0; i < 600; ++i) {
      if (!AnyCopyExists(oid)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  static TestCluster* cluster_;
  static TestMount* mount_;
  static std::string* setup_error_;
  std::string name_;
  std::string dir_;
};

TestCluster* FusePosixTest::cluster_ = nullptr;
TestMount* FusePosixTest::mount_ = nullptr;
std::string* FusePosixTest::setup_error_ = nullptr;

// ---- files: create, open flags ----

TEST_F(FusePosixTest, CreateWriteReadBack) {
  const std::string text = "hello, orthofs\n";
  CreateFile(P("f"), text);
  EXPECT_EQ(ReadFile(P("f")), text);
  struct stat st = FreshStat(P("f"));
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  EXPECT_EQ(st.st_size, static_cast<off_t>(text.size()));
  EXPECT_EQ(st.st_nlink, 1u);
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ(st.st_gid, 0u);
}

TEST_F(FusePosixTest, CreateExclusiveOnExistingIsEexist) {
  CreateFile(P("f"), "x");
  EXPECT_EQ(Errno(OpenAndClose(P("f"), O_CREAT | O_EXCL | O_WRONLY)), "EEXIST");
  EXPECT_EQ(ReadFile(P("f")), "x");
}

TEST_F(FusePosixTest, OpenMissingIsEnoent) {
  EXPECT_EQ(Errno(OpenAndClose(P("missing"), O_RDONLY)), "ENOENT");
  EXPECT_EQ(Errno(OpenAndClose(P("missing"), O_WRONLY)), "ENOENT");
  struct stat st;
  EXPECT_EQ(Errno(stat(P("missing").c_str(), &st)), "ENOENT");
  EXPECT_EQ(Errno(OpenAndClose(P("nodir/f"), O_CREAT | O_WRONLY)), "ENOENT");
}

TEST_F(FusePosixTest, OpenWithTruncEmptiesTheFile) {
  CreateFile(P("f"), "0123456789");
  ASSERT_EQ(OpenAndClose(P("f"), O_WRONLY | O_TRUNC), 0);
  EXPECT_EQ(FreshStat(P("f")).st_size, 0) << "O_TRUNC did not truncate";
  EXPECT_EQ(ReadFile(P("f")), "");

  CreateFile(P("g"), "0123456789");
  int fd = open(P("g").c_str(), O_WRONLY | O_TRUNC);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_TRUE(WriteFull(fd, "ab", 0));
  ASSERT_EQ(close(fd), 0);
  EXPECT_EQ(FreshStat(P("g")).st_size, 2);
  EXPECT_EQ(ReadFile(P("g")), "ab");

  // O_CREAT | O_TRUNC on an existing file is the same open (the shell's '>').
  CreateFile(P("h"), "0123456789");
  fd = open(P("h").c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_TRUE(WriteFull(fd, "xyz", 0));
  ASSERT_EQ(close(fd), 0);
  EXPECT_EQ(FreshStat(P("h")).st_size, 3);
  EXPECT_EQ(ReadFile(P("h")), "xyz");
}

TEST_F(FusePosixTest, AppendWritesLandInOrder) {
  CreateFile(P("f"), "base;");
  int fd = open(P("f").c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_EQ(write(fd, "one;", 4), 4);
  ASSERT_EQ(write(fd, "two;", 4), 4);
  ASSERT_EQ(close(fd), 0);
  fd = open(P("f").c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_EQ(lseek(fd, 0, SEEK_SET), 0);  // O_APPEND ignores the position
  ASSERT_EQ(write(fd, "three", 5), 5);
  ASSERT_EQ(close(fd), 0);
  EXPECT_EQ(ReadFile(P("f")), "base;one;two;three");
  EXPECT_EQ(FreshStat(P("f")).st_size, 18);
}

// ---- directories and names ----

TEST_F(FusePosixTest, DirectoryErrors) {
  ASSERT_EQ(mkdir(P("d").c_str(), 0755), 0);
  CreateFile(P("d/inner"), "x");
  CreateFile(P("f"), "x");

  EXPECT_EQ(Errno(mkdir(P("d").c_str(), 0755)), "EEXIST");
  EXPECT_EQ(Errno(mkdir(P("f").c_str(), 0755)), "EEXIST");
  EXPECT_EQ(Errno(rmdir(P("d").c_str())), "ENOTEMPTY");
  EXPECT_EQ(Errno(rmdir(P("f").c_str())), "ENOTDIR");
  EXPECT_EQ(Errno(rmdir(P("missing").c_str())), "ENOENT");
  EXPECT_EQ(Errno(unlink(P("d").c_str())), "EISDIR");
  EXPECT_EQ(Errno(unlink(P("missing").c_str())), "ENOENT");
  EXPECT_EQ(Errno(OpenAndClose(P("d"), O_WRONLY)), "EISDIR");
  EXPECT_EQ(Errno(OpenAndClose(P("d"), O_RDWR)), "EISDIR");
  EXPECT_EQ(Errno(OpenAndClose(P("f"), O_RDONLY | O_DIRECTORY)), "ENOTDIR");

  // A path through a file.
  struct stat st;
  EXPECT_EQ(Errno(stat(P("f/x").c_str(), &st)), "ENOTDIR");
  EXPECT_EQ(Errno(OpenAndClose(P("f/x"), O_CREAT | O_WRONLY)), "ENOTDIR");
  EXPECT_EQ(Errno(mkdir(P("f/x").c_str(), 0755)), "ENOTDIR");

  // Nothing above changed anything.
  EXPECT_EQ(ListDir(P("d")), (std::multiset<std::string>{".", "..", "inner"}));
  EXPECT_EQ(ListDir(dir_), (std::multiset<std::string>{".", "..", "d", "f"}));

  // Emptied, the directory goes.
  ASSERT_EQ(unlink(P("d/inner").c_str()), 0);
  EXPECT_EQ(rmdir(P("d").c_str()), 0) << std::strerror(errno);
  EXPECT_EQ(Errno(stat(P("d").c_str(), &st)), "ENOENT");
}

TEST_F(FusePosixTest, DirectoryLinkCounts) {
  ASSERT_EQ(mkdir(P("p").c_str(), 0755), 0);
  EXPECT_EQ(FreshStat(P("p")).st_nlink, 2u);
  ASSERT_EQ(mkdir(P("p/a").c_str(), 0755), 0);
  ASSERT_EQ(mkdir(P("p/b").c_str(), 0755), 0);
  CreateFile(P("p/file"), "");
  EXPECT_EQ(FreshStat(P("p")).st_nlink, 4u);
  ASSERT_EQ(rmdir(P("p/a").c_str()), 0);
  EXPECT_EQ(FreshStat(P("p")).st_nlink, 3u);
}

TEST_F(FusePosixTest, NameLengthLimit) {
  const std::string ok_file(255, 'f'), ok_dir(255, 'd');
  const std::string long_file(256, 'f'), long_dir(256, 'd');
  CreateFile(P(ok_file), "max");
  EXPECT_EQ(ReadFile(P(ok_file)), "max");
  EXPECT_EQ(mkdir(P(ok_dir).c_str(), 0755), 0) << std::strerror(errno);
  struct stat st;
  ASSERT_EQ(stat(P(ok_dir).c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));

  EXPECT_EQ(Errno(OpenAndClose(P(long_file), O_CREAT | O_WRONLY)), "ENAMETOOLONG");
  EXPECT_EQ(Errno(mkdir(P(long_dir).c_str(), 0755)), "ENAMETOOLONG");
  EXPECT_EQ(Errno(stat(P(long_file).c_str(), &st)), "ENAMETOOLONG");
  EXPECT_EQ(Errno(rename(P(ok_file).c_str(), P(long_file).c_str())), "ENAMETOOLONG");
  EXPECT_EQ(ListDir(dir_), (std::multiset<std::string>{".", "..", ok_file, ok_dir}));
}

// ---- rename ----

TEST_F(FusePosixTest, RenameWithinDirectory) {
  CreateFile(P("a"), "content-a");
  const ino_t ino = FreshStat(P("a")).st_ino;
  ASSERT_EQ(rename(P("a").c_str(), P("b").c_str()), 0) << std::strerror(errno);
  struct stat st;
  EXPECT_EQ(Errno(stat(P("a").c_str(), &st)), "ENOENT");
  EXPECT_EQ(FreshStat(P("b")).st_ino, ino);
  EXPECT_EQ(ReadFile(P("b")), "content-a");
  EXPECT_EQ(ListDir(dir_), (std::multiset<std::string>{".", "..", "b"}));
}

TEST_F(FusePosixTest, RenameAcrossDirectories) {
  ASSERT_EQ(mkdir(P("d1").c_str(), 0755), 0);
  ASSERT_EQ(mkdir(P("d2").c_str(), 0755), 0);
  CreateFile(P("d1/f"), "moving");
  ASSERT_EQ(rename(P("d1/f").c_str(), P("d2/g").c_str()), 0) << std::strerror(errno);
  EXPECT_EQ(ReadFile(P("d2/g")), "moving");
  EXPECT_EQ(ListDir(P("d1")), (std::multiset<std::string>{".", ".."}));
  EXPECT_EQ(ListDir(P("d2")), (std::multiset<std::string>{".", "..", "g"}));

  // A directory moves with its contents, and the parents' link counts follow.
  ASSERT_EQ(mkdir(P("d1/sub").c_str(), 0755), 0);
  CreateFile(P("d1/sub/inner"), "inner");
  EXPECT_EQ(FreshStat(P("d1")).st_nlink, 3u);
  EXPECT_EQ(FreshStat(P("d2")).st_nlink, 2u);
  ASSERT_EQ(rename(P("d1/sub").c_str(), P("d2/sub").c_str()), 0) << std::strerror(errno);
  EXPECT_EQ(ReadFile(P("d2/sub/inner")), "inner");
  EXPECT_EQ(FreshStat(P("d1")).st_nlink, 2u);
  EXPECT_EQ(FreshStat(P("d2")).st_nlink, 3u);
  EXPECT_EQ(rmdir(P("d1").c_str()), 0) << std::strerror(errno);
}

TEST_F(FusePosixTest, RenameOverExistingFileReplacesIt) {
  CreateFile(P("src"), "source bytes");
  CreateFile(P("dst"), std::string(kObjectSize + 10, 't'));  // two data objects
  const ino_t src_ino = FreshStat(P("src")).st_ino;
  const ino_t dst_ino = FreshStat(P("dst")).st_ino;
  ASSERT_NE(src_ino, dst_ino);
  ASSERT_TRUE(AnyCopyExists(DataOid(dst_ino, 1)));

  ASSERT_EQ(rename(P("src").c_str(), P("dst").c_str()), 0) << std::strerror(errno);
  struct stat st;
  EXPECT_EQ(Errno(stat(P("src").c_str(), &st)), "ENOENT");
  st = FreshStat(P("dst"));
  EXPECT_EQ(st.st_ino, src_ino);
  EXPECT_EQ(st.st_nlink, 1u);
  EXPECT_EQ(ReadFile(P("dst")), "source bytes");
  EXPECT_EQ(ListDir(dir_), (std::multiset<std::string>{".", "..", "dst"}));
  // The replaced file had no other link: its objects are freed (the INODE first, then the
  // data: Namespace::ReleaseInode).
  EXPECT_TRUE(EventuallyGone(InodeOid(dst_ino)));
  EXPECT_TRUE(EventuallyGone(DataOid(dst_ino, 0)));
  EXPECT_TRUE(EventuallyGone(DataOid(dst_ino, 1)));
}

TEST_F(FusePosixTest, RenameOverOpenFileKeepsItReadable) {
  CreateFile(P("src"), "new");
  CreateFile(P("dst"), "old contents");
  int fd = open(P("dst").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);
  ASSERT_EQ(rename(P("src").c_str(), P("dst").c_str()), 0) << std::strerror(errno);
  EXPECT_EQ(ReadFile(P("dst")), "new");
  // The replaced file lost its last name but is still open: it stays readable until closed.
  EXPECT_EQ(ReadAt(fd, 0, 100), "old contents");
  EXPECT_TRUE(AnyCopyExists(InodeOid(st.st_ino)));
  ASSERT_EQ(close(fd), 0);
  EXPECT_TRUE(EventuallyGone(InodeOid(st.st_ino)));
}

TEST_F(FusePosixTest, RenameNoReplace) {
  CreateFile(P("a"), "aaa");
  CreateFile(P("b"), "bbb");
  EXPECT_EQ(Errno(syscall(SYS_renameat2, AT_FDCWD, P("a").c_str(), AT_FDCWD, P("b").c_str(),
                          RENAME_NOREPLACE)),
            "EEXIST");
  EXPECT_EQ(ReadFile(P("a")), "aaa");
  EXPECT_EQ(ReadFile(P("b")), "bbb");
  EXPECT_EQ(ListDir(dir_), (std::multiset<std::string>{".", "..", "a", "b"}));
  // To a free name it is an ordinary rename.
  EXPECT_EQ(Errno(syscall(SYS_renameat2, AT_FDCWD, P("a").c_str(), AT_FDCWD, P("c").c_str(),
                          RENAME_NOREPLACE)),
            "OK");
  EXPECT_EQ(ReadFile(P("c")), "aaa");
  EXPECT_EQ(ListDir(dir_), (std::multiset<std::string>{".", "..", "b", "c"}));
}

TEST_F(FusePosixTest, RenameDirectoryOverEmptyDirectory) {
  ASSERT_EQ(mkdir(P("src").c_str(), 0755), 0);
  CreateFile(P("src/f"), "in src");
  ASSERT_EQ(mkdir(P("dst").c_str(), 0755), 0);
  const ino_t src_ino = FreshStat(P("src")).st_ino;
  const ino_t dst_ino = FreshStat(P("dst")).st_ino;
  EXPECT_EQ(FreshStat(dir_).st_nlink, 4u);
  ASSERT_EQ(rename(P("src").c_str(), P("dst").c_str()), 0) << std::strerror(errno);
  struct stat st;
  EXPECT_EQ(Errno(stat(P("src").c_str(), &st)), "ENOENT");
  EXPECT_EQ(FreshStat(P("dst")).st_ino, src_ino);
  EXPECT_EQ(ReadFile(P("dst/f")), "in src");
  EXPECT_EQ(ListDir(dir_), (std::multiset<std::string>{".", "..", "dst"}));
  EXPECT_EQ(FreshStat(dir_).st_nlink, 3u);
  EXPECT_FALSE(AnyCopyExists(InodeOid(dst_ino)));
}

TEST_F(FusePosixTest, RenameTypeAndEmptinessErrors) {
  ASSERT_EQ(mkdir(P("dir").c_str(), 0755), 0);
  ASSERT_EQ(mkdir(P("full").c_str(), 0755), 0);
  CreateFile(P("full/keep"), "keep");
  CreateFile(P("file"), "file");

  EXPECT_EQ(Errno(rename(P("dir").c_str(), P("full").c_str())), "ENOTEMPTY");
  EXPECT_EQ(Errno(rename(P("file").c_str(), P("dir").c_str())), "EISDIR");
  EXPECT_EQ(Errno(rename(P("dir").c_str(), P("file").c_str())), "ENOTDIR");
  EXPECT_EQ(Errno(rename(P("missing").c_str(), P("x").c_str())), "ENOENT");

  EXPECT_EQ(ListDir(dir_), (std::multiset<std::string>{".", "..", "dir", "full", "file"}));
  EXPECT_EQ(ListDir(P("full")), (std::multiset<std::string>{".", "..", "keep"}));
  EXPECT_EQ(ReadFile(P("file")), "file");
  EXPECT_EQ(ReadFile(P("full/keep")), "keep");
  EXPECT_TRUE(S_ISDIR(FreshStat(P("dir")).st_mode));
}

TEST_F(FusePosixTest, RenameToItselfIsANoOp) {
  CreateFile(P("f"), "same");
  const ino_t ino = FreshStat(P("f")).st_ino;
  EXPECT_EQ(rename(P("f").c_str(), P("f").c_str()), 0) << std::strerror(errno);
  EXPECT_EQ(FreshStat(P("f")).st_ino, ino);
  EXPECT_EQ(ReadFile(P("f")), "same");
  // Two hard links to one inode: rename of one onto the other does nothing (POSIX).
  ASSERT_EQ(link(P("f").c_str(), P("g").c_str()), 0) << std::strerror(errno);
  EXPECT_EQ(rename(P("f").c_str(), P("g").c_str()), 0) << std::strerror(errno);
  EXPECT_EQ(ListDir(dir_), (std::multiset<std::string>{".", "..", "f", "g"}));
  EXPECT_EQ(FreshStat(P("g")).st_nlink, 2u);
}

// ---- links ----

TEST_F(FusePosixTest, HardLinks) {
  CreateFile(P("a"), "shared content");
  ASSERT_EQ(link(P("a").c_str(), P("b").c_str()), 0) << std::strerror(errno);
  struct stat a = FreshStat(P("a")), b = FreshStat(P("b"));
  EXPECT_EQ(a.st_ino, b.st_ino);
  EXPECT_EQ(a.st_nlink, 2u);
  EXPECT_EQ(b.st_nlink, 2u);
  EXPECT_EQ(ReadFile(P("b")), "shared content");
  // A write through one name shows through the other.
  int fd = open(P("b").c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(WriteFull(fd, "SHARED", 0));
  ASSERT_EQ(close(fd), 0);
  EXPECT_EQ(ReadFile(P("a")), "SHARED content");

  EXPECT_EQ(Errno(link(P("a").c_str(), P("b").c_str())), "EEXIST");
  ASSERT_EQ(unlink(P("a").c_str()), 0) << std::strerror(errno);
  EXPECT_EQ(Errno(stat(P("a").c_str(), &a)), "ENOENT");
  b = FreshStat(P("b"));
  EXPECT_EQ(b.st_nlink, 1u);
  EXPECT_EQ(ReadFile(P("b")), "SHARED content");
  EXPECT_TRUE(AnyCopyExists(InodeOid(b.st_ino)));

  ASSERT_EQ(mkdir(P("d").c_str(), 0755), 0);
  EXPECT_EQ(Errno(link(P("d").c_str(), P("d2").c_str())), "EPERM");
  EXPECT_EQ(Errno(link(P("missing").c_str(), P("m2").c_str())), "ENOENT");
}

TEST_F(FusePosixTest, Symlinks) {
  CreateFile(P("file"), "via link");
  const std::string target = "file";
  ASSERT_EQ(symlink(target.c_str(), P("link").c_str()), 0) << std::strerror(errno);
  char buf[8192];
  ssize_t n = readlink(P("link").c_str(), buf, sizeof buf);
  ASSERT_GE(n, 0) << std::strerror(errno);
  EXPECT_EQ(std::string(buf, static_cast<size_t>(n)), target);

  struct stat lst;
  ASSERT_EQ(lstat(P("link").c_str(), &lst), 0);
  EXPECT_TRUE(S_ISLNK(lst.st_mode));
  EXPECT_EQ(lst.st_size, static_cast<off_t>(target.size()));
  struct stat st, file_st;
  ASSERT_EQ(stat(P("link").c_str(), &st), 0);
  ASSERT_EQ(stat(P("file").c_str(), &file_st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_ino, file_st.st_ino);
  EXPECT_EQ(st.st_size, 8);
  EXPECT_EQ(ReadFile(P("link")), "via link");

  // An absolute, long target round-trips byte for byte; a dangling link stats as ENOENT.
  std::string long_target = "/nowhere/";
  while (long_target.size() < 4095) long_target += "abcdefghij/";
  long_target.resize(4095);
  ASSERT_EQ(symlink(long_target.c_str(), P("long").c_str()), 0) << std::strerror(errno);
  n = readlink(P("long").c_str(), buf, sizeof buf);
  ASSERT_GE(n, 0) << std::strerror(errno);
  EXPECT_EQ(std::string(buf, static_cast<size_t>(n)), long_target);
  EXPECT_EQ(FreshStat(P("long"), /*follow=*/false).st_size, 4095);
  EXPECT_EQ(Errno(stat(P("long").c_str(), &st)), "ENOENT");
  EXPECT_EQ(Errno(symlink("x", P("file").c_str())), "EEXIST");
  EXPECT_EQ(Errno(readlink(P("file").c_str(), buf, sizeof buf)), "EINVAL");

  // Removing the link leaves the target.
  ASSERT_EQ(unlink(P("link").c_str()), 0);
  EXPECT_EQ(ReadFile(P("file")), "via link");
  EXPECT_TRUE(EventuallyGone(Oid{kFnso, lst.st_ino, 0, ObjectType::kSymlink}));
}

TEST_F(FusePosixTest, UnlinkedButOpenFileStaysUsable) {
  int fd = open(P("f").c_str(), O_CREAT | O_EXCL | O_RDWR, 0644);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_TRUE(WriteFull(fd, "hello", 0));
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);
  const ino_t ino = st.st_ino;
  ASSERT_EQ(unlink(P("f").c_str()), 0) << std::strerror(errno);
  EXPECT_EQ(Errno(stat(P("f").c_str(), &st)), "ENOENT");
  EXPECT_EQ(ListDir(dir_), (std::multiset<std::string>{".", ".."}));

  ASSERT_TRUE(WriteFull(fd, "world", 5)) << std::strerror(errno);
  EXPECT_EQ(ReadAt(fd, 0, 100), "helloworld");
  ASSERT_EQ(fstat(fd, &st), 0) << std::strerror(errno);
  EXPECT_EQ(st.st_ino, ino);
  EXPECT_EQ(st.st_nlink, 0u);
  EXPECT_EQ(st.st_size, 10);
  EXPECT_TRUE(AnyCopyExists(InodeOid(ino))) << "freed while still open";
  ASSERT_EQ(close(fd), 0);

  EXPECT_EQ(Errno(stat(P("f").c_str(), &st)), "ENOENT");
  // The release after the last close is asynchronous, and frees the INODE before the data.
  EXPECT_TRUE(EventuallyGone(InodeOid(ino))) << "objects of the unlinked file not freed";
  EXPECT_TRUE(EventuallyGone(DataOid(ino, 0))) << "data of the unlinked file not freed";
}

// ---- sparse files and truncation ----

TEST_F(FusePosixTest, SparseFileReadsZerosInHoles) {
  const std::string data = "tail data";
  const uint64_t at = 10 * kMiB;
  int fd = open(P("sparse").c_str(), O_CREAT | O_EXCL | O_RDWR, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(WriteFull(fd, data, at));
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);
  EXPECT_EQ(st.st_size, static_cast<off_t>(at + data.size()));
  ASSERT_EQ(close(fd), 0);
  EXPECT_EQ(FreshStat(P("sparse")).st_size, static_cast<off_t>(at + data.size()));

  fd = open(P("sparse").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(ReadAt(fd, 0, kMiB), std::string(kMiB, '\0'));
  EXPECT_EQ(ReadAt(fd, 5 * kMiB - 3, 200000), std::string(200000, '\0'));
  EXPECT_EQ(ReadAt(fd, at - 100, 100), std::string(100, '\0'));
  EXPECT_EQ(ReadAt(fd, at - 4, 100), std::string(4, '\0') + data);
  ASSERT_EQ(close(fd), 0);
  // Holes are not stored.
  EXPECT_FALSE(AnyCopyExists(DataOid(st.st_ino, 0)));
  EXPECT_FALSE(AnyCopyExists(DataOid(st.st_ino, at / kObjectSize - 1)));
  EXPECT_TRUE(AnyCopyExists(DataOid(st.st_ino, at / kObjectSize)));
}

TEST_F(FusePosixTest, FileLargerThanFourGiB) {
  const uint64_t at = 5 * kGiB;
  int fd = open(P("big").c_str(), O_CREAT | O_EXCL | O_RDWR, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(WriteFull(fd, "Z", at)) << std::strerror(errno);
  ASSERT_EQ(close(fd), 0);
  struct stat st = FreshStat(P("big"));
  EXPECT_EQ(st.st_size, static_cast<off_t>(at + 1));
  fd = open(P("big").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(ReadAt(fd, at, 10), "Z");
  EXPECT_EQ(ReadAt(fd, at - 5, 10), std::string(5, '\0') + "Z");
  EXPECT_EQ(ReadAt(fd, at / 2, 65536), std::string(65536, '\0'));
  EXPECT_EQ(ReadAt(fd, 4 * kGiB - 10, 20), std::string(20, '\0'));  // across 2^32
  EXPECT_EQ(ReadAt(fd, at + 1, 10), "");
  ASSERT_EQ(close(fd), 0);
  EXPECT_TRUE(AnyCopyExists(DataOid(st.st_ino, at / kObjectSize)));
  // Only the one object is stored: 4 GiB must not have aliased to offset 1 GiB.
  EXPECT_FALSE(AnyCopyExists(DataOid(st.st_ino, (at - 4 * kGiB) / kObjectSize)));
}

TEST_F(FusePosixTest, RemovingAHugeSparseFileDeletesOnlyStoredObjects) {
  // One stored object in a 5 GiB file: freeing it must cost about one object, not the
  // 40961 objects the size spans (holes are not stored, so there is nothing else to delete).
  // Counted in delete RPCs, not seconds, so the test does not depend on machine speed.
  const uint64_t at = 5 * kGiB;
  int fd = open(P("big").c_str(), O_CREAT | O_EXCL | O_RDWR, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(WriteFull(fd, "Z", at)) << std::strerror(errno);
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);
  ASSERT_EQ(close(fd), 0);
  ASSERT_TRUE(AnyCopyExists(DataOid(st.st_ino, at / kObjectSize)));
  const uint64_t deletes_before = ClusterCounter(cluster_->client(), "delete_calls");
  ASSERT_EQ(unlink(P("big").c_str()), 0) << std::strerror(errno);
  EXPECT_TRUE(EventuallyGone(InodeOid(st.st_ino)));
  EXPECT_TRUE(EventuallyGone(DataOid(st.st_ino, at / kObjectSize)));  // after the INODE
  // Both copies of the data object and the inode, plus the directory entry: well under 20.
  EXPECT_LT(ClusterCounter(cluster_->client(), "delete_calls") - deletes_before, 20u)
      << "unlink of a sparse 5 GiB file holding one object";
}

TEST_F(FusePosixTest, FtruncateShrinksAndGrows) {
  const std::string data = RandomBytes(300000, 7);
  int fd = open(P("f").c_str(), O_CREAT | O_EXCL | O_RDWR, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(WriteFull(fd, data, 0));
  ASSERT_EQ(ftruncate(fd, 1000), 0) << std::strerror(errno);
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);
  EXPECT_EQ(st.st_size, 1000);
  EXPECT_EQ(ReadAt(fd, 0, 5000), data.substr(0, 1000));
  ASSERT_EQ(ftruncate(fd, 300000), 0) << std::strerror(errno);
  ASSERT_EQ(fstat(fd, &st), 0);
  EXPECT_EQ(st.st_size, 300000);
  ASSERT_EQ(close(fd), 0);

  EXPECT_EQ(FreshStat(P("f")).st_size, 300000);
  const std::string back = ReadFile(P("f"));
  ASSERT_EQ(back.size(), 300000u);
  EXPECT_TRUE(back.substr(0, 1000) == data.substr(0, 1000));
  EXPECT_TRUE(back.substr(1000) == std::string(299000, '\0')) << "old data came back";
  // Objects entirely beyond the shrunk size were deleted.
  EXPECT_FALSE(AnyCopyExists(DataOid(st.st_ino, 1)));
  EXPECT_FALSE(AnyCopyExists(DataOid(st.st_ino, 2)));
}

TEST_F(FusePosixTest, TruncatePathGrowsWithZeros) {
  CreateFile(P("f"), "0123456789");
  ASSERT_EQ(truncate(P("f").c_str(), 200000), 0) << std::strerror(errno);
  EXPECT_EQ(FreshStat(P("f")).st_size, 200000);
  const std::string back = ReadFile(P("f"));
  ASSERT_EQ(back.size(), 200000u);
  EXPECT_EQ(back.substr(0, 10), "0123456789");
  EXPECT_TRUE(back.substr(10) == std::string(199990, '\0'));
  ASSERT_EQ(truncate(P("f").c_str(), 4), 0);
  EXPECT_EQ(ReadFile(P("f")), "0123");
  ASSERT_EQ(truncate(P("f").c_str(), 0), 0);
  EXPECT_EQ(FreshStat(P("f")).st_size, 0);
  EXPECT_EQ(ReadFile(P("f")), "");
  EXPECT_EQ(Errno(truncate(P("missing").c_str(), 0)), "ENOENT");
  ASSERT_EQ(mkdir(P("d").c_str(), 0755), 0);
  EXPECT_EQ(Errno(truncate(P("d").c_str(), 0)), "EISDIR");
}

TEST_F(FusePosixTest, TruncateAtUnalignedSize) {
  // 200000 bytes span objects 0 and 1 (128 KiB each); 150000 cuts object 1 mid-way.
  const std::string data = RandomBytes(200000, 11);
  CreateFile(P("f"), data);
  ASSERT_EQ(truncate(P("f").c_str(), 150000), 0) << std::strerror(errno);
  EXPECT_EQ(FreshStat(P("f")).st_size, 150000);
  EXPECT_TRUE(ReadFile(P("f")) == data.substr(0, 150000));
  ASSERT_EQ(truncate(P("f").c_str(), 300000), 0) << std::strerror(errno);
  EXPECT_EQ(FreshStat(P("f")).st_size, 300000);
  std::string back = ReadFile(P("f"));
  ASSERT_EQ(back.size(), 300000u);
  EXPECT_TRUE(back.substr(0, 150000) == data.substr(0, 150000));
  EXPECT_TRUE(back.substr(150000) == std::string(150000, '\0')) << "cut bytes came back";

  // A write past the cut inside the same object leaves zeros in between.
  ASSERT_EQ(truncate(P("f").c_str(), 150000), 0);
  int fd = open(P("f").c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(WriteFull(fd, "END", 160000));
  ASSERT_EQ(close(fd), 0);
  back = ReadFile(P("f"));
  ASSERT_EQ(back.size(), 160003u);
  EXPECT_TRUE(back.substr(0, 150000) == data.substr(0, 150000));
  EXPECT_TRUE(back.substr(150000, 10000) == std::string(10000, '\0'));
  EXPECT_EQ(back.substr(160000), "END");
}

// fallocate(2): plain allocation raises the size (the new bytes read as zeros and are not
// stored) and refuses what the OSDs cannot hold; KEEP_SIZE leaves the size alone; moving bytes
// is not supported.
TEST_F(FusePosixTest, FallocateRaisesTheSizeAndRefusesWhatCannotFit) {
  Fd fd(open(P("f").c_str(), O_CREAT | O_EXCL | O_RDWR, 0644));
  ASSERT_GE(fd.get(), 0) << std::strerror(errno);
  ASSERT_TRUE(WriteFull(fd.get(), "head", 0));
  ASSERT_EQ(fallocate(fd.get(), 0, 0, 300000), 0) << std::strerror(errno);
  struct stat st;
  ASSERT_EQ(fstat(fd.get(), &st), 0);
  EXPECT_EQ(st.st_size, 300000);
  ASSERT_EQ(fallocate(fd.get(), FALLOC_FL_KEEP_SIZE, 0, 4 * kMiB), 0) << std::strerror(errno);
  ASSERT_EQ(fallocate(fd.get(), 0, 0, 1000), 0) << "inside the file: nothing to do";
  // More than the three test OSDs' disks hold, both copies counted once.
  EXPECT_EQ(Errno(fallocate(fd.get(), 0, 0, 1ll << 50)), "ENOSPC");
  EXPECT_EQ(Errno(fallocate(fd.get(), FALLOC_FL_KEEP_SIZE, 0, 1ll << 50)), "ENOSPC");
  // Only the bytes past the end need room: a range inside a huge sparse file is allowed.
  Fd huge(open(P("huge").c_str(), O_CREAT | O_EXCL | O_RDWR, 0644));
  ASSERT_GE(huge.get(), 0) << std::strerror(errno);
  ASSERT_EQ(ftruncate(huge.get(), 1ll << 50), 0) << std::strerror(errno);
  EXPECT_EQ(fallocate(huge.get(), 0, 0, 1ll << 50), 0) << std::strerror(errno);
  EXPECT_EQ(fallocate(huge.get(), FALLOC_FL_KEEP_SIZE, 1000, 1ll << 49), 0) << std::strerror(errno);
  EXPECT_EQ(Errno(fallocate(huge.get(), 0, (1ll << 50) - 10, 1ll << 50)), "ENOSPC");
  struct stat huge_st;
  ASSERT_EQ(fstat(huge.get(), &huge_st), 0);
  EXPECT_EQ(huge_st.st_size, 1ll << 50) << "a refused fallocate leaves the size";
  EXPECT_EQ(Errno(fallocate(fd.get(), FALLOC_FL_COLLAPSE_RANGE, 0, kObjectSize)), "EOPNOTSUPP");
  EXPECT_EQ(Errno(fallocate(fd.get(), FALLOC_FL_INSERT_RANGE, 0, kObjectSize)), "EOPNOTSUPP");
  ASSERT_EQ(fd.Close(), 0);

  EXPECT_EQ(FreshStat(P("f")).st_size, 300000) << "the allocated size is on the INODE";
  const std::string back = ReadFile(P("f"));
  ASSERT_EQ(back.size(), 300000u);
  EXPECT_EQ(back.substr(0, 4), "head");
  EXPECT_TRUE(back.substr(4) == std::string(299996, '\0'));
  EXPECT_TRUE(AnyCopyExists(DataOid(st.st_ino, 0)));
  EXPECT_FALSE(AnyCopyExists(DataOid(st.st_ino, 1))) << "allocated objects are not stored";
  EXPECT_FALSE(AnyCopyExists(DataOid(st.st_ino, 2)));
}

// PUNCH_HOLE and ZERO_RANGE over unaligned ranges, straight after writes this client has not
// written back yet: the range reads as zeros, the bytes around it stay, objects inside it are
// deleted on both copies, and both copies of the objects cut at its ends hold the same bytes.
TEST_F(FusePosixTest, PunchHoleAndZeroRangeReadAsZerosAndFreeObjects) {
  const std::string data = RandomBytes(600000, 31);
  Fd fd(open(P("f").c_str(), O_CREAT | O_EXCL | O_RDWR, 0644));
  ASSERT_GE(fd.get(), 0) << std::strerror(errno);
  ASSERT_TRUE(WriteFull(fd.get(), data, 0));
  // [100000, 500000): objects 1 and 2 whole, the ends of object 0 and the start of object 3.
  ASSERT_EQ(fallocate(fd.get(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 100000, 400000), 0)
      << std::strerror(errno);
  std::string expected = data;
  std::fill(expected.begin() + 100000, expected.begin() + 500000, '\0');
  struct stat st;
  ASSERT_EQ(fstat(fd.get(), &st), 0);
  EXPECT_EQ(st.st_size, 600000);
  EXPECT_TRUE(ReadAt(fd.get(), 0, 600000) == expected) << "through the punching descriptor";
  // Inside one object, then past the end of the file: ZERO_RANGE without KEEP_SIZE grows it.
  ASSERT_EQ(fallocate(fd.get(), FALLOC_FL_ZERO_RANGE, 520000, 1000), 0) << std::strerror(errno);
  ASSERT_EQ(fallocate(fd.get(), FALLOC_FL_ZERO_RANGE, 590000, 100000), 0) << std::strerror(errno);
  std::fill(expected.begin() + 520000, expected.begin() + 521000, '\0');
  expected.resize(590000);
  expected.resize(690000, '\0');
  ASSERT_EQ(fd.Close(), 0);

  EXPECT_EQ(FreshStat(P("f")).st_size, 690000);
  EXPECT_TRUE(ReadFile(P("f")) == expected);
  EXPECT_FALSE(AnyCopyExists(DataOid(st.st_ino, 1)));
  EXPECT_FALSE(AnyCopyExists(DataOid(st.st_ino, 2)));
  for (uint64_t index : {0, 3, 4}) {
    const Oid original = DataOid(st.st_ino, index);
    auto a = cluster_->client().Read(original.WithFlag(CopyFlag::kOriginal));
    auto b = cluster_->client().Read(original.WithFlag(CopyFlag::kReplica));
    ASSERT_TRUE(a.ok()) << original.ToString() << ": " << a.status().ToString();
    ASSERT_TRUE(b.ok()) << original.ToString() << ": " << b.status().ToString();
    EXPECT_TRUE(a->data() == b->data()) << "the copies of " << original.ToString() << " differ";
    const uint64_t start = index * kObjectSize;
    EXPECT_TRUE(a->data() == expected.substr(start, a->data().size())) << original.ToString();
  }
}

// The ends of a punched range on object boundaries and inside one object; a range covering
// every stored byte of an object deletes it; a range of more whole objects than ZeroData
// deletes unlisted (16) goes by the file's listing.
TEST_F(FusePosixTest, PunchHoleAtObjectBoundaries) {
  constexpr uint64_t S = kObjectSize;
  constexpr int kPunch = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;
  std::string expected = RandomBytes(24 * S, 41);
  CreateFile(P("f"), expected);
  Fd fd(open(P("f").c_str(), O_RDWR));
  ASSERT_GE(fd.get(), 0) << std::strerror(errno);
  struct stat st;
  ASSERT_EQ(fstat(fd.get(), &st), 0);
  auto punch = [&](uint64_t offset, uint64_t length) {
    ASSERT_EQ(fallocate(fd.get(), kPunch, static_cast<off_t>(offset), static_cast<off_t>(length)),
              0)
        << offset << "+" << length << ": " << std::strerror(errno);
    std::fill(expected.begin() + static_cast<std::ptrdiff_t>(offset),
              expected.begin() + static_cast<std::ptrdiff_t>(offset + length), '\0');
  };
  punch(S / 2, S / 2);   // object 0's second half: cut off, not zero-filled
  punch(S, 2 * S);       // objects 1 and 2 whole
  punch(3 * S, 10);      // the start of object 3
  punch(5 * S, 17 * S);  // objects 5 to 21: listed, then deleted
  ASSERT_EQ(fd.Close(), 0);
  EXPECT_TRUE(ReadFile(P("f")) == expected);
  for (uint64_t index = 0; index < 24; ++index) {
    const bool punched_whole = (index >= 1 && index <= 2) || (index >= 5 && index <= 21);
    EXPECT_EQ(AnyCopyExists(DataOid(st.st_ino, index)), !punched_whole) << "object " << index;
  }
  for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
    auto head = cluster_->client().Read(DataOid(st.st_ino, 0).WithFlag(flag));
    ASSERT_TRUE(head.ok()) << head.status().ToString();
    EXPECT_EQ(head->data().size(), S / 2) << "the cut object keeps only its first half";
  }

  // The last object holds 100 bytes; zeroing 200 from its start leaves nothing to store.
  CreateFile(P("g"), RandomBytes(S + 100, 43));
  Fd g(open(P("g").c_str(), O_RDWR));
  ASSERT_GE(g.get(), 0) << std::strerror(errno);
  ASSERT_EQ(fstat(g.get(), &st), 0);
  ASSERT_EQ(fallocate(g.get(), kPunch, S, 200), 0) << std::strerror(errno);
  ASSERT_EQ(g.Close(), 0);
  EXPECT_FALSE(AnyCopyExists(DataOid(st.st_ino, 1))) << "no empty object left behind";
  EXPECT_EQ(FreshStat(P("g")).st_size, static_cast<off_t>(S + 100));
  EXPECT_TRUE(ReadFile(P("g")).substr(S) == std::string(100, '\0'));
}

// SEEK_DATA and SEEK_HOLE find the objects the OSDs store: before this client wrote them back
// (the lseek writes them first), after a reopen, and after a punch; the end is a hole, and an
// offset at or past it is ENXIO.
TEST_F(FusePosixTest, SeekDataAndSeekHoleFollowStoredObjects) {
  constexpr uint64_t S = kObjectSize;
  const off_t size = static_cast<off_t>(20 * S + 100);
  Fd fd(open(P("f").c_str(), O_CREAT | O_EXCL | O_RDWR, 0644));
  ASSERT_GE(fd.get(), 0) << std::strerror(errno);
  ASSERT_TRUE(WriteFull(fd.get(), "head", 0));                        // object 0
  ASSERT_TRUE(WriteFull(fd.get(), std::string(S, 'm'), 5 * S + 10));  // objects 5 and 6
  ASSERT_TRUE(WriteFull(fd.get(), "tail", 20 * S + 96));              // object 20, the last
  auto seek = [&](int fd_number, off_t offset, int whence) -> std::string {
    const off_t at = lseek(fd_number, offset, whence);
    return at < 0 ? ErrName(errno) : std::to_string(at);
  };
  auto expect_layout = [&](int fd_number, const std::string& when) {
    SCOPED_TRACE(when);
    EXPECT_EQ(seek(fd_number, 0, SEEK_DATA), "0");
    EXPECT_EQ(seek(fd_number, 0, SEEK_HOLE), std::to_string(S));
    EXPECT_EQ(seek(fd_number, static_cast<off_t>(S), SEEK_DATA), std::to_string(5 * S));
    EXPECT_EQ(seek(fd_number, static_cast<off_t>(5 * S + 3), SEEK_DATA), std::to_string(5 * S + 3));
    EXPECT_EQ(seek(fd_number, static_cast<off_t>(5 * S), SEEK_HOLE), std::to_string(7 * S));
    EXPECT_EQ(seek(fd_number, static_cast<off_t>(9 * S + 1), SEEK_HOLE), std::to_string(9 * S + 1));
    EXPECT_EQ(seek(fd_number, static_cast<off_t>(7 * S), SEEK_DATA), std::to_string(20 * S));
    EXPECT_EQ(seek(fd_number, static_cast<off_t>(20 * S), SEEK_HOLE), std::to_string(size));
    EXPECT_EQ(seek(fd_number, size - 1, SEEK_DATA), std::to_string(size - 1));
    EXPECT_EQ(seek(fd_number, size, SEEK_DATA), "ENXIO");
    EXPECT_EQ(seek(fd_number, size, SEEK_HOLE), "ENXIO");
  };
  expect_layout(fd.get(), "written, not yet written back");
  ASSERT_EQ(fd.Close(), 0);
  Fd again(open(P("f").c_str(), O_RDONLY));
  ASSERT_GE(again.get(), 0) << std::strerror(errno);
  expect_layout(again.get(), "reopened");
  ASSERT_EQ(again.Close(), 0);

  // A punched object is a hole; a file grown past its last object ends in one.
  Fd rw(open(P("f").c_str(), O_RDWR));
  ASSERT_GE(rw.get(), 0) << std::strerror(errno);
  ASSERT_EQ(fallocate(rw.get(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, S), 0)
      << std::strerror(errno);
  EXPECT_EQ(seek(rw.get(), 0, SEEK_DATA), std::to_string(5 * S));
  EXPECT_EQ(seek(rw.get(), 0, SEEK_HOLE), "0");
  ASSERT_EQ(ftruncate(rw.get(), static_cast<off_t>(40 * S)), 0) << std::strerror(errno);
  EXPECT_EQ(seek(rw.get(), static_cast<off_t>(20 * S + 1), SEEK_HOLE), std::to_string(21 * S));
  EXPECT_EQ(seek(rw.get(), static_cast<off_t>(21 * S), SEEK_DATA), "ENXIO");
  EXPECT_EQ(seek(rw.get(), -1, SEEK_DATA), "ENXIO");  // Linux refuses it before asking
  ASSERT_EQ(rw.Close(), 0);

  // cp --sparse=always copies the holes as holes and the bytes exactly.
  ASSERT_EQ(std::system(("cp --sparse=always " + P("f") + " " + P("copy")).c_str()), 0);
  EXPECT_TRUE(ReadFile(P("copy")) == ReadFile(P("f")));
}

// lseek lists a file's objects only as far as its answer needs: SEEK_DATA at a dense file's
// start, or SEEK_HOLE in its last object, lists a few of them, not all (both copies' listings
// of this file hold 400).
TEST_F(FusePosixTest, SeekListsOnlyWhatItsAnswerNeeds) {
  constexpr uint64_t S = kObjectSize;
  constexpr uint64_t kObjects = 200;
  CreateFile(P("f"), std::string(kObjects * S, 'd'));
  Fd fd(open(P("f").c_str(), O_RDONLY));
  ASSERT_GE(fd.get(), 0) << std::strerror(errno);
  auto listed = [] { return ClusterCounter(cluster_->client(), "objects_listed"); };
  const off_t end = static_cast<off_t>(kObjects * S);
  uint64_t before = listed();
  EXPECT_EQ(lseek(fd.get(), 0, SEEK_DATA), 0);
  EXPECT_LT(listed() - before, kObjects / 2);
  before = listed();
  EXPECT_EQ(lseek(fd.get(), end - static_cast<off_t>(S) + 5, SEEK_HOLE), end);
  EXPECT_LT(listed() - before, 10u);
  before = listed();
  EXPECT_EQ(lseek(fd.get(), 0, SEEK_HOLE), end);  // no hole: every object is listed
  EXPECT_GE(listed() - before, kObjects);
}

// ---- attributes ----

TEST_F(FusePosixTest, ChmodChangesPermissionBits) {
  CreateFile(P("f"), "x");
  ASSERT_EQ(chmod(P("f").c_str(), 0640), 0) << std::strerror(errno);
  struct stat st = FreshStat(P("f"));
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  ASSERT_EQ(chmod(P("f").c_str(), 04711), 0);
  EXPECT_EQ(FreshStat(P("f")).st_mode & 07777, 04711u);
  int fd = open(P("f").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(fchmod(fd, 0600), 0) << std::strerror(errno);
  ASSERT_EQ(fstat(fd, &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  close(fd);

  ASSERT_EQ(mkdir(P("d").c_str(), 0755), 0);
  ASSERT_EQ(chmod(P("d").c_str(), 01777), 0);
  st = FreshStat(P("d"));
  EXPECT_EQ(st.st_mode & 07777, 01777u);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
}

TEST_F(FusePosixTest, ChownAsRoot) {
  CreateFile(P("f"), "x");
  ASSERT_EQ(chown(P("f").c_str(), kUser, kGroup), 0) << std::strerror(errno);
  struct stat st = FreshStat(P("f"));
  EXPECT_EQ(st.st_uid, kUser);
  EXPECT_EQ(st.st_gid, kGroup);
  // -1 leaves a field alone.
  ASSERT_EQ(chown(P("f").c_str(), static_cast<uid_t>(-1), 0), 0);
  st = FreshStat(P("f"));
  EXPECT_EQ(st.st_uid, kUser);
  EXPECT_EQ(st.st_gid, 0u);
  // A symlink itself, not its target.
  ASSERT_EQ(symlink("f", P("l").c_str()), 0);
  ASSERT_EQ(lchown(P("l").c_str(), 2000, 2000), 0) << std::strerror(errno);
  EXPECT_EQ(FreshStat(P("l"), false).st_uid, 2000u);
  EXPECT_EQ(FreshStat(P("f")).st_uid, kUser);
}

TEST_F(FusePosixTest, Utimensat) {
  CreateFile(P("f"), "x");
  const struct timespec explicit_times[2] = {{1000000000, 123456789}, {1500000000, 500}};
  ASSERT_EQ(utimensat(AT_FDCWD, P("f").c_str(), explicit_times, 0), 0) << std::strerror(errno);
  struct stat st = FreshStat(P("f"));
  EXPECT_EQ(st.st_atim.tv_sec, 1000000000);
  EXPECT_EQ(st.st_atim.tv_nsec, 123456789);
  EXPECT_EQ(st.st_mtim.tv_sec, 1500000000);
  EXPECT_EQ(st.st_mtim.tv_nsec, 500);

  // atime now, mtime omitted (kept).
  const time_t before = time(nullptr);
  const struct timespec now_omit[2] = {{0, UTIME_NOW}, {0, UTIME_OMIT}};
  ASSERT_EQ(utimensat(AT_FDCWD, P("f").c_str(), now_omit, 0), 0) << std::strerror(errno);
  st = FreshStat(P("f"));
  EXPECT_GE(st.st_atim.tv_sec, before - 1);
  EXPECT_LE(st.st_atim.tv_sec, time(nullptr) + 1);
  EXPECT_EQ(st.st_mtim.tv_sec, 1500000000);
  EXPECT_EQ(st.st_mtim.tv_nsec, 500);

  // atime omitted (kept), mtime explicit; then mtime now.
  const struct timespec omit_set[2] = {{0, UTIME_OMIT}, {1600000000, 0}};
  const struct timespec atime_kept = st.st_atim;
  ASSERT_EQ(utimensat(AT_FDCWD, P("f").c_str(), omit_set, 0), 0);
  st = FreshStat(P("f"));
  EXPECT_EQ(st.st_atim.tv_sec, atime_kept.tv_sec);
  EXPECT_EQ(st.st_atim.tv_nsec, atime_kept.tv_nsec);
  EXPECT_EQ(st.st_mtim.tv_sec, 1600000000);
  const struct timespec omit_now[2] = {{0, UTIME_OMIT}, {0, UTIME_NOW}};
  ASSERT_EQ(utimensat(AT_FDCWD, P("f").c_str(), omit_now, 0), 0);
  st = FreshStat(P("f"));
  EXPECT_EQ(st.st_atim.tv_sec, atime_kept.tv_sec);
  EXPECT_GE(st.st_mtim.tv_sec, before - 1);

  // Both omitted: nothing changes.
  const struct timespec omit_both[2] = {{0, UTIME_OMIT}, {0, UTIME_OMIT}};
  const struct stat prev = st;
  ASSERT_EQ(utimensat(AT_FDCWD, P("f").c_str(), omit_both, 0), 0);
  st = FreshStat(P("f"));
  EXPECT_EQ(st.st_atim.tv_sec, prev.st_atim.tv_sec);
  EXPECT_EQ(st.st_atim.tv_nsec, prev.st_atim.tv_nsec);
  EXPECT_EQ(st.st_mtim.tv_sec, prev.st_mtim.tv_sec);
  EXPECT_EQ(st.st_mtim.tv_nsec, prev.st_mtim.tv_nsec);
}

TEST_F(FusePosixTest, WriteUpdatesMtime) {
  CreateFile(P("f"), "x");
  const struct timespec old_times[2] = {{1000000000, 0}, {1000000000, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, P("f").c_str(), old_times, 0), 0);
  const time_t before = time(nullptr);
  int fd = open(P("f").c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(WriteFull(fd, "y", 1));
  ASSERT_EQ(close(fd), 0);
  struct stat st = FreshStat(P("f"));
  EXPECT_GE(st.st_mtim.tv_sec, before - 1);
  EXPECT_GE(st.st_ctim.tv_sec, before - 1);
  EXPECT_EQ(st.st_size, 2);
}

// Times set through a descriptor after writes (cp -p, cp -a, rsync -t) stay after close:
// the writes' own mtime, published at close, used to replace them.
TEST_F(FusePosixTest, TimesSetBeforeCloseOutliveTheWritesBeforeThem) {
  const int fd = open(P("f").c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_TRUE(WriteFull(fd, std::string(300000, 'x'), 0));
  const struct timespec times[2] = {{978307200, 0}, {978307200, 250}};  // 2001-01-01
  ASSERT_EQ(futimens(fd, times), 0) << std::strerror(errno);
  ASSERT_EQ(close(fd), 0) << std::strerror(errno);
  struct stat st = FreshStat(P("f"));
  EXPECT_EQ(st.st_mtim.tv_sec, 978307200);
  EXPECT_EQ(st.st_mtim.tv_nsec, 250);
  EXPECT_EQ(st.st_size, 300000);

  // A write after the times stamps its own again.
  const time_t before = time(nullptr);
  const int again = open(P("f").c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(again, 0) << std::strerror(errno);
  ASSERT_EQ(futimens(again, times), 0) << std::strerror(errno);
  ASSERT_TRUE(WriteFull(again, "y", 300000));
  ASSERT_EQ(close(again), 0) << std::strerror(errno);
  st = FreshStat(P("f"));
  EXPECT_GE(st.st_mtim.tv_sec, before - 1);
  EXPECT_EQ(st.st_size, 300001);

  // cp -p through the mount keeps the source's mtime.
  ASSERT_EQ(utimensat(AT_FDCWD, P("f").c_str(), times, 0), 0) << std::strerror(errno);
  ASSERT_EQ(std::system(("cp -p " + P("f") + " " + P("g")).c_str()), 0);
  st = FreshStat(P("g"));
  EXPECT_EQ(st.st_mtim.tv_sec, 978307200);
  EXPECT_EQ(st.st_size, 300001);
}

TEST_F(FusePosixTest, MkfifoAndMknod) {
  ASSERT_EQ(mkfifo(P("fifo").c_str(), 0640), 0) << std::strerror(errno);
  struct stat st = FreshStat(P("fifo"));
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  ASSERT_EQ(mknod(P("reg").c_str(), S_IFREG | 0600, 0), 0) << std::strerror(errno);
  st = FreshStat(P("reg"));
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_size, 0);
  EXPECT_EQ(ReadFile(P("reg")), "");
  EXPECT_EQ(Errno(mkfifo(P("fifo").c_str(), 0640)), "EEXIST");

  // Device nodes keep their number (needs CAP_MKNOD; skipped where the sandbox denies it).
  if (mknod(P("chr").c_str(), S_IFCHR | 0600, makedev(1, 3)) == 0) {
    st = FreshStat(P("chr"));
    EXPECT_TRUE(S_ISCHR(st.st_mode));
    EXPECT_EQ(major(st.st_rdev), 1u);
    EXPECT_EQ(minor(st.st_rdev), 3u);
  } else {
    EXPECT_EQ(errno, EPERM) << std::strerror(errno);
  }
  std::multiset<std::string> names = ListDir(dir_);
  EXPECT_EQ(names.count("fifo"), 1u);
  EXPECT_EQ(names.count("reg"), 1u);
}

TEST_F(FusePosixTest, Statvfs) {
  struct statvfs sv {};
  ASSERT_EQ(statvfs(mount_->path().c_str(), &sv), 0) << std::strerror(errno);
  EXPECT_GT(sv.f_blocks, 0u);
  EXPECT_GT(sv.f_bavail, 0u);
  EXPECT_LE(sv.f_bavail, sv.f_blocks);
  EXPECT_GT(sv.f_bsize, 0u);
  EXPECT_EQ(sv.f_namemax, 255u);
}

// ---- readdir ----

TEST_F(FusePosixTest, ReaddirManyEntries) {
  ASSERT_EQ(mkdir(P("many").c_str(), 0755), 0);
  std::multiset<std::string> expected = {".", ".."};
  for (int i = 0; i < 1500; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "entry-%04d", i);
    ASSERT_EQ(mknod(P(std::string("many/") + name).c_str(), S_IFREG | 0644, 0), 0)
        << name << ": " << std::strerror(errno);
    expected.insert(name);
  }
  std::multiset<std::string> listed = ListDir(P("many"));
  EXPECT_EQ(listed.size(), 1502u);
  EXPECT_TRUE(listed == expected) << "listing differs from what was created";

  // d_type comes from the entries.
  DIR* d = opendir(P("many").c_str());
  ASSERT_NE(d, nullptr);
  int regular = 0;
  while (struct dirent* e = readdir(d)) {
    if (e->d_name[0] == 'e') {
      EXPECT_TRUE(e->d_type == DT_REG || e->d_type == DT_UNKNOWN) << e->d_name;
      ++regular;
    }
  }
  closedir(d);
  EXPECT_EQ(regular, 1500);

  for (int i = 0; i < 1500; i += 3) {
    char name[32];
    std::snprintf(name, sizeof name, "entry-%04d", i);
    ASSERT_EQ(unlink(P(std::string("many/") + name).c_str()), 0) << name;
    expected.erase(name);
  }
  listed = ListDir(P("many"));
  EXPECT_EQ(listed.size(), 1002u);
  EXPECT_TRUE(listed == expected) << "listing after deleting 500 differs";
}

// rewinddir shows the directory as it is now, not as at opendir (POSIX; `ls` after a rewind,
// Python's os.listdir(fd)). The mount's handle kept its opendir snapshot.
TEST_F(FusePosixTest, RewinddirShowsEntriesMadeSinceTheOpen) {
  ASSERT_EQ(mkdir(P("rewind").c_str(), 0755), 0) << std::strerror(errno);
  ASSERT_NO_FATAL_FAILURE(CreateFile(P("rewind/old"), ""));
  DIR* d = opendir(P("rewind").c_str());
  ASSERT_NE(d, nullptr) << std::strerror(errno);
  auto names = [&] {
    std::multiset<std::string> listed;
    while (struct dirent* e = readdir(d)) listed.insert(e->d_name);
    return listed;
  };
  EXPECT_EQ(names(), (std::multiset<std::string>{".", "..", "old"}));
  ASSERT_NO_FATAL_FAILURE(CreateFile(P("rewind/new"), ""));
  ASSERT_EQ(unlink(P("rewind/old").c_str()), 0) << std::strerror(errno);
  rewinddir(d);
  EXPECT_EQ(names(), (std::multiset<std::string>{".", "..", "new"}));
  closedir(d);
}

// ---- permissions (default_permissions; the kernel checks our attributes) ----

TEST_F(FusePosixTest, PermissionDeniedForOtherUser) {
  CreateFile(P("secret"), "root only", 0600);
  ASSERT_EQ(chmod(P("secret").c_str(), 0600), 0);
  CreateFile(P("public"), "everyone", 0644);
  ASSERT_EQ(mkdir(P("ro").c_str(), 0555), 0);
  ASSERT_EQ(chmod(P("ro").c_str(), 0555), 0);
  ASSERT_EQ(mkdir(P("rw").c_str(), 0777), 0);
  ASSERT_EQ(chmod(P("rw").c_str(), 0777), 0);
  // The child works relative to directory descriptors opened here, so it needs no search
  // permission on the (private) directories above the mount point.
  int dir_fd = open(dir_.c_str(), O_RDONLY | O_DIRECTORY);
  int ro_fd = open(P("ro").c_str(), O_RDONLY | O_DIRECTORY);
  int rw_fd = open(P("rw").c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(dir_fd, 0);
  ASSERT_GE(ro_fd, 0);
  ASSERT_GE(rw_fd, 0);

  auto open_at = [](int dirfd, const char* name, int flags) {
    return [=]() {
      int fd = openat(dirfd, name, flags, 0644);
      if (fd < 0) return errno;
      close(fd);
      return 0;
    };
  };
  // Controls: the other user can reach the mount at all.
  EXPECT_EQ(ErrName(AsUser(open_at(dir_fd, "public", O_RDONLY))), "OK");
  EXPECT_EQ(ErrName(AsUser(open_at(dir_fd, "secret", O_RDONLY))), "EACCES");
  EXPECT_EQ(ErrName(AsUser(open_at(dir_fd, "public", O_WRONLY))), "EACCES");
  EXPECT_EQ(ErrName(AsUser(open_at(ro_fd, "new", O_CREAT | O_WRONLY))), "EACCES");
  EXPECT_EQ(ErrName(AsUser([=]() { return mkdirat(ro_fd, "sub", 0755) == 0 ? 0 : errno; })),
            "EACCES");
  EXPECT_EQ(ErrName(AsUser([=]() { return unlinkat(dir_fd, "public", 0) == 0 ? 0 : errno; })),
            "EACCES");
  EXPECT_EQ(ErrName(AsUser([=]() { return fchmodat(dir_fd, "public", 0777, 0) == 0 ? 0 : errno; })),
            "EPERM");
  EXPECT_EQ(ErrName(AsUser(open_at(rw_fd, "mine", O_CREAT | O_EXCL | O_WRONLY))), "OK");
  close(dir_fd);
  close(ro_fd);
  close(rw_fd);

  struct stat st;
  EXPECT_EQ(Errno(stat(P("ro/new").c_str(), &st)), "ENOENT");
  EXPECT_EQ(Errno(stat(P("ro/sub").c_str(), &st)), "ENOENT");
  EXPECT_EQ(ReadFile(P("public")), "everyone");
  st = FreshStat(P("rw/mine"));
  EXPECT_EQ(st.st_uid, kUser) << "a new file belongs to its creator";
  EXPECT_EQ(st.st_gid, kGroup);
}

// ---- data integrity ----

// A write by an unprivileged user clears the set-user-ID bit, and the set-group-ID bit of a
// group-executable file, as on a local file system: otherwise a user allowed to write a
// set-user-ID program could change it and keep its privilege. A truncation, a truncating open
// and an append clear them too. An appending descriptor bypasses the page cache (direct I/O),
// where Linux never clears them itself: the mount does, from the request's flag
// (mount/fuse_killpriv.h).
TEST_F(FusePosixTest, ModificationByAnotherUserClearsSetIdBits) {
  struct Modification {
    const char* what;
    int flags;
    std::function<int(int)> use;  // on the descriptor: 0 or an errno
    std::string content_after;
  };
  const Modification modifications[] = {
      {"write", O_WRONLY, [](int fd) { return pwrite(fd, "x", 1, 0) == 1 ? 0 : errno; },
       "x!/bin/true\n"},
      {"ftruncate", O_WRONLY, [](int fd) { return ftruncate(fd, 1) == 0 ? 0 : errno; }, "#"},
      {"O_TRUNC", O_WRONLY | O_TRUNC, [](int) { return 0; }, ""},
      {"append", O_WRONLY | O_APPEND, [](int fd) { return write(fd, "tail", 4) == 4 ? 0 : errno; },
       "#!/bin/true\ntail"},
      {"fallocate", O_WRONLY, [](int fd) { return fallocate(fd, 0, 0, 16) == 0 ? 0 : errno; },
       std::string("#!/bin/true\n\0\0\0\0", 16)},
      {"punch-hole", O_WRONLY,
       [](int fd) {
         return fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 2) == 0 ? 0 : errno;
       },
       std::string("\0\0/bin/true\n", 12)},
  };
  int dir_fd = open(dir_.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(dir_fd, 0) << std::strerror(errno);
  for (const Modification& m : modifications) {
    const std::string name = std::string("prog-") + m.what;
    CreateFile(P(name), "#!/bin/true\n");
    ASSERT_EQ(chmod(P(name).c_str(), 06777), 0) << std::strerror(errno);
    ASSERT_EQ(FreshStat(P(name)).st_mode & 07777, 06777u);
    EXPECT_EQ(ErrName(AsUserWithFile(dir_fd, name.c_str(), m.flags, m.use)), "OK") << m.what;
    EXPECT_EQ(FreshStat(P(name)).st_mode & 07777, 0777u) << "after another user's " << m.what;
    EXPECT_EQ(ReadFile(P(name)), m.content_after) << m.what;
  }
  close(dir_fd);
}

// The owner sets the set-user-ID bit on the descriptor it writes through: its next write still
// clears it (the mount must not judge by the mode it saw at open).
TEST_F(FusePosixTest, SetIdBitsSetAfterOpenAreClearedByTheNextWrite) {
  ASSERT_EQ(chmod(dir_.c_str(), 0777), 0) << std::strerror(errno);
  int dir_fd = open(dir_.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(dir_fd, 0) << std::strerror(errno);
  EXPECT_EQ(ErrName(AsUserWithFile(dir_fd, "mine", O_CREAT | O_EXCL | O_WRONLY,
                                   [](int fd) {
                                     if (write(fd, "a", 1) != 1) return errno;
                                     if (fchmod(fd, 04755) != 0) return errno;
                                     return write(fd, "b", 1) == 1 ? 0 : errno;
                                   })),
            "OK");
  close(dir_fd);
  const struct stat st = FreshStat(P("mine"));
  EXPECT_EQ(st.st_mode & 07777, 0755u) << "after the write that followed fchmod";
  EXPECT_EQ(st.st_uid, kUser);
  EXPECT_EQ(ReadFile(P("mine")), "ab");
}

// What keeps the bits, by FUSE_HANDLE_KILLPRIV_V2's rules (Linux's own before 6.2, which also
// clears a set-group-ID bit without group execute when the writer is not in the file's group):
// a write by root (CAP_FSETID); a set-group-ID bit without group execute through another user's
// write. A change of owner clears them even when root makes it, but not a directory's
// set-group-ID bit (inheritance).
TEST_F(FusePosixTest, SetIdBitsThatStayAndAChownThatClearsThem) {
  CreateFile(P("prog"), "abc");
  ASSERT_EQ(chmod(P("prog").c_str(), 06777), 0) << std::strerror(errno);
  {
    Fd fd(open(P("prog").c_str(), O_WRONLY));
    ASSERT_GE(fd.get(), 0) << std::strerror(errno);
    ASSERT_TRUE(WriteFull(fd.get(), "x", 1));
    ASSERT_EQ(fd.Close(), 0);
  }
  EXPECT_EQ(FreshStat(P("prog")).st_mode & 07777, 06777u) << "after root's write";
  {
    Fd fd(open(P("prog").c_str(), O_WRONLY));
    ASSERT_GE(fd.get(), 0) << std::strerror(errno);
    ASSERT_EQ(fallocate(fd.get(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 2, 1), 0)
        << std::strerror(errno);
    ASSERT_EQ(fd.Close(), 0);
  }
  EXPECT_EQ(FreshStat(P("prog")).st_mode & 07777, 06777u) << "after root's fallocate";

  CreateFile(P("locked"), "abc");
  ASSERT_EQ(chmod(P("locked").c_str(), 02666), 0) << std::strerror(errno);
  int dir_fd = open(dir_.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(dir_fd, 0) << std::strerror(errno);
  EXPECT_EQ(ErrName(AsUserWithFile(dir_fd, "locked", O_WRONLY,
                                   [](int fd) { return pwrite(fd, "y", 1, 0) == 1 ? 0 : errno; })),
            "OK");
  close(dir_fd);
  EXPECT_EQ(FreshStat(P("locked")).st_mode & 07777, 02666u) << "no group execute: kept";
  EXPECT_EQ(ReadFile(P("locked")), "ybc");

  ASSERT_EQ(chown(P("prog").c_str(), kUser, kGroup), 0) << std::strerror(errno);
  struct stat st = FreshStat(P("prog"));
  EXPECT_EQ(st.st_mode & 07777, 0777u) << "after root's chown";
  EXPECT_EQ(st.st_uid, kUser);
  ASSERT_EQ(mkdir(P("shared").c_str(), 0755), 0) << std::strerror(errno);
  ASSERT_EQ(chmod(P("shared").c_str(), 02775), 0) << std::strerror(errno);
  ASSERT_EQ(chown(P("shared").c_str(), kUser, kGroup), 0) << std::strerror(errno);
  EXPECT_EQ(FreshStat(P("shared")).st_mode & 07777, 02775u) << "a directory's chown";
}

TEST_F(FusePosixTest, LargeFileUnalignedWritesAndReads) {
  const size_t size = 5 * kMiB;
  const std::string data = RandomBytes(size, 20240601);
  int fd = open(P("big").c_str(), O_CREAT | O_EXCL | O_RDWR, 0644);
  ASSERT_GE(fd, 0);
  const size_t write_sizes[] = {1, 4095, 65536, 131073, 1 << 20, 7, 200000};
  size_t pos = 0, i = 0;
  while (pos < size) {
    const size_t n = std::min(write_sizes[i++ % std::size(write_sizes)], size - pos);
    ASSERT_TRUE(WriteFull(fd, data.substr(pos, n), pos))
        << "at " << pos << ": " << std::strerror(errno);
    pos += n;
  }
  ASSERT_EQ(close(fd), 0);
  EXPECT_EQ(FreshStat(P("big")).st_size, static_cast<off_t>(size));

  fd = open(P("big").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  const size_t read_sizes[] = {3, 131071, 65537, 1 << 20, 4096, 999999, 1};
  pos = 0;
  i = 0;
  while (pos < size) {
    const size_t n = read_sizes[i++ % std::size(read_sizes)];
    const std::string got = ReadAt(fd, pos, n);
    ASSERT_EQ(got.size(), std::min(n, size - pos)) << "short read at " << pos;
    ASSERT_TRUE(got == data.substr(pos, got.size()))
        << "mismatch in [" << pos << ", " << pos + got.size() << ")";
    pos += got.size();
  }
  // Overwrite a range straddling an object boundary and read it back whole.
  ASSERT_EQ(close(fd), 0);
  fd = open(P("big").c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  const std::string patch = RandomBytes(10000, 99);
  ASSERT_TRUE(WriteFull(fd, patch, 3 * kObjectSize - 5000));
  ASSERT_EQ(close(fd), 0);
  std::string expected = data;
  expected.replace(3 * kObjectSize - 5000, patch.size(), patch);
  EXPECT_TRUE(ReadFile(P("big")) == expected);
}

// ---- persistence ----

// Replaces the shared mount with a new one (new mount point, same cluster and fnso); the
// other tests build their paths from mount_ in SetUp, so the order does not matter.
TEST_F(FusePosixTest, PersistsAcrossRemount) {
  const std::string data = RandomBytes(300000, 5);
  CreateFile(P("kept"), data, 0640);
  ASSERT_EQ(symlink("kept", P("link").c_str()), 0);
  ASSERT_EQ(mkdir(P("sub").c_str(), 0700), 0);
  const ino_t ino = FreshStat(P("kept")).st_ino;
  const std::string old_path = mount_->path();

  delete mount_;
  mount_ = nullptr;
  try {
    mount_ = new TestMount(cluster_, kFnso, {"-o", "allow_other"});
  } catch (const std::exception& e) {
    FAIL() << "remount failed: " << e.what();
  }
  ASSERT_NE(mount_->path(), old_path);
  const std::string dir = *mount_ / name_;
  EXPECT_EQ(ListDir(dir), (std::multiset<std::string>{".", "..", "kept", "link", "sub"}));
  struct stat st = FreshStat(dir + "/kept");
  EXPECT_EQ(st.st_ino, ino);
  EXPECT_EQ(st.st_size, 300000);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_TRUE(ReadFile(dir + "/kept") == data);
  char buf[64];
  ssize_t n = readlink((dir + "/link").c_str(), buf, sizeof buf);
  ASSERT_EQ(n, 4);
  EXPECT_EQ(std::string(buf, 4), "kept");
  EXPECT_TRUE(S_ISDIR(FreshStat(dir + "/sub").st_mode));
}

}  // namespace
// The kernel asks for security.capability before every write(2); answering it must not read
// the INODE object each time (bonnie++'s one-byte writes did 20000 OSD reads for 20000 bytes).
TEST_F(FusePosixTest, SmallWritesCostNoMetadataReads) {
  const std::string f = P("small-writes");
  Fd fd(open(f.c_str(), O_CREAT | O_WRONLY, 0644));
  ASSERT_GE(fd.get(), 0);
  const uint64_t reads_before = ClusterCounter(cluster_->client(), "read_calls");
  for (int i = 0; i < 2000; ++i) ASSERT_EQ(write(fd.get(), "x", 1), 1);
  EXPECT_LT(ClusterCounter(cluster_->client(), "read_calls") - reads_before, 20u);
  EXPECT_EQ(Errno(getxattr(f.c_str(), "security.capability", nullptr, 0)), "ENODATA");
  // A well-formed capability set (the kernel checks the format before asking the file system).
  vfs_cap_data caps{};
  caps.magic_etc = VFS_CAP_REVISION_2;
  caps.data[0].permitted = 1u << CAP_NET_BIND_SERVICE;
  EXPECT_EQ(Errno(setxattr(f.c_str(), "security.capability", &caps, XATTR_CAPS_SZ_2, 0)),
            "EOPNOTSUPP");
  ASSERT_EQ(fd.Close(), 0);
  EXPECT_EQ(FreshStat(f).st_size, 2000);
}

// POSIX ACLs are neither enforced nor stored (EOPNOTSUPP, as with noacl): cp -a used to leave
// one behind as a plain attribute, which listxattr showed and nothing checked.
TEST_F(FusePosixTest, PosixAclsAreRefused) {
  CreateFile(P("f"), "x");
  const std::string f = P("f");
  struct AclEntry {
    uint16_t tag;
    uint16_t perm;
    uint32_t id;
  };
  struct {
    uint32_t version = 2;  // POSIX_ACL_XATTR_VERSION
    AclEntry entries[3] = {{0x01, 6, 0xffffffff}, {0x04, 4, 0xffffffff}, {0x20, 4, 0xffffffff}};
  } minimal_acl;  // user::rw- group::r-- other::r--
  EXPECT_EQ(
      Errno(setxattr(f.c_str(), "system.posix_acl_access", &minimal_acl, sizeof minimal_acl, 0)),
      "EOPNOTSUPP");
  EXPECT_EQ(Errno(setxattr(P(".").c_str(), "system.posix_acl_default", &minimal_acl,
                           sizeof minimal_acl, 0)),
            "EOPNOTSUPP");
  EXPECT_EQ(Errno(getxattr(f.c_str(), "system.posix_acl_access", nullptr, 0)), "EOPNOTSUPP");
  char names[256];
  EXPECT_EQ(listxattr(f.c_str(), names, sizeof names), 0);
  // cp -a through the mount copies the file, its mode bits and nothing more.
  ASSERT_EQ(chmod(f.c_str(), 0640), 0);
  ASSERT_EQ(std::system(("cp -a " + f + " " + P("g")).c_str()), 0);
  EXPECT_EQ(FreshStat(P("g")).st_mode & 07777, 0640u);
  EXPECT_EQ(listxattr(P("g").c_str(), names, sizeof names), 0);
}

TEST_F(FusePosixTest, ExtendedAttributes) {
  CreateFile(P("f"), "x");
  const std::string f = P("f");
  EXPECT_EQ(Errno(setxattr(f.c_str(), "user.color", "blue", 4, 0)), "OK");
  char buf[64];
  ssize_t n = getxattr(f.c_str(), "user.color", buf, sizeof buf);
  ASSERT_EQ(n, 4);
  EXPECT_EQ(std::string(buf, 4), "blue");
  EXPECT_EQ(getxattr(f.c_str(), "user.color", nullptr, 0), 4);  // size query
  EXPECT_EQ(Errno(getxattr(f.c_str(), "user.color", buf, 2)), "ERANGE");
  EXPECT_EQ(Errno(getxattr(f.c_str(), "user.missing", buf, sizeof buf)), "ENODATA");
  EXPECT_EQ(Errno(setxattr(f.c_str(), "user.color", "red", 3, XATTR_CREATE)), "EEXIST");
  EXPECT_EQ(Errno(setxattr(f.c_str(), "user.size", "9", 1, XATTR_REPLACE)), "ENODATA");
  EXPECT_EQ(Errno(setxattr(f.c_str(), "user.color", "red", 3, XATTR_REPLACE)), "OK");
  EXPECT_EQ(Errno(setxattr(f.c_str(), "user.size", "9", 1, XATTR_CREATE)), "OK");
  char list[256];
  n = listxattr(f.c_str(), list, sizeof list);
  ASSERT_GT(n, 0);
  std::set<std::string> names;
  for (const char* p = list; p < list + n; p += std::strlen(p) + 1) names.insert(p);
  EXPECT_EQ(names, (std::set<std::string>{"user.color", "user.size"}));
  EXPECT_EQ(Errno(removexattr(f.c_str(), "user.size")), "OK");
  EXPECT_EQ(Errno(removexattr(f.c_str(), "user.size")), "ENODATA");
  // Large binary values work while all of the inode's attributes stay within 64 KiB; a
  // value over the limit is refused.
  const std::string big = RandomBytes(60 * 1024, 3);
  EXPECT_EQ(Errno(setxattr(f.c_str(), "user.big", big.data(), big.size(), 0)), "OK");
  std::string back(big.size(), '\0');
  ASSERT_EQ(getxattr(f.c_str(), "user.big", back.data(), back.size()),
            static_cast<ssize_t>(big.size()));
  EXPECT_EQ(back, big);
  const std::string too_big(64 * 1024 + 1, 'x');
  EXPECT_NE(Errno(setxattr(f.c_str(), "user.huge", too_big.data(), too_big.size(), 0)), "OK");
  // Attributes survive alongside data and attribute changes.
  ASSERT_EQ(chmod(f.c_str(), 0600), 0);
  n = getxattr(f.c_str(), "user.color", buf, sizeof buf);
  ASSERT_EQ(n, 3);
  EXPECT_EQ(std::string(buf, 3), "red");
}

TEST_F(FusePosixTest, ListingWithAttributesMatchesStat) {
  // ls -l style: readdir then stat of every entry; with readdirplus the attributes come with
  // the listing, and they must equal what stat reports.
  ASSERT_EQ(mkdir(P("sub").c_str(), 0750), 0);
  for (int i = 0; i < 40; ++i) CreateFile(P("f" + std::to_string(i)), std::string(i * 100, 'x'));
  ASSERT_EQ(symlink("f1", P("link").c_str()), 0);
  const CommandResult ls = RunCommand({"/bin/ls", "-la", "--time-style=+%s", dir_});
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  // With --time-style=+%s every line is: mode links user group size time name [-> target].
  std::map<std::string, long> listed_sizes;
  std::istringstream lines(ls.out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string mode, links, user, group, time, name;
    long size = -1;
    if (fields >> mode >> links >> user >> group >> size >> time >> name) {
      listed_sizes[name] = size;
    }
  }
  int files = 0;
  for (int i = 0; i < 40; ++i) {
    const std::string name = "f" + std::to_string(i);
    EXPECT_EQ(FreshStat(P(name)).st_size, i * 100);
    ASSERT_EQ(listed_sizes.count(name), 1u) << ls.out;
    EXPECT_EQ(listed_sizes[name], i * 100) << name;
    ++files;
  }
  EXPECT_EQ(files, 40);
  EXPECT_NE(ls.out.find("link -> f1"), std::string::npos) << ls.out;
  EXPECT_NE(ls.out.find("drwxr-x---"), std::string::npos) << ls.out;
}

// A mount started by root without -o allow_other (the quickstart's, an fstab line's) serves
// every local user under the kernel's checks of the mode bits; -o private keeps it to root.
TEST_F(FusePosixTest, ARootMountServesOtherUsersUnderTheirModeBits) {
  for (const bool private_mount : {false, true}) {
    std::vector<std::string> flags;
    if (private_mount) flags = {"--private"};
    TestMount plain(cluster_, kFnso, flags);
    const std::string dir = plain / (name_ + (private_mount ? "-private" : "-shared"));
    ASSERT_EQ(mkdir(dir.c_str(), 0777), 0) << std::strerror(errno);
    ASSERT_EQ(chmod(dir.c_str(), 0777), 0);
    CreateFile(dir + "/secret", "root only", 0600);
    const int dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY);
    ASSERT_GE(dir_fd, 0);
    const int made = AsUserWithFile(dir_fd, "mine", O_CREAT | O_WRONLY,
                                    [](int fd) { return write(fd, "hello", 5) == 5 ? 0 : errno; });
    const int read_back = AsUserWithFile(dir_fd, "mine", O_RDONLY, [](int fd) {
      char buf[8];
      return read(fd, buf, sizeof buf) == 5 && std::memcmp(buf, "hello", 5) == 0 ? 0 : EIO;
    });
    const int secret = AsUserWithFile(dir_fd, "secret", O_RDONLY, [](int) { return 0; });
    close(dir_fd);
    if (private_mount) {
      // FUSE shuts every other user out before any mode bit is looked at.
      EXPECT_EQ(ErrName(made), "EACCES");
      EXPECT_EQ(ErrName(secret), "EACCES");
    } else {
      EXPECT_EQ(ErrName(made), "OK");
      EXPECT_EQ(ErrName(read_back), "OK");
      EXPECT_EQ(ErrName(secret), "EACCES") << "mode 0600 of another user";
      struct stat st = FreshStat(dir + "/mine");
      EXPECT_EQ(st.st_uid, static_cast<uid_t>(kUser));
    }
  }
}

// df tells what files can still take: every byte twice, the OSDs' reserves kept, and OSDs
// sharing one file system (all three here, in the cluster's directory) counted once.
TEST_F(FusePosixTest, DfReportsUsableSpaceNotTheSumOfTheOsdsDisks) {
  struct statvfs mount {};
  struct statvfs disk {};
  ASSERT_EQ(statvfs(mount_->path().c_str(), &mount), 0) << std::strerror(errno);
  ASSERT_EQ(statvfs(cluster_->dir().c_str(), &disk), 0) << std::strerror(errno);
  const double usable = static_cast<double>(mount.f_blocks) * mount.f_frsize;
  const double usable_free = static_cast<double>(mount.f_bavail) * mount.f_frsize;
  const double disk_size = static_cast<double>(disk.f_blocks) * disk.f_frsize;
  const double disk_free = static_cast<double>(disk.f_bavail) * disk.f_frsize;
  const double reserves = 3.0 * 256 * (1 << 20);
  // Before: the sum of three OSDs' view of one disk, 3 x disk_size, not halved.
  EXPECT_LE(usable, disk_size / 2 * 1.01);
  EXPECT_GE(usable, (disk_size - reserves) / 2 * 0.99);
  EXPECT_LE(usable_free, disk_free / 2 * 1.01);
  EXPECT_GE(usable_free, (disk_free - reserves) / 2 * 0.9);  // others write to the disk too
}

}  // namespace orthofs::testing
