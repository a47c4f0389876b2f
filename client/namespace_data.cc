// A file's data objects as the namespace changes them: which are stored, seeking over holes,
// zeroing and truncating ranges, and freeing a file whose last link is gone.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <set>

#include "client/namespace.h"
#include "common/limits.h"
#include "common/sparse_seek.h"

namespace orthofs {

Result<std::set<uint64_t>> Namespace::StoredDataObjects(
    uint64_t fno, uint64_t first, uint64_t end,
    const std::function<bool(const std::set<uint64_t>&)>& enough) {
  // Only objects that exist are listed: a sparse 5 GiB file may hold one object. Both copy
  // flags are listed, so an original whose replica write was lost is found too; with one OSD
  // down, the listing that reaches every object is enough.
  // A listing through an OSD believed down is skipped while the other reaches only OSDs that
  // answer: one that hangs would hold it for the call's deadline.
  const bool reaches_down[2] = {cluster_->ListingReachesDownOsd(CopyFlag::kReplica, fnso_, fno),
                                cluster_->ListingReachesDownOsd(CopyFlag::kOriginal, fnso_, fno)};
  std::vector<CopyFlag> flags;
  for (CopyFlag flag : {CopyFlag::kReplica, CopyFlag::kOriginal}) {
    const int i = flag == CopyFlag::kReplica ? 0 : 1;
    if (!reaches_down[i] || reaches_down[1 - i]) flags.push_back(flag);
  }
  std::set<uint64_t> stored;
  auto collect = [&](uint64_t index) {
    if (index >= end) return false;
    stored.insert(index);
    return !(enough && enough(stored));
  };
  auto list = [&](std::span<const CopyFlag> listed) {
    stored.clear();
    // Small first pages when the listing may stop early (an lseek at data stops at once).
    return cluster_->VisitStoredObjects(listed, fnso_, fno, ObjectType::kData, first,
                                        enough ? 16 : kMaxListLimit, collect);
  };
  Status listed = list(flags);
  if (flags.size() > 1 && ClusterClient::IsOsdFailure(listed)) {
    // The OSD that failed is believed down now: the copy flag whose listing avoids it alone
    // reaches every object.
    for (CopyFlag flag : flags) {
      if (cluster_->ListingReachesDownOsd(flag, fnso_, fno)) continue;
      listed = list(std::span(&flag, 1));
      break;
    }
  }
  if (!listed.ok()) return listed;
  return stored;
}

Result<std::optional<uint64_t>> Namespace::Seek(uint64_t fno, uint64_t size, uint64_t offset,
                                                SeekTarget target) {
  if (offset >= size) return std::optional<uint64_t>();
  const uint64_t object_size = cluster_->map().object_size;
  const uint64_t first = offset / object_size;
  // Listed only as far as the answer needs: lseek near a large file's end, or at its start
  // when data is there, does not list all of it.
  Result<std::set<uint64_t>> stored = StoredDataObjects(
      fno, first, (size - 1) / object_size + 1,
      [&](const std::set<uint64_t>& so_far) { return SeekDecided(so_far, first, target); });
  if (!stored.ok()) return stored.status();
  return SeekInObjects(*stored, object_size, size, offset, target);
}

Status Namespace::ZeroObjectRange(uint64_t fno, uint64_t index, uint64_t from, uint64_t to) {
  const Oid oid = DataOid(fno, index);
  // A range to the object's end keeps only the bytes before it, so only those are read, and one
  // more, which tells whether anything is stored past `from` at all.
  const bool cuts_tail = to >= cluster_->map().object_size;
  Result<wire::ReadResponse> stored = cluster_->ReadEitherCopy(oid, 0, cuts_tail ? from + 1 : 0);
  if (!stored.ok()) {
    return stored.status().Is(StatusCode::kNotFound) ? Status::Ok() : stored.status();
  }
  std::string bytes = std::move(*stored->mutable_data());
  if (bytes.size() <= from) return Status::Ok();  // nothing stored in the range: zeros already
  if (!cuts_tail) {
    if (to < bytes.size()) {
      std::fill(bytes.begin() + static_cast<std::ptrdiff_t>(from),
                bytes.begin() + static_cast<std::ptrdiff_t>(to), '\0');
      ObjectWrite how;
      how.replace = true;
      return cluster_->WriteBothCopies(oid, bytes, how);
    }
  }
  // The range reaches the stored end: the tail is cut off and reads as zeros.
  bytes.resize(from);
  if (bytes.empty()) return cluster_->DeleteBothCopies(oid);  // no empty object left behind
  ObjectWrite how;
  how.replace = true;
  return cluster_->WriteBothCopies(oid, bytes, how);
}

Status Namespace::ClearPastEnd(uint64_t fno, uint64_t size) {
  return TruncateData(fno, std::numeric_limits<uint64_t>::max(), size);
}

Status Namespace::TruncateData(uint64_t fno, uint64_t old_size, uint64_t new_size) {
  if (new_size == old_size) return Status::Ok();
  // Growing: the gap must read as zeros, but a client that died before publishing its writes'
  // size may have left objects (or bytes of the old end's object) there.
  if (new_size > old_size) return ClearPastEnd(fno, old_size);
  const uint64_t object_size = cluster_->map().object_size;
  const uint64_t first_dropped = (new_size + object_size - 1) / object_size;
  Result<std::set<uint64_t>> doomed =
      StoredDataObjects(fno, first_dropped, std::numeric_limits<uint64_t>::max());
  if (!doomed.ok()) return doomed.status();
  std::vector<Oid> doomed_objects;
  for (uint64_t index : *doomed) doomed_objects.push_back(DataOid(fno, index));
  ORTHOFS_RETURN_IF_ERROR(cluster_->DeleteBothCopiesOfEach(doomed_objects));
  // The object holding the new end keeps only its first bytes.
  if (new_size % object_size == 0) return Status::Ok();
  return ZeroObjectRange(fno, new_size / object_size, new_size % object_size, object_size);
}

Status Namespace::DeleteObjectsOfFreed(uint64_t fno, uint64_t size) {
  const uint64_t object_size = cluster_->map().object_size;
  const uint64_t objects = size / object_size + (size % object_size != 0 ? 1 : 0);
  // Listing every OSD costs a call each (six for a one-object file); a small file's objects go
  // by index. What a crashed writer left past the size, if anything, is an orphan now (no
  // INODE leads to it), which fsck collects.
  if (size == std::numeric_limits<uint64_t>::max() || objects > kDeleteUnlistedUpTo) {
    return TruncateData(fno, size, 0);
  }
  std::vector<Oid> doomed_objects;
  for (uint64_t index = 0; index < objects; ++index) doomed_objects.push_back(DataOid(fno, index));
  return cluster_->DeleteBothCopiesOfEach(doomed_objects);
}

Status Namespace::ZeroData(uint64_t fno, uint64_t offset, uint64_t end) {
  if (end <= offset) return Status::Ok();
  const uint64_t object_size = cluster_->map().object_size;
  const uint64_t first_whole = (offset + object_size - 1) / object_size;
  const uint64_t end_whole = end / object_size;  // objects [first_whole, end_whole) go whole
  if (first_whole < end_whole) {
    // A few objects are deleted by index (a missing one costs its two round trips and leaves
    // nothing behind); more are listed first, which costs one scan per OSD however large the
    // range is (discarding 1 TiB of a sparse image must not mean 8 million deletes).
    std::vector<Oid> doomed_objects;
    if (end_whole - first_whole <= kDeleteUnlistedUpTo) {
      for (uint64_t index = first_whole; index < end_whole; ++index) {
        doomed_objects.push_back(DataOid(fno, index));
      }
    } else {
      Result<std::set<uint64_t>> doomed = StoredDataObjects(fno, first_whole, end_whole);
      if (!doomed.ok()) return doomed.status();
      for (uint64_t index : *doomed) doomed_objects.push_back(DataOid(fno, index));
    }
    ORTHOFS_RETURN_IF_ERROR(cluster_->DeleteBothCopiesOfEach(doomed_objects));
  }
  // The objects the range starts or ends inside keep their other bytes.
  const uint64_t head = offset / object_size;
  const uint64_t tail = (end - 1) / object_size;
  if (offset % object_size != 0) {
    const uint64_t to = head == tail ? end - head * object_size : object_size;
    ORTHOFS_RETURN_IF_ERROR(ZeroObjectRange(fno, head, offset % object_size, to));
  }
  if (end % object_size != 0 && (head != tail || offset % object_size == 0)) {
    ORTHOFS_RETURN_IF_ERROR(ZeroObjectRange(fno, tail, 0, end % object_size));
  }
  return Status::Ok();
}

Result<bool> Namespace::InodeGoneFromBothCopies(uint64_t fno) {
  for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
    // A copy on an OSD believed down cannot say: not gone (and no wait for a hung OSD).
    if (cluster_->CopyIsDown(InodeOid(fno).WithFlag(flag))) return false;
    Result<wire::ReadResponse> copy = cluster_->Read(InodeOid(fno).WithFlag(flag));
    if (copy.ok()) return false;
    if (!copy.status().Is(StatusCode::kNotFound)) return copy.status();
  }
  return true;
}

