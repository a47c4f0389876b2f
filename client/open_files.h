// OpenFiles: the open-file session engine of one mount, below the FUSE adapter. It keeps, per
// file this client has open, what close-to-open consistency needs: the size the client knows
// (as of the open, plus its own writes), whether its writes are published to the INODE object,
// which of its cached bytes are still valid (common/cached_versions.h), the sizes the kernel may
// hold (common/kernel_sizes.h), and the files unlinked while open, freed at their last close.
// Sizes that could not be published at a close are retried in the background.
//
// It tells the kernel what it must forget through KernelCache (the mount's FUSE notifications;
// tests pass their own), so it needs no FUSE to be tested.
//
// Thread-safe: FUSE serves requests on many threads; one mutex guards the open-file table.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <stop_token>
#include <thread>

#include "client/deferred_releases.h"
#include "client/file_io.h"
#include "client/lock_manager.h"
#include "client/namespace.h"
#include "common/cached_versions.h"
#include "common/deferred_attributes.h"
#include "common/kernel_sizes.h"
#include "common/shared_bytes.h"
#include "common/status.h"
#include "common/thread_annotations.h"

namespace orthofs {

// What the session engine tells the kernel about a file whose cached state went stale.
class KernelCache {
 public:
  virtual ~KernelCache() = default;
  // The kernel's attributes of the file (its size, its mode) are stale; its pages stay.
  virtual void ForgetAttributes(uint64_t fno) = 0;
  // The kernel's pages and attributes of the file are stale.
  virtual void ForgetPages(uint64_t fno) = 0;
};

// Per-inode state of files this client has open.
// An entry with open_count 0 is a file closed with its size unpublished (both INODE copies
// were unreachable): the size stays here and is published in the background.
struct OpenInode {
  int open_count = 0;
  uint64_t size = 0;        // the size this client knows, including its own writes
  bool size_dirty = false;  // writes not yet published to the INODE object
  // Attribute changes that go out with the writes' publish (common/deferred_attributes.h),
  // kept since `deferred_since`.
  DeferredAttributes deferred;
  std::chrono::steady_clock::time_point deferred_since;
  bool publishing = false;         // a Publish is under way (it took the writes off size_dirty)
  bool release_on_close = false;   // unlinked while open: free its objects at the last close
  bool removed_elsewhere = false;  // another client freed it: every flush and close says so
  // Nothing is stored past `size` (BeforeExtending): created by this client, cut by it, or
  // checked at its first extension since the open.
  bool past_end_clear = false;
  bool clearing_past_end = false;  // a BeforeExtending is under way
  std::optional<InodeRef> seen;    // the INODE as of the last open or publish
  // The last INODE read for the kernel's getattr since the open (OpenFiles::RecentAttributes).
  std::optional<InodeRef> attributes;
  std::chrono::steady_clock::time_point attributes_read_at;
  uint64_t attributes_changes = 0;  // Namespace::inode_changes() before that read

  // Something of this client's waits to be published: writes, or attribute changes.
  bool Unpublished() const { return size_dirty || !deferred.empty(); }
};

class OpenFiles {
 public:
  // How long the kernel may trust attributes and entries it was told (seconds).
  static constexpr double kAttrTimeout = 1.0;

  // `kernel` may be null (nothing to tell) and must outlive this.
  OpenFiles(Namespace* ns, FileIo* io, LockManager* locks, KernelCache* kernel);
  OpenFiles(const OpenFiles&) = delete;
  OpenFiles& operator=(const OpenFiles&) = delete;

  // A descriptor of the file is open on this client.
  bool OpenHere(uint64_t fno);

  // The size of a file this client has open (close-to-open: as of open, plus own writes).
  std::optional<uint64_t> OpenSize(uint64_t fno);

  // This mount unlinked the file while it was open here (it frees it at the last close): a
  // descriptor's /proc/<pid>/fd link, not a name, can open it again.
  bool UnlinkedHereWhileOpen(uint64_t fno);

  // An open file's INODE as this client last saw it (at open, or its own last publish).
  std::optional<InodeRef> SeenWhileOpen(uint64_t fno);

  // Attributes of an open file for the kernel's getattr without an INODE read: the last ones
  // read for it, if younger than kAttrTimeout and this client changed no INODE since, with
  // the rest of that timeout. That is what the kernel's own attribute cache would hold had it
  // not dropped it: Linux forgets a file's attributes at every write (a stat of a file being
  // written would cost an INODE read per write).
  std::optional<InodeRef> RecentAttributes(uint64_t fno, double* timeout);

