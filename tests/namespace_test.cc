// The namespace library on real OSDs, two clients (two Namespace objects) at once: a change
// that starts from a lookup's read a moment ago (common/recent_reads.h) saves that read, and
// when the other client changed the name in between, the change still ends as it would from a
// fresh read.
#include "client/namespace.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "client/cluster_client.h"
#include "osd/object_store.h"
#include "tests/test_cluster.h"
#include "tools/fsck.h"

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

// Runs another client's change once, when a hooked call of A's client meets the root's DIRENT
// bucket of a name. (A client's hooks are set once, before it is used; what runs is armed per
// case.)
class OnceAtRootBucket {
 public:
  void Arm(const std::string& name, std::function<void()> change) {
    std::lock_guard lock(mu_);
    offset_ = DirentOffset(name);
    change_ = std::move(change);
  }
  bool Ran() {
    std::lock_guard lock(mu_);
    return change_ == nullptr;
  }
  // For ClusterClient::TestHooks.
  std::function<void(const Oid&)> Hook() {
    return [this](const Oid& original) {
      std::function<void()> run;
      {
        std::lock_guard lock(mu_);
        if (original.fno == kRoot && original.type == ObjectType::kDirent &&
            original.offset == offset_) {
          run = std::exchange(change_, nullptr);
        }
      }
      if (run) run();
    };
  }

 private:
  std::mutex mu_;
  uint64_t offset_ = 0;
  std::function<void()> change_;
};

// Client A of a test: a connection of its own, whose writes and deletes of a root bucket run
// another client's change armed in `theirs` first.
struct ClientWithHooks {
  explicit ClientWithHooks(TestCluster& cluster)
      : client(cluster.client().map(), cluster.Rpc("client")), ns(&client, kFnso) {
    client.SetTestHooks({.before_writing_original_then_replica = theirs.Hook(),
                         .before_deleting_both_copies = theirs.Hook()});
  }
  ClusterClient client;
  OnceAtRootBucket theirs;
  Namespace ns;
};

class NamespaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Namespace::Mkfs(&cluster_.client(), kFnso, Credentials{}).ok());
  }
  Result<InodeRef> CreateFile(Namespace& ns, const std::string& name) {
    return ns.Create(kRoot, name, S_IFREG | 0644, 0, Credentials{});
  }
  // A file `name` in the root of two data objects, its size one object and 5 bytes: the
  // originals of its data objects.
  std::vector<Oid> CreateTwoObjectFile(const std::string& name, uint64_t* fno) {
    Result<InodeRef> file = CreateFile(a_, name);
    EXPECT_TRUE(file.ok()) << file.status().ToString();
    if (!file.ok()) return {};
    *fno = file->fno;
    std::vector<Oid> objects;
    for (uint64_t index = 0; index < 2; ++index) {
      objects.push_back(Oid{kFnso, file->fno, index, ObjectType::kData, CopyFlag::kOriginal});
      EXPECT_TRUE(
          cluster_.client().WriteBothCopies(objects.back(), "bytes", {.replace = true}).ok());
    }
    EXPECT_TRUE(a_.ExtendAndTouch(file->fno, ObjectSize() + 5, Now()).ok());
    return objects;
  }
  uint64_t ObjectSize() { return cluster_.client().map().object_size; }
  static Result<InodeRef> Mkdir(Namespace& ns, uint64_t dir, const std::string& name) {
    return ns.Create(dir, name, S_IFDIR | 0755, 0, Credentials{});
  }
  // What fsck finds now (nothing changed; no grace period, so every orphan counts).
  Result<FsckReport> DryRunFsck() {
    FsckOptions dry_run;
    dry_run.dry_run = true;
    dry_run.grace_seconds = 0;
    return RunFsck(&cluster_.client(), kFnso, dry_run);
  }
  // The DIRENT bucket of `name` in `dir` holds `entries` (none: deleted), written as a
  // client's bucket update would be, bypassing every check (damage of the kind fsck repairs).
  void SetEntries(uint64_t dir, const std::string& name, const std::vector<DirEntry>& entries) {
    const Oid bucket{kFnso, dir, DirentOffset(name), ObjectType::kDirent};
    Result<wire::ReadResponse> now = cluster_.client().Read(bucket);
    const uint64_t version = now.ok() ? now->meta().version() : 0;
    if (entries.empty()) {
      ASSERT_TRUE(cluster_.client().DeleteBothCopies(bucket, version).ok());
    } else {
      ASSERT_TRUE(cluster_.client()
                      .WriteOriginalThenReplica(bucket, EncodeDirentBucket(entries), version)
                      .ok());
    }
  }
  // The root's P1 (holding a file, so fsck reads its entries; made first, so before P2's)
  // and P2, and under P2 a chain of directories named `chain`, each in the one before: in
  // `made`, P1, P2 and the chain's.
  void TwoParentsAndAChain(const std::vector<std::string>& chain, std::vector<InodeRef>* made) {
    uint64_t parent = kRoot;
    for (const std::string& name : {std::string("P1"), std::string("P2")}) {
      Result<InodeRef> dir = Mkdir(a_, kRoot, name);
      ASSERT_TRUE(dir.ok()) << dir.status().ToString();
      made->push_back(*dir);
      parent = dir->fno;
    }
    ASSERT_LT((*made)[0].fno, (*made)[1].fno);
    ASSERT_TRUE(a_.Create((*made)[0].fno, "keep", S_IFREG | 0644, 0, Credentials{}).ok());
    for (const std::string& name : chain) {
      Result<InodeRef> dir = Mkdir(a_, parent, name);
      ASSERT_TRUE(dir.ok()) << dir.status().ToString();
      made->push_back(*dir);
      parent = dir->fno;
    }
  }
  // fsck repairing, with no grace period.
  Result<FsckReport> FixingFsck(ClusterClient* client = nullptr, FsckOptions options = {}) {
    options.grace_seconds = 0;
    return RunFsck(client != nullptr ? client : &cluster_.client(), kFnso, options);
  }
  // Removes copy `oid` from its OSD's store, no tombstone left (stopped for it, then started).
  void LoseOnDisk(const Oid& oid) {
    const uint32_t osd = cluster_.client().placement().OsdFor(oid);
    cluster_.Stop(osd);
    {
      Result<std::unique_ptr<ObjectStore>> store = ObjectStore::Open(cluster_.DataDir(osd), {});
      ASSERT_TRUE(store.ok()) << store.status().ToString();
      const std::string key = EncodeStoreKey(oid);
      Result<ObjectRecordSummary> stored = (*store)->GetSummary(key);
      ASSERT_TRUE(stored.ok()) << oid.ToString() << ": " << stored.status().ToString();
      ObjectStore::Batch batch;
      batch.Delete(key, true, stored->length);
      ASSERT_TRUE((*store)->Commit(&batch, true).ok());
    }
    cluster_.Start(osd);
  }
  // The link count as stored now (-1 when the inode is gone).
  int64_t Nlink(uint64_t fno) {
    Namespace fresh(&cluster_.client(), kFnso);
    Result<InodeRef> inode = fresh.GetInode(fno);
    return inode.ok() ? inode->inode.nlink : -1;
  }

  TestCluster cluster_{TestClusterOptions{.osds = 3}};
  Namespace a_{&cluster_.client(), kFnso};
  Namespace b_{&cluster_.client(), kFnso};
};

// The kernel's negative lookup, then the create, for a burst of names in one directory: each
// name's DIRENT bucket comes from its lookup, and the parent's INODE from this client's own
// write of it a moment before, so the creates read nothing. Both are trusted for well under a
// second: a create that follows its lookup by more than half a second reads both copies of the
// bucket again, and one more than a second after the create before it reads the parent. So a
// machine that stalls (a loaded CI host) makes a burst read; of three bursts one must not.
TEST_F(NamespaceTest, CreatesInABurstReadNothingButTheirLookups) {
  ASSERT_TRUE(CreateFile(a_, "first").ok());  // reserves a batch of fnos (reads SUPER)
  std::vector<uint64_t> burst_reads;
  for (int burst = 0; burst < 3; ++burst) {
    uint64_t create_reads = 0;
    for (int i = 0; i < 10; ++i) {
      const std::string name = "b" + std::to_string(burst) + "f" + std::to_string(i);
      EXPECT_TRUE(a_.Lookup(kRoot, name).status().Is(StatusCode::kNotFound));
      const uint64_t before = OsdReads(cluster_);
      ASSERT_TRUE(CreateFile(a_, name).ok());
      create_reads += OsdReads(cluster_) - before;
      EXPECT_TRUE(b_.Lookup(kRoot, name).ok());
    }
    burst_reads.push_back(create_reads);
    if (create_reads <= 2) break;
  }
  EXPECT_LE(*std::min_element(burst_reads.begin(), burst_reads.end()), 2u)
      << "OSD reads per burst of 10 creates: " << ::testing::PrintToString(burst_reads);
}

// A's changes in a directory start from A's own write of its INODE a moment ago; B changed the
// directory in between. A's conditional update of the directory fails and starts again from a
// fresh read, so the directory's link count keeps B's changes too.
TEST_F(NamespaceTest, ChangesFromThisClientsStaleParentKeepTheOtherClientsChanges) {
  Result<InodeRef> root = b_.GetInode(kRoot);
  ASSERT_TRUE(root.ok());
  const uint32_t links = root->inode.nlink;
  ASSERT_TRUE(CreateFile(a_, "before").ok());  // A wrote the root
  ASSERT_TRUE(Mkdir(b_, kRoot, "theirs").ok());
  ASSERT_TRUE(Mkdir(a_, kRoot, "mine").ok());
  root = b_.GetInode(kRoot);
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(root->inode.nlink, links + 2);
  ASSERT_TRUE(b_.Rmdir(kRoot, "theirs").ok());
  ASSERT_TRUE(a_.Unlink(kRoot, "before").ok());
  ASSERT_TRUE(Mkdir(b_, kRoot, "other").ok());
  ASSERT_TRUE(a_.Rmdir(kRoot, "mine").ok());
  root = b_.GetInode(kRoot);
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(root->inode.nlink, links + 1);
  Result<std::vector<DirEntry>> entries = b_.ReadDir(kRoot);
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ(entries->front().name, "other");
}

// The unlink of a file's last link, then its release (as the mount does when the file is not
// open): its data objects and its INODE are gone, both copies of each.
TEST_F(NamespaceTest, ReleaseAfterTheLastUnlinkDeletesEveryObject) {
  uint64_t fno = 0;
  std::vector<Oid> objects = CreateTwoObjectFile("r", &fno);
  ASSERT_EQ(objects.size(), 2u);
  Result<Unlinked> gone = a_.Unlink(kRoot, "r");
  ASSERT_TRUE(gone.ok()) << gone.status().ToString();
  ASSERT_TRUE(gone->last_link);
  ASSERT_TRUE(a_.ReleaseInode(fno).ok());
  EXPECT_TRUE(b_.GetInode(fno).status().Is(StatusCode::kNotFound));
  objects.push_back(Oid{kFnso, fno, 0, ObjectType::kInode, CopyFlag::kOriginal});
  for (const Oid& oid : objects) {
    for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
      EXPECT_TRUE(cluster_.client().Read(oid.WithFlag(flag)).status().Is(StatusCode::kNotFound))
          << oid.WithFlag(flag).ToString();
    }
  }
}

// An unlink whose caller frees the file at once (the mount, when no descriptor has it open)
// deletes the INODE itself in place of writing its link count: both copies are gone when it
// answers, and the data objects stay for ReleaseUnlinked (the mount's background release).
TEST_F(NamespaceTest, AnUnlinkThatFreesAtOnceDeletesTheInodeAndLeavesTheData) {
  uint64_t fno = 0;
  const std::vector<Oid> objects = CreateTwoObjectFile("r", &fno);
  ASSERT_EQ(objects.size(), 2u);
  ASSERT_TRUE(a_.Lookup(kRoot, "r").ok());  // as the kernel does before an unlink
  std::vector<uint64_t> asked;
  Result<Unlinked> gone = a_.Unlink(kRoot, "r", [&](uint64_t fno) {
    asked.push_back(fno);
    return true;
  });
  ASSERT_TRUE(gone.ok()) << gone.status().ToString();
  EXPECT_TRUE(gone->last_link);
  ASSERT_TRUE(gone->inode_deleted_at_size.has_value());
  EXPECT_EQ(*gone->inode_deleted_at_size, ObjectSize() + 5);
  EXPECT_FALSE(asked.empty());
  EXPECT_EQ(asked.front(), fno);
  const Oid inode{kFnso, fno, 0, ObjectType::kInode, CopyFlag::kOriginal};
  for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
    EXPECT_TRUE(cluster_.client().Read(inode.WithFlag(flag)).status().Is(StatusCode::kNotFound))
        << inode.WithFlag(flag).ToString();
    EXPECT_TRUE(cluster_.client().Read(objects[1].WithFlag(flag)).ok())
        << "the data went with the unlink";
  }
  ASSERT_TRUE(a_.ReleaseUnlinked(*gone).ok());
  for (const Oid& oid : objects) {
    for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
      EXPECT_TRUE(cluster_.client().Read(oid.WithFlag(flag)).status().Is(StatusCode::kNotFound))
          << oid.WithFlag(flag).ToString();
    }
  }
}

