// Namespace::Rename, in named steps (Namespace::RenameOp): pin the source, commit the new name
// (the commit point), touch the new parent, drop the old name, unpin, and settle the parents
// and a replaced target. Each step says what a crash or a racing client leaves behind.
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "client/namespace.h"

namespace orthofs {

// One rename's state, shared by its steps. Lives for one Namespace::Rename call, on its thread.
class Namespace::RenameOp {
 public:
  RenameOp(Namespace* ns, uint64_t old_dir, std::string_view old_name, uint64_t new_dir,
           std::string_view new_name, RenameMode mode, Unlinked* source_gone,
           std::optional<uint64_t> expected_source, std::optional<uint64_t> expected_target)
      : ns_(ns),
        old_dir_(old_dir),
        old_name_(old_name),
        new_dir_(new_dir),
        new_name_(new_name),
        mode_(mode),
        source_gone_(source_gone),
        expected_source_(expected_source),
        expected_target_(expected_target),
        lost_("'" + std::string(old_name) + "' was renamed or removed meanwhile"),
        new_dirent_(ns->DirentOid(new_dir, new_name)),
        old_dirent_(ns->DirentOid(old_dir, old_name)) {}

  Result<Unlinked> Run();

 private:
  // The new parent is a directory, and a directory moved into another one is not moved into
  // itself (under the namespace's move lease, taken here for such moves).
  Status CheckTarget();
  // The source's link count goes up (a directory: a rename note), so that an unlink racing
  // this rename cannot free it under the new entry.
  Status Pin();
  // Drops what the pin added (a directory: its note, and its new parent unless the rename
  // `took_effect`). An unlink racing this rename may have left the pin the last link: the
  // caller frees the file then (`source_gone`).
  Status Unpin(bool took_effect);
  void UnmarkTarget();
  // Before the commit: nothing of this rename stays but the pin, which goes.
  Status GiveUp(Status why);
  // A commit that failed at the transport may still have landed (the original's write is the
  // commit, and an answer can be lost), and an entry found there may as well be another
  // client's same rename: the outcome stays unknown. The pin stays (a count too high at
  // worst, which fsck fixes), and so does the target's mark (an orphan's, if it landed). A
  // refusal changed nothing: the rename gives up.
  Status CommitFailed(Status st) { return ClusterClient::IsOsdFailure(st) ? st : GiveUp(st); }
  // 1-3: the new name points at the source (replacing a target entry), then the new parent
  // is touched and the old name dropped. False: nothing to do (the names are links of one
  // file).
  Result<bool> CommitNewName();
  // The target entry this rename replaces in `bucket` (if any), checked; marks a directory
  // it replaces as an rmdir does. Fills `others` with the bucket's other entries. False when
  // the new name already names the source.
  Result<bool> TakeTarget(const Bucket& bucket, int attempt, std::vector<DirEntry>* others);
  // Until the old name goes, this rename can still be taken back: its entry goes again and
  // the target comes back.
  Status TakeBack(Status why);
  // 4. Parents' times and link counts, and the replaced target's link.
  Result<Unlinked> Finish();

  Namespace* const ns_;
  const uint64_t old_dir_;
  const std::string_view old_name_;
  const uint64_t new_dir_;
  const std::string_view new_name_;
  const RenameMode mode_;
  Unlinked* const source_gone_;
  const std::optional<uint64_t> expected_source_;
  const std::optional<uint64_t> expected_target_;
  const std::string lost_;
  const Oid new_dirent_;
  const Oid old_dirent_;

