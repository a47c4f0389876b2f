// The namespace's directory structure: rmdir and its removal marks, a directory's rename
// notes settled or finished (fsck), reattaching a directory no name reaches (fsck), and the
// move lease that keeps directory moves from making a cycle.
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "client/namespace.h"

namespace orthofs {
namespace {

// How long a directory move lease (MoveLease) holds; a move takes milliseconds. A move commits
// only while the lease has this much left, for the calls of the commit.
constexpr std::chrono::seconds kMoveLease{30};
constexpr std::chrono::seconds kMoveLeaseMargin{10};

}  // namespace

Status Namespace::Rmdir(uint64_t dir, std::string_view name, std::optional<uint64_t> expected) {
  // A fresh read, which the entry's removal below starts from (its conditional write catches
  // a change since, such as a create landing in the same bucket).
  Result<FoundEntry> found = FindEntryToChange(dir, name, /*allow_recent=*/false);
  if (!found.ok()) return found.status();
  const DirEntry* entry = &found->entry;
  if (expected && entry->fno != *expected) {
    return Status::Stale("'" + std::string(name) + "' names another directory now");
  }
  if (!S_ISDIR(entry->type)) {
    return Status::NotADirectory("'" + std::string(name) + "' is not a directory");
  }
  ORTHOFS_RETURN_IF_ERROR(MarkForRemovalIfEmpty(entry->fno, name));
  if (Status removed = RemoveEntry(dir, name, entry->fno, std::move(found->bucket));
      !removed.ok()) {
    // A removal that failed as a transport failure may have landed with its answer lost (or
    // another client renamed the directory meanwhile). Unless the entry is still there, the
    // mark stays, so that nothing is created in a directory that may be unlinked; the inode
    // stays too (fsck collects it, or clears the mark of one that lives on).
    Result<bool> still_there = ClusterClient::IsOsdFailure(removed)
                                   ? HasEntry(DirentOid(dir, name), name, entry->fno)
                                   : Result<bool>(true);
    if (still_there.ok() && *still_there) ClearRemovalMark(entry->fno);
    return removed;
  }
  ORTHOFS_RETURN_IF_ERROR(DeleteInode(entry->fno));
  return TouchDirectory(dir, -1);
}

Status Namespace::MarkForRemovalIfEmpty(uint64_t fno, std::string_view name) {
  // The directory is marked first (Inode::removal_marks): an entry made in it (create, link,
  // rename) whose parent update comes after the mark refuses and is taken back, and one whose
  // update came before committed its entry before that, so the check below sees it. So does a
  // rename of the directory itself: one noted after the mark refuses, one noted before is seen.
  // From the kernel's lookup of the name a moment ago, if it is there: the mark commits only
  // on the state it was made from (a conditional write), else it is made again from a fresh read.
  Result<InodeRef> marked = UpdateInodeWith(
      fno,
      [](Inode* inode) {
        ++inode->removal_marks;
        inode->ctime = Now();
        return Status::Ok();
      },
      TakeLookedUpInode(fno));
  if (!marked.ok()) return marked.status();
  // A rename of it under way may give it a name after it is gone (dangling) or have given it
  // a second one: the removal waits for it, or finishes it if it was cut short.
  if (!marked->inode.renames.empty()) {
    if (Status settled = SettleRenames(fno); !settled.ok()) {
      ClearRemovalMark(fno);
      return settled;
    }
  }
  Result<bool> empty = DirectoryIsEmpty(fno);
  if (empty.ok() && *empty) return Status::Ok();
  ClearRemovalMark(fno);
  if (!empty.ok()) return empty.status();
  return Status::NotEmpty("'" + std::string(name) + "' is not empty");
}

Status Namespace::SettleRenames(uint64_t fno) {
  Result<InodeRef> inode = GetInode(fno);
  if (!inode.ok()) return inode.status();
  // Expired: noted at least the expiry ago.
  const int64_t expired_before = Now().sec - rename_note_expiry_.count() + 1;
  for (const RenameNote& note : inode->inode.renames) {
    if (note.started.sec >= expired_before) {
      return Status::Busy("directory " + std::to_string(fno) + " is being renamed ('" +
                          note.from_name + "' to '" + note.to_name + "')");
    }
  }
  Result<uint32_t> finished = FinishRenamesCutShort(fno, expired_before, false);
  if (!finished.ok()) return finished.status();
  if (*finished > 0) {
    spdlog::info("directory {}: finished {} rename(s) a client left cut short", fno, *finished);
  }
  return Status::Ok();
}

Status Namespace::ReattachDirectory(uint64_t fno, uint64_t dir, std::string_view name,
                                    uint64_t expected_version) {
  ORTHOFS_RETURN_IF_ERROR(CheckName(name));
  Result<InodeRef> inode = GetInode(fno);
  if (!inode.ok()) return inode.status();
  if (inode->version != expected_version) {
    return Status::VersionMismatch("directory " + std::to_string(fno) + " changed");
  }
  // 1. The directory records its new parent (and is stamped, so a client's change of it
  // since fsck read it conflicts here), 2. the entry (the commit point), 3. the parent's count.
  Inode moved = inode->inode;
  moved.parent = dir;
  moved.ctime = Now();
  ORTHOFS_RETURN_IF_ERROR(WriteInode(fno, moved, expected_version, nullptr));
  const Oid dirent = DirentOid(dir, name);
  for (int attempt = 0;; ++attempt) {
    Result<Bucket> bucket = ReadBucket(dirent);
    if (!bucket.ok()) return bucket.status();
    if (bucket->Names(name, fno)) break;  // this call's own commit, its answer lost
    if (bucket->Has(name)) return Status::AlreadyExists("'" + std::string(name) + "' exists");
    std::vector<DirEntry> entries = bucket->entries;
    entries.push_back(DirEntry{std::string(name), fno, S_IFDIR});
    Status st = WriteBucket(dirent, entries, bucket->version);
    if (st.ok()) break;
    if (!st.Is(StatusCode::kVersionMismatch) || attempt == kMaxAttempts) return st;
    AfterConflict(attempt);
  }
  return TouchDirectory(dir, 1, std::nullopt, nullptr, /*entry_added=*/true);
}

Result<uint32_t> Namespace::FinishRenamesCutShort(uint64_t fno, int64_t started_before,
                                                  bool dry_run) {
  Result<InodeRef> inode = GetInode(fno);
  if (!inode.ok()) return inode.status();
  uint32_t removed = 0;
  std::vector<RenameNote> finished;
  std::optional<uint64_t> parent;  // where the last finished rename leaves the directory
  for (const RenameNote& note : inode->inode.renames) {
    if (note.started.sec >= started_before) continue;
    Result<bool> renamed = HasEntry(DirentOid(note.to_dir, note.to_name), note.to_name, fno);
    if (!renamed.ok()) return renamed.status();
    if (!*renamed) {
      Result<bool> stayed = HasEntry(DirentOid(note.from_dir, note.from_name), note.from_name, fno);
      if (!stayed.ok()) return stayed.status();
      if (*stayed) parent = note.from_dir;  // it never moved
    } else {
      parent = note.to_dir;
      Result<bool> old_there =
          HasEntry(DirentOid(note.from_dir, note.from_name), note.from_name, fno);
      if (!old_there.ok()) return old_there.status();
      if (*old_there) {
        ++removed;
        if (!dry_run) {
          Status st = RemoveEntry(note.from_dir, note.from_name, fno);
          if (!st.ok() && !st.Is(StatusCode::kNotFound)) return st;
          if (st.ok()) {
            ORTHOFS_RETURN_IF_ERROR(
                TouchDirectory(note.from_dir, note.from_dir != note.to_dir ? -1 : 0));
          }
        }
      }
    }
    finished.push_back(note);
  }
  if (dry_run || finished.empty()) return removed;
  Result<InodeRef> dropped = UpdateInodeWith(fno, [&](Inode* changed) {
    const size_t noted = changed->renames.size();
    std::erase_if(changed->renames, [&](const RenameNote& n) {
      return std::find(finished.begin(), finished.end(), n) != finished.end();
    });
    // Another finish that dropped these notes first may have been followed by a new move.
    if (parent && changed->renames.size() < noted) changed->parent = *parent;
    return Status::Ok();
  });
  if (!dropped.ok()) return dropped.status();
  return removed;
}

Namespace::MoveLeaseHold::MoveLeaseHold(Namespace* ns, uint64_t version,
                                        std::unique_lock<std::mutex> local)
    : ns_(ns),
      version_(version),
      local_(std::move(local)),
      usable_until_(std::chrono::steady_clock::now() + kMoveLease - kMoveLeaseMargin) {}

Namespace::MoveLeaseHold::MoveLeaseHold(MoveLeaseHold&& other) noexcept
    : ns_(std::exchange(other.ns_, nullptr)),
      version_(other.version_),
      local_(std::move(other.local_)),
      usable_until_(other.usable_until_) {}

Namespace::MoveLeaseHold::~MoveLeaseHold() {
  if (ns_ == nullptr) return;
  // A lease taken over meanwhile (this one expired) is the other holder's: the conditional
  // delete leaves it.
  Status released = ns_->cluster_->DeleteBothCopies(ns_->MoveLeaseOid(), version_);
  if (!released.ok() && !released.Is(StatusCode::kVersionMismatch)) {
    spdlog::warn("the directory move lease stays until it expires ({} s): {}", kMoveLease.count(),
                 released.ToString());
  }
}

bool Namespace::MoveLeaseHold::Usable() const {
  return std::chrono::steady_clock::now() < usable_until_;
}

Result<Namespace::MoveLeaseHold> Namespace::TakeMoveLease() {
  std::unique_lock local(move_mu_);  // this client's moves, one at a time
  const auto give_up_at = std::chrono::steady_clock::now() + 2 * kMoveLease;
  for (int attempt = 0;; ++attempt) {
    Result<wire::ReadResponse> read = cluster_->ReadEitherCopy(MoveLeaseOid());
    uint64_t expected = 0;
    if (read.ok()) {
      expected = read->meta().version();
      Result<MoveLease> held = DecodeMoveLease(read->data());
      // A damaged or expired lease is taken over, and so is this client's own (a release or
      // a taking whose answer was lost: its moves come one at a time).
      if (held.ok() && held->expires_sec >= Now().sec && held->owner != lease_owner_) {
        if (std::chrono::steady_clock::now() > give_up_at) {
          return Status::Busy("directories are being moved by another client (" +
                              std::to_string(held->owner) + ")");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(std::min(1 + attempt, 50)));
        continue;
      }
    } else if (!read.status().Is(StatusCode::kNotFound)) {
      return read.status();
    }
    const MoveLease mine{lease_owner_, Now().sec + kMoveLease.count()};
    Result<wire::ObjectMeta> taken =
        cluster_->WriteOriginalThenReplica(MoveLeaseOid(), EncodeMoveLease(mine), expected);
    if (taken.ok()) return MoveLeaseHold(this, taken->version(), std::move(local));
    if (!taken.status().Is(StatusCode::kVersionMismatch)) return taken.status();
    AfterConflict(attempt);
  }
}

Result<bool> Namespace::IsInside(uint64_t dir, uint64_t moved) {
  // Up from `dir` through every parent a directory may have: the one it records, and both of
  // a rename's under way or cut short (which may have left it two names).
  constexpr size_t kMaxVisited = 1 << 16;  // more is a damaged namespace
  std::vector<uint64_t> to_visit = {dir};
  std::set<uint64_t> visited;
  while (!to_visit.empty()) {
    const uint64_t at = to_visit.back();
    to_visit.pop_back();
    if (at == moved) return true;
    if (at == 0 || at == kRootFno || !visited.insert(at).second) continue;
    if (visited.size() > kMaxVisited) {
      return Status::Corruption("more than " + std::to_string(kMaxVisited) + " directories above " +
                                std::to_string(dir));
    }
    Result<InodeRef> inode = GetInode(at);
    if (inode.status().Is(StatusCode::kNotFound)) continue;  // an old parent since removed
    if (!inode.ok()) return inode.status();
    to_visit.push_back(inode->inode.parent);
    for (const RenameNote& note : inode->inode.renames) {
      to_visit.push_back(note.from_dir);
      to_visit.push_back(note.to_dir);
    }
  }
  return false;
}

void Namespace::ClearRemovalMark(uint64_t dir) {
  // Takes this removal's mark away, leaving any other's. One left behind (this update failing
  // too) refuses new entries until fsck clears it.
  Result<InodeRef> cleared = UpdateInodeWith(dir, [](Inode* inode) {
    if (inode->removal_marks > 0) --inode->removal_marks;
    return Status::Ok();
  });
  if (!cleared.ok() && !cleared.status().Is(StatusCode::kNotFound)) {
    spdlog::warn("directory {} keeps its rmdir mark (fsck clears it): {}", dir,
                 cleared.status().ToString());
  }
}

}  // namespace orthofs