// The same unlink of a file with a second name, or one whose caller will not free it (open
// there), writes the count as before: the INODE stays.
TEST_F(NamespaceTest, AnUnlinkThatFreesAtOnceKeepsAFileWithAnotherLinkOrOpen) {
  Result<InodeRef> file = CreateFile(a_, "one");
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE(a_.Link(file->fno, kRoot, "two").ok());
  ASSERT_TRUE(a_.Lookup(kRoot, "one").ok());
  Result<Unlinked> first = a_.Unlink(kRoot, "one", [](uint64_t) { return true; });
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_FALSE(first->last_link);
  EXPECT_FALSE(first->inode_deleted_at_size.has_value());
  Result<InodeRef> left = b_.GetInode(file->fno);
  ASSERT_TRUE(left.ok()) << left.status().ToString();
  EXPECT_EQ(left->inode.nlink, 1u);
  Result<Unlinked> last = a_.Unlink(kRoot, "two", [](uint64_t) { return false; });
  ASSERT_TRUE(last.ok()) << last.status().ToString();
  EXPECT_TRUE(last->last_link);
  EXPECT_FALSE(last->inode_deleted_at_size.has_value());
  left = b_.GetInode(file->fno);
  ASSERT_TRUE(left.ok()) << "an open file's INODE went with its last name";
  EXPECT_EQ(left->inode.nlink, 0u);
}

// B wrote and published a larger size to the INODE of a file A just unlinked, before A's
// release (the mount's, or at A's last close). The release frees what the INODE says now, not
// the size A's unlink saw: B's objects used to stay until fsck collected them.
TEST_F(NamespaceTest, AReleaseFreesTheSizePublishedSinceTheUnlink) {
  Result<InodeRef> file = CreateFile(a_, "r");
  ASSERT_TRUE(file.ok());
  const uint64_t object_size = cluster_.client().map().object_size;
  Result<Unlinked> gone = a_.Unlink(kRoot, "r");
  ASSERT_TRUE(gone.ok()) << gone.status().ToString();
  ASSERT_TRUE(gone->last_link);
  std::vector<Oid> objects;
  for (uint64_t index = 0; index < 3; ++index) {
    objects.push_back(Oid{kFnso, file->fno, index, ObjectType::kData, CopyFlag::kOriginal});
    ASSERT_TRUE(cluster_.client().WriteBothCopies(objects.back(), "bytes", {.replace = true}).ok());
  }
  ASSERT_TRUE(b_.ExtendAndTouch(file->fno, 2 * object_size + 5, Now()).ok());
  ASSERT_TRUE(a_.ReleaseInode(file->fno).ok());
  EXPECT_TRUE(b_.GetInode(file->fno).status().Is(StatusCode::kNotFound));
  for (const Oid& oid : objects) {
    for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
      EXPECT_TRUE(cluster_.client().Read(oid.WithFlag(flag)).status().Is(StatusCode::kNotFound))
          << oid.WithFlag(flag).ToString() << " stays";
    }
  }
  // B's next publish finds the INODE gone from both copies (and deletes what it wrote since).
  Result<bool> inode_gone = b_.InodeGoneFromBothCopies(file->fno);
  ASSERT_TRUE(inode_gone.ok()) << inode_gone.status().ToString();
  EXPECT_TRUE(*inode_gone);
}

// The INODE's copies differ when the release comes: the original's OSD restarted and has not
// been repaired yet (here: the original is missing), so no version read from the replica
// matches the original's. The release still frees everything (it used to give up after its
// retries, and left the INODE and the data to fsck).
TEST_F(NamespaceTest, AReleaseFreesAFileWhoseInodeCopiesDiffer) {
  Result<InodeRef> file = CreateFile(a_, "r");
  ASSERT_TRUE(file.ok());
  std::vector<Oid> objects;
  for (uint64_t index = 0; index < 2; ++index) {
    objects.push_back(Oid{kFnso, file->fno, index, ObjectType::kData, CopyFlag::kOriginal});
    ASSERT_TRUE(cluster_.client().WriteBothCopies(objects.back(), "bytes", {.replace = true}).ok());
  }
  ASSERT_TRUE(a_.ExtendAndTouch(file->fno, cluster_.client().map().object_size + 5, Now()).ok());
  Result<Unlinked> gone = a_.Unlink(kRoot, "r");
  ASSERT_TRUE(gone.ok()) << gone.status().ToString();
  ASSERT_TRUE(gone->last_link);
  // The original's OSD lost its copy of the INODE (a damaged disk, not repaired yet): the
  // replica answers, at a version the original's conditional delete cannot match. (An original
  // deleted by a client would be a deletion cut short: the INODE gone.)
  const Oid inode{kFnso, file->fno, 0, ObjectType::kInode, CopyFlag::kOriginal};
  LoseOnDisk(inode);
  Status released = b_.ReleaseInode(file->fno);
  ASSERT_TRUE(released.ok()) << released.ToString();
  objects.push_back(inode);
  for (const Oid& oid : objects) {
    for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
      EXPECT_TRUE(cluster_.client().Read(oid.WithFlag(flag)).status().Is(StatusCode::kNotFound))
          << oid.WithFlag(flag).ToString() << " stays";
    }
  }
}