Status Namespace::ReleaseInode(uint64_t fno) {
  Result<Unlinked> deleted = DeleteUnlinkedInode(fno);
  if (!deleted.ok()) return deleted.status();
  return ReleaseUnlinked(*deleted);
}

Result<Unlinked> Namespace::DeleteUnlinkedInode(uint64_t fno) {
  Unlinked freed{fno, true};
  freed.inode_deleted_at_size = 0;
  // As this client wrote it a moment ago (the unlink that dropped its last link), or read now.
  Result<InodeRef> inode = WrittenOrRead(fno);
  if (inode.status().Is(StatusCode::kNotFound)) return freed;
  if (!inode.ok()) return inode.status();
  // The INODE goes first, and at the version whose size says which objects to delete: a writer
  // elsewhere may publish a larger size between the unlink and now. Once it is gone, a reader
  // elsewhere that finds an object missing finds the INODE gone too, and answers ESTALE rather
  // than zeros (OpRead); a writer elsewhere finds it gone at its publish and deletes what it
  // wrote (InodeGoneFromBothCopies). Objects a crash leaves in between are orphans fsck
  // collects.
  uint64_t size = inode->inode.size;
  Status deleted = DeleteInode(fno, inode->version);
  if (deleted.Is(StatusCode::kVersionMismatch)) {
    // A publish landed since, or the copies differ (a restarted OSD's original not yet
    // repaired, whose version a read of the replica cannot match). Either way the size to free
    // is unknown: every stored object goes, as listed (nlink never rises from 0).
    deleted = DeleteInode(fno);
    size = std::numeric_limits<uint64_t>::max();
  }
  if (!deleted.ok() && !deleted.Is(StatusCode::kNotFound)) return deleted;
  if (inode->inode.IsRegular()) freed.inode_deleted_at_size = size;
  freed.symlink = inode->inode.IsSymlink();
  return freed;
}

