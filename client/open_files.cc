#include "client/open_files.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <vector>

namespace orthofs {

OpenFiles::OpenFiles(Namespace* ns, FileIo* io, LockManager* locks, KernelCache* kernel)
    : ns_(ns), io_(io), locks_(locks), kernel_(kernel) {}

bool OpenFiles::OpenHere(uint64_t fno) {
  std::lock_guard lock(mu_);
  auto it = open_.find(fno);
  return it != open_.end() && it->second.open_count > 0;
}

std::optional<uint64_t> OpenFiles::OpenSize(uint64_t fno) {
  std::lock_guard lock(mu_);
  auto it = open_.find(fno);
  if (it == open_.end()) return std::nullopt;
  return it->second.size;
}

bool OpenFiles::UnlinkedHereWhileOpen(uint64_t fno) {
  std::lock_guard lock(mu_);
  auto it = open_.find(fno);
  return it != open_.end() && it->second.open_count > 0 && it->second.release_on_close;
}

std::optional<InodeRef> OpenFiles::SeenWhileOpen(uint64_t fno) {
  std::lock_guard lock(mu_);
  auto it = open_.find(fno);
  return it != open_.end() ? it->second.seen : std::nullopt;
}

std::optional<InodeRef> OpenFiles::RecentAttributes(uint64_t fno, double* timeout) {
  std::lock_guard lock(mu_);
  auto it = open_.find(fno);
  if (it == open_.end() || !it->second.attributes) return std::nullopt;
  const OpenInode& o = it->second;
  const double age =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - o.attributes_read_at)
          .count();
  if (o.attributes_changes != ns_->inode_changes() || age >= kAttrTimeout) return std::nullopt;
  *timeout = kAttrTimeout - age;
  return o.attributes;
}

void OpenFiles::AttributesRead(const InodeRef& ref, uint64_t changes,
                               std::chrono::steady_clock::time_point read_at) {
  std::lock_guard lock(mu_);
  auto it = open_.find(ref.fno);
  if (it == open_.end()) return;
  // Read before an open that saw a newer INODE (two opens of one file): not worth keeping.
  if (it->second.seen && ref.version < it->second.seen->version) return;
  it->second.attributes = ref;
  it->second.attributes_read_at = read_at;
  it->second.attributes_changes = changes;
}

bool OpenFiles::KernelMayHoldLargerSize(uint64_t fno) {
  std::lock_guard lock(mu_);
  auto it = open_.find(fno);
  return it != open_.end() && kernel_sizes_.MayExceed(fno, it->second.size);
}

uint64_t OpenFiles::SizeOf(const InodeRef& ref) {
  std::lock_guard lock(mu_);
  return SizeOfLocked(ref);
}

CachedVersions::Cached OpenFiles::Opened(const InodeRef& ref, bool created) {
  std::lock_guard lock(mu_);
  OpenInode& o = open_[ref.fno];
  const bool open_here = o.open_count++ > 0;
  SawInodeLocked(o, ref, open_here);
  if (created) o.past_end_clear = true;  // a new file number: nothing was ever stored
  const CachedVersions::Cached cached = cached_versions_.Open(ref.fno, ref.version);
  if (cached != CachedVersions::Cached::kValid) io_->ForgetClean(ref.fno);
  if (created || cached == CachedVersions::Cached::kNothing) return cached;
  if (cached == CachedVersions::Cached::kValid && !revalidating_.contains(ref.fno)) {
    return cached;
  }
  ++revalidating_[ref.fno];
  return CachedVersions::Cached::kStale;
}

void OpenFiles::SawInodeLocked(OpenInode& o, const InodeRef& ref, bool open_here) {
  // Closed with its size unpublished: this client's writes still count (published later).
  const bool unpublished = !open_here && o.size_dirty;
  // An INODE read that raced this client's own publish (under way, or done since) is older
  // than what this client published: keep that size.
  const bool behind = open_here && (o.publishing || (o.seen && ref.version < o.seen->version));
  if (unpublished) {
    o.size = std::max(o.size, ref.inode.size);
  } else if (!open_here || !o.size_dirty) {  // close-to-open
    o.size = behind ? std::max(o.size, ref.inode.size) : ref.inode.size;
  }
  if (!behind) o.seen = ref;
  o.attributes.reset();  // a later getattr must see what this read saw, or newer
}

void OpenFiles::Revalidated(uint64_t ino) {
  if (kernel_ != nullptr) kernel_->ForgetPages(ino);
  std::lock_guard lock(mu_);
  auto it = revalidating_.find(ino);
  if (it != revalidating_.end() && --it->second == 0) revalidating_.erase(it);
}