// A changed a directory a moment ago, then B removed it: A's create there, which starts from
// A's own write of the directory, finds it gone only after its entry committed. The create
// fails, and takes back the entry and the new INODE.
TEST_F(NamespaceTest, CreateInADirectoryAnotherClientRemovedLeavesNothing) {
  Result<InodeRef> dir = Mkdir(a_, kRoot, "d");
  ASSERT_TRUE(dir.ok());
  ASSERT_TRUE(a_.Create(dir->fno, "x0", S_IFREG | 0644, 0, Credentials{}).ok());
  ASSERT_TRUE(a_.Unlink(dir->fno, "x0").ok());  // A wrote d a moment ago
  ASSERT_TRUE(b_.Rmdir(kRoot, "d").ok());
  Result<InodeRef> made = a_.Create(dir->fno, "x", S_IFREG | 0644, 0, Credentials{});
  EXPECT_TRUE(made.status().Is(StatusCode::kNotFound)) << made.status().ToString();
  auto entries = cluster_.client().ListFileObjectsEitherCopy(kFnso, dir->fno, ObjectType::kDirent);
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  EXPECT_TRUE(entries->empty()) << entries->size() << " DIRENT objects left in the removed dir";
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

// A's unlink and rename start the file's link count from A's lookup of the name; B linked and
// unlinked the file since. The count each change writes is the current one plus or minus one,
// not the looked-up one: the conditional write refuses the stale start and the change reads
// again.
TEST_F(NamespaceTest, ChangesFromALookedUpInodeKeepAnotherClientsLinks) {
  Result<InodeRef> file = CreateFile(a_, "f");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_TRUE(a_.Lookup(kRoot, "f").ok());  // nlink 1, as A read it
  ASSERT_TRUE(b_.Link(file->fno, kRoot, "g").ok());
  ASSERT_TRUE(b_.Link(file->fno, kRoot, "h").ok());
  ASSERT_EQ(Nlink(file->fno), 3);
  Result<Unlinked> gone = a_.Unlink(kRoot, "f");
  ASSERT_TRUE(gone.ok()) << gone.status().ToString();
  EXPECT_FALSE(gone->last_link);
  EXPECT_EQ(Nlink(file->fno), 2);

  ASSERT_TRUE(a_.Lookup(kRoot, "g").ok());  // nlink 2, as A read it
  ASSERT_TRUE(b_.Unlink(kRoot, "h").ok());
  Unlinked source_gone;
  Result<Unlinked> renamed =
      a_.Rename(kRoot, "g", kRoot, "renamed", RenameMode::kReplace, &source_gone);
  ASSERT_TRUE(renamed.ok()) << renamed.status().ToString();
  EXPECT_EQ(source_gone.fno, 0u) << "the file lives on under its new name";
  EXPECT_EQ(Nlink(file->fno), 1);
  Result<Unlinked> last = b_.Unlink(kRoot, "renamed");
  ASSERT_TRUE(last.ok()) << last.status().ToString();
  EXPECT_TRUE(last->last_link);
}

// A looked a name up and found a file; B replaced it with a directory: A's unlink refuses with
// EISDIR only after reading afresh, and a stale lookup of a directory does not refuse an unlink
// of the file that replaced it.
TEST_F(NamespaceTest, UnlinkRefusesADirectoryOnlyFromAFreshRead) {
  ASSERT_TRUE(Mkdir(b_, kRoot, "d").ok());
  ASSERT_TRUE(a_.Lookup(kRoot, "d").ok());  // a directory, as A read it
  ASSERT_TRUE(b_.Rmdir(kRoot, "d").ok());
  ASSERT_TRUE(CreateFile(b_, "d").ok());
  EXPECT_TRUE(a_.Unlink(kRoot, "d").ok());
  ASSERT_TRUE(Mkdir(b_, kRoot, "e").ok());
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

// Two clients take the same name at once: A renames it while B renames or unlinks it, B's
// change landing between A's reads and A's commit (a ClusterClient test hook runs B's change
// just before A writes its new entry). Only one of them may have it: A's rename reports
// NotFound and leaves no entry of its own, the target it would have replaced comes back, and
// every link count matches the entries. (A rename used to ignore that the old name was gone:
// both renames succeeded, two entries named one file with a count of one, and after an
// unlink the new entry named a freed file.)
TEST_F(NamespaceTest, ARenameThatLosesItsSourceToAnotherClientTakesNothing) {
  ClientWithHooks a_client(cluster_);
  Namespace& a = a_client.ns;
  OnceAtRootBucket& theirs = a_client.theirs;
  std::map<std::string, uint64_t> fnos;
  for (const char* name : {"x1", "x2", "x3", "t"}) {
    Result<InodeRef> made = CreateFile(b_, name);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    fnos[name] = made->fno;
  }
  // B's change runs when A is about to commit an entry named `name` in the root.
  auto before_commit_of = [&](const std::string& name, std::function<void()> change) {
    theirs.Arm(name, std::move(change));
  };

  {
    SCOPED_TRACE("B renames it first");
    before_commit_of("ya", [&] { EXPECT_TRUE(b_.Rename(kRoot, "x1", kRoot, "yb", {}).ok()); });
    Unlinked gone;
    Result<Unlinked> renamed = a.Rename(kRoot, "x1", kRoot, "ya", RenameMode::kReplace, &gone);
    EXPECT_TRUE(renamed.status().Is(StatusCode::kNotFound)) << renamed.status().ToString();
    EXPECT_FALSE(gone.last_link);
    EXPECT_EQ(Nlink(fnos["x1"]), 1);
  }
  {
    SCOPED_TRACE("B unlinks it first");
    Result<Unlinked> unlinked = Status::Internal("not run");
    before_commit_of("z", [&] { unlinked = b_.Unlink(kRoot, "x2"); });
    Unlinked gone;
    Result<Unlinked> renamed = a.Rename(kRoot, "x2", kRoot, "z", RenameMode::kReplace, &gone);
    EXPECT_TRUE(renamed.status().Is(StatusCode::kNotFound)) << renamed.status().ToString();
    ASSERT_TRUE(unlinked.ok()) << unlinked.status().ToString();
    // A's rename held a link while B unlinked, so A's is the last: A frees the file.
    EXPECT_FALSE(unlinked->last_link);
    EXPECT_EQ(gone.fno, fnos["x2"]);
    EXPECT_TRUE(gone.last_link);
    EXPECT_EQ(Nlink(fnos["x2"]), 0);
    EXPECT_TRUE(a.ReleaseInode(gone.fno).ok());
  }
  {
    SCOPED_TRACE("B renames it first, A's rename would replace a file");
    before_commit_of("t", [&] { EXPECT_TRUE(b_.Rename(kRoot, "x3", kRoot, "u", {}).ok()); });
    Result<Unlinked> renamed = a.Rename(kRoot, "x3", kRoot, "t", RenameMode::kReplace);
    EXPECT_TRUE(renamed.status().Is(StatusCode::kNotFound)) << renamed.status().ToString();
    EXPECT_EQ(Nlink(fnos["t"]), 1);
    EXPECT_EQ(Nlink(fnos["x3"]), 1);
  }

  Namespace fresh(&cluster_.client(), kFnso);
  Result<std::vector<DirEntry>> entries = fresh.ReadDir(kRoot);
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  std::map<std::string, uint64_t> names;
  for (const DirEntry& e : *entries) names[e.name] = e.fno;
  const std::map<std::string, uint64_t> want = {
      {"yb", fnos["x1"]}, {"t", fnos["t"]}, {"u", fnos["x3"]}};
  EXPECT_EQ(names, want);
  for (const auto& [name, fno] : names) {
    EXPECT_TRUE(fresh.GetInode(fno).ok()) << name << " names a file that is gone";
  }
}

// fsck on a live namespace: a file and a directory made while its census runs, each with its
// INODE on the OSD listed first (before they existed) and its DATA or DIRENT object on one
// listed later. They are live, not dangling names nor orphans to collect: fsck asks for
// their INODE once more before it says so (it used to report the names dangling and delete
// the objects, even with --grace).
TEST_F(NamespaceTest, FsckLeavesWhatIsMadeWhileItsCensusRunsAlone) {
  ASSERT_TRUE(CreateFile(a_, "before").ok());
  const Placement& placement = cluster_.client().placement();
  auto on = [&](const Oid& oid) { return placement.OsdFor(oid.WithFlag(CopyFlag::kOriginal)); };
  std::optional<uint32_t> listed;
  Oid data;          // of the file made meanwhile
  uint64_t dir = 0;  // made meanwhile, with an entry "x"
  FsckOptions options;
  options.grace_seconds = 0;  // nothing is spared for its age
  options.after_listing_osd = [&](uint32_t osd_id) {
    if (listed) return;
    listed = osd_id;
    for (int i = 0; i < 64 && (data.fno == 0 || dir == 0); ++i) {
      const std::string n = std::to_string(i);
      Result<InodeRef> file = CreateFile(b_, "f" + n);
      ASSERT_TRUE(file.ok()) << file.status().ToString();
      const Oid object{kFnso, file->fno, 0, ObjectType::kData};
      if (data.fno == 0 && on(Oid{kFnso, file->fno, 0, ObjectType::kInode}) == osd_id &&
          on(object) != osd_id) {
        ASSERT_TRUE(cluster_.client().WriteBothCopies(object, "bytes", {.replace = true}).ok());
        ASSERT_TRUE(b_.ExtendAndTouch(file->fno, 5, Now()).ok());
        data = object;
      }
      Result<InodeRef> made = Mkdir(b_, kRoot, "d" + n);
      ASSERT_TRUE(made.ok()) << made.status().ToString();
      if (dir == 0 && on(Oid{kFnso, made->fno, 0, ObjectType::kInode}) == osd_id &&
          on(Oid{kFnso, made->fno, DirentOffset("x"), ObjectType::kDirent}) != osd_id) {
        ASSERT_TRUE(b_.Create(made->fno, "x", S_IFREG | 0644, 0, Credentials{}).ok());
        dir = made->fno;
      }
    }
  };
  Result<FsckReport> report = RunFsck(&cluster_.client(), kFnso, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_NE(data.fno, 0u) << "no file made meanwhile has its objects on two OSDs that way";
  ASSERT_NE(dir, 0u) << "no directory made meanwhile has its objects on two OSDs that way";
  EXPECT_TRUE(report->dangling.empty()) << report->dangling.front();
  EXPECT_EQ(report->orphan_objects, 0u);
  for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
    EXPECT_TRUE(cluster_.client().Read(data.WithFlag(flag)).ok()) << data.WithFlag(flag).ToString();
  }
  Namespace fresh(&cluster_.client(), kFnso);
  Result<std::vector<DirEntry>> entries = fresh.ReadDir(dir);
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ(entries->front().name, "x");
}

// fsck reads one directory's entries after another, so a directory moved meanwhile from one
// read later to one read earlier is missed under both names. The rename stamps what it moves
// before the new entry lands, so fsck sees a changed inode, not an orphan, even with no grace.
// (A directory's rename used to leave its inode as it was, and fsck released it: its entries
// and every name under it dangled.)
TEST_F(NamespaceTest, FsckDuringADirectoryRenameDoesNotTakeItForAnOrphan) {
  Result<InodeRef> dst = Mkdir(a_, kRoot, "dst");
  ASSERT_TRUE(dst.ok()) << dst.status().ToString();
  ASSERT_TRUE(a_.Create(dst->fno, "keep", S_IFREG | 0644, 0, Credentials{}).ok());
  Result<InodeRef> src = Mkdir(a_, kRoot, "src");
  ASSERT_TRUE(src.ok()) << src.status().ToString();
  ASSERT_LT(dst->fno, src->fno) << "fsck reads directories in fno order";
  Result<InodeRef> moved = Mkdir(a_, src->fno, "D");
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  ASSERT_TRUE(a_.Create(moved->fno, "child", S_IFREG | 0644, 0, Credentials{}).ok());

  FsckOptions options;
  options.grace_seconds = 0;
  bool renamed = false;
  options.after_reading_entries = [&](uint64_t dir) {
    if (dir != dst->fno || renamed) return;
    renamed = true;
    Result<Unlinked> r = b_.Rename(src->fno, "D", dst->fno, "D", RenameMode::kReplace);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
  };
  Result<FsckReport> report = RunFsck(&cluster_.client(), kFnso, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_TRUE(renamed);
  EXPECT_EQ(report->collected, 0u);
  Namespace fresh(&cluster_.client(), kFnso);
  Result<InodeRef> entry = fresh.Lookup(dst->fno, "D");
  ASSERT_TRUE(entry.ok()) << entry.status().ToString();
  EXPECT_EQ(entry->fno, moved->fno);
  EXPECT_TRUE(fresh.GetInode(moved->fno).ok()) << "the moved directory's inode is gone";
  Result<std::vector<DirEntry>> children = fresh.ReadDir(moved->fno);
  ASSERT_TRUE(children.ok()) << children.status().ToString();
  EXPECT_EQ(children->size(), 1u);
  // Once nothing moves, the same fsck finds the namespace whole.
  Result<FsckReport> after = RunFsck(&cluster_.client(), kFnso, FsckOptions{.grace_seconds = 0});
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_TRUE(after->dangling.empty()) << after->dangling.front();
  EXPECT_EQ(after->orphan_inodes, 0u);
}

// A client that dies in a directory's rename: `dying` answers its commits in `dir`'s entries
// unsent, as a client killed there leaves them.
struct DyingClient {
  DyingClient(TestCluster& cluster, uint64_t dir)
      : client(cluster.client().map(), cluster.Rpc("client")), ns(&client, kFnso) {
    client.SetTestHooks({.instead_of_committing = [dir](const Oid& original) {
      return original.fno == dir && original.type == ObjectType::kDirent
                 ? Status::Unavailable("the client died here")
                 : Status::Ok();
    }});
  }
  ClusterClient client;
  Namespace ns;
};

class CutShortRenameTest : public NamespaceTest {
 protected:
  // O/D renamed to D2 by a client that dies after the new name's commit: D has both names.
  void SetUp() override {
    NamespaceTest::SetUp();
    Result<InodeRef> o = Mkdir(a_, kRoot, "O");
    ASSERT_TRUE(o.ok()) << o.status().ToString();
    o_ = o->fno;
    Result<InodeRef> d = Mkdir(a_, o_, "D");
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    d_ = d->fno;
    DyingClient dying(cluster_, o_);
    EXPECT_FALSE(dying.ns.Rename(o_, "D", kRoot, "D2", RenameMode::kReplace).ok());
    ASSERT_TRUE(NamesD(o_, "D"));
    ASSERT_TRUE(NamesD(kRoot, "D2"));
  }
  bool NamesD(uint64_t dir, const std::string& name) {
    Namespace fresh(&cluster_.client(), kFnso);
    Result<InodeRef> found = fresh.Lookup(dir, name);
    return found.ok() && found->fno == d_;
  }
  // D has one name, D2 in the root, no note, and the namespace is whole.
  void ExpectFinished() {
    EXPECT_FALSE(NamesD(o_, "D"));
    EXPECT_TRUE(NamesD(kRoot, "D2"));
    Namespace fresh(&cluster_.client(), kFnso);
    Result<InodeRef> inode = fresh.GetInode(d_);
    ASSERT_TRUE(inode.ok()) << inode.status().ToString();
    EXPECT_TRUE(inode->inode.renames.empty());
    EXPECT_EQ(inode->inode.parent, kRoot);
    ExpectWhole();
  }
  void ExpectWhole() {
    Result<FsckReport> report = DryRunFsck();
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    EXPECT_TRUE(report->dangling.empty()) << report->dangling.front();
    EXPECT_EQ(report->link_count_fixes, 0u);
    EXPECT_EQ(report->orphan_inodes, 0u);
    EXPECT_EQ(report->renames_finished, 0u);
  }
  uint64_t o_ = 0;
  uint64_t d_ = 0;
};

// While the note is young the rename may still be running: an rmdir or rename of either name
// waits (EBUSY). (An rmdir of one name used to delete the inode: the other name dangled.)
TEST_F(CutShortRenameTest, ChangesOfEitherNameWaitWhileTheNoteIsYoung) {
  EXPECT_TRUE(b_.Rmdir(kRoot, "D2").Is(StatusCode::kBusy));
  EXPECT_TRUE(b_.Rmdir(o_, "D").Is(StatusCode::kBusy));
  EXPECT_TRUE(
      b_.Rename(kRoot, "D2", kRoot, "D3", RenameMode::kReplace).status().Is(StatusCode::kBusy));
  EXPECT_TRUE(NamesD(o_, "D") && NamesD(kRoot, "D2"));
}

// Once the note has expired, the next change of the directory finishes the rename first: an
// rmdir of the old name then finds it gone, and D lives on under the new one.
TEST_F(CutShortRenameTest, AnRmdirFinishesAnExpiredRenameFirst) {
  b_.set_rename_note_expiry(std::chrono::seconds(0));
  EXPECT_TRUE(b_.Rmdir(o_, "D").Is(StatusCode::kNotFound));
  ExpectFinished();
}

// The same through a rename of the old name (to another directory): the old name is gone once
// the cut-short rename is finished, so this one finds nothing to move. (It used to move it,
// and an rmdir of D2 then left M/D dangling.)
TEST_F(CutShortRenameTest, ARenameOfTheOldNameFinishesTheExpiredRenameFirst) {
  Result<InodeRef> m = Mkdir(a_, kRoot, "M");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  b_.set_rename_note_expiry(std::chrono::seconds(0));
  Result<Unlinked> moved = b_.Rename(o_, "D", m->fno, "D", RenameMode::kReplace);
  EXPECT_TRUE(moved.status().Is(StatusCode::kNotFound)) << moved.status().ToString();
  EXPECT_FALSE(NamesD(m->fno, "D"));
  ExpectFinished();
  ASSERT_TRUE(b_.Rmdir(kRoot, "D2").ok());
  ExpectWhole();
}

// fsck (no grace: nothing is running) finishes it too.
TEST_F(CutShortRenameTest, FsckFinishesIt) {
  Result<FsckReport> fixed = RunFsck(&cluster_.client(), kFnso, FsckOptions{.grace_seconds = 0});
  ASSERT_TRUE(fixed.ok()) << fixed.status().ToString();
  EXPECT_EQ(fixed->renames_finished, 1u);
  ExpectFinished();
}

// A move of the old parent into D, while the cut-short rename's note says D may still be
// there, is a move into itself (the walk up follows both of D's possible parents).
TEST_F(CutShortRenameTest, AMoveIntoTheDirectoryFollowsBothItsParents) {
  Result<Unlinked> moved = b_.Rename(kRoot, "O", d_, "O", RenameMode::kReplace);
  EXPECT_TRUE(moved.status().Is(StatusCode::kInvalidArgument)) << moved.status().ToString();
}

// A rename whose new name's commit failed (the client died, or its answer was lost) leaves D
// recorded under its new parent with only its old name. Moving the old parent into D is still
// a move into itself.
TEST_F(NamespaceTest, AMoveIntoADirectoryWhoseRenameFailedFollowsItsOldParent) {
  Result<InodeRef> o = Mkdir(a_, kRoot, "O");
  Result<InodeRef> n = Mkdir(a_, kRoot, "N");
  ASSERT_TRUE(o.ok() && n.ok());
  Result<InodeRef> d = Mkdir(a_, o->fno, "D");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  DyingClient dying(cluster_, n->fno);
  EXPECT_FALSE(dying.ns.Rename(o->fno, "D", n->fno, "D", RenameMode::kReplace).ok());
  Result<Unlinked> moved = b_.Rename(kRoot, "O", d->fno, "O", RenameMode::kReplace);
  EXPECT_TRUE(moved.status().Is(StatusCode::kInvalidArgument)) << moved.status().ToString();
  // Finished (nothing was renamed), D is recorded under O again.
  Result<FsckReport> fixed = RunFsck(&cluster_.client(), kFnso, FsckOptions{.grace_seconds = 0});
  ASSERT_TRUE(fixed.ok()) << fixed.status().ToString();
  Namespace fresh(&cluster_.client(), kFnso);
  Result<InodeRef> inode = fresh.GetInode(d->fno);
  ASSERT_TRUE(inode.ok()) << inode.status().ToString();
  EXPECT_EQ(inode->inode.parent, o->fno);
  EXPECT_TRUE(inode->inode.renames.empty());
}

// An rmdir of a directory's new name after its rename committed it, before the old name's
// removal, waits (EBUSY). (It took the new name only, the rename then removed the old one,
// and the directory lived on with no name, taking files that fsck would collect.)
TEST_F(NamespaceTest, AnRmdirOfADirectorysNewNameWaitsForItsRenameToEnd) {
  Result<InodeRef> o = Mkdir(a_, kRoot, "O");
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  Result<InodeRef> d = Mkdir(a_, kRoot, "D");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ClientWithHooks a_client(cluster_);
  a_client.theirs.Arm("D", [&] {  // the removal of the old name, root/D
    Status removed = b_.Rmdir(o->fno, "D2");
    EXPECT_TRUE(removed.Is(StatusCode::kBusy)) << removed.ToString();
  });
  Result<Unlinked> renamed = a_client.ns.Rename(kRoot, "D", o->fno, "D2", RenameMode::kReplace);
  ASSERT_TRUE(a_client.theirs.Ran());
  ASSERT_TRUE(renamed.ok()) << renamed.status().ToString();
  Namespace fresh(&cluster_.client(), kFnso);
  Result<InodeRef> found = fresh.Lookup(o->fno, "D2");
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(found->fno, d->fno);
}

// Two clients make the same move of a directory at once: the second finds it done (its new
// entry names the directory already) and changes nothing, its recorded parent included. (It
// put back the old parent, and moves below the directory were then checked against it.)
TEST_F(NamespaceTest, TheSameMoveTwiceLeavesTheNewParentRecorded) {
  Result<InodeRef> a = Mkdir(a_, kRoot, "A");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  Result<InodeRef> d = Mkdir(a_, a->fno, "D");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  std::future<Result<Unlinked>> theirs;
  ClientWithHooks a_client(cluster_);
  a_client.theirs.Arm("D", [&] {  // A's commit of root/D: B has yet to find A/D gone
    theirs = std::async(std::launch::async,
                        [&] { return b_.Rename(a->fno, "D", kRoot, "D", RenameMode::kReplace); });
    theirs.wait_for(std::chrono::milliseconds(300));  // B waits for A's move lease
  });
  Result<Unlinked> moved = a_client.ns.Rename(a->fno, "D", kRoot, "D", RenameMode::kReplace);
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  ASSERT_TRUE(theirs.valid());
  Result<Unlinked> again = theirs.get();
  EXPECT_TRUE(again.ok() || again.status().Is(StatusCode::kNotFound)) << again.status().ToString();
  Namespace fresh(&cluster_.client(), kFnso);
  Result<InodeRef> inode = fresh.GetInode(d->fno);
  ASSERT_TRUE(inode.ok()) << inode.status().ToString();
  EXPECT_EQ(inode->inode.parent, kRoot);
  EXPECT_TRUE(inode->inode.renames.empty());
}

// An rmdir of a directory's old name while its rename has yet to commit the new one waits
// (EBUSY): the rename would give the removed directory a name, dangling. The rename then
// completes. (The rmdir used to delete the inode and the rename took itself back, losing it.)
TEST_F(NamespaceTest, AnRmdirWaitsForARenameOfItsDirectoryToGiveItsNewName) {
  Result<InodeRef> o = Mkdir(a_, kRoot, "O");
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  Result<InodeRef> d = Mkdir(a_, o->fno, "D");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ClientWithHooks a_client(cluster_);
  a_client.theirs.Arm("D2", [&] {
    Status removed = b_.Rmdir(o->fno, "D");
    EXPECT_TRUE(removed.Is(StatusCode::kBusy)) << removed.ToString();
  });
  Result<Unlinked> renamed = a_client.ns.Rename(o->fno, "D", kRoot, "D2", RenameMode::kReplace);
  ASSERT_TRUE(a_client.theirs.Ran());
  ASSERT_TRUE(renamed.ok()) << renamed.status().ToString();
  Namespace fresh(&cluster_.client(), kFnso);
  Result<InodeRef> found = fresh.Lookup(kRoot, "D2");
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(found->fno, d->fno);
  EXPECT_TRUE(found->inode.renames.empty());
  EXPECT_TRUE(fresh.Lookup(o->fno, "D").status().Is(StatusCode::kNotFound));
}

// fsck meets a file whose unlink removed one of its two names and has yet to lower the count
// (a stalled client): it notes the count, and lowers it only in a run after the grace period.
// (It lowered it at once; the unlink lowered it again and freed the file its other name
// names.) A count a client that died there left too high is lowered by the later run.
TEST_F(NamespaceTest, FsckLowersALinkCountOnlyOnceItStayedTooHighForTheGrace) {
  Result<InodeRef> dir = Mkdir(a_, kRoot, "dir");
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  Result<InodeRef> f = CreateFile(a_, "a");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_TRUE(a_.Link(f->fno, dir->fno, "b").ok());
  ASSERT_TRUE(a_.Link(f->fno, dir->fno, "c").ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // older than a grace of 1 s
  FsckOptions options;
  options.grace_seconds = 1;
  bool stalled = false;
  ClusterClient stalling(cluster_.client().map(), cluster_.Rpc("client"));
  stalling.SetTestHooks({.before_writing_original_then_replica = [&](const Oid& original) {
    if (stalled || original.fno != dir->fno || original.type != ObjectType::kInode) return;
    stalled = true;  // "b" is gone, the count not yet lowered
    Result<FsckReport> report = RunFsck(&cluster_.client(), kFnso, options);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    EXPECT_EQ(report->link_counts_held, 1u);
    EXPECT_EQ(report->link_count_fixes, 0u);
  }});
  Namespace c(&stalling, kFnso);
  Result<Unlinked> unlinked = c.Unlink(dir->fno, "b");
  ASSERT_TRUE(stalled);
  ASSERT_TRUE(unlinked.ok()) << unlinked.status().ToString();
  EXPECT_FALSE(unlinked->last_link);
  EXPECT_EQ(Nlink(f->fno), 2);

  // A client dies between the name's removal and the count's.
  ClusterClient dying(cluster_.client().map(), cluster_.Rpc("client"));
  dying.SetTestHooks({.instead_of_committing = [&](const Oid& original) {
    return original.fno == dir->fno && original.type == ObjectType::kInode
               ? Status::Unavailable("the client died here")
               : Status::Ok();
  }});
  Namespace d(&dying, kFnso);
  EXPECT_FALSE(d.Unlink(dir->fno, "c").ok());
  EXPECT_EQ(Nlink(f->fno), 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // the unlink's ctime
  Result<FsckReport> first = RunFsck(&cluster_.client(), kFnso, options);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->link_counts_held, 1u);
  EXPECT_EQ(Nlink(f->fno), 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  Result<FsckReport> second = RunFsck(&cluster_.client(), kFnso, options);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->link_count_fixes, 1u);
  EXPECT_EQ(Nlink(f->fno), 1);
  Result<FsckReport> after = DryRunFsck();
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(after->link_count_fixes + after->link_counts_held, 0u);
}

// A directory cannot be moved into itself or below itself (EINVAL), by the parents that
// directories record; moving it out of its own subtree's parent is fine.
TEST_F(NamespaceTest, ADirectoryCannotMoveIntoItself) {
  auto mkdir = [&](uint64_t dir, const std::string& name) {
    Result<InodeRef> made = Mkdir(a_, dir, name);
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    return made.ok() ? made->fno : 0;
  };
  const uint64_t p = mkdir(kRoot, "P");
  const uint64_t sub = mkdir(p, "sub");
  const uint64_t deep = mkdir(sub, "deep");
  for (uint64_t into : {p, sub, deep}) {
    Result<Unlinked> moved = b_.Rename(kRoot, "P", into, "P", RenameMode::kReplace);
    EXPECT_TRUE(moved.status().Is(StatusCode::kInvalidArgument)) << moved.status().ToString();
  }
  ASSERT_TRUE(b_.Rename(sub, "deep", kRoot, "deep", RenameMode::kReplace).ok());
  ASSERT_TRUE(b_.Rename(kRoot, "P", deep, "P", RenameMode::kReplace).ok());
  Namespace fresh(&cluster_.client(), kFnso);
  Result<InodeRef> moved = fresh.GetInode(p);
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  EXPECT_EQ(moved->inode.parent, deep);
  EXPECT_TRUE(b_.Rename(kRoot, "deep", sub, "deep", RenameMode::kReplace)
                  .status()
                  .Is(StatusCode::kInvalidArgument));
}

// Two clients move two directories into each other at once (mv P Q/ beside mv Q P/): the
// second waits for the first's move lease and then sees that it would move Q into itself.
// (Both checks used to pass before either move, and P and Q ended in a cycle cut off from the
// root, with everything below them.)
TEST_F(NamespaceTest, TwoClientsMovingDirectoriesIntoEachOtherMakeNoCycle) {
  Result<InodeRef> p = Mkdir(a_, kRoot, "P");
  Result<InodeRef> q = Mkdir(a_, kRoot, "Q");
  ASSERT_TRUE(p.ok() && q.ok());
  std::future<Result<Unlinked>> theirs;
  ClusterClient mine(cluster_.client().map(), cluster_.Rpc("client"));
  mine.SetTestHooks({.before_writing_original_then_replica = [&](const Oid& original) {
    if (theirs.valid() || original != Oid{kFnso, p->fno, 0, ObjectType::kInode}) return;
    // A has checked its move and is about to record P's new parent: B moves Q into P now.
    theirs = std::async(std::launch::async,
                        [&] { return b_.Rename(kRoot, "Q", p->fno, "Q", RenameMode::kReplace); });
    theirs.wait_for(std::chrono::milliseconds(500));
  }});
  Namespace a(&mine, kFnso);
  Result<Unlinked> moved = a.Rename(kRoot, "P", q->fno, "P", RenameMode::kReplace);
  ASSERT_TRUE(theirs.valid()) << "the hook never ran";
  Result<Unlinked> other = theirs.get();
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  EXPECT_TRUE(other.status().Is(StatusCode::kInvalidArgument)) << other.status().ToString();
  Namespace fresh(&cluster_.client(), kFnso);
  Result<InodeRef> found_q = fresh.Lookup(kRoot, "Q");
  ASSERT_TRUE(found_q.ok()) << "Q is cut off from the root: " << found_q.status().ToString();
  Result<InodeRef> found_p = fresh.Lookup(q->fno, "P");
  ASSERT_TRUE(found_p.ok()) << found_p.status().ToString();
  EXPECT_TRUE(fresh.Lookup(p->fno, "Q").status().Is(StatusCode::kNotFound));
}

// A move lease a client left behind when it died holds other clients' directory moves only
// until it expires.
TEST_F(NamespaceTest, ADirectoryMoveWaitsOutALeaseLeftByADeadClient) {
  ASSERT_TRUE(Mkdir(a_, kRoot, "from").ok());
  Result<InodeRef> to = Mkdir(a_, kRoot, "to");
  ASSERT_TRUE(to.ok()) << to.status().ToString();
  const MoveLease dead{12345, Now().sec + 1};
  ASSERT_TRUE(
      cluster_.client()
          .WriteOriginalThenReplica(Oid{kFnso, 0, 1, ObjectType::kSuper}, EncodeMoveLease(dead), 0)
          .ok());
  Result<Unlinked> moved = b_.Rename(kRoot, "from", to->fno, "from", RenameMode::kReplace);
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  Namespace fresh(&cluster_.client(), kFnso);
  EXPECT_TRUE(fresh.Lookup(to->fno, "from").ok());
  // Released: the next move takes it at once.
  EXPECT_TRUE(b_.Rename(to->fno, "from", kRoot, "from", RenameMode::kReplace).ok());
  EXPECT_TRUE(cluster_.client()
                  .Read(Oid{kFnso, 0, 1, ObjectType::kSuper})
                  .status()
                  .Is(StatusCode::kNotFound));
}

// A's kernel holds T for directory X and renames S over it; B moved X to U, and made a new T
// (or none), between A's lookup of T and A's rename. The rename must not go ahead: Linux
// marks the directory it took for replaced, X, dead, and X stays unlistable in A (it did
// in chaos runs). It answers Stale, and the kernel looks T up again.
TEST_F(NamespaceTest, ARenameOverANameThatNamesAnotherDirectoryNowIsStale) {
  Result<InodeRef> x = Mkdir(a_, kRoot, "T");
  ASSERT_TRUE(x.ok()) << x.status().ToString();
  ASSERT_TRUE(Mkdir(a_, kRoot, "S").ok());
  ASSERT_TRUE(b_.Rename(kRoot, "T", kRoot, "U", RenameMode::kReplace).ok());
  Result<Unlinked> renamed =
      a_.Rename(kRoot, "S", kRoot, "T", RenameMode::kReplace, nullptr, std::nullopt, x->fno);
  EXPECT_TRUE(renamed.status().Is(StatusCode::kStale)) << renamed.status().ToString();
  Result<InodeRef> y = Mkdir(b_, kRoot, "T");
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  renamed = a_.Rename(kRoot, "S", kRoot, "T", RenameMode::kReplace, nullptr, std::nullopt, x->fno);
  EXPECT_TRUE(renamed.status().Is(StatusCode::kStale)) << renamed.status().ToString();
  EXPECT_TRUE(a_.Lookup(kRoot, "S").ok()) << "S moved";
  Result<InodeRef> t = a_.Lookup(kRoot, "T");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->fno, y->fno);
  // Through its fresh view the rename replaces the new T.
  renamed = a_.Rename(kRoot, "S", kRoot, "T", RenameMode::kReplace, nullptr, std::nullopt, y->fno);
  EXPECT_TRUE(renamed.ok()) << renamed.status().ToString();
  EXPECT_TRUE(b_.Lookup(kRoot, "U").ok());
}

// B's move of P/d to R starts from a lookup of P/d; A renames it to P/e before B's pin (a
// rename within a directory takes no lease). B must not note a rename of a name d no longer
// has: it gives up (ENOENT) and leaves d recorded under P. (It noted it, died before its
// commit, and the finish of that note recorded R: a move of P into d then passed the check
// and cut both off from the root. Had it died taking its commit back, d kept two names.)
TEST_F(NamespaceTest, ARenameFromAStaleLookupOfADirectoryNotesNothing) {
  Result<InodeRef> p = Mkdir(a_, kRoot, "P");
  Result<InodeRef> r = Mkdir(a_, kRoot, "R");
  ASSERT_TRUE(p.ok() && r.ok());
  Result<InodeRef> d = Mkdir(a_, p->fno, "d");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  bool renamed_meanwhile = false;
  ClusterClient mine(cluster_.client().map(), cluster_.Rpc("client"));
  mine.SetTestHooks(
      {.before_writing_original_then_replica =
           [&](const Oid& original) {
             if (renamed_meanwhile || original != Oid{kFnso, d->fno, 0, ObjectType::kInode}) {
               return;
             }
             renamed_meanwhile = true;  // B's pin comes next
             EXPECT_TRUE(a_.Rename(p->fno, "d", p->fno, "e", RenameMode::kReplace).ok());
           },
       // B dies at its commit, should it get there.
       .instead_of_committing =
           [&](const Oid& original) {
             return original.fno == r->fno && original.type == ObjectType::kDirent
                        ? Status::Unavailable("the client died here")
                        : Status::Ok();
           }});
  Namespace b(&mine, kFnso);
  Result<Unlinked> moved = b.Rename(p->fno, "d", r->fno, "d", RenameMode::kReplace);
  ASSERT_TRUE(renamed_meanwhile);
  EXPECT_TRUE(moved.status().Is(StatusCode::kNotFound)) << moved.status().ToString();
  Result<FsckReport> fixed = RunFsck(&cluster_.client(), kFnso, FsckOptions{.grace_seconds = 0});
  ASSERT_TRUE(fixed.ok()) << fixed.status().ToString();
  Namespace fresh(&cluster_.client(), kFnso);
  Result<InodeRef> inode = fresh.GetInode(d->fno);
  ASSERT_TRUE(inode.ok()) << inode.status().ToString();
  EXPECT_TRUE(inode->inode.renames.empty());
  EXPECT_EQ(inode->inode.parent, p->fno);
  EXPECT_TRUE(fresh.Lookup(r->fno, "d").status().Is(StatusCode::kNotFound));
  Result<Unlinked> cycle = b_.Rename(kRoot, "P", d->fno, "P", RenameMode::kReplace);
  EXPECT_TRUE(cycle.status().Is(StatusCode::kInvalidArgument)) << cycle.status().ToString();
}

// A directory made before directories recorded their parents has none, and a move's check
// that the target is not inside the moved directory stops there: fsck records the parent
// (the directory its one name is in), and the move is refused.
TEST_F(NamespaceTest, FsckRecordsTheParentOfADirectoryMadeWithoutOne) {
  Result<InodeRef> p = Mkdir(a_, kRoot, "P");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  Result<InodeRef> q = Mkdir(a_, p->fno, "Q");
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  Result<FsckReport> report = DryRunFsck();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->parents_recorded, 0u);
  for (uint64_t fno : {p->fno, q->fno}) {  // as an older client made them
    Result<InodeRef> now = a_.GetInode(fno);
    ASSERT_TRUE(now.ok()) << now.status().ToString();
    Inode older = now->inode;
    older.parent = 0;
    ASSERT_TRUE(cluster_.client()
                    .WriteOriginalThenReplica(Oid{kFnso, fno, 0, ObjectType::kInode},
                                              EncodeInode(older), now->version)
                    .ok());
  }
  report = DryRunFsck();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->parents_recorded, 2u);
  FsckOptions fix;
  fix.grace_seconds = 0;
  report = RunFsck(&cluster_.client(), kFnso, fix);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->parents_recorded, 2u);
  Result<InodeRef> recorded = a_.GetInode(q->fno);
  ASSERT_TRUE(recorded.ok()) << recorded.status().ToString();
  EXPECT_EQ(recorded->inode.parent, p->fno);
  recorded = a_.GetInode(p->fno);
  ASSERT_TRUE(recorded.ok()) << recorded.status().ToString();
  EXPECT_EQ(recorded->inode.parent, kRoot);
  Result<Unlinked> cycle = b_.Rename(kRoot, "P", q->fno, "P", RenameMode::kReplace);
  EXPECT_TRUE(cycle.status().Is(StatusCode::kInvalidArgument)) << cycle.status().ToString();
  report = DryRunFsck();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->parents_recorded, 0u);
  EXPECT_TRUE(report->cut_off.empty()) << report->cut_off.front();
}