Status Namespace::ReleaseUnlinked(const Unlinked& unlinked) {
  if (!unlinked.inode_deleted_at_size) return ReleaseInode(unlinked.fno);
  if (unlinked.symlink) return cluster_->DeleteBothCopies(SymlinkOid(unlinked.fno));
  return DeleteObjectsOfFreed(unlinked.fno, *unlinked.inode_deleted_at_size);
}

std::vector<Status> Namespace::ReleaseUnlinkedMany(const std::vector<Unlinked>& unlinked) {
  std::vector<Status> results(unlinked.size());
  const uint64_t object_size = cluster_->map().object_size;
  // The data objects of small files whose INODE is gone, by index, of all files together.
  std::vector<Oid> doomed;
  std::vector<size_t> owner;  // doomed[j] is of unlinked[owner[j]]
  for (size_t i = 0; i < unlinked.size(); ++i) {
    const Unlinked& u = unlinked[i];
    const uint64_t size = u.inode_deleted_at_size.value_or(0);
    const uint64_t objects = size / object_size + (size % object_size != 0 ? 1 : 0);
    if (!u.inode_deleted_at_size || u.symlink || size == std::numeric_limits<uint64_t>::max() ||
        objects > kDeleteUnlistedUpTo) {
      results[i] = ReleaseUnlinked(u);
      continue;
    }
    for (uint64_t index = 0; index < objects; ++index) {
      doomed.push_back(DataOid(u.fno, index));
      owner.push_back(i);
    }
  }
  const std::vector<Status> deleted = cluster_->DeleteDataObjects(doomed);
  for (size_t j = 0; j < doomed.size(); ++j) {
    if (!deleted[j].ok() && results[owner[j]].ok()) results[owner[j]] = deleted[j];
  }
  return results;
}

}  // namespace orthofs