  DirEntry source_;
  bool moving_dir_ = false;
  // A directory moved to another one records its new parent (Inode::parent).
  bool moving_across_ = false;
  std::optional<MoveLeaseHold> lease_;
  // Starts the update of new_dir's times after the commit (a conditional write: a change
  // since makes it read again).
  std::optional<InodeRef> new_parent_start_;
  std::optional<RenameNote> note_;
  uint64_t parent_before_ = 0;
  Result<InodeRef> pinned_ = Status::Internal("not pinned");
  // A directory this rename replaces is marked as an rmdir marks it, so that no entry lands
  // in it between its emptiness check and its deletion.
  std::optional<uint64_t> marked_target_;
  std::optional<DirEntry> replaced_;
  int moved_dir_links_ = 0;
  int new_dir_links_ = 0;  // the change of new_dir's link count
  bool new_dir_touched_ = false;
};

Result<Unlinked> Namespace::Rename(uint64_t old_dir, std::string_view old_name, uint64_t new_dir,
                                   std::string_view new_name, RenameMode mode,
                                   Unlinked* source_gone, std::optional<uint64_t> expected_source,
                                   std::optional<uint64_t> expected_target) {
  RenameOp op(this, old_dir, old_name, new_dir, new_name, mode, source_gone, expected_source,
              expected_target);
  return op.Run();
}

Result<Unlinked> Namespace::RenameOp::Run() {
  ORTHOFS_RETURN_IF_ERROR(CheckName(new_name_));
  Result<DirEntry> source = ns_->FindEntry(old_dir_, old_name_);
  if (!source.ok()) return source.status();
  source_ = *source;
  if (expected_source_ && source_.fno != *expected_source_) {
    return Status::Stale("'" + std::string(old_name_) + "' names another file now");
  }
  if (old_dir_ == new_dir_ && old_name_ == new_name_) return Unlinked{};
  moving_dir_ = S_ISDIR(source_.type);
  moving_across_ = moving_dir_ && old_dir_ != new_dir_;
  moved_dir_links_ = moving_across_ ? 1 : 0;
  ORTHOFS_RETURN_IF_ERROR(CheckTarget());
  ORTHOFS_RETURN_IF_ERROR(Pin());
  // The source was looked up before the pin, and another client may have renamed it within
  // its directory since (no lease for that): a note must name a name the directory has, or a
  // finish of it would record a parent it does not have. While the note stands nobody else
  // takes that name.
  if (note_) {
    Result<bool> still_there = ns_->HasEntry(old_dirent_, old_name_, source_.fno);
    if (!still_there.ok()) return GiveUp(still_there.status());
    if (!*still_there) return GiveUp(Status::NotFound(lost_));
  }
  Result<bool> committed = CommitNewName();
  if (!committed.ok()) return committed.status();
  if (!*committed) return Unlinked{};
  // The rename took effect; a count left one too high only keeps the file from being freed
  // at its last unlink (fsck fixes it), so it is not the caller's failure.
  if (Status dropped = Unpin(/*took_effect=*/true); !dropped.ok()) {
    spdlog::warn("rename of '{}': the link count of {} stays one too high: {}", old_name_,
                 source_.fno, dropped.ToString());
  }
  return Finish();
}

Status Namespace::RenameOp::CheckTarget() {
  Result<InodeRef> new_parent = ns_->GetInode(new_dir_);
  if (!new_parent.ok()) return new_parent.status();
  if (!new_parent->inode.IsDirectory()) return Status::NotADirectory("target parent");
  new_parent_start_ = *new_parent;
  // Such moves take the namespace's move lease, so that none can move a directory into itself
  // meanwhile.
  if (!moving_across_) return Status::Ok();
  Result<MoveLeaseHold> taken = ns_->TakeMoveLease();
  if (!taken.ok()) return taken.status();
  lease_.emplace(std::move(*taken));
  Result<bool> inside = ns_->IsInside(new_dir_, source_.fno);
  if (!inside.ok()) return inside.status();
  if (*inside) {
    return Status::InvalidArgument("cannot move '" + std::string(old_name_) + "' into itself");
  }
  return Status::Ok();
}

Status Namespace::RenameOp::Pin() {
  // Another client may rename or unlink the source while this rename runs; only one of them
  // may take the name. A file's link count goes up first, as at a link, so that an unlink
  // racing this rename cannot free the file under the new entry (nor can a crash leave two
  // entries that count one link). A directory has no such count to hold (rmdir checks
  // emptiness, not links); its race is settled by the old name's removal alone, and it notes
  // the rename (Inode::renames) for the time it has two names, unless one bucket holds both:
  // another rename or rmdir of it waits (EBUSY), or finishes it once it is expired.
  // Either is stamped as Linux stamps a renamed inode, which also tells fsck that a directory
  // in flight between its two names, whose entries it may miss both, is not an orphan.
  if (moving_dir_ && new_dirent_ != old_dirent_) {
    note_ = RenameNote{old_dir_, std::string(old_name_), new_dir_, std::string(new_name_), Now()};
  }
  // A file's pin starts from the kernel's lookup of the old name a moment ago (its conditional
  // write catches any change since; a refusal comes from a fresh read).
  std::optional<InodeRef> looked_up =
      moving_dir_ ? std::nullopt : ns_->TakeLookedUpInode(source_.fno);
  for (bool settled = false;; settled = true) {
    bool noted = false;  // another rename's note is there
    pinned_ = ns_->UpdateInodeWith(
        source_.fno,
        [&](Inode* inode) {
          noted = false;  // as of this state
          if (inode->nlink == 0) return Status::NotFound(lost_);
          if (moving_dir_ && inode->removing()) {
            return Status::NotFound("'" + std::string(old_name_) + "' is being removed");
          }
          if (moving_dir_ && !inode->renames.empty()) {
            noted = true;
            return Status::Busy("'" + std::string(old_name_) + "' is being renamed");
          }
          if (!moving_dir_) ++inode->nlink;
          if (note_) inode->renames.push_back(*note_);
          parent_before_ = inode->parent;
          if (moving_across_) inode->parent = new_dir_;
          inode->ctime = Now();
          return Status::Ok();
        },
        std::exchange(looked_up, std::nullopt));
    if (!noted || settled) break;
    ORTHOFS_RETURN_IF_ERROR(ns_->SettleRenames(source_.fno));
  }
  return pinned_.status();
}

Status Namespace::RenameOp::Unpin(bool took_effect) {
  if (moving_dir_) {
    if (!note_) return Status::Ok();
    Result<InodeRef> unnoted = ns_->UpdateInodeWith(
        source_.fno,
        [&](Inode* inode) {
          std::erase(inode->renames, *note_);
          // Where it is now: moved, or where it was before (under the lease nobody else
          // moved it between directories). A finish of this note by another client may have
          // recorded either.
          if (moving_across_) inode->parent = took_effect ? new_dir_ : parent_before_;
          return Status::Ok();
        },
        *pinned_);
    // A directory gone meanwhile (removed under its other name) holds no note.
    if (!unnoted.ok() && !unnoted.status().Is(StatusCode::kNotFound)) return unnoted.status();
    return Status::Ok();
  }
  // From the pin's own result: a change since (a racing unlink) fails the conditional write,
  // and the update starts again from a fresh read.
  Result<InodeRef> dropped = ns_->UpdateInodeWith(
      source_.fno,
      [](Inode* inode) {
        if (inode->nlink > 0) --inode->nlink;
        return Status::Ok();
      },
      *pinned_);
  if (!dropped.ok()) return dropped.status();
  if (dropped->inode.nlink == 0 && source_gone_ != nullptr) {
    *source_gone_ = Unlinked{source_.fno, true};
  }
  return Status::Ok();
}

void Namespace::RenameOp::UnmarkTarget() {
  if (marked_target_) ns_->ClearRemovalMark(*marked_target_);
  marked_target_.reset();
}

Status Namespace::RenameOp::GiveUp(Status why) {
  UnmarkTarget();
  (void)Unpin(/*took_effect=*/false);
  return why;
}

Result<bool> Namespace::RenameOp::TakeTarget(const Bucket& bucket, int attempt,
                                             std::vector<DirEntry>* others) {
  replaced_.reset();
  for (const auto& e : bucket.entries) {
    if (e.name == new_name_) {
      replaced_ = e;
    } else {
      others->push_back(e);
    }
  }
  if (expected_target_ && (!replaced_ || replaced_->fno != *expected_target_)) {
    return GiveUp(Status::Stale("'" + std::string(new_name_) + "' names another directory now"));
  }
  if (!replaced_) return true;
  if (replaced_->fno == source_.fno) {
    // Two hard links to one inode: nothing changes. After a conflict this may also be this
    // rename's own commit (its answer lost before the fallback to the replica met a later
    // change), or another client's same rename whose old name's removal is still to come:
    // while the old name names the source, the pin stays and counts it (one too high at
    // worst, which fsck fixes).
    if (attempt > 0 && new_dirent_ != old_dirent_) {
      Result<bool> old_there = ns_->HasEntry(old_dirent_, old_name_, source_.fno);
      if (!old_there.ok() || *old_there) return false;
    }
    (void)Unpin(/*took_effect=*/false);
    return false;
  }
  if (mode_ == RenameMode::kNoReplace) {
    return GiveUp(Status::AlreadyExists("'" + std::string(new_name_) + "' exists"));
  }
  if (moving_dir_ && !S_ISDIR(replaced_->type)) {
    return GiveUp(Status::NotADirectory("'" + std::string(new_name_) + "' is not a directory"));
  }
  if (!moving_dir_ && S_ISDIR(replaced_->type)) {
    return GiveUp(Status::IsADirectory("'" + std::string(new_name_) + "' is a directory"));
  }
  if (S_ISDIR(replaced_->type)) {
    if (Status marked = ns_->MarkForRemovalIfEmpty(replaced_->fno, new_name_); !marked.ok()) {
      return GiveUp(marked);
    }
    marked_target_ = replaced_->fno;
  }
  return true;
}

Status Namespace::RenameOp::TakeBack(Status why) {
  Status undone = ns_->RemoveEntry(new_dir_, new_name_, source_.fno, std::nullopt, replaced_);
  // Someone else renamed or removed this rename's entry already: the pin counts for it (a
  // rename) or was dropped with it (an unlink), and stays as it is.
  if (undone.Is(StatusCode::kNotFound)) return why;
  if (!undone.ok()) return undone;  // the entry stays, and the pin counts it
  if (new_dir_touched_ && new_dir_links_ != 0) (void)ns_->TouchDirectory(new_dir_, -new_dir_links_);
  return GiveUp(why);
}

Result<bool> Namespace::RenameOp::CommitNewName() {
  for (int attempt = 0;; ++attempt) {
    UnmarkTarget();  // a conflict: the target may be another one now
    if (attempt == kMaxAttempts) return GiveUp(Status::Unavailable("rename: too many conflicts"));
    // The kernel looked the new name up right before this rename: its read of the bucket
    // starts the first attempt when it found the name absent (the commit's conditional write
    // catches any change since). What refuses or replaces comes from a fresh read.
    bool recent = false;
    Result<Bucket> bucket = attempt == 0 && !expected_target_ && new_dirent_ != old_dirent_
                                ? ns_->BucketToChange(new_dirent_, &recent)
                                : ns_->ReadBucket(new_dirent_);
    if (recent && bucket.ok() && bucket->Has(new_name_)) bucket = ns_->ReadBucket(new_dirent_);
    if (!bucket.ok()) return GiveUp(bucket.status());
    std::vector<DirEntry> entries;
    Result<bool> go_on = TakeTarget(*bucket, attempt, &entries);
    if (!go_on.ok() || !*go_on) return go_on;
    new_dir_links_ = moved_dir_links_ - (replaced_ && S_ISDIR(replaced_->type) ? 1 : 0);
    if (new_dirent_ == old_dirent_) {
      // One bucket holds both names: one conditional write does the whole rename, if the old
      // name there still names the source.
      std::vector<DirEntry> same;
      bool source_there = false;
      for (const auto& e : entries) {
        if (e.name == old_name_) {
          source_there = e.fno == source_.fno;
        } else {
          same.push_back(e);
        }
      }
      if (!source_there) return GiveUp(Status::NotFound(lost_));
      same.push_back(DirEntry{std::string(new_name_), source_.fno, source_.type});
      Status st = ns_->WriteBucket(new_dirent_, same, bucket->version);
      if (st.ok()) return true;
      if (!st.Is(StatusCode::kVersionMismatch)) return CommitFailed(st);
    } else {
      entries.push_back(DirEntry{std::string(new_name_), source_.fno, source_.type});
      if (lease_ && !lease_->Usable()) {
        return GiveUp(Status::Unavailable("rename: the directory move lease ran out"));
      }
      Status st = ns_->WriteBucket(new_dirent_, entries, bucket->version);
      if (!st.ok() && !st.Is(StatusCode::kVersionMismatch)) return CommitFailed(st);
      if (st.ok()) {
        // 2. The new entry's directory refuses it if a removal marked it (see MakeInode).
        // Also within one directory: an rmdir's emptiness check lists its buckets one OSD
        // after another, and could miss both names.
        Status touched = ns_->TouchDirectory(new_dir_, new_dir_links_,
                                             std::exchange(new_parent_start_, std::nullopt),
                                             nullptr, /*entry_added=*/true);
        if (touched.Is(StatusCode::kNotFound)) {
          return TakeBack(Status::NotFound("the target directory is being removed"));
        }
        if (!touched.ok()) return TakeBack(touched);
        new_dir_touched_ = true;
        // 3. Drop the old name (a crash before this leaves two links, counted). If another
        // client took it first (a rename or unlink of the same name), this rename lost.
        Status removed = ns_->RemoveEntry(old_dir_, old_name_, source_.fno);
        if (removed.Is(StatusCode::kNotFound)) return TakeBack(Status::NotFound(lost_));
        if (!removed.ok()) return removed;  // both names stay, and the pin counts the second
        return true;
      }
    }
    ns_->AfterConflict(attempt);
  }
}

Result<Unlinked> Namespace::RenameOp::Finish() {
  // new_dir's were changed above, unless one bucket held both names.
  if (!new_dir_touched_ || old_dir_ != new_dir_) {
    ORTHOFS_RETURN_IF_ERROR(ns_->TouchDirectory(old_dir_, -moved_dir_links_));
  }
  if (!new_dir_touched_ && replaced_) {
    ORTHOFS_RETURN_IF_ERROR(ns_->TouchDirectory(new_dir_, new_dir_links_));
  }
  if (!replaced_) return Unlinked{};
  if (S_ISDIR(replaced_->type)) {
    ORTHOFS_RETURN_IF_ERROR(ns_->DeleteInode(replaced_->fno));
    return Unlinked{};
  }
  Result<InodeRef> dropped = ns_->UpdateInodeWith(replaced_->fno, [](Inode* inode) {
    if (inode->nlink > 0) --inode->nlink;
    inode->ctime = Now();
    return Status::Ok();
  });
  if (!dropped.ok()) return dropped.status();
  return Unlinked{replaced_->fno, dropped->inode.nlink == 0};
}

}  // namespace orthofs
