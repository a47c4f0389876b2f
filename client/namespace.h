// The file system namespace kept in objects on the OSDs, with no metadata server:
// INODE objects (attributes), DIRENT objects (one per name hash of a directory) and a SUPER
// object per namespace (the fno counter). Every change is optimistic ([Kroha] §4): read
// versions, then write conditionally on them; a conflict re-reads and retries. Changes that
// touch several objects order their writes so a crash leaves at worst an orphan object,
// never an entry that points to nothing:
//   create:  new INODE (orphan until linked) -> DIRENT (commit) -> parent times
//   unlink:  DIRENT removed (commit) -> INODE nlink-1 -> objects deleted at nlink 0
//            (a last link freed at once: DIRENT removed -> INODE deleted -> objects deleted)
//   rename:  new DIRENT (commit) -> old DIRENT removed -> replaced target released
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "client/cluster_client.h"
#include "common/deferred_attributes.h"
#include "common/inode.h"
#include "common/pending_touches.h"
#include "common/recent_reads.h"
#include "common/sparse_seek.h"
#include "common/thread_annotations.h"

namespace orthofs {

struct InodeRef {
  uint64_t fno = 0;
  Inode inode;
  uint64_t version = 0;  // of the INODE object's original
};

struct Credentials {
  uint32_t uid = 0;
  uint32_t gid = 0;
};

// What Unlink/Rename left behind for the caller: a file whose last link is gone. Its objects
// are deleted by ReleaseInode, now or at its last close.
struct Unlinked {
  uint64_t fno = 0;
  bool last_link = false;
  // Set once the INODE is deleted (Unlink's `frees_at_once`, DeleteUnlinkedInode): the file's
  // size then (0 for no data, max when unknown: all listed), by which ReleaseUnlinked deletes
  // the data objects that remain.
  std::optional<uint64_t> inode_deleted_at_size;
  bool symlink = false;  // with inode_deleted_at_size: its link target object remains too
};

enum class RenameMode { kReplace, kNoReplace };

class Namespace {
 public:
  Namespace(ClusterClient* cluster, uint32_t fnso);
  Namespace(const Namespace&) = delete;
  Namespace& operator=(const Namespace&) = delete;
  // Writes the directory times still pending (EnableDeferredDirectoryTimes).
  ~Namespace();

  // Directory times an unlink changes are written up to kDirectoryTimesDelay later, in one
  // INODE update per directory however many entries went meanwhile (common/pending_touches.h);
  // this client's reads of the directory show them at once. Another client sees them that much
  // later; a crash loses them (the entries' removals are committed as before). The mount
  // enables it; without it, every unlink writes its directory's times.
  void EnableDeferredDirectoryTimes();
  static constexpr std::chrono::milliseconds kDirectoryTimesDelay{50};
  // Writes the pending times of `dir` (fsyncdir), or of every directory, now.
  Status FlushDirectoryTimes(std::optional<uint64_t> dir = std::nullopt);

  // Creates the namespace: the SUPER object and the root directory. kAlreadyExists if made.
  static Status Mkfs(ClusterClient* cluster, uint32_t fnso, const Credentials& owner);
  // kNotFound with a hint when the namespace was never created.
  Status CheckExists();

  uint32_t fnso() const { return fnso_; }
  uint32_t object_size() const { return cluster_->map().object_size; }
  ClusterClient* cluster() { return cluster_; }

  Result<InodeRef> GetInode(uint64_t fno);
  // GetInode of each, read together (a listing's attributes): in the order of `fnos`.
  std::vector<Result<InodeRef>> GetInodes(const std::vector<uint64_t>& fnos);
  // `name_absent`, if given, is set when the directory has no such entry (not when the entry's
  // INODE is gone: another client's rename or unlink between the two reads).
  Result<InodeRef> Lookup(uint64_t dir, std::string_view name, bool* name_absent = nullptr);
  Result<std::vector<DirEntry>> ReadDir(uint64_t dir);