// fsck reports directories that the root does not reach (a cycle, as two clients' crossing
// moves made before the move lease) and directories with two names (as a rename cut short
// left before rename notes), made here by writing directory entries directly; it reconnects
// the cycle under /lost+found.
TEST_F(NamespaceTest, FsckReportsDirectoriesCutOffFromTheRootOrNamedTwice) {
  Result<InodeRef> p = Mkdir(a_, kRoot, "P");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  Result<InodeRef> q = Mkdir(a_, p->fno, "Q");
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  Result<InodeRef> r = Mkdir(a_, kRoot, "R");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  Result<FsckReport> whole = DryRunFsck();
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  EXPECT_TRUE(whole->cut_off.empty()) << whole->cut_off.front();
  EXPECT_TRUE(whole->named_twice.empty()) << whole->named_twice.front();

  ASSERT_NE(DirentOffset("R"), DirentOffset("R2"));
  // R gets a second name, root/R2; P leaves the root for Q: P and Q in a cycle.
  SetEntries(kRoot, "R2", {DirEntry{"R2", r->fno, S_IFDIR}});
  SetEntries(kRoot, "P", {});
  SetEntries(q->fno, "P", {DirEntry{"P", p->fno, S_IFDIR}});
  Result<FsckReport> report = DryRunFsck();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->cut_off.size(), 2u);
  ASSERT_EQ(report->named_twice.size(), 1u);
  EXPECT_NE(report->named_twice.front().find("'R2'"), std::string::npos)
      << report->named_twice.front();
  EXPECT_TRUE(report->dangling.empty()) << report->dangling.front();

  // fsck moves P (the first of the cycle it meets) to /lost+found, which brings Q back too.
  report = FixingFsck();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->cut_off.empty()) << report->cut_off.front();
  ASSERT_EQ(report->reconnected.size(), 1u);
  EXPECT_NE(report->reconnected.front().find("/lost+found/#" + std::to_string(p->fno)),
            std::string::npos)
      << report->reconnected.front();
  Result<InodeRef> lost_and_found = b_.Lookup(kRoot, "lost+found");
  ASSERT_TRUE(lost_and_found.ok()) << lost_and_found.status().ToString();
  Result<InodeRef> found_p = b_.Lookup(lost_and_found->fno, "#" + std::to_string(p->fno));
  ASSERT_TRUE(found_p.ok()) << found_p.status().ToString();
  EXPECT_EQ(found_p->fno, p->fno);
  EXPECT_EQ(found_p->inode.parent, lost_and_found->fno);
  Result<InodeRef> found_q = b_.Lookup(p->fno, "Q");
  ASSERT_TRUE(found_q.ok()) << found_q.status().ToString();
  EXPECT_TRUE(b_.Lookup(q->fno, "P").status().Is(StatusCode::kNotFound));
  report = DryRunFsck();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->cut_off.empty()) << report->cut_off.front();
  EXPECT_TRUE(report->reconnected.empty());
  EXPECT_TRUE(report->dangling.empty()) << report->dangling.front();
  EXPECT_EQ(report->link_count_fixes, 0u);
  EXPECT_EQ(report->named_twice.size(), 1u);  // left to the user
}

