// A client killed after writing objects back but before publishing their size leaves objects
// past the file's recorded size. Whatever extends the file later (truncate up, a write past
// the end, fallocate), from any client, must read zeros there, as POSIX says a hole does, not
// the dead client's old bytes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "client/cluster_client.h"
#include "client/namespace.h"
#include "tests/posix_files.h"
#include "tests/test_cluster.h"
#include "tools/fsck.h"

namespace orthofs {
namespace {

using testing::TestCluster;
using testing::TestClusterOptions;
using testing::TestMount;
using testing::WaitFor;

constexpr uint32_t kFnso = 1;
constexpr uint64_t kMiB = 1 << 20;

class CrashedWriterTest : public ::testing::Test {
 protected:
  // Objects of file `fno` stored on the OSDs (either copy).
  size_t StoredObjects(uint64_t fno) {
    auto listed = cluster_.client().ListFileObjectsEitherCopy(kFnso, fno, ObjectType::kData, 0,
                                                              /*with_data=*/false);
    return listed.ok() ? listed->size() : 0;
  }
  uint64_t PublishedSize(uint64_t fno) {
    Namespace ns(&cluster_.client(), kFnso);
    Result<InodeRef> inode = ns.GetInode(fno);
    EXPECT_TRUE(inode.ok()) << inode.status().ToString();
    return inode.ok() ? inode->inode.size : 0;
  }
  // Writes `bytes` of 'X' at `offset` through `fd` and waits until the mount has written
  // `objects` objects of the file back, while its size stays unpublished (no close, no fsync).
  void WriteBackUnpublished(int fd, uint64_t fno, uint64_t offset, uint64_t bytes, size_t objects) {
    const std::string block(kMiB, 'X');
    for (uint64_t done = 0; done < bytes; done += kMiB) {
      ASSERT_EQ(pwrite(fd, block.data(), kMiB, static_cast<off_t>(offset + done)),
                static_cast<ssize_t>(kMiB));
    }
    ASSERT_TRUE(WaitFor([&] { return StoredObjects(fno) >= objects; }, std::chrono::seconds(60)))
        << "written back: " << StoredObjects(fno) << " of " << objects << " objects";
  }
  // No byte of [offset, offset + length) of `path` is other than zero.
  static void ExpectZeros(const std::string& path, uint64_t offset, uint64_t length) {
    const int fd = open(path.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    std::string buf(kMiB, '\0');
    for (uint64_t done = 0; done < length;) {
      const size_t want = std::min<uint64_t>(kMiB, length - done);
      const ssize_t n = pread(fd, buf.data(), want, static_cast<off_t>(offset + done));
      ASSERT_EQ(n, static_cast<ssize_t>(want)) << std::strerror(errno);
      const size_t bad = buf.find_first_not_of('\0');
      ASSERT_TRUE(bad == std::string::npos || bad >= want)
          << path << ": a dead client's byte '" << buf[bad] << "' at " << offset + done + bad;
      done += want;
    }
    close(fd);
  }

  TestCluster cluster_{TestClusterOptions{.osds = 4}};
};

// The first reproduction: 1 MiB unsynced, the writer killed, `truncate -s 1M` and a
// read by another client. And fallocate past the end of another such file.
TEST_F(CrashedWriterTest, TruncateUpAndFallocateReadZerosNotADeadClientsBytes) {
  uint64_t truncated = 0;
  uint64_t allocated = 0;
  {
    TestMount writer(&cluster_);
    const int a = open((writer / "truncated").c_str(), O_CREAT | O_WRONLY, 0644);
    const int b = open((writer / "allocated").c_str(), O_CREAT | O_WRONLY, 0644);
    ASSERT_GE(a, 0);
    ASSERT_GE(b, 0);
    struct stat st;
    ASSERT_EQ(fstat(a, &st), 0);
    truncated = st.st_ino;
    ASSERT_EQ(fstat(b, &st), 0);
    allocated = st.st_ino;
    WriteBackUnpublished(a, truncated, 0, kMiB, 8);
    WriteBackUnpublished(b, allocated, 0, kMiB, 8);
    writer.Kill();
    close(a);
    close(b);
  }
  ASSERT_EQ(PublishedSize(truncated), 0u) << "the size was published: nothing to reproduce";
  // fsck finds them; with a grace period it leaves them (a live writer's look the same).
  Result<FsckReport> found = RunFsck(&cluster_.client(), kFnso, FsckOptions{});
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(found->objects_past_end, 16u);
  EXPECT_EQ(StoredObjects(truncated), 8u);
  TestMount reader(&cluster_);
  ASSERT_EQ(truncate((reader / "truncated").c_str(), kMiB), 0) << std::strerror(errno);
  ExpectZeros(reader / "truncated", 0, kMiB);
  const int fd = open((reader / "allocated").c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(posix_fallocate(fd, 0, kMiB), 0);
  close(fd);
  ExpectZeros(reader / "allocated", 0, kMiB);
}

// The second: a 20 MiB head fsynced, a 30 MiB tail written back but unpublished, the
// writer killed; then a write past the end by another client.
TEST_F(CrashedWriterTest, AWritePastTheEndReadsZerosInTheGap) {
  uint64_t fno = 0;
  {
    TestMount writer(&cluster_);
    const int fd = open((writer / "log").c_str(), O_CREAT | O_WRONLY, 0644);
    ASSERT_GE(fd, 0);
    struct stat st;
    ASSERT_EQ(fstat(fd, &st), 0);
    fno = st.st_ino;
    WriteBackUnpublished(fd, fno, 0, 20 * kMiB, 160);
    ASSERT_EQ(fsync(fd), 0);
    WriteBackUnpublished(fd, fno, 20 * kMiB, 30 * kMiB, 400);
    writer.Kill();
    close(fd);
  }
  ASSERT_EQ(PublishedSize(fno), 20 * kMiB);
  // fsck --grace 0 collects the 240 objects past the end, and leaves the 160 inside it.
  Result<FsckReport> collected =
      RunFsck(&cluster_.client(), kFnso, FsckOptions{.grace_seconds = 0});
  ASSERT_TRUE(collected.ok()) << collected.status().ToString();
  EXPECT_EQ(collected->objects_past_end, 240u);
  EXPECT_GE(collected->collected, 240u);
  EXPECT_EQ(StoredObjects(fno), 160u);
  TestMount other(&cluster_);
  const int fd = open((other / "log").c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(pwrite(fd, "!", 1, 40 * kMiB), 1);
  ASSERT_EQ(close(fd), 0);
  struct stat st;
  ASSERT_EQ(stat((other / "log").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, static_cast<off_t>(40 * kMiB + 1));
  ExpectZeros(other / "log", 20 * kMiB, 20 * kMiB);
  // And the dead client's objects past the new end are gone, not waiting to show again.
  EXPECT_LE(StoredObjects(fno), 160u + 1u);
}

}  // namespace
}  // namespace orthofs
