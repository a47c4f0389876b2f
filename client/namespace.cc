#include "client/namespace.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <set>
#include <span>
#include <thread>

#include "common/fno_batch.h"
#include "common/limits.h"

namespace orthofs {
namespace {

// A lookup's bucket starts a change at most this long after the read (the kernel's lookup and
// the create or unlink it precedes are microseconds apart), and this many are kept.
constexpr std::chrono::milliseconds kRecentBucketAge{500};
constexpr size_t kRecentBuckets = 1024;
// Listings' buckets and INODEs (listed_buckets_): long enough for `rm -rf` of a directory of
// thousands of files to reach its last entry.
constexpr std::chrono::seconds kListedAge{10};
constexpr size_t kListed = 16384;
constexpr std::chrono::seconds kWrittenInodeAge{1};
constexpr size_t kWrittenInodes = 1024;

}  // namespace

Status Namespace::CheckName(std::string_view name) {
  if (name.size() > kMaxNameLength) {
    return Status::NameTooLong("name of " + std::to_string(name.size()) + " bytes exceeds " +
                               std::to_string(kMaxNameLength));
  }
  return ValidateName(name);
}

Timespec Now() {
  auto now = std::chrono::system_clock::now().time_since_epoch();
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now).count();
  return Timespec{ns / 1000000000, static_cast<uint32_t>(ns % 1000000000)};
}

Namespace::Namespace(ClusterClient* cluster, uint32_t fnso)
    : cluster_(cluster),
      fnso_(fnso),
      recent_buckets_(kRecentBucketAge, kRecentBuckets),
      written_inodes_(kWrittenInodeAge, kWrittenInodes),
      looked_up_inodes_(kRecentBucketAge, kRecentBuckets),
      listed_buckets_(kListedAge, kListed),
      listed_inodes_(kListedAge, kListed) {}

Status Namespace::Mkfs(ClusterClient* cluster, uint32_t fnso, const Credentials& owner) {
  Namespace ns(cluster, fnso);
  SuperBlock super;
  super.object_size = cluster->map().object_size;
  super.created = Now();
  // The root first: a SUPER without a root would be a namespace that cannot be mounted.
  Inode root;
  root.mode = S_IFDIR | 0755;
  root.uid = owner.uid;
  root.gid = owner.gid;
  root.nlink = 2;
  root.atime = root.mtime = root.ctime = super.created;
  Result<wire::ObjectMeta> made =
      cluster->WriteOriginalThenReplica(ns.InodeOid(kRootFno), EncodeInode(root), 0);
  if (!made.ok() && !made.status().Is(StatusCode::kVersionMismatch)) return made.status();
  Result<wire::ObjectMeta> super_made =
      cluster->WriteOriginalThenReplica(ns.SuperOid(), EncodeSuperBlock(super), 0);
  if (!super_made.ok()) {
    if (super_made.status().Is(StatusCode::kVersionMismatch)) {
      return Status::AlreadyExists("namespace " + std::to_string(fnso) + " already exists");
    }
    return super_made.status();
  }
  return Status::Ok();
}

Status Namespace::CheckExists() {
  Result<wire::ReadResponse> super = cluster_->ReadEitherCopy(SuperOid());
  if (super.status().Is(StatusCode::kNotFound)) {
    return Status::NotFound("namespace " + std::to_string(fnso_) +
                            " does not exist (create it with: orthofs mkfs --fnso " +
                            std::to_string(fnso_) + ")");
  }
  if (!super.ok()) return super.status();
  Result<SuperBlock> decoded = DecodeSuperBlock(super->data());
  if (!decoded.ok()) return decoded.status();
  if (decoded->object_size != cluster_->map().object_size) {
    return Status::InvalidArgument("namespace " + std::to_string(fnso_) +
                                   " was created with object_size " +
                                   std::to_string(decoded->object_size) + " but the map says " +
                                   std::to_string(cluster_->map().object_size));
  }
  return Status::Ok();
}

Result<InodeRef> Namespace::GetInode(uint64_t fno) {
  return InodeFromRead(fno, cluster_->ReadEitherCopy(InodeOid(fno)));
}

std::vector<Result<InodeRef>> Namespace::GetInodes(const std::vector<uint64_t>& fnos) {
  std::vector<Oid> oids;
  oids.reserve(fnos.size());
  for (uint64_t fno : fnos) oids.push_back(InodeOid(fno));
  std::vector<Result<wire::ReadResponse>> reads = cluster_->ReadEitherCopyMany(oids);
  std::vector<Result<InodeRef>> inodes;
  inodes.reserve(fnos.size());
  for (size_t i = 0; i < fnos.size(); ++i) inodes.push_back(InodeFromRead(fnos[i], reads[i]));
  std::lock_guard lock(recent_mu_);
  const auto now = RecentReads<InodeRef>::Clock::now();
  for (const Result<InodeRef>& inode : inodes) {
    if (inode.ok()) listed_inodes_.Put(std::to_string(inode->fno), *inode, now);
  }
  return inodes;
}

