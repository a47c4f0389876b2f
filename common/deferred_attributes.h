// DeferredAttributes: attribute changes of a file this client has open and is writing, kept
// to go out with the publish of its writes (close, fsync) instead of a conditional INODE write
// each. `tar -x`, `cp -p` and rsync set a file's times, owner and mode through the descriptor
// right after writing it: three INODE updates on both copies before the close's fourth.
//
// Only changes that take no access from anyone may wait, since other clients see the file's
// old attributes until the publish: times; a mode that keeps every permission bit and changes
// no set-ID or sticky bit (the 0600 a file is created with, widened to 0644); an owner or
// group set to what it is, with no set-ID bit to drop. A narrowing chmod or a real chown is
// written at once.
//
// Pure logic; not thread-safe (its owner locks).
#pragma once

#include <cstdint>
#include <optional>

#include "common/inode.h"

namespace orthofs {

// A change of attributes, as setattr asks for it (truncate(2), chmod(2), chown(2), utimensat(2)).
struct SetAttrRequest {
  std::optional<uint32_t> mode;  // permission bits only
  std::optional<uint32_t> uid;
  std::optional<uint32_t> gid;
  std::optional<uint64_t> size;
  std::optional<Timespec> atime;
  std::optional<Timespec> mtime;
  // After the other changes: Inode::DropPrivileges (a write, truncation or chown by someone
  // without CAP_FSETID; Linux flags those when the mount clears set-ID bits itself).
  bool drop_privileges = false;
};

class DeferredAttributes {
 public:
  // Whether `changes` may wait, on a file whose attributes are `current` as this client sees
  // them (its INODE with what is deferred already applied).
  static bool MayWait(const Inode& current, const SetAttrRequest& changes);

  // Keeps `changes` (MayWait), made at `now`; later changes of a field replace earlier ones.
  void Add(const SetAttrRequest& changes, const Timespec& now);
  // The file was written after: its publish stamps the write's mtime over an explicit one.
  void Wrote() { mtime_.reset(); }
  // The deferred changes on top of `inode` (its ctime raised to the latest change's).
  void ApplyTo(Inode* inode) const;
  bool empty() const { return !ctime_.has_value(); }
  // A publish that carried `older` failed: they wait again, under any made since.
  void RestoreUnder(const DeferredAttributes& older);

 private:
  std::optional<uint32_t> mode_;  // permission bits
  std::optional<Timespec> atime_;
  std::optional<Timespec> mtime_;
  std::optional<Timespec> ctime_;  // of the latest change; set iff anything is deferred
};

}  // namespace orthofs