Status OpenFiles::RevalidateUnderLock(uint64_t ino) {
  AwaitPublish(ino);
  Result<InodeRef> r = ns_->GetInode(ino);
  if (!r.ok()) {
    // Unknown whether another client changed it: what is cached goes.
    {
      std::lock_guard lock(mu_);
      ForgetCachedBytes(ino);
    }
    if (kernel_ != nullptr) kernel_->ForgetPages(ino);
    return r.status();
  }
  bool stale = false;
  {
    std::lock_guard lock(mu_);
    auto it = open_.find(ino);
    if (it != open_.end()) SawInodeLocked(it->second, *r, it->second.open_count > 0);
    // An open that found the file changed and has not yet dropped the kernel's pages
    // (revalidating_) recorded the new version already: those pages are stale all the same.
    stale = cached_versions_.Open(ino, r->version) != CachedVersions::Cached::kValid ||
            revalidating_.contains(ino);
    if (stale) io_->ForgetClean(ino);
  }
  spdlog::debug("file {}: locked at version {} (size {}): cached bytes {}", ino, r->version,
                r->inode.size, stale ? "dropped" : "kept");
  if (stale && kernel_ != nullptr) kernel_->ForgetPages(ino);
  return Status::Ok();
}

Status OpenFiles::BeforeExtending(uint64_t fno, uint64_t end) {
  uint64_t size = 0;
  {
    std::unique_lock lock(mu_);
    auto it = open_.find(fno);
    if (it == open_.end()) return Status::Ok();  // not opened through this client
    OpenInode& o = it->second;                   // stays: the caller's descriptor is open
    past_end_cleared_.wait(lock, [&] { return !o.clearing_past_end; });
    if (o.past_end_clear || end <= o.size) return Status::Ok();
    o.clearing_past_end = true;
    size = o.size;
  }
  // The client cache may hold the same bytes (a whole object fetched around the end).
  io_->Truncated(fno, size);
  const Status cleared = ns_->ClearPastEnd(fno, size);
  std::lock_guard lock(mu_);
  auto it = open_.find(fno);
  if (it != open_.end()) {
    it->second.clearing_past_end = false;
    if (cleared.ok()) it->second.past_end_clear = true;
  }
  past_end_cleared_.notify_all();
  return cleared;
}

void OpenFiles::Wrote(uint64_t fno, uint64_t end) {
  std::lock_guard lock(mu_);
  kernel_sizes_.Grew(fno, end);
  OpenInode& o = open_[fno];
  if (end > o.size) o.size = end;
  o.size_dirty = true;
  o.deferred.Wrote();
}

std::optional<InodeRef> OpenFiles::DeferAttributes(uint64_t fno, const SetAttrRequest& changes) {
  std::lock_guard lock(mu_);
  auto it = open_.find(fno);
  if (it == open_.end()) return std::nullopt;
  OpenInode& o = it->second;
  // Only with writes to publish anyway, and their publish not under way (it took them).
  if (o.open_count == 0 || !o.size_dirty || o.publishing || !o.seen || o.removed_elsewhere) {
    return std::nullopt;
  }
  InodeRef view = *o.seen;
  o.deferred.ApplyTo(&view.inode);
  if (!DeferredAttributes::MayWait(view.inode, changes)) return std::nullopt;
  if (o.deferred.empty()) o.deferred_since = std::chrono::steady_clock::now();
  o.deferred.Add(changes, Now());
  view = *o.seen;
  o.deferred.ApplyTo(&view.inode);
  o.attributes.reset();  // a getattr reads afresh, and shows these on top
  return view;
}

Status OpenFiles::PublishDeferred(uint64_t fno) {
  {
    std::lock_guard lock(mu_);
    auto it = open_.find(fno);
    if (it == open_.end() || it->second.deferred.empty()) return Status::Ok();
  }
  return Publish(fno);
}

void OpenFiles::Truncated(uint64_t fno, uint64_t size) {
  io_->Truncated(fno, size);
  std::lock_guard lock(mu_);
  kernel_sizes_.Told(fno, size);  // the kernel truncates its own size too
  auto it = open_.find(fno);
  if (it != open_.end()) {
    it->second.size = size;
    it->second.size_dirty = false;
    // The cut listed and removed everything stored past the new size.
    it->second.past_end_clear = true;
  }
}