Result<InodeRef> Namespace::InodeFromRead(uint64_t fno, const Result<wire::ReadResponse>& read) {
  if (!read.ok()) {
    if (read.status().Is(StatusCode::kNotFound)) {
      return Status::NotFound("no inode " + std::to_string(fno));
    }
    return read.status();
  }
  Result<Inode> inode = DecodeInode(read->data());
  if (!inode.ok()) return inode.status();
  ApplyPendingTimes(fno, &*inode);
  {
    // Someone changed it since this client last wrote it: RecentlyWritten must not answer with
    // attributes older than the ones just read.
    std::lock_guard lock(recent_mu_);
    const std::string key = std::to_string(fno);
    auto held = written_inodes_.Peek(key, RecentReads<InodeRef>::Clock::now());
    if (held && held->first.version < read->meta().version()) written_inodes_.Forget(key);
  }
  return InodeRef{fno, *inode, read->meta().version()};
}

Status Namespace::WriteInode(uint64_t fno, const Inode& change, uint64_t expected_version,
                             uint64_t* new_version, PendingCalls* replica_pending) {
  // The directory times pending for it go along (and are then done).
  Inode inode = change;
  const std::optional<Timespec> times_applied = ApplyPendingTimes(fno, &inode);
  inode_changes_.fetch_add(1, std::memory_order_acq_rel);
  {
    std::lock_guard lock(recent_mu_);
    InodeCallsUnderWay& calls = inode_calls_[fno];
    ++calls.writes;
    if (calls.deletions > 0) calls.deletion_met = true;
  }
  // A new file number's INODE (expected version 0): no other client can race its creation, so
  // both copies are written at once.
  Result<wire::ObjectMeta> meta =
      expected_version == 0 && replica_pending == nullptr
          ? cluster_->CreateBothCopies(InodeOid(fno), EncodeInode(inode))
          : cluster_->WriteOriginalThenReplica(InodeOid(fno), EncodeInode(inode), expected_version,
                                               replica_pending);
  {
    std::lock_guard lock(recent_mu_);
    const std::string key = std::to_string(fno);
    const auto now = RecentReads<InodeRef>::Clock::now();
    looked_up_inodes_.Forget(key);  // older than this write: a change from it would conflict
    listed_inodes_.Forget(key);
    InodeCallsUnderWay& calls = inode_calls_[fno];
    const bool met_deletion = calls.deletion_met || calls.deletions > 0;
    if (--calls.writes == 0) calls.deletion_met = false;
    if (calls.writes == 0 && calls.deletions == 0) inode_calls_.erase(fno);
    if (!meta.ok() || met_deletion) {
      // A failed write may have changed it anyway (a lost answer); an INODE deleted meanwhile
      // must not come back from here.
      written_inodes_.Forget(key);
    } else if (auto held = written_inodes_.Peek(key, now);
               !held || held->first.version < meta->version()) {
      // Two writes finishing out of order: the newer version stays.
      written_inodes_.Put(key, InodeRef{fno, inode, meta->version()}, now);
    }
  }
  inode_changes_.fetch_add(1, std::memory_order_acq_rel);
  if (!meta.ok()) return meta.status();
  if (times_applied) {
    MutexLock lock(&times_mu_);
    pending_times_.Written(fno, *times_applied);
  }
  if (new_version) *new_version = meta->version();
  return Status::Ok();
}

std::optional<std::pair<InodeRef, std::chrono::steady_clock::time_point>>
Namespace::RecentlyWritten(uint64_t fno) {
  std::optional<std::pair<InodeRef, std::chrono::steady_clock::time_point>> written;
  {
    std::lock_guard lock(recent_mu_);
    written = written_inodes_.Peek(std::to_string(fno), RecentReads<InodeRef>::Clock::now());
  }
  if (written) ApplyPendingTimes(fno, &written->first.inode);
  return written;
}

Result<InodeRef> Namespace::WrittenOrRead(uint64_t fno) {
  if (auto written = RecentlyWritten(fno)) return written->first;
  return GetInode(fno);
}

Status Namespace::DeleteInode(uint64_t fno, std::optional<uint64_t> expected_version,
                              PendingCalls* replica_pending) {
  inode_changes_.fetch_add(1, std::memory_order_acq_rel);
  {
    std::lock_guard lock(recent_mu_);
    InodeCallsUnderWay& calls = inode_calls_[fno];
    ++calls.deletions;
    if (calls.writes > 0) calls.deletion_met = true;
  }
  Status deleted = cluster_->DeleteBothCopies(InodeOid(fno), expected_version, replica_pending);
  if (deleted.ok() && defer_directory_times_.load(std::memory_order_relaxed)) {
    MutexLock lock(&times_mu_);
    pending_times_.Forget(fno);  // a removed directory's times go with it
  }
  {
    std::lock_guard lock(recent_mu_);
    written_inodes_.Forget(std::to_string(fno));
    looked_up_inodes_.Forget(std::to_string(fno));
    listed_inodes_.Forget(std::to_string(fno));
    InodeCallsUnderWay& calls = inode_calls_[fno];
    if (--calls.deletions == 0 && calls.writes == 0) inode_calls_.erase(fno);
  }
  inode_changes_.fetch_add(1, std::memory_order_acq_rel);
  return deleted;
}