  // Regular files, FIFOs, device nodes and directories (mode carries the type).
  Result<InodeRef> Create(uint64_t dir, std::string_view name, uint32_t mode, uint64_t rdev,
                          const Credentials& who);
  Result<InodeRef> Symlink(uint64_t dir, std::string_view name, std::string_view target,
                           const Credentials& who);
  Result<std::string> ReadLink(uint64_t fno);
  Result<InodeRef> Link(uint64_t fno, uint64_t dir, std::string_view name);
  // `frees_at_once(fno)`: the caller frees the file right after the unlink if it held the last
  // link (no descriptor here has it open). Then the link count is not written: the INODE is
  // deleted as it is, in place of that conditional write on both copies, and the caller deletes
  // the data objects (ReleaseUnlinked), which nothing reaches any more.
  Result<Unlinked> Unlink(uint64_t dir, std::string_view name,
                          const std::function<bool(uint64_t)>& frees_at_once = {});
  // With `expected`, refused (Stale) unless the name names that directory: the caller's view
  // of the name is out of date.
  Status Rmdir(uint64_t dir, std::string_view name,
               std::optional<uint64_t> expected = std::nullopt);
  // NotFound when another client renamed or removed the old name first (only one takes it).
  // If that was an unlink, this rename may have held the file's last link: then
  // `source_gone` says so, and the caller frees the file as after an unlink. With
  // `expected_source`, the rename is refused (Stale) unless the old name names that file;
  // with `expected_target`, unless the new name names that directory (the one the caller's
  // view takes for replaced: Linux marks it dead after the rename).
  Result<Unlinked> Rename(uint64_t old_dir, std::string_view old_name, uint64_t new_dir,
                          std::string_view new_name, RenameMode mode,
                          Unlinked* source_gone = nullptr,
                          std::optional<uint64_t> expected_source = std::nullopt,
                          std::optional<uint64_t> expected_target = std::nullopt);
  // Applies the changes (truncation deletes or trims data objects) and stamps ctime.
  Result<InodeRef> SetAttr(uint64_t fno, const SetAttrRequest& changes);
  // Zeros bytes [offset, end) of a file on the OSDs (fallocate's PUNCH_HOLE and ZERO_RANGE):
  // objects inside the range are deleted, so they read as zeros and take no space; the objects
  // the range starts or ends inside are rewritten. The size does not change.
  Status ZeroData(uint64_t fno, uint64_t offset, uint64_t end);
  // lseek's SEEK_DATA or SEEK_HOLE from `offset` in a file of `size` bytes, by the objects the
  // OSDs store (the caller writes back what it has not yet); nullopt means ENXIO.
  Result<std::optional<uint64_t>> Seek(uint64_t fno, uint64_t size, uint64_t offset,
                                       SeekTarget target);
  // Publishes an open file's changes in one conditional INODE write: with `written_size`, its
  // writes (the size raised to at least that, never lowered; mtime and ctime set to `now`),
  // then the attribute changes `deferred` kept for it. From `start` (the INODE the caller last
  // saw) if given: a change by anyone else since fails that write, and a fresh read retries.
  Result<InodeRef> PublishChanges(uint64_t fno, std::optional<uint64_t> written_size,
                                  const Timespec& now, const DeferredAttributes& deferred = {},
                                  std::optional<InodeRef> start = std::nullopt);
  // Raises the size to at least `size` and sets mtime (after writes); never shrinks.
  Result<InodeRef> ExtendAndTouch(uint64_t fno, uint64_t size, const Timespec& mtime) {
    return PublishChanges(fno, size, mtime);
  }
  // Extended attributes (kept in the INODE object, changed by one conditional write).
  enum class XattrMode { kAny, kCreate, kReplace };  // XATTR_CREATE / XATTR_REPLACE
  Status SetXattr(uint64_t fno, const std::string& name, const std::string& value, XattrMode mode);
  Result<std::string> GetXattr(uint64_t fno, const std::string& name);
  Result<std::vector<std::string>> ListXattrs(uint64_t fno);
  Status RemoveXattr(uint64_t fno, const std::string& name);

