// The namespace's objects: an INODE holds a file's attributes; a DIRENT object holds the
// directory entries whose names hash to its offset (almost always one); SUPER holds the
// namespace's counters. Encodings are versioned and checked; decoding never trusts input.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace orthofs {

inline constexpr uint64_t kRootFno = 1;  // every namespace's root directory
inline constexpr size_t kMaxNameLength = 255;
inline constexpr size_t kMaxSymlinkLength = 4095;
inline constexpr size_t kMaxXattrNameLength = 255;
inline constexpr size_t kMaxXattrValueLength = 64 * 1024;
// All names and values of one inode together; they must fit the INODE object.
inline constexpr size_t kMaxXattrTotalBytes = 64 * 1024;

struct Timespec {
  int64_t sec = 0;
  uint32_t nsec = 0;
  friend bool operator==(const Timespec&, const Timespec&) = default;
};

// A directory's rename under way. Until the old name goes the directory has two, and a crash
// may leave both: an rmdir of one keeps the inode while another still names it, and fsck
// finishes a rename cut short (removes the old name) once the note is older than its grace.
struct RenameNote {
  uint64_t from_dir = 0;
  std::string from_name;
  uint64_t to_dir = 0;
  std::string to_name;
  Timespec started;
  friend bool operator==(const RenameNote&, const RenameNote&) = default;
};
// A directory carries one rename note at a time (another rename of it waits, client/namespace.h);
// the decoder takes more than this many for a damaged record.
inline constexpr size_t kMaxRenameNotes = 8;

struct Inode {
  uint32_t mode = 0;  // file type and permission bits, as st_mode
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint32_t nlink = 0;
  uint64_t size = 0;
  uint64_t rdev = 0;
  Timespec atime, mtime, ctime;
  // Extended attributes live in the inode: one conditional write changes them atomically.
  std::map<std::string, std::string> xattrs;
  // A directory being removed (by an rmdir, or a rename over it) checked or is checking that
  // it is empty, so no entry may be added (the parent update of a create, link or rename
  // refuses, and the entry is taken back). Each removal under way adds a mark and takes its
  // own away if it does not go ahead, so one that gives up leaves another's standing; fsck
  // clears marks a crash left.
  uint32_t removal_marks = 0;
  bool removing() const { return removal_marks > 0; }
  std::vector<RenameNote> renames;  // a directory's renames under way (RenameNote)
  // A directory's parent, so that a directory is never moved into itself: 0 for the root and
  // for files (and for a directory made before parents were kept).
  uint64_t parent = 0;
  // fsck found more links counted than names naming the file at this time (Unix seconds; 0:
  // not so), and nothing changed the inode since (its ctime is older). An unlink drops its
  // name before the count, so fsck lowers a count only once it has been too high for its
  // grace period, not under an unlink that is still running.
  int64_t excess_links_since = 0;

  bool IsDirectory() const;
  bool IsRegular() const;
  bool IsSymlink() const;
  // What a write, truncation or change of owner by someone without CAP_FSETID takes from a
  // file, by FUSE_HANDLE_KILLPRIV_V2's rules: the set-user-ID bit, and the set-group-ID bit
  // only if the group may execute. Otherwise a user allowed to write a privileged program
  // could change it and keep the privilege. Directories keep theirs (their set-group-ID bit is
  // inheritance). File capabilities are never stored (the mount refuses them), so there are
  // none to drop.
  bool HasPrivilegesToDrop() const;
  void DropPrivileges();
  friend bool operator==(const Inode&, const Inode&) = default;
};

std::string EncodeInode(const Inode& inode);
Result<Inode> DecodeInode(std::string_view bytes);

struct DirEntry {
  std::string name;
  uint64_t fno = 0;
  uint32_t type = 0;  // st_mode & S_IFMT of the target, for readdir without a lookup
  friend bool operator==(const DirEntry&, const DirEntry&) = default;
};

// The DIRENT object of a directory holding names with one hash value.
std::string EncodeDirentBucket(const std::vector<DirEntry>& entries);
Result<std::vector<DirEntry>> DecodeDirentBucket(std::string_view bytes);

// DIRENT object offset of a name within its directory.
uint64_t DirentOffset(std::string_view name);

// kInvalidArgument for "", ".", "..", or names with '/' or NUL; a separate check gives
// ENAMETOOLONG for names over kMaxNameLength bytes.
Status ValidateName(std::string_view name);

// The lease on moving directories between directories in one namespace (SUPER object at
// offset 1): such a move checks that the target is not inside the directory it moves, and two
// clients' moves checked at once could make a cycle cut off from the root (mv P Q/ beside
// mv Q P/). A holder that dies leaves it to expire.
struct MoveLease {
  uint64_t owner = 0;       // random per client
  int64_t expires_sec = 0;  // Unix seconds, by the holder's clock
  friend bool operator==(const MoveLease&, const MoveLease&) = default;
};

std::string EncodeMoveLease(const MoveLease& lease);
Result<MoveLease> DecodeMoveLease(std::string_view bytes);

struct SuperBlock {
  uint64_t next_fno = kRootFno + 1;  // the next unreserved file number
  uint32_t object_size = 0;          // the object size the namespace was created with
  Timespec created;
  friend bool operator==(const SuperBlock&, const SuperBlock&) = default;
};

std::string EncodeSuperBlock(const SuperBlock& super);
Result<SuperBlock> DecodeSuperBlock(std::string_view bytes);

}  // namespace orthofs
