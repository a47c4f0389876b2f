// The namespace library on real OSDs, two clients (two Namespace objects) at once: a change
// that starts from a lookup's read a moment ago (common/recent_reads.h) saves that read, and
// when the other client changed the name in between, the change still ends as it would from a
// fresh read.
#include "client/namespace.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "tests/test_cluster.h"

namespace orthofs::testing {
namespace {

constexpr uint32_t kFnso = 1;
constexpr uint64_t kRoot = 1;

uint64_t OsdReads(TestCluster& cluster) {
  uint64_t total = 0;
  for (const auto& osd : cluster.client().osds()) {
    Result<wire::StatsResponse> stats = osd->Stats({});
    if (stats.ok() && stats->counters().count("read_calls")) {
      total += stats->counters().at("read_calls");
    }
  }
  return total;
}

class NamespaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Namespace::Mkfs(&cluster_.client(), kFnso, Credentials{}).ok());
  }
  Result<InodeRef> CreateFile(Namespace& ns, const std::string& name) {
    return ns.Create(kRoot, name, S_IFREG | 0644, 0, Credentials{});
  }

  TestCluster cluster_{TestClusterOptions{.osds = 3}};
  Namespace a_{&cluster_.client(), kFnso};
  Namespace b_{&cluster_.client(), kFnso};
};

// The kernel's negative lookup, then the create: the create reads only the parent's INODE (the
// name's DIRENT bucket comes from the lookup, the parent's times start from that INODE read).
TEST_F(NamespaceTest, CreateAfterLookupReadsOnlyTheParent) {
  ASSERT_TRUE(CreateFile(a_, "first").ok());  // reserves a batch of fnos (reads SUPER)
  EXPECT_TRUE(a_.Lookup(kRoot, "f").status().Is(StatusCode::kNotFound));
  const uint64_t before = OsdReads(cluster_);
  ASSERT_TRUE(CreateFile(a_, "f").ok());
  EXPECT_EQ(OsdReads(cluster_) - before, 1u);
  EXPECT_TRUE(b_.Lookup(kRoot, "f").ok());
}

// A looked the name up (absent), then B created it: A's exclusive create starts from its stale
// read, its conditional write fails, and the fresh read says the name exists.
TEST_F(NamespaceTest, CreateFromAStaleLookupSeesTheOtherClientsName) {
  EXPECT_TRUE(a_.Lookup(kRoot, "x").status().Is(StatusCode::kNotFound));
  Result<InodeRef> theirs = CreateFile(b_, "x");
  ASSERT_TRUE(theirs.ok()) << theirs.status().ToString();
  Result<InodeRef> mine = CreateFile(a_, "x");
  EXPECT_TRUE(mine.status().Is(StatusCode::kAlreadyExists)) << mine.status().ToString();
  Result<InodeRef> found = b_.Lookup(kRoot, "x");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->fno, theirs->fno);
}

// A looked the name up and found it, then B removed it: A's create starts from a bucket that
// has the name, so it reads afresh before refusing, and creates the file.
TEST_F(NamespaceTest, CreateAfterAStaleLookupOfARemovedNameSucceeds) {
  ASSERT_TRUE(CreateFile(b_, "p").ok());
  ASSERT_TRUE(a_.Lookup(kRoot, "p").ok());
  ASSERT_TRUE(b_.Unlink(kRoot, "p").ok());
  Result<InodeRef> mine = CreateFile(a_, "p");
  ASSERT_TRUE(mine.ok()) << mine.status().ToString();
  Result<InodeRef> found = b_.Lookup(kRoot, "p");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->fno, mine->fno);
}

// A looked the name up and did not find it, then B created it: A's unlink looks afresh.
TEST_F(NamespaceTest, UnlinkAfterAStaleNegativeLookupRemovesTheNewName) {
  EXPECT_TRUE(a_.Lookup(kRoot, "q").status().Is(StatusCode::kNotFound));
  Result<InodeRef> theirs = CreateFile(b_, "q");
  ASSERT_TRUE(theirs.ok());
  Result<Unlinked> gone = a_.Unlink(kRoot, "q");
  ASSERT_TRUE(gone.ok()) << gone.status().ToString();
  EXPECT_EQ(gone->fno, theirs->fno);
  EXPECT_TRUE(b_.Lookup(kRoot, "q").status().Is(StatusCode::kNotFound));
}