// fsck moves one directory per cycle, not one below it: Y, under Q in the cycle P <-> Q,
// stays in Q though it was made first (fsck went by file number, and detached it).
TEST_F(NamespaceTest, FsckReconnectsACycleNotTheDirectoriesBelowIt) {
  Result<InodeRef> y = Mkdir(a_, kRoot, "Y");
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  Result<InodeRef> p = Mkdir(a_, kRoot, "P");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  Result<InodeRef> q = Mkdir(a_, p->fno, "Q");
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  ASSERT_TRUE(a_.Rename(kRoot, "Y", q->fno, "Y", RenameMode::kNoReplace).ok());
  SetEntries(kRoot, "P", {});
  SetEntries(q->fno, "P", {DirEntry{"P", p->fno, S_IFDIR}});
  Result<FsckReport> report = FixingFsck();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_EQ(report->reconnected.size(), 1u);
  EXPECT_TRUE(report->cut_off.empty()) << report->cut_off.front();
  Result<InodeRef> still = b_.Lookup(q->fno, "Y");
  EXPECT_TRUE(still.ok()) << "Y left Q: " << still.status().ToString();
}

// The same with renames landing inside fsck's walk, between its check of a directory's
// version and its lookups of the directory's names: each directory is judged by its version
// read after its names. (C, under S2 under S1, went to /lost+found.)
TEST_F(NamespaceTest, FsckJudgesADirectoryByItsVersionAfterItsNames) {
  std::vector<InodeRef> made;
  ASSERT_NO_FATAL_FAILURE(TwoParentsAndAChain({"M", "S1", "S2", "C"}, &made));
  const InodeRef *p1 = &made[0], *p2 = &made[1], *m = &made[2], *s1 = &made[3], *s2 = &made[4],
                 *c = &made[5];
  ClusterClient fsck_client(cluster_.client().map(), cluster_.Rpc("client"));
  std::atomic<int> c_reads{0};
  std::atomic<bool> s1_renamed{false}, s2_renamed{false};
  fsck_client.SetTestHooks({.after_reading = [&](const Oid& copy) {
    if (copy.type != ObjectType::kInode) return;
    if (copy.fno == c->fno) ++c_reads;
    if (copy.fno == s1->fno && c_reads >= 2 && !s1_renamed.exchange(true)) {
      EXPECT_TRUE(b_.Rename(m->fno, "S1", m->fno, "S1b", RenameMode::kNoReplace).ok());
    }
    if (copy.fno == s2->fno && s1_renamed && !s2_renamed.exchange(true)) {
      EXPECT_TRUE(b_.Rename(s1->fno, "S2", s1->fno, "S2b", RenameMode::kNoReplace).ok());
    }
  }});
  FsckOptions options;
  bool m_moved = false;
  options.after_reading_entries = [&](uint64_t dir) {
    if (dir != p1->fno || std::exchange(m_moved, true)) return;
    EXPECT_TRUE(b_.Rename(p2->fno, "M", p1->fno, "M", RenameMode::kNoReplace).ok());
  };
  Result<FsckReport> report = FixingFsck(&fsck_client, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_TRUE(m_moved);
  EXPECT_TRUE(report->reconnected.empty()) << report->reconnected.front();
  EXPECT_TRUE(b_.Lookup(s2->fno, "C").ok()) << "C left /P1/M/S1b/S2b";
}

// A directory whose one name was lost (damage) but that holds entries goes to /lost+found
// with everything below it. (fsck collected it as an orphan inode, then its entries as those
// of a vanished directory, then what they named: a tree deleted over three runs.)
TEST_F(NamespaceTest, FsckReconnectsANamelessDirectoryWithWhatIsBelowIt) {
  Result<InodeRef> t = Mkdir(a_, kRoot, "T");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  Result<InodeRef> c = Mkdir(a_, t->fno, "C");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  Result<InodeRef> data = a_.Create(c->fno, "data", S_IFREG | 0644, 0, Credentials{});
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  SetEntries(kRoot, "T", {});  // T's one name is lost
  Result<FsckReport> report = DryRunFsck();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->orphan_inodes, 0u);
  EXPECT_FALSE(report->cut_off.empty());
  for (int run = 0; run < 3; ++run) {
    report = FixingFsck();
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    EXPECT_TRUE(report->cut_off.empty()) << report->cut_off.front();
    EXPECT_EQ(report->collected, 0u) << "run " << run;
    EXPECT_EQ(report->reconnected.size(), run == 0 ? 1u : 0u);
  }
  Result<InodeRef> lost_and_found = b_.Lookup(kRoot, "lost+found");
  ASSERT_TRUE(lost_and_found.ok()) << lost_and_found.status().ToString();
  Result<InodeRef> found = b_.Lookup(lost_and_found->fno, "#" + std::to_string(t->fno));
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(found->inode.parent, lost_and_found->fno);
  EXPECT_TRUE(b_.Lookup(t->fno, "C").ok());
  EXPECT_TRUE(b_.Lookup(c->fno, "data").ok());
  report = DryRunFsck();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->link_count_fixes, 0u);
  EXPECT_TRUE(report->dangling.empty());
}