  // Deletes every object of a file whose last link is gone.
  Status ReleaseInode(uint64_t fno);
  // ReleaseInode in two steps: the INODE deleted (then no reader elsewhere gets zeros for a
  // missing object, but ESTALE), returning what remains (`inode_deleted_at_size`, `symlink`)...
  Result<Unlinked> DeleteUnlinkedInode(uint64_t fno);
  // ...and the data objects or link target deleted, which nothing reaches any more. With
  // `inode_deleted_at_size` unset, the whole ReleaseInode.
  Status ReleaseUnlinked(const Unlinked& unlinked);
  // ReleaseUnlinked of each, the data objects of small files all together
  // (ClusterClient::DeleteDataObjects: a call per OSD, not two per object). One status each.
  std::vector<Status> ReleaseUnlinkedMany(const std::vector<Unlinked>& unlinked);
  // True only when both copies of the file's INODE answer that it is absent (a read of either
  // copy answers NotFound also when the other copy's OSD is merely unreachable).
  Result<bool> InodeGoneFromBothCopies(uint64_t fno);
  // Deletes the data objects of a file whose INODE is gone from both copies (another client
  // freed it by a smaller size than this one wrote).
  Status ReleaseData(uint64_t fno, uint64_t size) { return DeleteObjectsOfFreed(fno, size); }
  // Deletes what is stored of the file past `size` (its published size, or this client's
  // including its own writes): objects past the object holding the end, and that object's
  // bytes past it. A client that died after writing objects back but before publishing their
  // size leaves such objects; an extension (a write past the end, truncate up, fallocate)
  // would show their old bytes where POSIX says a hole reads as zeros. One listing per OSD of
  // the file, and a read of the end's object.
  Status ClearPastEnd(uint64_t fno, uint64_t size);

  // A directory's rename that noted itself (Inode::renames) this long ago and is still noted
  // was cut short: the next rename or removal of the directory finishes it, and so does fsck.
  // A rename's calls have deadlines and bounded retries, so a live one is far younger unless
  // its client stalls (or the clients' clocks differ) by as much: that one would find its old
  // name gone and take its new one back, leaving the directory with no name. Five minutes, as
  // fsck's default grace.
  static constexpr std::chrono::seconds kRenameNoteExpiry{300};
  // For tests: another expiry than kRenameNoteExpiry for this client.
  void set_rename_note_expiry(std::chrono::seconds expiry) { rename_note_expiry_ = expiry; }

  // An entry made in a directory an rmdir has marked waits this long for the rmdir to either
  // give up (the entry stays) or delete the directory (the entry goes, NotFound); a mark still
  // there then is taken for one a dead client left, and the entry goes as well.
  static constexpr std::chrono::milliseconds kRemovalWait{5000};
  // A mark older than this (by its directory's ctime, so by the marking client's clock) is a
  // dead client's: an entry meeting it goes again without waiting. An rmdir takes milliseconds
  // to seconds from mark to end; a minute also covers clocks apart by less.
  static constexpr std::chrono::milliseconds kMarkAbandoned{60000};
  // For tests: another wait than kRemovalWait for this client.
  void set_removal_wait(std::chrono::milliseconds wait) { removal_wait_ = wait; }

  // fsck: gives directory `fno`, which no name names, the name `name` in `dir`, if its inode
  // is still at `expected_version` (VersionMismatch otherwise: a client changed it).
  Status ReattachDirectory(uint64_t fno, uint64_t dir, std::string_view name,
                           uint64_t expected_version);

  // fsck: finishes the renames of directory `fno` noted before `started_before` (cut short:
  // Inode::renames). Where a note's new name names the directory, its old name is removed if it
  // still does; the note goes. Returns the old names removed (with `dry_run`, to be removed).
  Result<uint32_t> FinishRenamesCutShort(uint64_t fno, int64_t started_before, bool dry_run);

  // Counts this client's changes of INODE objects, each once as it starts and once as it ends:
  // attributes read while the count stood still include every change this client made.
  uint64_t inode_changes() const { return inode_changes_.load(std::memory_order_acquire); }

  // Changes retried because a conditional write found the object changed: mostly another
  // client's change (optimistic concurrency control's aborts, [Kroha] §4), also another
  // thread's of this client or this client's own commit whose answer was lost.
  uint64_t conflicts() const { return conflicts_.load(); }

  // The INODE this client wrote last for `fno` (its attributes and version) and when, if that
  // was less than a second ago: the kernel forgets a directory's attributes at every entry made
  // or removed in it, and asks again at the next path walk through it.
  std::optional<std::pair<InodeRef, std::chrono::steady_clock::time_point>> RecentlyWritten(
      uint64_t fno);