  // Keeps attributes of an open file read for getattr: `changes` and `read_at` are
  // Namespace::inode_changes() and the time from before the read.
  void AttributesRead(const InodeRef& ref, uint64_t changes,
                      std::chrono::steady_clock::time_point read_at);

  // True if the kernel may hold a larger size for the open file than the one this client knows
  // (common/kernel_sizes.h).
  bool KernelMayHoldLargerSize(uint64_t fno);

  // The size, counting this client's unpublished writes.
  uint64_t SizeOf(const InodeRef& ref);

  // A setattr of a file this client is writing that may go out with the writes' publish
  // (DeferredAttributes::MayWait): kept for it, and the attributes to answer returned, in
  // place of an INODE update now. Nullopt: the caller changes the INODE itself, after
  // PublishDeferred. Deferred changes wait at most kAttrTimeout for the publish (a file held
  // open gets its writes published then, data first, as at a close).
  std::optional<InodeRef> DeferAttributes(uint64_t fno, const SetAttrRequest& changes);
  // Publishes the deferred attribute changes of the file now, if there are any (with its
  // writes): before a setattr that cannot wait, which must not be undone by them later.
  Status PublishDeferred(uint64_t fno);

  // Returns what this client and its kernel cached of the file: valid when nobody else changed
  // its INODE since (every change of a file's bytes publishes a new mtime there). When stale,
  // the open must call Revalidated once the kernel's pages are gone; until then other opens of
  // the file are not told their pages are valid either. A file just created has no pages.
  CachedVersions::Cached Opened(const InodeRef& ref, bool created = false);

  // After an open that found the file changed has replied: drops the kernel's pages (and
  // attributes) of the file now, synchronously, so that no later open keeps stale pages that
  // the kernel would have dropped only when the opener ran again.
  void Revalidated(uint64_t fno);

  // A lock was granted on an open file. As at an open, what this client and its kernel cached
  // of the file stays only if nobody changed the file since (NFS's rule for locks): a program
  // that reads under a lock reads what the last holder wrote before it unlocked (which
  // SetLock writes back before it unlocks).
  Status RevalidateUnderLock(uint64_t fno);

  // Before a write or fallocate that may end past the size this client knows: the first such
  // extension of the file since its open clears what is stored past that size
  // (Namespace::ClearPastEnd), in the client cache too, so that no byte a crashed client left
  // there shows in the new range. Other writers of the file here wait for it.
  Status BeforeExtending(uint64_t fno, uint64_t end);
  void Wrote(uint64_t fno, uint64_t end);

  void Truncated(uint64_t fno, uint64_t size);

  // Publishes this client's writes (size, mtime) to the INODE object.
  // One at a time per file: a close that finds another publish under way waits for it, since
  // that one may carry this close's writes, and the close must not return before they are
  // published (a second close's flush, or the release of another descriptor, took them).
  Status Publish(uint64_t fno);

  // The file's INODE is gone: another client removed its last name and freed it, by the size
  // it knew, while this client wrote more. What this client wrote is deleted too (it would
  // stay, unreachable, until fsck), and its close answers ESTALE (as NFS does for a file
  // removed by another client).
  Status DroppedElsewhere(uint64_t fno, uint64_t size);

  // Waits for this client's publish of the file under way, if any: an open then reads the size
  // this client's closes published (close-to-open between its own descriptors).
  void AwaitPublish(uint64_t fno);

  // An INODE this client just wrote (a publish, a setattr): what it last saw of an open file,
  // unless a newer one was seen meanwhile.
  void SawOwnChange(const InodeRef& ref);

  // Before a write by someone without CAP_FSETID (KillPrivV2): drops the file's privileges if
  // it has any as this client last saw it (at open, or its own change since), so only such
  // files cost an INODE update, once. Another client's chmod after this open is not seen
  // (close-to-open). Linux flags every such write, so the common case is one map lookup.
  Status DropPrivilegesBeforeWrite(uint64_t fno);

  // False when the file had no set-ID bits as this client last saw it (at open, or its own
  // change since).
  bool MayHavePrivilegesToDrop(uint64_t fno);

  // The file's bytes on the OSDs may differ from what this client and its kernel cached (a
  // change that failed part-way): nothing cached of it is trusted again.
  void DistrustCachedBytes(uint64_t fno);