// A cycle member with a second name in another cycle is moved by the name that closes its own
// cycle: P (in the cycle P <-> Q, made first, so judged first) is also named p2 in A (in the
// cycle A <-> B), whose entries fsck reads before Q's. Moving P by p2 left P <-> Q whole, a
// loop hanging from /lost+found.
TEST_F(NamespaceTest, FsckMovesACycleMemberByTheNameThatClosesItsCycle) {
  auto cycle_of = [&](const std::string& outer, const std::string& inner) {
    Result<InodeRef> top = Mkdir(a_, kRoot, outer);
    EXPECT_TRUE(top.ok()) << top.status().ToString();
    Result<InodeRef> below = Mkdir(a_, top->fno, inner);
    EXPECT_TRUE(below.ok()) << below.status().ToString();
    return std::pair<uint64_t, uint64_t>(top->fno, below->fno);
  };
  Result<InodeRef> made_p = Mkdir(a_, kRoot, "P");
  ASSERT_TRUE(made_p.ok()) << made_p.status().ToString();
  const uint64_t p = made_p->fno;
  const auto [a, b] = cycle_of("A", "B");
  Result<InodeRef> made_q = Mkdir(a_, p, "Q");
  ASSERT_TRUE(made_q.ok()) << made_q.status().ToString();
  const uint64_t q = made_q->fno;
  ASSERT_LT(p, a);
  ASSERT_LT(a, q);  // fsck reads A's entries before Q's: P's name there comes first
  ASSERT_NE(DirentOffset("B"), DirentOffset("p2"));
  for (const auto& [top, below, name] :
       {std::tuple(a, b, std::string("A")), std::tuple(p, q, std::string("P"))}) {
    SetEntries(kRoot, name, {});
    SetEntries(below, name, {DirEntry{name, top, S_IFDIR}});
  }
  SetEntries(a, "p2", {DirEntry{"p2", p, S_IFDIR}});
  Result<FsckReport> report = FixingFsck();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->cut_off.empty()) << report->cut_off.front();
  EXPECT_EQ(report->reconnected.size(), 2u);
  EXPECT_TRUE(b_.Lookup(q, "P").status().Is(StatusCode::kNotFound))
      << "P <-> Q stayed a cycle, hanging from /lost+found";
  EXPECT_TRUE(b_.Lookup(p, "Q").ok());
  EXPECT_EQ(report->named_twice.size(), 1u);  // P: in /lost+found and in A, left to the user
}

// A directory in a cycle with a second name elsewhere in it keeps being reported as named
// twice after the cycle is reconnected by its other name.
TEST_F(NamespaceTest, FsckStillReportsTheSecondNameOfAReconnectedDirectory) {
  Result<InodeRef> r = Mkdir(a_, kRoot, "R");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  Result<InodeRef> p = Mkdir(a_, kRoot, "P");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  Result<InodeRef> q = Mkdir(a_, p->fno, "Q");
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  ASSERT_TRUE(a_.Rename(kRoot, "R", p->fno, "R", RenameMode::kNoReplace).ok());
  ASSERT_NE(DirentOffset("P"), DirentOffset("R2"));
  SetEntries(q->fno, "R2", {DirEntry{"R2", r->fno, S_IFDIR}});  // R's second name
  SetEntries(kRoot, "P", {});
  SetEntries(q->fno, "P", {DirEntry{"P", p->fno, S_IFDIR}});
  Result<FsckReport> report = FixingFsck();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_FALSE(report->reconnected.empty());
  EXPECT_EQ(report->named_twice.size(), 1u) << "R still has two names, unreported";
}

// Directories that fsck's walk found cut off from the root because other clients moved them
// while it read (B moves /P2/A to /P1/A between fsck's reads of P1 and P2, then renames A/X
// after fsck read X's inode) are judged again at once before anything moves: a directory
// changed since fsck read it cannot be judged. (Y, under X, went to /lost+found.)
TEST_F(NamespaceTest, FsckMovesNoDirectoryThatClientsMovedWhileItRan) {
  std::vector<InodeRef> made;
  ASSERT_NO_FATAL_FAILURE(TwoParentsAndAChain({"A", "X", "Y"}, &made));
  const InodeRef *p1 = &made[0], *p2 = &made[1], *a = &made[2], *x = &made[3], *y = &made[4];

  ClusterClient fsck_client(cluster_.client().map(), cluster_.Rpc("client"));
  std::atomic<bool> x_renamed{false};
  fsck_client.SetTestHooks({.after_reading = [&](const Oid& copy) {
    // fsck reads Y's inode after X's; later, its walk reads X's names.
    if (copy.fno != y->fno || copy.type != ObjectType::kInode || x_renamed.exchange(true)) {
      return;
    }
    Result<Unlinked> renamed = b_.Rename(a->fno, "X", a->fno, "X2", RenameMode::kReplace);
    EXPECT_TRUE(renamed.ok()) << renamed.status().ToString();
  }});
  FsckOptions options;
  bool a_moved = false;
  options.after_reading_entries = [&](uint64_t dir) {
    if (dir != p1->fno || std::exchange(a_moved, true)) return;
    Result<Unlinked> moved = b_.Rename(p2->fno, "A", p1->fno, "A", RenameMode::kReplace);
    EXPECT_TRUE(moved.ok()) << moved.status().ToString();
  };
  Result<FsckReport> report = FixingFsck(&fsck_client, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_TRUE(a_moved) << "A not moved";
  ASSERT_TRUE(x_renamed) << "X not renamed";
  EXPECT_TRUE(report->reconnected.empty()) << report->reconnected.front();
  EXPECT_TRUE(report->cut_off.empty()) << report->cut_off.front();
  EXPECT_TRUE(b_.Lookup(x->fno, "Y").ok()) << "Y left /P1/A/X2";
}

// A client that finds a file's INODE gone deletes the data it wrote (Namespace::ReleaseData):
// only when both copies answer so. One copy absent with the other's OSD down is an outage,
// though a read of either copy then answers NotFound.
// A client that dies between the two deletes of an unlink's DIRENT bucket leaves the replica
// with the name after the original (the commit point) went. The name is gone: a lookup does
// not find it (the read finishes the deletion), and it can be made again and removed. (The
// replica used to answer for it: a lookup found the name, which a listing did not show; an
// unlink failed after ~1 s of conflicts with the original's tombstone; a create said EEXIST.)
TEST_F(NamespaceTest, AnUnlinkCutShortBetweenItsCopiesLeavesTheNameFree) {
  Result<InodeRef> file = CreateFile(a_, "x");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  const Oid bucket{kFnso, kRoot, DirentOffset("x"), ObjectType::kDirent};
  Result<wire::ReadResponse> now = cluster_.client().Read(bucket);
  ASSERT_TRUE(now.ok()) << now.status().ToString();
  ASSERT_TRUE(cluster_.client().DeleteCopy(bucket, now->meta().version(), std::nullopt).ok());
  ASSERT_TRUE(cluster_.client().Read(bucket.OtherCopy()).ok()) << "the replica stays";

  Namespace fresh(&cluster_.client(), kFnso);
  EXPECT_TRUE(fresh.Lookup(kRoot, "x").status().Is(StatusCode::kNotFound));
  EXPECT_TRUE(cluster_.client().Read(bucket.OtherCopy()).status().Is(StatusCode::kNotFound))
      << "the lookup finished the deletion";
  EXPECT_TRUE(fresh.Unlink(kRoot, "x").status().Is(StatusCode::kNotFound));
  Result<InodeRef> again = fresh.Create(kRoot, "x", S_IFREG | 0644, 0, Credentials{});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  Result<InodeRef> found = a_.Lookup(kRoot, "x");
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(found->fno, again->fno);
  Result<Unlinked> removed = a_.Unlink(kRoot, "x");
  ASSERT_TRUE(removed.ok()) << removed.status().ToString();
  ASSERT_TRUE(a_.ReleaseInode(again->fno).ok());
  // The first file lost its only name when the unlink died: an orphan fsck collects.
  Result<FsckReport> report = FixingFsck();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->dangling.empty()) << report->dangling.front();
  EXPECT_EQ(report->orphan_inodes, 1u);
  EXPECT_TRUE(fresh.GetInode(file->fno).status().Is(StatusCode::kNotFound));
}

// fsck lists the replicas too: one whose original a deletion cut short removed is finished,
// and one of a file with no inode is collected; a live file's replica whose original is lost
// stays (the scrub's to restore).
TEST_F(NamespaceTest, FsckFinishesDeletionsCutShortBetweenTheCopies) {
  // A name whose unlink died between its bucket's copies.
  ASSERT_TRUE(CreateFile(a_, "x").ok());
  const Oid bucket{kFnso, kRoot, DirentOffset("x"), ObjectType::kDirent};
  ASSERT_TRUE(cluster_.client().DeleteCopy(bucket, std::nullopt, std::nullopt).ok());
  // A released file whose release died between its INODE's copies, after object 0's original.
  Result<InodeRef> gone = CreateFile(a_, "gone");
  ASSERT_TRUE(gone.ok()) << gone.status().ToString();
  const Oid gone_data{kFnso, gone->fno, 0, ObjectType::kData};
  ASSERT_TRUE(cluster_.client().WriteBothCopies(gone_data, "bytes", {.replace = true}).ok());
  ASSERT_TRUE(a_.Unlink(kRoot, "gone").ok());
  const Oid gone_inode{kFnso, gone->fno, 0, ObjectType::kInode};
  ASSERT_TRUE(cluster_.client().Delete(gone_inode).ok());
  ASSERT_TRUE(cluster_.client().Delete(gone_data).ok());
  // A live file that lost its data object's original.
  Result<InodeRef> keep = CreateFile(a_, "keep");
  ASSERT_TRUE(keep.ok()) << keep.status().ToString();
  const Oid keep_data{kFnso, keep->fno, 0, ObjectType::kData};
  ASSERT_TRUE(cluster_.client().WriteBothCopies(keep_data, "bytes", {.replace = true}).ok());
  ASSERT_TRUE(a_.ExtendAndTouch(keep->fno, 5, Now()).ok());
  ASSERT_TRUE(cluster_.client().Delete(keep_data).ok());

  Result<FsckReport> report = DryRunFsck();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->deletions_finished, 2u);
  for (const Oid& oid : {bucket, gone_inode, gone_data}) {
    EXPECT_TRUE(cluster_.client().Read(oid.OtherCopy()).ok())
        << oid.ToString() << ": a dry run changes nothing, also where it reads";
  }
  report = FixingFsck();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->deletions_finished, 2u);
  EXPECT_TRUE(report->dangling.empty()) << report->dangling.front();
  for (const Oid& oid : {bucket, gone_inode, gone_data}) {
    EXPECT_TRUE(cluster_.client().Read(oid.OtherCopy()).status().Is(StatusCode::kNotFound))
        << oid.ToString();
  }
  EXPECT_TRUE(cluster_.client().Read(keep_data.OtherCopy()).ok()) << "the only copy stays";
  report = DryRunFsck();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->deletions_finished, 0u);
  EXPECT_EQ(report->orphan_objects, 0u);
  EXPECT_EQ(report->orphan_inodes, 0u);
}

TEST_F(NamespaceTest, AnInodeIsGoneOnlyWhenBothCopiesSaySo) {
  Result<InodeRef> f = CreateFile(a_, "f");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  Result<bool> gone = b_.InodeGoneFromBothCopies(f->fno);
  ASSERT_TRUE(gone.ok()) << gone.status().ToString();
  EXPECT_FALSE(*gone);
  const Oid inode{kFnso, f->fno, 0, ObjectType::kInode};
  ASSERT_TRUE(cluster_.client().Delete(inode.WithFlag(CopyFlag::kOriginal)).ok());
  gone = b_.InodeGoneFromBothCopies(f->fno);
  ASSERT_TRUE(gone.ok()) << gone.status().ToString();
  EXPECT_FALSE(*gone) << "the replica holds it";
  const uint32_t replica_osd = cluster_.client().placement().ReplicaOsdFor(kFnso, f->fno);
  cluster_.Stop(replica_osd, SIGKILL);
  EXPECT_TRUE(b_.GetInode(f->fno).status().Is(StatusCode::kNotFound))
      << "what a publish sees (the premise)";
  gone = b_.InodeGoneFromBothCopies(f->fno);
  EXPECT_FALSE(gone.ok() && *gone) << "an outage taken for a removal";
  cluster_.Start(replica_osd);
  ASSERT_TRUE(cluster_.client().DeleteBothCopies(inode).ok());
  gone = b_.InodeGoneFromBothCopies(f->fno);
  // The client's channel to the restarted OSD may still be in its reconnect backoff (then the
  // replica's delete waits in a repair record for the OSDs' next pass).
  for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
       !(gone.ok() && *gone) && std::chrono::steady_clock::now() < until;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    gone = b_.InodeGoneFromBothCopies(f->fno);
  }
  ASSERT_TRUE(gone.ok()) << gone.status().ToString();
  EXPECT_TRUE(*gone);
}