// A looked the name up, then B removed it and created a new file under it: A's unlink removes
// the name as it is now (B's new file), not "no such entry" for the one A saw.
TEST_F(NamespaceTest, UnlinkFromAStaleLookupRemovesTheCurrentName) {
  Result<InodeRef> old_file = CreateFile(a_, "y");
  ASSERT_TRUE(old_file.ok());
  ASSERT_TRUE(a_.Lookup(kRoot, "y").ok());
  ASSERT_TRUE(b_.Unlink(kRoot, "y").ok());
  Result<InodeRef> new_file = CreateFile(b_, "y");
  ASSERT_TRUE(new_file.ok());
  ASSERT_NE(new_file->fno, old_file->fno);
  Result<Unlinked> gone = a_.Unlink(kRoot, "y");
  ASSERT_TRUE(gone.ok()) << gone.status().ToString();
  EXPECT_EQ(gone->fno, new_file->fno);
  EXPECT_TRUE(gone->last_link);
  EXPECT_TRUE(b_.Lookup(kRoot, "y").status().Is(StatusCode::kNotFound));
  // And B's unlink of a name A removed meanwhile is "no such entry", from a fresh read.
  ASSERT_TRUE(CreateFile(a_, "z").ok());
  ASSERT_TRUE(b_.Lookup(kRoot, "z").ok());
  ASSERT_TRUE(a_.Unlink(kRoot, "z").ok());
  EXPECT_TRUE(b_.Unlink(kRoot, "z").status().Is(StatusCode::kNotFound));
}

// A looked a name up and found a file; B replaced it with a directory: A's unlink refuses with
// EISDIR only after reading afresh, and a stale lookup of a directory does not refuse an unlink
// of the file that replaced it.
TEST_F(NamespaceTest, UnlinkRefusesADirectoryOnlyFromAFreshRead) {
  ASSERT_TRUE(b_.Create(kRoot, "d", S_IFDIR | 0755, 0, Credentials{}).ok());
  ASSERT_TRUE(a_.Lookup(kRoot, "d").ok());  // a directory, as A read it
  ASSERT_TRUE(b_.Rmdir(kRoot, "d").ok());
  ASSERT_TRUE(CreateFile(b_, "d").ok());
  EXPECT_TRUE(a_.Unlink(kRoot, "d").ok());
  ASSERT_TRUE(b_.Create(kRoot, "e", S_IFDIR | 0755, 0, Credentials{}).ok());
  EXPECT_TRUE(a_.Unlink(kRoot, "e").status().Is(StatusCode::kIsADirectory));
}

// A dropped the last link of a file (its objects are being freed); B's hard link to the same
// inode, which B's kernel still knows, is refused instead of making an entry to a freed inode.
TEST_F(NamespaceTest, NoLinkToAnInodeWhoseLastLinkIsGone) {
  Result<InodeRef> file = CreateFile(a_, "l");
  ASSERT_TRUE(file.ok());
  Result<Unlinked> gone = a_.Unlink(kRoot, "l");
  ASSERT_TRUE(gone.ok());
  ASSERT_TRUE(gone->last_link);
  Result<InodeRef> linked = b_.Link(file->fno, kRoot, "l2");
  EXPECT_TRUE(linked.status().Is(StatusCode::kNotFound)) << linked.status().ToString();
  EXPECT_TRUE(a_.Lookup(kRoot, "l2").status().Is(StatusCode::kNotFound));
  // A file with a link left links as before.
  Result<InodeRef> kept = CreateFile(a_, "m");
  ASSERT_TRUE(kept.ok());
  Result<InodeRef> second = b_.Link(kept->fno, kRoot, "m2");
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->inode.nlink, 2u);
}

}  // namespace
}  // namespace orthofs::testing
