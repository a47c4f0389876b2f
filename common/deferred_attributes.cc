#include "common/deferred_attributes.h"

#include <sys/stat.h>

#include "common/pending_touches.h"

namespace orthofs {

namespace {

constexpr uint32_t kPermissionBits = 0777;
constexpr uint32_t kSpecialBits = 07000;  // set-user-ID, set-group-ID, sticky

}  // namespace

bool DeferredAttributes::MayWait(const Inode& current, const SetAttrRequest& changes) {
  if (!current.IsRegular() || changes.size) return false;
  if (changes.mode) {
    const uint32_t now_bits = current.mode & 07777;
    const uint32_t new_bits = *changes.mode & 07777;
    if ((now_bits & kSpecialBits) != (new_bits & kSpecialBits)) return false;
    if ((now_bits & kPermissionBits & ~new_bits) != 0) return false;  // takes a permission
  }
  if (changes.uid && *changes.uid != current.uid) return false;
  if (changes.gid && *changes.gid != current.gid) return false;
  if (changes.drop_privileges && current.HasPrivilegesToDrop()) return false;
  return true;
}

void DeferredAttributes::Add(const SetAttrRequest& changes, const Timespec& now) {
  if (changes.mode) mode_ = *changes.mode & 07777;
  if (changes.atime) atime_ = changes.atime;
  if (changes.mtime) mtime_ = changes.mtime;
  if (!ctime_ || IsLater(now, *ctime_)) ctime_ = now;
}

void DeferredAttributes::ApplyTo(Inode* inode) const {
  if (mode_) inode->mode = (inode->mode & S_IFMT) | *mode_;
  if (atime_) inode->atime = *atime_;
  if (mtime_) inode->mtime = *mtime_;
  if (ctime_ && IsLater(*ctime_, inode->ctime)) inode->ctime = *ctime_;
}

void DeferredAttributes::RestoreUnder(const DeferredAttributes& older) {
  if (older.empty()) return;
  if (!mode_) mode_ = older.mode_;
  if (!atime_) atime_ = older.atime_;
  if (!mtime_) mtime_ = older.mtime_;
  if (!ctime_ || IsLater(*older.ctime_, *ctime_)) ctime_ = older.ctime_;
}

}  // namespace orthofs
