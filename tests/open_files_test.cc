// The open-file session engine (client/open_files.h) on real OSDs, without FUSE: two clients,
// each a ClusterClient with its own Namespace, FileIo, LockManager and OpenFiles, and a
// recording KernelCache standing in for the kernel.
#include "client/open_files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "client/cluster_client.h"
#include "tests/test_cluster.h"

namespace orthofs {
namespace {

using testing::TestCluster;
using testing::TestClusterOptions;

constexpr uint32_t kFnso = 1;
constexpr uint64_t kRoot = 1;

// What the engine told "the kernel".
class RecordingKernel : public KernelCache {
 public:
  void ForgetAttributes(uint64_t fno) override {
    std::lock_guard lock(mu_);
    attributes_.push_back(fno);
  }
  void ForgetPages(uint64_t fno) override {
    std::lock_guard lock(mu_);
    pages_.push_back(fno);
  }
  size_t PagesForgotten(uint64_t fno) {
    std::lock_guard lock(mu_);
    return std::count(pages_.begin(), pages_.end(), fno);
  }
  size_t AttributesForgotten(uint64_t fno) {
    std::lock_guard lock(mu_);
    return std::count(attributes_.begin(), attributes_.end(), fno);
  }

 private:
  std::mutex mu_;
  std::vector<uint64_t> attributes_;
  std::vector<uint64_t> pages_;
};

// One client: the library's parts, as orthofs-mount holds them.
struct Client {
  explicit Client(TestCluster& cluster)
      : cluster_client(std::make_unique<ClusterClient>(cluster.map(), cluster.Rpc("client"))),
        ns(cluster_client.get(), kFnso),
        io(cluster_client.get(), kFnso),
        locks(cluster_client.get(), kFnso, LockManagerOptions{},
              [this](uint64_t fno) { return !files.OpenHere(fno); }),
        files(&ns, &io, &locks, &kernel) {}

  // Opens `fno` as the mount's open does: the INODE read, then Opened (and Revalidated when
  // the cached bytes were stale).
  CachedVersions::Cached Open(uint64_t fno) {
    Result<InodeRef> inode = ns.GetInode(fno);
    EXPECT_TRUE(inode.ok()) << inode.status().ToString();
    const CachedVersions::Cached cached = files.Opened(*inode);
    if (cached == CachedVersions::Cached::kStale) files.Revalidated(fno);
    return cached;
  }
  void Write(uint64_t fno, uint64_t offset, const std::string& data) {
    ASSERT_TRUE(io.Write(fno, offset, data).ok());
    files.Wrote(fno, offset + data.size());
  }
  std::string Read(uint64_t fno, uint64_t offset, uint64_t length) {
    Result<SharedBytes> r = files.Read(fno, offset, length, /*for_page_cache=*/true);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->Join() : "";
  }

  std::unique_ptr<ClusterClient> cluster_client;
  RecordingKernel kernel;
  Namespace ns;
  FileIo io;
  LockManager locks;
  OpenFiles files;
};

class OpenFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Namespace::Mkfs(&cluster_.client(), kFnso, Credentials{}).ok());
    a_ = std::make_unique<Client>(cluster_);
    b_ = std::make_unique<Client>(cluster_);
  }
  uint64_t CreateFile(Client& c, const std::string& name, uint32_t mode = 0644) {
    Result<InodeRef> r = c.ns.Create(kRoot, name, S_IFREG | mode, 0, Credentials{});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    c.files.Opened(*r, /*created=*/true);
    return r->fno;
  }

  TestCluster cluster_{TestClusterOptions{.osds = 3}};
  std::unique_ptr<Client> a_;
  std::unique_ptr<Client> b_;
};

// Close publishes the size; another client's open then sees it and drops its stale cache.
TEST_F(OpenFilesTest, CloseToOpenAcrossClients) {
  const uint64_t fno = CreateFile(*a_, "f");
  a_->Write(fno, 0, "hello");
  EXPECT_EQ(a_->files.OpenSize(fno), 5u);
  EXPECT_TRUE(a_->files.WritesUnpublished(fno));
  // B opens before A's close: it sees the size A published so far (none).
  EXPECT_EQ(b_->Open(fno), CachedVersions::Cached::kNothing);
  EXPECT_EQ(b_->files.OpenSize(fno), 0u);
  ASSERT_TRUE(b_->files.Closed(fno, std::nullopt).ok());

  ASSERT_TRUE(a_->files.Closed(fno, std::nullopt).ok());
  EXPECT_FALSE(a_->files.OpenHere(fno));
  Result<InodeRef> published = a_->ns.GetInode(fno);
  ASSERT_TRUE(published.ok());
  EXPECT_EQ(published->inode.size, 5u);

  // B's next open finds the file changed: whatever it cached goes, the kernel's pages too.
  EXPECT_EQ(b_->Open(fno), CachedVersions::Cached::kStale);
  EXPECT_EQ(b_->kernel.PagesForgotten(fno), 1u);
  EXPECT_EQ(b_->files.OpenSize(fno), 5u);
  EXPECT_EQ(b_->Read(fno, 0, 100), "hello");
  ASSERT_TRUE(b_->files.Closed(fno, std::nullopt).ok());
  // A's own change keeps A's cache valid.
  EXPECT_EQ(a_->Open(fno), CachedVersions::Cached::kValid);
  EXPECT_EQ(a_->kernel.PagesForgotten(fno), 0u);
  ASSERT_TRUE(a_->files.Closed(fno, std::nullopt).ok());
}