  // The file's written bytes on both copies, and its size published. `reports`: as for
  // FileIo::Flush (an lseek or fallocate that fails leaves the error for fsync and close).
  Status FlushFile(uint64_t fno, bool reports = true);

  // This client wrote the file past what its INODE says, or is publishing that now.
  bool WritesUnpublished(uint64_t fno);

  bool RemovedElsewhere(uint64_t fno);

  // At unmount: everything this client wrote reaches the OSDs.
  void FlushEverything();

  // Last close: publishes, and frees an unlinked file's objects. `flock_owner`: the open
  // file's flock goes too, once what it wrote is published (the next holder reads it).
  Status Closed(uint64_t fno, std::optional<uint64_t> flock_owner);

  // A file lost its last link: free it at its last close if it is open, else now (its INODE)
  // and in the background (its data objects: DeferredReleases).
  Status LastLinkGone(const Unlinked& unlinked);

  // Waits for the background releases of unlinked files added so far (statfs, unmount).
  void AwaitReleases() { releases_.Drain(); }
  DeferredReleases::Counts release_counts() const { return releases_.counts(); }

  // The attributes to answer for `ref` (the kernel then holds its size): its INODE with the
  // size counting this client's writes and the attribute changes deferred for the file.
  Inode InodeToTell(const InodeRef& ref);

  // A read of an open or closed file of `file_size` bytes, through the client cache, and its
  // epilogue: zeros no object holds are a hole, or the objects of a file another client
  // removed (Stale: ESTALE, as NFS answers, not a file of zeros) or cut short since this one
  // opened it (the read ends at the new end, as on a local file system). `for_page_cache`: as
  // for FileIo::Read.
  Result<SharedBytes> Read(uint64_t fno, uint64_t offset, uint64_t length, bool for_page_cache);

 private:
  // An open or a lock read the file's INODE (`ref`; `open_here`: the file was open here
  // already): the size this client knows and the INODE it saw follow it, as close-to-open
  // says, unless this client's own writes say more. Caller holds mu_.
  void SawInodeLocked(OpenInode& o, const InodeRef& ref, bool open_here);

  // Publishes the sizes of files closed with their size unpublished, every second until each
  // one succeeds (or the file is opened again, whose close publishes it); and flushes open
  // files whose deferred attribute changes waited kAttrTimeout.
  void RetryUnpublished(std::stop_token stop);

  void AwaitPublishLocked(uint64_t fno, std::unique_lock<std::mutex>& lock);

  // Frees an unlinked file no descriptor here has open: its INODE now, its data objects in the
  // background (or now when too many releases wait).
  Status ReleaseSoon(Unlinked unlinked);

  uint64_t SizeOfLocked(const InodeRef& ref);

  void SawOwnChangeLocked(const InodeRef& ref);

  // An INODE change of this client's that leaves the file's bytes as they were (a publish of
  // its own writes, dropped privileges): seen, and the cached bytes stay valid unless someone
  // else changed the file in between.
  void KeptOwnChangeLocked(const InodeRef& ref);

  // What this client and its kernel cached of the file may be stale: the next open drops it
  // (without a known version it cannot keep the kernel's pages). Caller holds mu_.
  void ForgetCachedBytes(uint64_t fno);

  Namespace* const ns_;
  FileIo* const io_;
  LockManager* const locks_;
  KernelCache* const kernel_;
  std::mutex mu_;
  std::condition_variable publish_done_;      // a Publish finished (OpenInode::publishing)
  std::condition_variable past_end_cleared_;  // a BeforeExtending finished
  std::map<uint64_t, OpenInode> open_;        // guarded by mu_
  CachedVersions cached_versions_;            // guarded by mu_: which cached bytes are still valid
  std::map<uint64_t, int> revalidating_;      // guarded by mu_: opens that found the file changed
  KernelSizes kernel_sizes_;                  // guarded by mu_: the sizes the kernel may hold
  std::condition_variable_any retry_wakeup_;  // RetryUnpublished's timer
  // Deletes unlinked files' data objects after their unlink or last close answered; drained
  // before the rest goes (it calls ns_ only).
  DeferredReleases releases_{
      [this](const std::vector<Unlinked>& unlinked) { return ns_->ReleaseUnlinkedMany(unlinked); }};
  // Last member: stopped (and joined) before the rest goes.
  std::jthread unpublished_retrier_{[this](std::stop_token stop) { RetryUnpublished(stop); }};
};

}  // namespace orthofs