Status OpenFiles::Publish(uint64_t fno) {
  uint64_t size;
  bool wrote;
  DeferredAttributes deferred;
  std::optional<InodeRef> start;
  {
    std::unique_lock lock(mu_);
    AwaitPublishLocked(fno, lock);
    auto it = open_.find(fno);
    if (it == open_.end() || !it->second.Unpublished()) return Status::Ok();
    size = it->second.size;
    wrote = it->second.size_dirty;
    deferred = it->second.deferred;
    start = it->second.seen;
    it->second.size_dirty = false;
    it->second.deferred = DeferredAttributes{};
    it->second.publishing = true;
  }
  // From the INODE last seen (the create's, the last publish's): a conflict re-reads.
  Result<InodeRef> r = ns_->PublishChanges(
      fno, wrote ? std::optional<uint64_t>(size) : std::nullopt, Now(), deferred, start);
  if (r.status().Is(StatusCode::kNotFound)) {
    // Only when both copies say so: one copy absent and the other's OSD down is an outage.
    Result<bool> gone = ns_->InodeGoneFromBothCopies(fno);
    if (gone.ok() && *gone) return DroppedElsewhere(fno, size);
  }
  std::lock_guard lock(mu_);
  auto it = open_.find(fno);  // still there: the caller's descriptor is not released yet
  if (it != open_.end()) it->second.publishing = false;
  publish_done_.notify_all();
  if (!r.ok()) {
    if (it != open_.end()) {  // try again at the next flush
      it->second.size_dirty = it->second.size_dirty || wrote;
      it->second.deferred.RestoreUnder(deferred);
    }
    return r.status();
  }
  KeptOwnChangeLocked(*r);
  return Status::Ok();
}

Status OpenFiles::DroppedElsewhere(uint64_t fno, uint64_t size) {
  io_->Forget(fno);
  const Status freed = ns_->ReleaseData(fno, size);
  {
    std::lock_guard lock(mu_);
    auto it = open_.find(fno);
    if (it != open_.end()) {
      it->second.publishing = false;
      it->second.removed_elsewhere = true;
      if (it->second.open_count == 0) open_.erase(it);  // closed: nothing left to publish
    }
    publish_done_.notify_all();
  }
  if (!freed.ok()) {
    spdlog::warn("file {}, removed by another client: its objects stay (fsck collects them): {}",
                 fno, freed.ToString());
  }
  return Status::Stale("file " + std::to_string(fno) +
                       " was removed by another client; what this one wrote is dropped");
}

void OpenFiles::AwaitPublish(uint64_t fno) {
  std::unique_lock lock(mu_);
  AwaitPublishLocked(fno, lock);
}

void OpenFiles::SawOwnChange(const InodeRef& ref) {
  std::lock_guard lock(mu_);
  SawOwnChangeLocked(ref);
}

Status OpenFiles::DropPrivilegesBeforeWrite(uint64_t fno) {
  if (!MayHavePrivilegesToDrop(fno)) return Status::Ok();
  SetAttrRequest drop;
  drop.drop_privileges = true;
  Result<InodeRef> r = ns_->SetAttr(fno, drop);
  if (!r.ok()) return r.status();
  {
    std::lock_guard lock(mu_);
    KeptOwnChangeLocked(*r);
  }
  // The kernel holds the old mode. Attributes only (offset -1): that takes none of the
  // inode's locks, which the write being served holds.
  if (kernel_ != nullptr) kernel_->ForgetAttributes(fno);
  return Status::Ok();
}

bool OpenFiles::MayHavePrivilegesToDrop(uint64_t fno) {
  std::lock_guard lock(mu_);
  auto it = open_.find(fno);
  return it == open_.end() || !it->second.seen || it->second.seen->inode.HasPrivilegesToDrop();
}

void OpenFiles::DistrustCachedBytes(uint64_t fno) {
  std::lock_guard lock(mu_);
  ForgetCachedBytes(fno);
}

Status OpenFiles::FlushFile(uint64_t fno, bool reports) {
  Status written = io_->Flush(fno, reports);
  if (!written.ok()) {
    // A refused write-back (a full OSD) left bytes in the kernel's pages that no OSD has.
    std::lock_guard lock(mu_);
    ForgetCachedBytes(fno);
  }
  Status published = Publish(fno);
  if (!written.ok()) return written;
  if (published.ok() && RemovedElsewhere(fno)) {
    // An earlier publish (another descriptor's) found the file gone and dropped every byte
    // this client wrote to it, this descriptor's too.
    return Status::Stale("file " + std::to_string(fno) + " was removed by another client");
  }
  return published;
}

bool OpenFiles::WritesUnpublished(uint64_t fno) {
  std::lock_guard lock(mu_);
  auto it = open_.find(fno);
  return it != open_.end() && (it->second.size_dirty || it->second.publishing);
}