 private:
  // One Rename, in named steps (client/namespace_rename.cc).
  class RenameOp;
  // Conflicts are rare ([Kroha]'s premise); a few retries with backoff settle them.
  static constexpr int kMaxAttempts = 64;
  // NameTooLong past kMaxNameLength, InvalidArgument for "", ".", ".." or a '/'.
  static Status CheckName(std::string_view name);
  // The INODE a lookup read a moment ago (at most once), to start a change from.
  std::optional<InodeRef> TakeLookedUpInode(uint64_t fno);
  // The INODE `read` holds, decoded; a NotFound read names the missing inode.
  Result<InodeRef> InodeFromRead(uint64_t fno, const Result<wire::ReadResponse>& read);
  // The INODE as this client wrote it a moment ago (RecentlyWritten), else as read now: the
  // start of a change whose conditional write catches another client's change in between.
  Result<InodeRef> WrittenOrRead(uint64_t fno);
  Oid InodeOid(uint64_t fno) const { return {fnso_, fno, 0, ObjectType::kInode}; }
  Oid DirentOid(uint64_t dir, std::string_view name) const {
    return {fnso_, dir, DirentOffset(name), ObjectType::kDirent};
  }
  Oid SymlinkOid(uint64_t fno) const { return {fnso_, fno, 0, ObjectType::kSymlink}; }
  Oid SuperOid() const { return {fnso_, 0, 0, ObjectType::kSuper}; }
  Oid MoveLeaseOid() const { return {fnso_, 0, 1, ObjectType::kSuper}; }
  Oid DataOid(uint64_t fno, uint64_t index) const { return {fnso_, fno, index, ObjectType::kData}; }

  struct Bucket {
    std::vector<DirEntry> entries;
    uint64_t version = 0;  // 0 = the DIRENT object does not exist
    bool Has(std::string_view name) const {
      return std::any_of(entries.begin(), entries.end(),
                         [&](const DirEntry& e) { return e.name == name; });
    }
    // `name` is here and names inode `fno`.
    bool Names(std::string_view name, uint64_t fno) const {
      return std::any_of(entries.begin(), entries.end(),
                         [&](const DirEntry& e) { return e.name == name && e.fno == fno; });
    }
  };
  Result<Bucket> ReadBucket(const Oid& oid);
  // Whether `dirent`'s bucket, read now, has `name` pointing to `fno`: a change of that entry
  // that failed as a transport failure (ClusterClient::IsOsdFailure) may have landed with its
  // answer lost, and the entry decides.
  Result<bool> HasEntry(const Oid& dirent, std::string_view name, uint64_t fno);
  // The bucket of `oid` to start a change from: a lookup's read of it a moment ago if there is
  // one (`*recent`), else a fresh read. Never answer from a recent one (see recent_buckets_).
  Result<Bucket> BucketToChange(const Oid& oid, bool* recent);
  // The entry `name` of `dir` and its bucket, to change; a name missing from a recent bucket is
  // looked up afresh, so kNotFound is always current.
  struct FoundEntry {
    DirEntry entry;
    Bucket bucket;
    bool recent = false;  // found in a recent bucket: verify afresh before refusing on it
  };
  Result<FoundEntry> FindEntryToChange(uint64_t dir, std::string_view name, bool allow_recent);
  // Writes the bucket if its version is still `expected`; an empty bucket is deleted.
  // `replica_pending`: as for ClusterClient::WriteOriginalThenReplica (and DeleteBothCopies).
  Status WriteBucket(const Oid& oid, const std::vector<DirEntry>& entries, uint64_t expected,
                     PendingCalls* replica_pending = nullptr);
  // Every write and deletion of an INODE object goes through these two (inode_changes).
  // `replica_pending`: as for ClusterClient::WriteOriginalThenReplica.
  Status WriteInode(uint64_t fno, const Inode& inode, uint64_t expected_version,
                    uint64_t* new_version, PendingCalls* replica_pending = nullptr);
  // `expected_version`: only if the INODE is still at that version (VersionMismatch if not).
  // `replica_pending`: as for ClusterClient::DeleteBothCopies.
  Status DeleteInode(uint64_t fno, std::optional<uint64_t> expected_version = std::nullopt,
                     PendingCalls* replica_pending = nullptr);