template <typename Change>
Result<InodeRef> Namespace::UpdateInode(uint64_t fno, Change change, std::optional<InodeRef> start,
                                        PendingCalls* replica_pending) {
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    const bool from_start = attempt == 0 && start.has_value();
    Result<InodeRef> current = from_start ? Result<InodeRef>(*start) : GetInode(fno);
    if (!current.ok()) return current.status();
    InodeRef ref = *current;
    Status changed = change(&ref.inode);
    if (!changed.ok() && from_start) continue;  // refuse only on a fresh read
    if (!changed.ok()) return changed;
    Status st = WriteInode(fno, ref.inode, current->version, &ref.version, replica_pending);
    if (st.ok()) return ref;
    if (!st.Is(StatusCode::kVersionMismatch)) return st;
    AfterConflict(attempt);
  }
  return Status::Unavailable("inode " + std::to_string(fno) + ": too many conflicting updates");
}

Result<InodeRef> Namespace::UpdateInodeWith(uint64_t fno,
                                            const std::function<Status(Inode*)>& change,
                                            std::optional<InodeRef> start) {
  return UpdateInode(fno, change, std::move(start));
}

Result<Namespace::Bucket> Namespace::ReadBucket(const Oid& oid) {
  Result<wire::ReadResponse> read = cluster_->ReadEitherCopy(oid);
  if (read.status().Is(StatusCode::kNotFound)) return Bucket{};
  if (!read.ok()) return read.status();
  Result<std::vector<DirEntry>> entries = DecodeDirentBucket(read->data());
  if (!entries.ok()) return entries.status();
  return Bucket{std::move(*entries), read->meta().version()};
}

Result<Namespace::Bucket> Namespace::BucketToChange(const Oid& oid, bool* recent) {
  {
    std::lock_guard lock(recent_mu_);
    const auto now = RecentReads<Bucket>::Clock::now();
    std::optional<Bucket> bucket = recent_buckets_.Take(oid.ToString(), now);
    if (!bucket) bucket = listed_buckets_.Take(oid.ToString(), now);
    if (bucket) {
      *recent = true;
      return *bucket;
    }
  }
  *recent = false;
  return ReadBucket(oid);
}

Status Namespace::WriteBucket(const Oid& oid, const std::vector<DirEntry>& entries,
                              uint64_t expected, PendingCalls* replica_pending) {
  {
    std::lock_guard lock(recent_mu_);  // what a lookup read before this change is stale
    recent_buckets_.Forget(oid.ToString());
    listed_buckets_.Forget(oid.ToString());
  }
  if (entries.empty()) {
    // The original's conditional delete is the commit point; the replica follows.
    return cluster_->DeleteBothCopies(oid, expected, replica_pending);
  }
  return cluster_
      ->WriteOriginalThenReplica(oid, EncodeDirentBucket(entries), expected, replica_pending)
      .status();
}

void Namespace::AfterConflict(int attempt) {
  ++conflicts_;
  // Clients racing for one object settle within a few attempts. Past 20, the conflict is more
  // likely two copies that disagree for a moment (a restarted OSD's copy while its peers
  // replay what it missed): the waits grow to 25 ms, so that the kMaxAttempts outlast that
  // (about 1 s in all) instead of failing the call with EIO after 0.1 s (a chaos run).
  const int64_t wait_us = attempt <= 20 ? 100 * attempt : std::min(2000 * (attempt - 19), 25000);
  std::this_thread::sleep_for(std::chrono::microseconds(wait_us));
}

std::mt19937_64 Namespace::SeededRandom() {
  std::random_device device;
  std::seed_seq seed{device(), device(), device(), device(),
                     device(), device(), device(), device()};
  return std::mt19937_64(seed);
}

bool Namespace::SuperCopyDown() {
  const Oid super = SuperOid();
  return cluster_->CopyIsDown(super.WithFlag(CopyFlag::kOriginal)) ||
         cluster_->CopyIsDown(super.WithFlag(CopyFlag::kReplica));
}