bool OpenFiles::RemovedElsewhere(uint64_t fno) {
  std::lock_guard lock(mu_);
  auto it = open_.find(fno);
  return it != open_.end() && it->second.removed_elsewhere;
}

void OpenFiles::RetryUnpublished(std::stop_token stop) {
  std::unique_lock lock(mu_);
  while (!stop.stop_requested()) {
    retry_wakeup_.wait_for(lock, stop, std::chrono::seconds(1), [] { return false; });
    std::vector<uint64_t> closed;
    std::vector<uint64_t> deferred_long;
    const auto now = std::chrono::steady_clock::now();
    for (const auto& [fno, o] : open_) {
      if (o.open_count == 0 && o.Unpublished()) closed.push_back(fno);
      if (o.open_count > 0 && !o.deferred.empty() &&
          now - o.deferred_since >= std::chrono::duration<double>(kAttrTimeout)) {
        deferred_long.push_back(fno);
      }
    }
    for (uint64_t fno : deferred_long) {
      lock.unlock();
      if (Status st = FlushFile(fno, /*reports=*/false); !st.ok()) {
        spdlog::debug("file {}: deferred attributes not published yet: {}", fno, st.ToString());
      }
      lock.lock();
    }
    for (uint64_t fno : closed) {
      lock.unlock();
      const Status st = Publish(fno);
      lock.lock();
      auto it = open_.find(fno);
      if (!st.ok() || it == open_.end() || it->second.open_count > 0) continue;
      if (!it->second.Unpublished() && !it->second.publishing) {
        spdlog::info("file {}: size {} published after its close", fno, it->second.size);
        open_.erase(it);
      }
    }
  }
}

void OpenFiles::FlushEverything() {
  std::vector<uint64_t> open_files;
  {
    std::lock_guard lock(mu_);
    for (const auto& [fno, o] : open_) open_files.push_back(fno);
  }
  for (uint64_t fno : open_files) {
    if (Status st = FlushFile(fno); !st.ok()) {
      spdlog::error("file {}: unwritten data at unmount: {}", fno, st.ToString());
    }
  }
  if (Status st = io_->FlushAll(); !st.ok()) {
    spdlog::error("unwritten data at unmount: {}", st.ToString());
  }
  releases_.Drain();
  if (Status st = ns_->FlushDirectoryTimes(); !st.ok()) {
    spdlog::error("directory times not written at unmount: {}", st.ToString());
  }
  const FileIoStats s = io_->stats();
  spdlog::info(
      "client cache: {} read hits, {} misses, {} objects written back ({} bytes), {} failed, "
      "{} synchronous write-backs in {} pressure episodes, {} writer waits, {} evictions; "
      "objects read from originals {}, from replicas {} ({} failed over), {} reads failed "
      "over to the other copy, {} objects read ahead, {} filled, {} reads waited for a fetch",
      s.cache.read_hits, s.cache.read_misses, s.cache.flushes, s.cache.flushed_bytes,
      s.cache.flush_failures, s.synchronous_write_backs, s.cache.pressure_episodes, s.writer_waits,
      s.cache.evictions, s.original_reads, s.replica_reads, s.replica_read_failures,
      s.failover_reads, s.read_ahead_objects, s.filled_objects, s.fetch_waits);
}

Status OpenFiles::Closed(uint64_t fno, std::optional<uint64_t> flock_owner) {
  Status published = FlushFile(fno);
  if (flock_owner) (void)locks_->ReleaseOwner(fno, *flock_owner, LockKind::kFlock);
  bool release = false;
  bool last_close = false;
  {
    std::lock_guard lock(mu_);
    auto it = open_.find(fno);
    if (it != open_.end() && --it->second.open_count == 0) {
      last_close = true;
      release = it->second.release_on_close;
      if (!release && it->second.Unpublished()) {
        // The publish failed: the size stays (close reported the error) and is published
        // when the INODE's OSDs answer again (RetryUnpublished).
        spdlog::warn("file {}: closed with its size ({} bytes) unpublished ({}); retried", fno,
                     it->second.size, published.ToString());
      } else {
        open_.erase(it);
      }
    }
  }
  // No process here has the file open: none can hold a lock on it (a failed release is
  // retried by the lock manager, and logged there).
  if (last_close) (void)locks_->ReleaseFile(fno);
  if (release) {
    io_->Forget(fno);
    return ReleaseSoon(Unlinked{fno, true});
  }
  return published;
}