  // Read-modify-write of one inode with retries on conflict. The first attempt starts from
  // `start` if given (an INODE read a moment ago); a conflict reads afresh.
  template <typename Change>
  Result<InodeRef> UpdateInode(uint64_t fno, Change change,
                               std::optional<InodeRef> start = std::nullopt,
                               PendingCalls* replica_pending = nullptr);
  // UpdateInode with the change as a function: for steps defined in other files
  // (namespace_rename.cc), where the template's definition is not seen.
  Result<InodeRef> UpdateInodeWith(uint64_t fno, const std::function<Status(Inode*)>& change,
                                   std::optional<InodeRef> start = std::nullopt);
  Result<uint64_t> AllocateFno();
  // Counts a conflict (a conditional write found the object changed: conflicts()) and waits
  // before the retry number `attempt` (0: the first).
  void AfterConflict(int attempt);
  // A generator seeded with 256 bits from the system (one random_device draw is 32).
  static std::mt19937_64 SeededRandom();
  // Either copy of the SUPER object is on an OSD this client believes down.
  bool SuperCopyDown();
  Result<InodeRef> MakeInode(uint64_t dir, std::string_view name, const Inode& inode,
                             std::string_view symlink_target);
  Result<DirEntry> FindEntry(uint64_t dir, std::string_view name);
  // `first`: the bucket to try first (FindEntryToChange's); a conflict reads afresh.
  // `put_back` takes the removed entry's place (a lost rename gives back what it replaced).
  // `replica_pending`: as for WriteBucket.
  Status RemoveEntry(uint64_t dir, std::string_view name, uint64_t expected_fno,
                     std::optional<Bucket> first = std::nullopt,
                     const std::optional<DirEntry>& put_back = std::nullopt,
                     PendingCalls* replica_pending = nullptr);
  Result<bool> DirectoryIsEmpty(uint64_t dir);
  // Marks directory `fno` (named `name`, for the error) as being removed and checks that it is
  // empty, after settling renames of it (SettleRenames): OK leaves it marked; NotEmpty, Busy
  // (a rename of it may still run) or an error leaves it unmarked.
  Status MarkForRemovalIfEmpty(uint64_t fno, std::string_view name);
  void ClearRemovalMark(uint64_t dir);
  // Before a rename or removal of directory `fno` that found rename notes on it: Busy while one
  // is younger than the expiry (that rename may still run); older ones were cut short and are
  // finished (FinishRenamesCutShort), so the directory has one name again.
  Status SettleRenames(uint64_t fno);
  // The namespace's move lease (MoveLease), held by this client; released when it goes. A
  // move commits only while it is Usable (with time left for the commit's calls).
  class MoveLeaseHold {
   public:
    MoveLeaseHold(Namespace* ns, uint64_t version, std::unique_lock<std::mutex> local);
    MoveLeaseHold(MoveLeaseHold&& other) noexcept;
    MoveLeaseHold& operator=(MoveLeaseHold&&) = delete;
    ~MoveLeaseHold();
    bool Usable() const;

   private:
    Namespace* ns_;
    uint64_t version_;
    std::unique_lock<std::mutex> local_;
    std::chrono::steady_clock::time_point usable_until_;
  };
  // Takes the move lease, waiting while another client holds it (Busy after twice its term).
  Result<MoveLeaseHold> TakeMoveLease();
  // Whether directory `dir` is `moved` or inside it, by the parents directories record (a
  // parent not recorded ends the walk: not inside).
  Result<bool> IsInside(uint64_t dir, uint64_t moved);
  Status TruncateData(uint64_t fno, uint64_t old_size, uint64_t new_size);
  // The data objects of a file whose INODE is gone, by its size (max: unknown, all listed).
  Status DeleteObjectsOfFreed(uint64_t fno, uint64_t size);
  // ZeroData deletes up to this many whole objects without listing which exist.
  static constexpr uint64_t kDeleteUnlistedUpTo = 16;
  // Indexes [first, end) of the file's data objects that either copy has stored; listed in
  // ascending order, and only until `enough` says those so far suffice, when it is given.
  Result<std::set<uint64_t>> StoredDataObjects(
      uint64_t fno, uint64_t first, uint64_t end,
      const std::function<bool(const std::set<uint64_t>&)>& enough = {});
  // Bytes [from, to) of one data object read as zeros afterwards (both copies rewritten; a
  // range reaching the stored end cuts it off). A missing object is a hole already.
  Status ZeroObjectRange(uint64_t fno, uint64_t index, uint64_t from, uint64_t to);
  // The directory's times, and its link count by `nlink_delta`. `entry_added`: the caller just
  // committed an entry there, which a directory an rmdir is removing refuses (NotFound, after
  // waiting up to the removal wait for the rmdir to end); the caller then takes its entry back.
  Status TouchDirectory(uint64_t dir, int nlink_delta, std::optional<InodeRef> start = std::nullopt,
                        PendingCalls* replica_pending = nullptr, bool entry_added = false);