Result<uint64_t> Namespace::AllocateFno() {
  std::lock_guard lock(fno_mu_);
  if (next_fno_ < fno_limit_) return next_fno_++;
  // Reserve a batch by a conditional increment of the SUPER object: no central server. With a
  // SUPER copy's OSD down, the batch jumps (common/fno_batch.h).
  bool jump = SuperCopyDown();
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    Result<wire::ReadResponse> read = cluster_->ReadEitherCopy(SuperOid());
    if (!read.ok()) return read.status();
    Result<SuperBlock> super = DecodeSuperBlock(read->data());
    if (!super.ok()) return super.status();
    jump = jump || SuperCopyDown();  // the read may have found the original down
    Result<FnoBatch> batch =
        NextFnoBatch(super->next_fno, jump ? std::optional<uint64_t>(fno_random_()) : std::nullopt);
    if (!batch.ok()) return batch.status();
    super->next_fno = batch->end;
    // Durable: after a power cut the counter must not hand out numbers files already have.
    bool on_both_copies = false;
    Result<wire::ObjectMeta> written = cluster_->WriteOriginalThenReplicaDurably(
        SuperOid(), EncodeSuperBlock(*super), read->meta().version(), &on_both_copies);
    if (written.ok()) {
      if (!jump && !on_both_copies) {
        // The increment landed on one copy only (committed on the replica alone, or the
        // replica could not follow): these numbers could be a fork's too. They stay unused;
        // the next batch jumps.
        spdlog::info("file numbers [{}, {}) not on both SUPER copies: not used", batch->first,
                     batch->end);
        jump = true;
        continue;
      }
      if (jump) {
        spdlog::info(
            "file numbers [{}, {}) reserved a random distance ahead: a SUPER copy's OSD "
            "is down or missed an increment",
            batch->first, batch->end);
      }
      next_fno_ = batch->first + 1;
      fno_limit_ = batch->end;
      return batch->first;
    }
    if (!written.status().Is(StatusCode::kVersionMismatch)) return written.status();
    AfterConflict(attempt);
  }
  return Status::Unavailable("could not reserve file numbers: too many conflicts");
}

Result<DirEntry> Namespace::FindEntry(uint64_t dir, std::string_view name) {
  ORTHOFS_RETURN_IF_ERROR(CheckName(name));
  const Oid oid = DirentOid(dir, name);
  Result<Bucket> bucket = ReadBucket(oid);
  if (!bucket.ok()) return bucket.status();
  {
    std::lock_guard lock(recent_mu_);
    recent_buckets_.Put(oid.ToString(), *bucket, RecentReads<Bucket>::Clock::now());
  }
  for (const auto& e : bucket->entries) {
    if (e.name == name) return e;
  }
  return Status::NotFound("no entry '" + std::string(name) + "'");
}

Result<Namespace::FoundEntry> Namespace::FindEntryToChange(uint64_t dir, std::string_view name,
                                                           bool allow_recent) {
  ORTHOFS_RETURN_IF_ERROR(CheckName(name));
  const Oid oid = DirentOid(dir, name);
  bool recent = false;
  Result<Bucket> bucket = allow_recent ? BucketToChange(oid, &recent) : ReadBucket(oid);
  for (;;) {
    if (!bucket.ok()) return bucket.status();
    for (const auto& e : bucket->entries) {
      if (e.name == name) return FoundEntry{e, std::move(*bucket), recent};
    }
    if (!recent) return Status::NotFound("no entry '" + std::string(name) + "'");
    recent = false;
    bucket = ReadBucket(oid);
  }
}

Result<InodeRef> Namespace::Lookup(uint64_t dir, std::string_view name, bool* name_absent) {
  Result<DirEntry> entry = FindEntry(dir, name);
  if (name_absent != nullptr) *name_absent = entry.status().Is(StatusCode::kNotFound);
  if (!entry.ok()) return entry.status();
  Result<InodeRef> inode = GetInode(entry->fno);
  if (inode.ok()) {
    std::lock_guard lock(recent_mu_);
    looked_up_inodes_.Put(std::to_string(entry->fno), *inode, RecentReads<InodeRef>::Clock::now());
  }
  return inode;
}

std::optional<InodeRef> Namespace::TakeLookedUpInode(uint64_t fno) {
  std::lock_guard lock(recent_mu_);
  const auto now = RecentReads<InodeRef>::Clock::now();
  std::optional<InodeRef> inode = looked_up_inodes_.Take(std::to_string(fno), now);
  if (!inode) inode = listed_inodes_.Take(std::to_string(fno), now);
  return inode;
}

Result<std::vector<DirEntry>> Namespace::ReadDir(uint64_t dir) {
  // The originals are the authority (their conditional writes are the commit points); a
  // replica may lag a concurrent change for a moment, so listings read originals.
  auto objects = cluster_->ListFileObjectsEitherCopy(fnso_, dir, ObjectType::kDirent);
  if (!objects.ok()) return objects.status();
  std::vector<DirEntry> entries;
  const auto now = RecentReads<Bucket>::Clock::now();
  for (const auto& [meta, data] : *objects) {
    Result<std::vector<DirEntry>> bucket = DecodeDirentBucket(data);
    if (!bucket.ok()) return bucket.status();
    if (!bucket->empty()) {
      std::lock_guard lock(recent_mu_);
      listed_buckets_.Put(DirentOid(dir, bucket->front().name).ToString(),
                          Bucket{*bucket, meta.version()}, now);
    }
    for (auto& e : *bucket) entries.push_back(std::move(e));
  }
  return entries;
}

Result<bool> Namespace::HasEntry(const Oid& dirent, std::string_view name, uint64_t fno) {
  Result<Bucket> bucket = ReadBucket(dirent);
  if (!bucket.ok()) return bucket.status();
  return bucket->Names(name, fno);
}

Result<bool> Namespace::DirectoryIsEmpty(uint64_t dir) {
  auto objects = cluster_->ListFileObjectsEitherCopy(fnso_, dir, ObjectType::kDirent, 1, false);
  if (!objects.ok()) return objects.status();
  return objects->empty();
}