// A file unlinked while open stays readable through the descriptor and is freed at the close.
TEST_F(OpenFilesTest, AnUnlinkedOpenFileIsFreedAtItsLastClose) {
  const uint64_t fno = CreateFile(*a_, "doomed");
  a_->Write(fno, 0, std::string(300000, 'x'));
  ASSERT_TRUE(a_->files.FlushFile(fno).ok());
  Result<Unlinked> gone = a_->ns.Unlink(kRoot, "doomed");
  ASSERT_TRUE(gone.ok()) << gone.status().ToString();
  ASSERT_TRUE(gone->last_link);
  ASSERT_TRUE(a_->files.LastLinkGone(Unlinked{fno, true}).ok());
  EXPECT_TRUE(a_->files.UnlinkedHereWhileOpen(fno));
  EXPECT_TRUE(a_->ns.GetInode(fno).ok()) << "freed while still open";
  EXPECT_EQ(a_->Read(fno, 299990, 100), std::string(10, 'x'));
  ASSERT_TRUE(a_->files.Closed(fno, std::nullopt).ok());
  EXPECT_TRUE(a_->ns.GetInode(fno).status().Is(StatusCode::kNotFound));
  a_->files.AwaitReleases();  // the data objects go in the background
  EXPECT_TRUE(
      cluster_.client().ListFileObjectsEitherCopy(kFnso, fno, ObjectType::kData, 0, false)->empty())
      << "its data objects stay";
}

// The read's epilogue: a hole is zeros; a file another client removed is ESTALE; one another
// client cut short ends at its new end.
TEST_F(OpenFilesTest, AReadTellsAHoleFromARemovalAndATruncation) {
  const uint64_t fno = CreateFile(*a_, "sparse");
  a_->Write(fno, 1 << 20, "tail");  // the first MiB is a hole
  ASSERT_TRUE(a_->files.Closed(fno, std::nullopt).ok());
  b_->Open(fno);
  EXPECT_EQ(b_->Read(fno, 0, 8), std::string(8, '\0'));

  // A cuts the file to 100 bytes; B, open since before, reads past that in zeros no object
  // holds: the read ends at the new end instead.
  SetAttrRequest shrink;
  shrink.size = 100;
  ASSERT_TRUE(a_->ns.SetAttr(fno, shrink).ok());
  EXPECT_EQ(b_->Read(fno, 0, 4096).size(), 100u);

  // A removes it; B's read of the vanished objects is ESTALE, not zeros.
  ASSERT_TRUE(a_->ns.Unlink(kRoot, "sparse").ok());
  ASSERT_TRUE(a_->files.LastLinkGone(Unlinked{fno, true}).ok());
  Result<SharedBytes> stale = b_->files.Read(fno, 0, 4096, true);
  EXPECT_TRUE(stale.status().Is(StatusCode::kStale)) << stale.status().ToString();
}

// A write by someone without CAP_FSETID drops a set-ID file's privileges once, and tells the
// kernel its attributes (the mode) are stale; a plain file costs nothing.
TEST_F(OpenFilesTest, DroppingPrivilegesBeforeAWriteTellsTheKernel) {
  const uint64_t setuid = CreateFile(*a_, "setuid", 04755);
  const uint64_t plain = CreateFile(*a_, "plain", 0644);
  ASSERT_TRUE(a_->files.DropPrivilegesBeforeWrite(setuid).ok());
  ASSERT_TRUE(a_->files.DropPrivilegesBeforeWrite(setuid).ok());
  ASSERT_TRUE(a_->files.DropPrivilegesBeforeWrite(plain).ok());
  EXPECT_EQ(a_->kernel.AttributesForgotten(setuid), 1u);
  EXPECT_EQ(a_->kernel.AttributesForgotten(plain), 0u);
  Result<InodeRef> now = b_->ns.GetInode(setuid);
  ASSERT_TRUE(now.ok());
  EXPECT_EQ(now->inode.mode & 07777, 0755u);
}

}  // namespace
}  // namespace orthofs