  // Deferred directory times (client/namespace_times.cc).
  void NoteDirectoryTouch(uint64_t dir);
  // After an entry was committed in `dir`, with the directory's times deferred: a fresh read of
  // its INODE stands in for TouchDirectory's conditional write against an rmdir under way (a
  // mark committed before the read is seen; one after it precedes the rmdir's listing, which
  // then finds the entry). Waits for a marked directory as TouchDirectory does; NotFound when
  // it is (being) removed. Notes the touch otherwise.
  Status EntryAddedTo(uint64_t dir);
  // An rmdir's mark on directory `dir` (read at `now`) that a dead client left.
  bool MarkAbandoned(const Inode& dir, const Timespec& now) const;
  void WriteDueDirectoryTimes(std::stop_token stop);
  Status WriteDirectoryTimes(uint64_t dir);
  // Raises a directory INODE's times to those pending for it; returns the time applied.
  std::optional<Timespec> ApplyPendingTimes(uint64_t fno, Inode* inode);

  ClusterClient* cluster_;
  std::atomic<uint64_t> inode_changes_{0};
  const uint32_t fnso_;
  std::atomic<uint64_t> conflicts_{0};
  std::mutex fno_mu_;
  uint64_t next_fno_ = 0;  // reserved range [next_fno_, fno_limit_)
  uint64_t fno_limit_ = 0;
  std::mt19937_64 fno_random_ = SeededRandom();    // where a jumped batch lands
  const uint64_t lease_owner_ = SeededRandom()();  // this client, in MoveLease
  std::mutex move_mu_;                             // held with the move lease
  std::chrono::seconds rename_note_expiry_ = kRenameNoteExpiry;
  std::chrono::milliseconds removal_wait_ = kRemovalWait;
  // DIRENT buckets read by lookups a moment ago (common/recent_reads.h): the kernel looks a
  // name up right before it creates or unlinks it, and the change starts from that read instead
  // of reading again. Its conditional write fails if the bucket changed since.
  std::mutex recent_mu_;
  RecentReads<Bucket> recent_buckets_;
  // INODEs this client wrote a moment ago (RecentlyWritten), by fno.
  RecentReads<InodeRef> written_inodes_;
  // Writes and deletions of an INODE under way, by fno (while any is): a write that met a
  // deletion of the same INODE is not kept in written_inodes_, which must never bring a deleted
  // INODE back. (Deletions of other files, as `rm -rf` makes beside its directory's updates,
  // leave it alone.)
  struct InodeCallsUnderWay {
    int writes = 0;
    int deletions = 0;
    bool deletion_met = false;  // a deletion ran beside one of the writes
  };
  std::map<uint64_t, InodeCallsUnderWay> inode_calls_;  // guarded by recent_mu_
  // INODEs lookups read a moment ago, by fno: an unlink or a rename of the name starts its
  // update of the INODE from there (TakeLookedUpInode), as changes of entries do from
  // recent_buckets_.
  RecentReads<InodeRef> looked_up_inodes_;
  // The same from listings (ReadDir's buckets, GetInodes' INODEs, as readdirplus reads them),
  // kept longer: `rm -rf` lists a directory whole, then removes its entries one by one, with no
  // lookup in between (the kernel has the names from the listing). A listed bucket holds one
  // name almost always, so it stays current until that name changes; a stale one only fails
  // its conditional write, and the change reads afresh.
  RecentReads<Bucket> listed_buckets_;
  RecentReads<InodeRef> listed_inodes_;
  std::atomic<bool> defer_directory_times_{false};
  Mutex times_mu_;
  PendingTouches pending_times_ ORTHOFS_GUARDED_BY(times_mu_);
  std::condition_variable_any times_noted_;
  // Last member: stopped (and joined) before the rest goes.
  std::jthread directory_times_writer_;
};

Timespec Now();

}  // namespace orthofs