Status Namespace::TouchDirectory(uint64_t dir, int nlink_delta, std::optional<InodeRef> start,
                                 PendingCalls* replica_pending, bool entry_added) {
  // Without a start, the directory as this client wrote it a moment ago (a burst of changes in
  // one directory): if another client changed it since, the conditional write fails and the
  // update starts again from a fresh read.
  if (!start) {
    if (auto written = RecentlyWritten(dir)) start = written->first;
  }
  const auto wait_until = std::chrono::steady_clock::now() + removal_wait_;
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    bool marked = false;
    bool marked_long_ago = false;
    const Timespec now = Now();
    Result<InodeRef> touched = UpdateInode(
        dir,
        [&](Inode* inode) {
          marked = entry_added && inode->removing();
          if (marked) {
            marked_long_ago = MarkAbandoned(*inode, now);
            return Status::NotFound("directory " + std::to_string(dir) + " is being removed");
          }
          inode->mtime = inode->ctime = now;
          inode->nlink = static_cast<uint32_t>(static_cast<int64_t>(inode->nlink) + nlink_delta);
          return Status::Ok();
        },
        std::move(start), replica_pending);
    start.reset();
    // A removal under way marked the directory. It either finds the new entry and gives up,
    // dropping its mark (the entry then stays: a removal that comes later lists it), or found
    // the directory empty before the entry came and deletes it (the caller takes the entry
    // back). Waiting for which keeps a create and an rmdir racing from both failing. A mark
    // that outlives the wait is one a dead client left (fsck clears it): the entry goes, at
    // once when the mark is older than kMarkAbandoned already.
    if (!marked || marked_long_ago || std::chrono::steady_clock::now() >= wait_until) {
      return touched.status();
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(2 * pause, std::chrono::milliseconds(100));
  }
}

bool Namespace::MarkAbandoned(const Inode& dir, const Timespec& now) const {
  // The mark stamped ctime; little else changes a marked directory (other marks, a chmod), so
  // one older than kMarkAbandoned is a dead client's.
  const int64_t marked_for_ms = (now.sec - dir.ctime.sec) * 1000 +
                                (static_cast<int64_t>(now.nsec) - dir.ctime.nsec) / 1000000;
  return marked_for_ms > std::max(removal_wait_, kMarkAbandoned).count();
}

Result<InodeRef> Namespace::MakeInode(uint64_t dir, std::string_view name, const Inode& inode,
                                      std::string_view symlink_target) {
  ORTHOFS_RETURN_IF_ERROR(CheckName(name));
  // The parent as this client wrote it a moment ago (a burst of creates in one directory), or
  // read now. Its version only starts the parent's update below: if another client changed it
  // since, that conditional write fails and the update starts again from a fresh read.
  Result<InodeRef> parent = WrittenOrRead(dir);
  if (!parent.ok()) return parent.status();
  if (!parent->inode.IsDirectory()) {
    return Status::NotADirectory("inode " + std::to_string(dir) + " is not a directory");
  }
  const Oid dirent = DirentOid(dir, name);
  bool recent = false;
  Result<Bucket> bucket = BucketToChange(dirent, &recent);
  if (bucket.ok() && recent && bucket->Has(name)) bucket = ReadBucket(dirent);
  if (!bucket.ok()) return bucket.status();
  if (bucket->Has(name)) return Status::AlreadyExists("'" + std::string(name) + "' exists");
  Result<uint64_t> fno = AllocateFno();
  if (!fno.ok()) return fno.status();
  // 1. The inode (and link target): an orphan until the entry below commits.
  if (!symlink_target.empty()) {
    Result<wire::ObjectMeta> target = cluster_->CreateBothCopies(SymlinkOid(*fno), symlink_target);
    if (!target.ok()) return target.status();
  }
  uint64_t version = 0;
  ORTHOFS_RETURN_IF_ERROR(WriteInode(*fno, inode, 0, &version));
  // 2. The entry, conditional on the bucket we read: the commit point. Its replica's write
  // overlaps step 3 (both copies of the inode are written already, so either copy of the entry
  // points to a whole inode).
  PendingCalls entry_replica;
  for (int attempt = 0;; ++attempt) {
    std::vector<DirEntry> entries = bucket->entries;
    entries.push_back(DirEntry{std::string(name), *fno, inode.mode & S_IFMT});
    Status st = WriteBucket(dirent, entries, bucket->version, &entry_replica);
    if (ClusterClient::IsOsdFailure(st)) {
      // The commit may have landed with its answer lost, or land later (a delayed request):
      // the entry decides. Unseen, the inode stays (an orphan at worst, which fsck collects),
      // never released under an entry that points to it.
      Result<bool> landed = HasEntry(dirent, name, *fno);
      if (!landed.ok() || !*landed) return st;
      break;
    }
    if (st.ok()) break;
    if (!st.Is(StatusCode::kVersionMismatch)) {
      (void)ReleaseInode(*fno);
      return st;
    }
    // A conflict, or this create's own commit whose answer was lost before the fallback to the
    // replica met a later change: then the entry shows.
    AfterConflict(attempt);
    bucket = ReadBucket(dirent);
    if (!bucket.ok()) return bucket.status();
    if (bucket->Names(name, *fno)) break;
    if (bucket->Has(name)) {
      (void)ReleaseInode(*fno);  // somebody else created it first
      return Status::AlreadyExists("'" + std::string(name) + "' exists");
    }
    if (attempt == kMaxAttempts) {
      (void)ReleaseInode(*fno);
      return st;
    }
  }
  // 3. The parent's times (and link count for a subdirectory), from the parent read above; its
  // replica's write overlaps the entry replica's too. With deferred directory times, a file's
  // entry only needs the parent read afresh for an rmdir's mark (EntryAddedTo).
  const Status touched =
      defer_directory_times_.load(std::memory_order_relaxed) && !inode.IsDirectory()
          ? EntryAddedTo(dir)
          : TouchDirectory(dir, inode.IsDirectory() ? 1 : 0, *parent, &entry_replica,
                           /*entry_added=*/true);
  ORTHOFS_RETURN_IF_ERROR(entry_replica.Wait());
  if (touched.Is(StatusCode::kNotFound)) {
    // Another client removed the directory after this client's last look at it, or is removing
    // it (its rmdir may have found it empty before this entry came): the entry just made is in
    // no directory. It goes again, and the new inode with it (fsck would collect both as
    // orphans otherwise).
    if (Status undone = RemoveEntry(dir, name, *fno); !undone.ok()) {
      spdlog::warn("entry '{}' made in removed directory {} stays (fsck collects it): {}", name,
                   dir, undone.ToString());
    } else {
      (void)ReleaseInode(*fno);
    }
  }
  ORTHOFS_RETURN_IF_ERROR(touched);
  return InodeRef{*fno, inode, version};
}