Status OpenFiles::LastLinkGone(const Unlinked& unlinked) {
  const uint64_t fno = unlinked.fno;
  bool open_here = false;
  {
    std::lock_guard lock(mu_);
    auto it = open_.find(fno);
    if (it != open_.end() && it->second.open_count > 0) {
      it->second.release_on_close = true;
      open_here = true;
    } else if (it != open_.end()) {
      open_.erase(it);  // an unpublished size no longer matters
    }
  }
  // Opened since the unlink looked: the last close frees it (an INODE the unlink deleted
  // already makes that descriptor's reads of missing objects answer ESTALE, as after another
  // client's unlink).
  if (open_here && !unlinked.inode_deleted_at_size) return Status::Ok();
  io_->Forget(fno);  // e.g. bytes whose write-back failed at close and is being retried
  return ReleaseSoon(unlinked);
}

Status OpenFiles::ReleaseSoon(Unlinked unlinked) {
  // The INODE goes now, so that every client finds the file gone when this answers; the data
  // objects, which nothing reaches then, go in the background.
  if (!unlinked.inode_deleted_at_size) {
    Result<Unlinked> deleted = ns_->DeleteUnlinkedInode(unlinked.fno);
    if (!deleted.ok()) return deleted.status();
    unlinked = *deleted;
  }
  if (releases_.Add(unlinked)) {
    return Status::Ok();
  }
  return ns_->ReleaseUnlinked(unlinked);
}

void OpenFiles::AwaitPublishLocked(uint64_t fno, std::unique_lock<std::mutex>& lock) {
  publish_done_.wait(lock, [&] {
    auto it = open_.find(fno);
    return it == open_.end() || !it->second.publishing;
  });
}

Inode OpenFiles::InodeToTell(const InodeRef& ref) {
  std::lock_guard lock(mu_);  // one step: a write in between must not be undone
  Inode inode = ref.inode;
  inode.size = SizeOfLocked(ref);
  if (ref.inode.IsRegular()) kernel_sizes_.Told(ref.fno, inode.size);
  if (auto it = open_.find(ref.fno); it != open_.end()) it->second.deferred.ApplyTo(&inode);
  return inode;
}

uint64_t OpenFiles::SizeOfLocked(const InodeRef& ref) {
  auto it = open_.find(ref.fno);
  return it != open_.end() ? std::max(it->second.size, ref.inode.size) : ref.inode.size;
}

void OpenFiles::SawOwnChangeLocked(const InodeRef& ref) {
  auto it = open_.find(ref.fno);
  if (it == open_.end()) return;
  if (!it->second.seen || it->second.seen->version < ref.version) it->second.seen = ref;
}

void OpenFiles::KeptOwnChangeLocked(const InodeRef& ref) {
  SawOwnChangeLocked(ref);
  if (!cached_versions_.OwnChange(ref.fno, ref.version)) ForgetCachedBytes(ref.fno);
}

void OpenFiles::ForgetCachedBytes(uint64_t fno) {
  io_->ForgetClean(fno);
  cached_versions_.Forget(fno);
}

Result<SharedBytes> OpenFiles::Read(uint64_t fno, uint64_t offset, uint64_t length,
                                    bool for_page_cache) {
  // An open file's size is known without asking its INODE object (close-to-open).
  std::optional<uint64_t> file_size = OpenSize(fno);
  if (!file_size) {
    Result<InodeRef> inode = ns_->GetInode(fno);
    if (!inode.ok()) return inode.status();
    file_size = SizeOf(*inode);
  }
  bool holes = false;
  Result<SharedBytes> data = io_->Read(fno, offset, length, *file_size, for_page_cache, &holes);
  if (!data.ok() || !holes) return data;
  // Zeros no object holds: a hole, or the objects of a file another client removed or cut
  // short since this one opened it, which the INODE tells (ReleaseInode deletes it before the
  // objects; a truncation publishes the new size before deleting them).
  Result<InodeRef> now = ns_->GetInode(fno);
  if (now.status().Is(StatusCode::kNotFound)) {
    Result<bool> gone = ns_->InodeGoneFromBothCopies(fno);
    if (gone.ok() && *gone) {
      spdlog::debug("read {}: removed by another client under the reader", fno);
      return Status::Stale("file " + std::to_string(fno) + " was removed by another client");
    }
  } else if (now.ok() && now->inode.size < offset + data->size() && !WritesUnpublished(fno)) {
    // Shorter now (a truncating rewrite by another client under way). This client's own
    // writes past the INODE's size are published first, or they would be cut off here.
    data->TruncateTo(now->inode.size > offset ? now->inode.size - offset : 0);
  }
  return data;
}

}  // namespace orthofs