// B creates a file in directory d while A removes d: A's rmdir found d empty, and B's entry
// commits before A removes d's own entry (a ClusterClient test hook runs B's create there).
// B's create then meets rmdir's mark on d, takes its entry and inode back and reports
// NotFound, and nothing is left behind. (B's create used to succeed into a directory about to
// be deleted; fsck then collected the file.) An rmdir that finds entries leaves no mark.
TEST_F(NamespaceTest, ACreateRacingAnRmdirOfItsDirectoryLeavesNothingBehind) {
  ClusterClient a_client(cluster_.client().map(), cluster_.Rpc("client"));
  Namespace a(&a_client, kFnso);
  // B's create runs inside A's rmdir (the hook): it cannot wait for the rmdir to end.
  b_.set_removal_wait(std::chrono::milliseconds(0));
  Result<InodeRef> d = Mkdir(b_, kRoot, "d");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  Status created = Status::Internal("not run");
  std::mutex hook_mu;
  bool ran = false;
  a_client.SetTestHooks({.before_deleting_both_copies = [&](const Oid& original) {
    {
      std::lock_guard lock(hook_mu);
      if (ran || original.fno != kRoot || original.type != ObjectType::kDirent ||
          original.offset != DirentOffset("d")) {
        return;
      }
      ran = true;
    }
    created = b_.Create(d->fno, "f", S_IFREG | 0644, 0, Credentials{}).status();
  }});
  Status removed = a.Rmdir(kRoot, "d");
  EXPECT_TRUE(removed.ok()) << removed.ToString();
  ASSERT_TRUE(ran) << "the rmdir did not delete the entry's DIRENT object";
  EXPECT_TRUE(created.Is(StatusCode::kNotFound)) << created.ToString();
  Result<FsckReport> report = DryRunFsck();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->dangling.empty());
  EXPECT_EQ(report->orphan_inodes, 0u) << "the file created in the removed directory stayed";
  EXPECT_EQ(report->orphan_objects, 0u);

  Result<InodeRef> e = Mkdir(b_, kRoot, "e");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  ASSERT_TRUE(b_.Create(e->fno, "g", S_IFREG | 0644, 0, Credentials{}).ok());
  EXPECT_TRUE(a.Rmdir(kRoot, "e").Is(StatusCode::kNotEmpty));
  EXPECT_TRUE(b_.Create(e->fno, "h", S_IFREG | 0644, 0, Credentials{}).ok());
  Result<InodeRef> unmarked = b_.GetInode(e->fno);
  ASSERT_TRUE(unmarked.ok()) << unmarked.status().ToString();
  EXPECT_FALSE(unmarked->inode.removing());

  // An rmdir cut short after its mark (a crash) leaves e refusing new entries; fsck clears it.
  Inode marked = unmarked->inode;
  marked.removal_marks = 1;
  ASSERT_TRUE(cluster_.client()
                  .WriteOriginalThenReplica(Oid{kFnso, e->fno, 0, ObjectType::kInode},
                                            EncodeInode(marked), unmarked->version)
                  .ok());
  EXPECT_TRUE(
      b_.Create(e->fno, "i", S_IFREG | 0644, 0, Credentials{}).status().Is(StatusCode::kNotFound));
  FsckOptions fix;
  fix.grace_seconds = 0;
  report = RunFsck(&cluster_.client(), kFnso, fix);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->removal_marks_cleared, 1u);
  EXPECT_TRUE(b_.Create(e->fno, "i", S_IFREG | 0644, 0, Credentials{}).ok());
}

// B's create commits its entry in d, and an rmdir of d marks d before B's parent update: B
// waits for the rmdir to end. The rmdir finds B's entry and gives up (its mark goes): B's
// create succeeds. (Both used to fail: B took its entry back, ENOENT, after the rmdir had
// seen it, ENOTEMPTY.) An rmdir that deletes d instead leaves B's create NotFound, its entry
// and inode taken back. Here the "rmdir" is played by raw writes, from a thread B's hooks
// start: the mark right before B's parent update, its end once B has read the mark.
TEST_F(NamespaceTest, ACreateMeetingAnRmdirsMarkWaitsForTheRmdirToEnd) {
  ClusterClient b_client(cluster_.client().map(), cluster_.Rpc("client"));
  Namespace b(&b_client, kFnso);
  auto race = [&](uint64_t d, std::function<void()> rmdir_ends) {
    std::mutex mu;
    std::condition_variable mark_seen_cv;
    bool marked = false;
    bool mark_seen = false;
    const Oid d_inode{kFnso, d, 0, ObjectType::kInode};
    b_client.SetTestHooks({.before_writing_original_then_replica =
                               [&](const Oid& original) {
                                 if (original != d_inode) return;
                                 std::lock_guard lock(mu);
                                 if (marked) return;
                                 marked = true;
                                 Result<InodeRef> now = b_.GetInode(d);
                                 ASSERT_TRUE(now.ok()) << now.status().ToString();
                                 Inode with_mark = now->inode;
                                 ++with_mark.removal_marks;
                                 ASSERT_TRUE(cluster_.client()
                                                 .WriteOriginalThenReplica(
                                                     d_inode, EncodeInode(with_mark), now->version)
                                                 .ok());
                               },
                           .after_reading =
                               [&](const Oid& copy) {
                                 if (copy.fno != d || copy.type != ObjectType::kInode) return;
                                 std::lock_guard lock(mu);
                                 if (marked) mark_seen = true;
                                 mark_seen_cv.notify_all();
                               }});
    std::thread rmdir([&] {
      std::unique_lock lock(mu);
      ASSERT_TRUE(mark_seen_cv.wait_for(lock, std::chrono::seconds(30), [&] { return mark_seen; }))
          << "B never read d's inode after the mark";
      lock.unlock();
      rmdir_ends();
    });
    Status created = b.Create(d, "f", S_IFREG | 0644, 0, Credentials{}).status();
    rmdir.join();
    b_client.SetTestHooks({});
    return created;
  };
  auto drop_mark = [&](uint64_t d) {
    Result<InodeRef> now = b_.GetInode(d);
    ASSERT_TRUE(now.ok()) << now.status().ToString();
    Inode unmarked = now->inode;
    ASSERT_EQ(unmarked.removal_marks, 1u);
    unmarked.removal_marks = 0;
    ASSERT_TRUE(cluster_.client()
                    .WriteOriginalThenReplica(Oid{kFnso, d, 0, ObjectType::kInode},
                                              EncodeInode(unmarked), now->version)
                    .ok());
  };
  {
    SCOPED_TRACE("the rmdir gives up");
    Result<InodeRef> d = Mkdir(b_, kRoot, "d");
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    Status created = race(d->fno, [&] { drop_mark(d->fno); });
    EXPECT_TRUE(created.ok()) << created.ToString();
    EXPECT_TRUE(b_.Lookup(d->fno, "f").ok());
    EXPECT_TRUE(b_.Rmdir(kRoot, "d").Is(StatusCode::kNotEmpty));
  }
  {
    SCOPED_TRACE("the rmdir deletes the directory");
    Result<InodeRef> e = Mkdir(b_, kRoot, "e");
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    Status created = race(e->fno, [&] {
      // What the rmdir does after its listing: the name goes, then the inode.
      const Oid bucket{kFnso, kRoot, DirentOffset("e"), ObjectType::kDirent};
      Result<wire::ReadResponse> entries = cluster_.client().Read(bucket);
      ASSERT_TRUE(entries.ok()) << entries.status().ToString();
      Result<std::vector<DirEntry>> kept = DecodeDirentBucket(entries->data());
      ASSERT_TRUE(kept.ok()) << kept.status().ToString();
      std::erase_if(*kept, [](const DirEntry& entry) { return entry.name == "e"; });
      ASSERT_TRUE((kept->empty()
                       ? cluster_.client().DeleteBothCopies(bucket, entries->meta().version())
                       : cluster_.client().WriteOriginalThenReplica(
                             bucket, EncodeDirentBucket(*kept), entries->meta().version()))
                      .ok());
      Result<InodeRef> now = b_.GetInode(e->fno);
      ASSERT_TRUE(now.ok()) << now.status().ToString();
      ASSERT_TRUE(cluster_.client()
                      .DeleteBothCopies(Oid{kFnso, e->fno, 0, ObjectType::kInode}, now->version)
                      .ok());
    });
    EXPECT_TRUE(created.Is(StatusCode::kNotFound)) << created.ToString();
    Result<FsckReport> report = DryRunFsck();
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    EXPECT_TRUE(report->dangling.empty()) << report->dangling.front();
    EXPECT_EQ(report->orphan_inodes, 0u) << "B's file stayed";
    EXPECT_EQ(report->orphan_objects, 0u) << "B's entry stayed";
  }
}

// A mark older than a minute (and the removal wait) is a dead client's: an entry made in its
// directory goes again at once (NotFound) instead of waiting out the wait each time until fsck
// clears it.
TEST_F(NamespaceTest, AnEntryMeetingAnOldMarkDoesNotWaitForIt) {
  Result<InodeRef> d = Mkdir(b_, kRoot, "d");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  Inode marked = d->inode;
  marked.removal_marks = 1;
  marked.ctime.sec -= 3600;  // marked an hour ago
  ASSERT_TRUE(cluster_.client()
                  .WriteOriginalThenReplica(Oid{kFnso, d->fno, 0, ObjectType::kInode},
                                            EncodeInode(marked), d->version)
                  .ok());
  b_.set_removal_wait(std::chrono::minutes(2));
  auto created = std::async(std::launch::async, [&] {
    return b_.Create(d->fno, "f", S_IFREG | 0644, 0, Credentials{}).status();
  });
  ASSERT_EQ(created.wait_for(std::chrono::seconds(30)), std::future_status::ready)
      << "the create waits for a mark an hour old";
  EXPECT_TRUE(created.get().Is(StatusCode::kNotFound));
  Result<FsckReport> report = DryRunFsck();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->orphan_inodes, 0u);
  EXPECT_EQ(report->orphan_objects, 0u);
}

// With deferred directory times (the mount's), a file's create reads its directory afresh
// instead of writing its times, and still meets an rmdir's mark: it waits the removal wait,
// then takes its entry back (NotFound). Unmarked, the create's time reaches the directory once
// the pending times are written.
TEST_F(NamespaceTest, WithDeferredTimesACreateStillMeetsAnRmdirsMark) {
  Namespace c(&cluster_.client(), kFnso);
  c.EnableDeferredDirectoryTimes();
  c.set_removal_wait(std::chrono::milliseconds(300));
  Result<InodeRef> d = Mkdir(c, kRoot, "d");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  Inode marked = d->inode;
  marked.removal_marks = 1;
  marked.ctime = Now();
  const Oid dir_inode{kFnso, d->fno, 0, ObjectType::kInode};
  Result<wire::ObjectMeta> written =
      cluster_.client().WriteOriginalThenReplica(dir_inode, EncodeInode(marked), d->version);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  const auto started = std::chrono::steady_clock::now();
  EXPECT_TRUE(
      c.Create(d->fno, "f", S_IFREG | 0644, 0, Credentials{}).status().Is(StatusCode::kNotFound));
  EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(300))
      << "the create did not wait for the rmdir";
  Result<FsckReport> report = DryRunFsck();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->orphan_inodes, 0u) << "the taken-back file stayed";
  EXPECT_EQ(report->orphan_objects, 0u) << "the taken-back entry stayed";

  Inode unmarked = marked;
  unmarked.removal_marks = 0;
  ASSERT_TRUE(cluster_.client()
                  .WriteOriginalThenReplica(dir_inode, EncodeInode(unmarked), written->version())
                  .ok());
  const Timespec before = Now();
  ASSERT_TRUE(c.Create(d->fno, "g", S_IFREG | 0644, 0, Credentials{}).ok());
  ASSERT_TRUE(c.FlushDirectoryTimes(d->fno).ok());
  Result<InodeRef> stored = b_.GetInode(d->fno);
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_TRUE(!IsLater(before, stored->inode.mtime)) << "the create's time did not reach it";
}