Result<InodeRef> Namespace::Create(uint64_t dir, std::string_view name, uint32_t mode,
                                   uint64_t rdev, const Credentials& who) {
  Inode inode;
  inode.mode = mode;
  inode.uid = who.uid;
  inode.gid = who.gid;
  inode.nlink = S_ISDIR(mode) ? 2 : 1;
  if (S_ISDIR(mode)) inode.parent = dir;
  inode.rdev = rdev;
  inode.atime = inode.mtime = inode.ctime = Now();
  return MakeInode(dir, name, inode, "");
}

Result<InodeRef> Namespace::Symlink(uint64_t dir, std::string_view name, std::string_view target,
                                    const Credentials& who) {
  if (target.empty() || target.size() > kMaxSymlinkLength) {
    return Status::InvalidArgument("symlink target must be 1.." +
                                   std::to_string(kMaxSymlinkLength) + " bytes");
  }
  Inode inode;
  inode.mode = S_IFLNK | 0777;
  inode.uid = who.uid;
  inode.gid = who.gid;
  inode.nlink = 1;
  inode.size = target.size();
  inode.atime = inode.mtime = inode.ctime = Now();
  return MakeInode(dir, name, inode, target);
}

Result<std::string> Namespace::ReadLink(uint64_t fno) {
  Result<wire::ReadResponse> read = cluster_->ReadEitherCopy(SymlinkOid(fno));
  if (!read.ok()) return read.status();
  return read->data();
}

Result<InodeRef> Namespace::Link(uint64_t fno, uint64_t dir, std::string_view name) {
  ORTHOFS_RETURN_IF_ERROR(CheckName(name));
  Result<InodeRef> target = GetInode(fno);
  if (!target.ok()) return target.status();
  if (target->inode.IsDirectory()) return Status::IsADirectory("cannot hard-link a directory");
  // The link count goes up first: a crash then leaves a count too high (harmless, fsck
  // fixes it), never an entry to an inode that a concurrent unlink could free.
  Result<InodeRef> raised = UpdateInode(fno, [fno](Inode* inode) {
    // No link count comes back from zero: the client that dropped it is freeing the inode's
    // objects (now, or at its last close), which a new entry would then point to.
    if (inode->nlink == 0) {
      return Status::NotFound("inode " + std::to_string(fno) + " has no links left");
    }
    ++inode->nlink;
    inode->ctime = Now();
    return Status::Ok();
  });
  if (!raised.ok()) return raised.status();
  const Oid dirent = DirentOid(dir, name);
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    Result<Bucket> bucket = ReadBucket(dirent);
    if (!bucket.ok()) return bucket.status();
    // Two links of one name must not both succeed (lock files rely on it), and this link
    // cannot tell its own commit whose answer was lost from another client's same link: a
    // commit failed at the transport answers its error, and one that finds the name naming
    // the inode after a conflict answers EEXIST. Either may have landed, so the raised count
    // stays (one too high at worst, which fsck fixes; never too low for an entry).
    Status st;
    bool may_be_own = false;
    if (bucket->Has(name)) {
      st = Status::AlreadyExists("'" + std::string(name) + "' exists");
      may_be_own = attempt > 0 && bucket->Names(name, fno);
    } else {
      auto entries = bucket->entries;
      entries.push_back(DirEntry{std::string(name), fno, raised->inode.mode & S_IFMT});
      st = WriteBucket(dirent, entries, bucket->version);
    }
    if (ClusterClient::IsOsdFailure(st) || may_be_own) return st;
    auto drop_raised_link = [&] {
      (void)UpdateInode(fno, [](Inode* inode) {
        if (inode->nlink > 0) --inode->nlink;
        return Status::Ok();
      });
    };
    if (st.ok()) {
      const Status touched = TouchDirectory(dir, 0, std::nullopt, nullptr, /*entry_added=*/true);
      if (touched.Is(StatusCode::kNotFound)) {
        // The directory is being removed (see MakeInode): the new name goes again.
        if (Status undone = RemoveEntry(dir, name, fno); !undone.ok()) return undone;
        drop_raised_link();
      }
      ORTHOFS_RETURN_IF_ERROR(touched);
      return raised;
    }
    if (!st.Is(StatusCode::kVersionMismatch)) {
      drop_raised_link();
      return st;
    }
    AfterConflict(attempt);
  }
  return Status::Unavailable("link: too many conflicts");
}