// Links and renames into a directory that an rmdir is removing are taken back as a create's
// entry is, and a rename over an empty directory marks it as an rmdir does: nothing lands in a
// directory between its emptiness check and its deletion.
TEST_F(NamespaceTest, ALinkOrRenameIntoADirectoryBeingRemovedIsTakenBack) {
  // B's change runs when A is about to delete (an rmdir's last entry in a bucket) or write (a
  // rename's commit) the root's DIRENT bucket of `name`.
  ClientWithHooks a_client(cluster_);
  Namespace& a = a_client.ns;
  OnceAtRootBucket& theirs = a_client.theirs;
  auto at_bucket_of = [&](const std::string& name, std::function<void()> change) {
    theirs.Arm(name, std::move(change));
  };
  auto ran = [&] { return theirs.Ran(); };
  b_.set_removal_wait(std::chrono::milliseconds(0));  // B's changes run inside A's rmdir
  auto expect_consistent = [&] {
    Result<FsckReport> report = DryRunFsck();
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    EXPECT_TRUE(report->dangling.empty());
    EXPECT_EQ(report->orphan_inodes, 0u);
    EXPECT_EQ(report->orphan_objects, 0u);
    EXPECT_EQ(report->link_count_fixes, 0u);
    EXPECT_EQ(report->removal_marks_cleared, 0u);
  };
  Result<InodeRef> x = CreateFile(b_, "x");
  ASSERT_TRUE(x.ok()) << x.status().ToString();
  Result<InodeRef> sub = Mkdir(b_, kRoot, "sub");
  ASSERT_TRUE(sub.ok()) << sub.status().ToString();
  const int64_t root_links = Nlink(kRoot);

  // A removes a new empty directory `name`; right before its entry goes, B's `change` into
  // the directory (given its fno) runs, and is refused.
  auto refused_while_a_removes = [&](const std::string& name,
                                     std::function<Status(uint64_t)> change) {
    Result<InodeRef> d = Mkdir(b_, kRoot, name);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    Status changed = Status::Internal("not run");
    at_bucket_of(name, [&] { changed = change(d->fno); });
    EXPECT_TRUE(a.Rmdir(kRoot, name).ok());
    ASSERT_TRUE(ran());
    EXPECT_TRUE(changed.Is(StatusCode::kNotFound)) << changed.ToString();
  };
  {
    SCOPED_TRACE("B links a file into the directory A removes");
    refused_while_a_removes("d1", [&](uint64_t d) { return b_.Link(x->fno, d, "l").status(); });
    EXPECT_EQ(Nlink(x->fno), 1);
    expect_consistent();
  }
  {
    SCOPED_TRACE("B renames a file into the directory A removes");
    refused_while_a_removes("d2", [&](uint64_t d) {
      return b_.Rename(kRoot, "x", d, "y", RenameMode::kReplace).status();
    });
    Result<InodeRef> still = b_.Lookup(kRoot, "x");
    ASSERT_TRUE(still.ok()) << still.status().ToString();
    EXPECT_EQ(still->fno, x->fno);
    EXPECT_EQ(Nlink(x->fno), 1);
    expect_consistent();
  }
  {
    SCOPED_TRACE("B renames a directory into the directory A removes");
    refused_while_a_removes("d3", [&](uint64_t d) {
      return b_.Rename(kRoot, "sub", d, "sub", RenameMode::kReplace).status();
    });
    EXPECT_TRUE(b_.Lookup(kRoot, "sub").ok());
    EXPECT_EQ(Nlink(kRoot), root_links);
    expect_consistent();
  }
  {
    SCOPED_TRACE("B creates a file in the empty directory A's rename replaces");
    Result<InodeRef> target = Mkdir(b_, kRoot, "t");
    ASSERT_TRUE(target.ok()) << target.status().ToString();
    Status created = Status::Internal("not run");
    at_bucket_of("t", [&] {
      created = b_.Create(target->fno, "f", S_IFREG | 0644, 0, Credentials{}).status();
    });
    Result<Unlinked> renamed = a.Rename(kRoot, "sub", kRoot, "t", RenameMode::kReplace);
    EXPECT_TRUE(renamed.ok()) << renamed.status().ToString();
    ASSERT_TRUE(ran());
    EXPECT_TRUE(created.Is(StatusCode::kNotFound)) << created.ToString();
    Result<InodeRef> moved = b_.Lookup(kRoot, "t");
    ASSERT_TRUE(moved.ok()) << moved.status().ToString();
    EXPECT_EQ(moved->fno, sub->fno);
    EXPECT_EQ(Nlink(kRoot), root_links);
    expect_consistent();
  }
  {
    SCOPED_TRACE("a rename over a directory that is not empty leaves it as it was");
    Result<InodeRef> full = Mkdir(b_, kRoot, "full");
    ASSERT_TRUE(full.ok()) << full.status().ToString();
    ASSERT_TRUE(b_.Create(full->fno, "g", S_IFREG | 0644, 0, Credentials{}).ok());
    EXPECT_TRUE(a.Rename(kRoot, "t", kRoot, "full", RenameMode::kReplace)
                    .status()
                    .Is(StatusCode::kNotEmpty));
    EXPECT_TRUE(b_.Create(full->fno, "h", S_IFREG | 0644, 0, Credentials{}).ok());
    expect_consistent();
  }
}

// A create's or link's commit (the new entry) lands, but its answer is lost on the way back:
// the caller hears a transport failure, or, when the fallback to the replica met a later
// change of the bucket, a version conflict. The entry decides (for a create, whose inode is
// new, after a conflict too). The create used to release the new inode under its entry (a
// dangling entry), and the link to drop the count its entry holds.
TEST_F(NamespaceTest, ACommitWhoseAnswerIsLostStandsWhenItsEntryLanded) {
  ClusterClient a_client(cluster_.client().map(), cluster_.Rpc("client"));
  Namespace a(&a_client, kFnso);
  std::mutex mu;
  std::optional<Status> next_entry_answer;  // what the next commit in the root answers
  a_client.SetTestHooks(
      {.before_answering_original_then_replica = [&](const Oid& original, Status* answer) {
        std::lock_guard lock(mu);
        if (answer->ok() && original.fno == kRoot && original.type == ObjectType::kDirent &&
            next_entry_answer) {
          *answer = *std::exchange(next_entry_answer, std::nullopt);
        }
      }});
  auto answer_next_commit = [&](Status answer) {
    std::lock_guard lock(mu);
    next_entry_answer = std::move(answer);
  };
  auto answered = [&] {
    std::lock_guard lock(mu);
    return !next_entry_answer.has_value();
  };
  Result<InodeRef> x = CreateFile(b_, "x");
  ASSERT_TRUE(x.ok()) << x.status().ToString();
  int64_t links = 1;
  for (const Status& lost : {Status::Unavailable("the answer was lost (test)"),
                             Status::VersionMismatch("the fallback met a later change (test)")}) {
    SCOPED_TRACE(lost.ToString());
    const std::string suffix = std::to_string(links);
    answer_next_commit(lost);
    Result<InodeRef> made = CreateFile(a, "f" + suffix);
    EXPECT_TRUE(answered()) << "no answer was replaced";
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    Result<InodeRef> found = b_.Lookup(kRoot, "f" + suffix);
    ASSERT_TRUE(found.ok()) << found.status().ToString();
    EXPECT_EQ(found->fno, made->fno);

    // A link cannot tell its own entry from another client's same link, so it answers the
    // failure (EEXIST after a conflict: see TwoClientsMakingOneNameOnlyOneSucceeds), but its
    // count stays for the entry that landed.
    answer_next_commit(lost);
    Result<InodeRef> linked = a.Link(x->fno, kRoot, "l" + suffix);
    EXPECT_TRUE(answered()) << "no answer was replaced";
    EXPECT_FALSE(linked.ok());
    EXPECT_TRUE(b_.Lookup(kRoot, "l" + suffix).ok());
    EXPECT_EQ(Nlink(x->fno), ++links);
  }
  {
    // A rename's commit lands; its answer comes back as a conflict. The old name is still
    // there, and the pin counts it.
    Result<InodeRef> moved = CreateFile(b_, "rs");
    ASSERT_TRUE(moved.ok()) << moved.status().ToString();
    std::string target = "rt";
    while (DirentOffset(target) == DirentOffset("rs")) target += "t";
    answer_next_commit(Status::VersionMismatch("the fallback met a later change (test)"));
    Result<Unlinked> renamed = a.Rename(kRoot, "rs", kRoot, target, RenameMode::kReplace);
    EXPECT_TRUE(answered()) << "no answer was replaced";
    EXPECT_TRUE(renamed.ok()) << renamed.status().ToString();
    Result<InodeRef> found = b_.Lookup(kRoot, target);
    ASSERT_TRUE(found.ok()) << found.status().ToString();
    EXPECT_EQ(found->fno, moved->fno);
    const bool old_name_stays = b_.Lookup(kRoot, "rs").ok();
    EXPECT_EQ(Nlink(moved->fno), old_name_stays ? 2 : 1);
  }

  Result<FsckReport> report = DryRunFsck();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->dangling.empty()) << report->dangling.front();
  EXPECT_EQ(report->orphan_inodes, 0u);
  EXPECT_EQ(report->link_count_fixes, 0u);
}

// Two clients link one name, or rename one name over a target, at the same moment: one link
// succeeds and the other answers EEXIST (lock files rely on it); the renames leave the source
// under the new name, counted once. (A rename that took the other client's entry for its own
// lost commit used to put the target back over it: the source lost its name.)
TEST_F(NamespaceTest, TwoClientsMakingOneNameOnlyOneSucceeds) {
  ClientWithHooks a_client(cluster_);
  Namespace& a = a_client.ns;
  OnceAtRootBucket& theirs = a_client.theirs;
  Result<InodeRef> x = CreateFile(b_, "x");
  ASSERT_TRUE(x.ok()) << x.status().ToString();
  theirs.Arm("lock", [&] { EXPECT_TRUE(b_.Link(x->fno, kRoot, "lock").ok()); });
  const uint64_t conflicts_before = a.conflicts();
  Result<InodeRef> linked = a.Link(x->fno, kRoot, "lock");
  ASSERT_TRUE(theirs.Ran());
  EXPECT_TRUE(linked.status().Is(StatusCode::kAlreadyExists)) << linked.status().ToString();
  EXPECT_GE(a.conflicts(), conflicts_before + 1) << "A's commit lost to B's: counted";
  EXPECT_EQ(b_.conflicts(), 0u);
  // A cannot tell B's entry from its own lost commit: its raised count stays, one too high
  // (fsck fixes it), never too low.
  EXPECT_EQ(Nlink(x->fno), 3);

  Result<InodeRef> source = CreateFile(b_, "s");
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  ASSERT_TRUE(CreateFile(b_, "t").ok());
  ASSERT_NE(DirentOffset("s"), DirentOffset("t"));
  theirs.Arm("t",
             [&] { EXPECT_TRUE(b_.Rename(kRoot, "s", kRoot, "t", RenameMode::kReplace).ok()); });
  (void)a.Rename(kRoot, "s", kRoot, "t", RenameMode::kReplace);
  ASSERT_TRUE(theirs.Ran());
  Result<InodeRef> t = b_.Lookup(kRoot, "t");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->fno, source->fno) << "the target came back over the source";
  EXPECT_TRUE(b_.Lookup(kRoot, "s").status().Is(StatusCode::kNotFound));
  EXPECT_EQ(Nlink(source->fno), 1);
}

// Each removal of a directory under way holds a mark of its own. One that gives up takes only
// its own away: the other's still refuses entries, within one directory too (an rmdir lists a
// directory's buckets one OSD after another, so a rename between two of them must refuse).
TEST_F(NamespaceTest, AMarkOfAnotherRemovalStandsWhenOneGivesUp) {
  ClientWithHooks a_client(cluster_);
  Namespace& a = a_client.ns;
  OnceAtRootBucket& theirs = a_client.theirs;
  // Another client's removal of `fno` is under way: it marked the directory.
  auto marked_by_another = [&](uint64_t fno) {
    Result<InodeRef> now = b_.GetInode(fno);
    ASSERT_TRUE(now.ok()) << now.status().ToString();
    Inode marked = now->inode;
    ++marked.removal_marks;
    ASSERT_TRUE(cluster_.client()
                    .WriteOriginalThenReplica(Oid{kFnso, fno, 0, ObjectType::kInode},
                                              EncodeInode(marked), now->version)
                    .ok());
  };
  auto marks = [&](uint64_t fno) -> int64_t {
    Result<InodeRef> inode = b_.GetInode(fno);
    return inode.ok() ? inode->inode.removal_marks : -1;
  };
  // The other removal never ends here (its mark stays): changes that meet it give up at once.
  a.set_removal_wait(std::chrono::milliseconds(0));
  b_.set_removal_wait(std::chrono::milliseconds(0));

  Result<InodeRef> d = Mkdir(b_, kRoot, "d");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_TRUE(Mkdir(b_, kRoot, "s").ok());
  marked_by_another(d->fno);
  {
    SCOPED_TRACE("A's rename over d gives up: B renamed its source away");
    // B takes A's rename note for one a dead client left (no expiry), finishes it (nothing
    // was renamed yet) and renames the source away.
    b_.set_rename_note_expiry(std::chrono::seconds(0));
    theirs.Arm("d", [&] { EXPECT_TRUE(b_.Rename(kRoot, "s", kRoot, "s2", {}).ok()); });
    Result<Unlinked> renamed = a.Rename(kRoot, "s", kRoot, "d", RenameMode::kReplace);
    ASSERT_TRUE(theirs.Ran());
    EXPECT_TRUE(renamed.status().Is(StatusCode::kNotFound)) << renamed.status().ToString();
    EXPECT_EQ(marks(d->fno), 1) << "A took the other removal's mark";
    EXPECT_TRUE(b_.Create(d->fno, "f", S_IFREG | 0644, 0, Credentials{})
                    .status()
                    .Is(StatusCode::kNotFound));
  }
  {
    SCOPED_TRACE("A's rmdir of d gives up: it is not empty");
    Result<InodeRef> e = Mkdir(b_, kRoot, "e");
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    ASSERT_TRUE(b_.Create(e->fno, "g", S_IFREG | 0644, 0, Credentials{}).ok());
    marked_by_another(e->fno);
    EXPECT_TRUE(a.Rmdir(kRoot, "e").Is(StatusCode::kNotEmpty));
    EXPECT_EQ(marks(e->fno), 1) << "A took the other removal's mark";

    // A rename within e between two buckets refuses as well, and leaves the old name.
    std::string other = "h";
    while (DirentOffset(other) == DirentOffset("g")) other += "h";
    EXPECT_TRUE(a.Rename(e->fno, "g", e->fno, other, RenameMode::kReplace)
                    .status()
                    .Is(StatusCode::kNotFound));
    EXPECT_TRUE(b_.Lookup(e->fno, "g").ok());
    EXPECT_TRUE(b_.Lookup(e->fno, other).status().Is(StatusCode::kNotFound));
  }
}

}  // namespace
}  // namespace orthofs::testing