Status Namespace::RemoveEntry(uint64_t dir, std::string_view name, uint64_t expected_fno,
                              std::optional<Bucket> first, const std::optional<DirEntry>& put_back,
                              PendingCalls* replica_pending) {
  const Oid dirent = DirentOid(dir, name);
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    Result<Bucket> bucket =
        attempt == 0 && first ? Result<Bucket>(std::move(*first)) : ReadBucket(dirent);
    if (!bucket.ok()) return bucket.status();
    std::vector<DirEntry> entries;
    bool found = false;
    for (const auto& e : bucket->entries) {
      if (e.name == name && e.fno == expected_fno) {
        found = true;
        if (put_back) entries.push_back(*put_back);
      } else {
        entries.push_back(e);
      }
    }
    if (!found) return Status::NotFound("no entry '" + std::string(name) + "'");
    Status st = WriteBucket(dirent, entries, bucket->version, replica_pending);
    if (!st.Is(StatusCode::kVersionMismatch)) return st;
    AfterConflict(attempt);
  }
  return Status::Unavailable("remove entry: too many conflicts");
}

Result<Unlinked> Namespace::Unlink(uint64_t dir, std::string_view name,
                                   const std::function<bool(uint64_t)>& frees_at_once) {
  // First from the kernel's lookup of the name a moment ago; if the name was replaced or is a
  // directory there, once more from a fresh read, which alone may refuse.
  for (bool allow_recent : {true, false}) {
    Result<FoundEntry> found = FindEntryToChange(dir, name, allow_recent);
    if (!found.ok()) return found.status();
    const DirEntry entry = found->entry;
    if (S_ISDIR(entry.type)) {
      if (found->recent) continue;
      return Status::IsADirectory("'" + std::string(name) + "' is a directory");
    }
    // The entry's removal commits on its original; its replica and the two INODE updates'
    // replica writes overlap the next steps; the three originals are written in order.
    PendingCalls replicas;
    Status removed =
        RemoveEntry(dir, name, entry.fno, std::move(found->bucket), std::nullopt, &replicas);
    if (!removed.ok()) {
      // Nothing pending on a refusal, but a replica may be (a conflict's retry, then failure).
      (void)replicas.Wait();
      if (removed.Is(StatusCode::kNotFound) && found->recent) continue;
      return removed;
    }
    Status touched;
    if (defer_directory_times_.load(std::memory_order_relaxed)) {
      NoteDirectoryTouch(dir);
    } else {
      touched = TouchDirectory(dir, 0, std::nullopt, &replicas);
    }
    // The last link of a file the caller frees at once: its count is not written, the INODE
    // goes as it is, conditionally on the version seen (a link made meanwhile from an open
    // descriptor, or a publish, takes the usual update instead). The INODE from the kernel's
    // lookup a moment ago, or read now (a read instead of a write on both copies).
    std::optional<InodeRef> looked_up = TakeLookedUpInode(entry.fno);
    if (touched.ok() && frees_at_once && frees_at_once(entry.fno)) {
      if (!looked_up) {
        Result<InodeRef> read = GetInode(entry.fno);
        if (read.ok()) looked_up = *read;
      }
      if (looked_up && looked_up->inode.nlink == 1) {
        const Status deleted = DeleteInode(entry.fno, looked_up->version, &replicas);
        if (deleted.ok()) {
          if (Status followed = replicas.Wait(); !followed.ok()) {
            spdlog::error("unlink of '{}' in {}: a replica is behind: {}", name, dir,
                          followed.ToString());
          }
          Unlinked freed{entry.fno, true};
          freed.inode_deleted_at_size = looked_up->inode.size;
          freed.symlink = looked_up->inode.IsSymlink();
          return freed;
        }
        looked_up.reset();  // changed since: the update below reads it afresh
      }
    }
    Result<InodeRef> dropped = touched.ok() ? UpdateInode(
                                                  entry.fno,
                                                  [](Inode* inode) {
                                                    if (inode->nlink > 0) --inode->nlink;
                                                    inode->ctime = Now();
                                                    return Status::Ok();
                                                  },
                                                  std::move(looked_up), &replicas)
                                            : Result<InodeRef>(touched);
    const Status followed = replicas.Wait();
    if (!dropped.ok()) return dropped.status();
    // The originals changed: the name is gone and the link counted. A replica that did not
    // follow (nor could be recorded for repair) is logged; the caller must still free the file.
    if (!followed.ok()) {
      spdlog::error("unlink of '{}' in {}: an INODE replica is behind: {}", name, dir,
                    followed.ToString());
    }
    return Unlinked{entry.fno, dropped->inode.nlink == 0};
  }
  return Status::NotFound("no entry '" + std::string(name) + "'");  // not reached
}

Result<InodeRef> Namespace::SetAttr(uint64_t fno, const SetAttrRequest& changes) {
  if (changes.size) {
    Result<InodeRef> current = GetInode(fno);
    if (!current.ok()) return current.status();
    if (current->inode.IsDirectory()) return Status::IsADirectory("cannot truncate a directory");
    ORTHOFS_RETURN_IF_ERROR(TruncateData(fno, current->inode.size, *changes.size));
  }
  if (changes.mtime && defer_directory_times_.load(std::memory_order_relaxed)) {
    // utimes after removals: the times set win over the removals' pending ones.
    MutexLock lock(&times_mu_);
    pending_times_.Forget(fno);
  }
  const Timespec now = Now();
  return UpdateInode(fno, [&](Inode* inode) {
    if (changes.mode) inode->mode = (inode->mode & S_IFMT) | (*changes.mode & 07777);
    if (changes.uid) inode->uid = *changes.uid;
    if (changes.gid) inode->gid = *changes.gid;
    if (changes.size) {
      inode->size = *changes.size;
      inode->mtime = now;
    }
    if (changes.atime) inode->atime = *changes.atime;
    if (changes.mtime) inode->mtime = *changes.mtime;
    if (changes.drop_privileges) inode->DropPrivileges();
    inode->ctime = now;
    return Status::Ok();
  });
}

Result<InodeRef> Namespace::PublishChanges(uint64_t fno, std::optional<uint64_t> written_size,
                                           const Timespec& now, const DeferredAttributes& deferred,
                                           std::optional<InodeRef> start) {
  return UpdateInode(
      fno,
      [&](Inode* inode) {
        if (written_size) {
          inode->size = std::max(inode->size, *written_size);
          inode->mtime = inode->ctime = now;
        }
        deferred.ApplyTo(inode);
        return Status::Ok();
      },
      std::move(start));
}

Status Namespace::SetXattr(uint64_t fno, const std::string& name, const std::string& value,
                           XattrMode mode) {
  if (name.empty() || name.size() > kMaxXattrNameLength) {
    return Status(StatusCode::kTooBig,
                  "attribute name must be 1.." + std::to_string(kMaxXattrNameLength) + " bytes");
  }
  if (value.size() > kMaxXattrValueLength) {
    return Status(StatusCode::kTooBig,
                  "attribute value over " + std::to_string(kMaxXattrValueLength) + " bytes");
  }
  return UpdateInode(fno,
                     [&](Inode* inode) {
                       const bool exists = inode->xattrs.count(name) > 0;
                       if (mode == XattrMode::kCreate && exists) {
                         return Status::AlreadyExists("attribute " + name + " exists");
                       }
                       if (mode == XattrMode::kReplace && !exists) {
                         return Status(StatusCode::kNoAttribute, "no attribute " + name);
                       }
                       size_t total = name.size() + value.size();
                       for (const auto& [n, v] : inode->xattrs) {
                         if (n != name) total += n.size() + v.size();
                       }
                       if (total > kMaxXattrTotalBytes) {
                         return Status::NoSpace("the inode's attributes would exceed " +
                                                std::to_string(kMaxXattrTotalBytes) + " bytes");
                       }
                       inode->xattrs[name] = value;
                       inode->ctime = Now();
                       return Status::Ok();
                     })
      .status();
}

Result<std::string> Namespace::GetXattr(uint64_t fno, const std::string& name) {
  Result<InodeRef> inode = GetInode(fno);
  if (!inode.ok()) return inode.status();
  auto it = inode->inode.xattrs.find(name);
  if (it == inode->inode.xattrs.end()) {
    return Status(StatusCode::kNoAttribute, "no attribute " + name);
  }
  return it->second;
}

Result<std::vector<std::string>> Namespace::ListXattrs(uint64_t fno) {
  Result<InodeRef> inode = GetInode(fno);
  if (!inode.ok()) return inode.status();
  std::vector<std::string> names;
  for (const auto& [name, value] : inode->inode.xattrs) names.push_back(name);
  return names;
}

Status Namespace::RemoveXattr(uint64_t fno, const std::string& name) {
  return UpdateInode(fno,
                     [&](Inode* inode) {
                       if (inode->xattrs.erase(name) == 0) {
                         return Status(StatusCode::kNoAttribute, "no attribute " + name);
                       }
                       inode->ctime = Now();
                       return Status::Ok();
                     })
      .status();
}

}  // namespace orthofs
