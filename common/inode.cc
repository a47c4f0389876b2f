#include "common/inode.h"

#include <sys/stat.h>
#include <xxhash.h>

#include "common/byte_reader.h"
#include "common/oid.h"

namespace orthofs {
namespace {

constexpr uint8_t kInodeFormat = 1;
constexpr uint8_t kInodeWithXattrsFormat = 2;  // format 1 followed by the attributes
// Format 1, then the removal marks (u32, at least 1) and the attributes (their count may be
// 0). Written only while a mark is set, so other inodes keep the formats older clients read.
constexpr uint8_t kInodeWithMarksFormat = 3;
// Format 1, then the removal marks (u32, may be 0), the excess links' time (i64), the parent
// (u64), the rename notes (u32 count of: from dir u64, from name, to dir u64, to name,
// started; names as u32 length and bytes) and the attributes. Written for a directory with a
// parent, or while a note is set.
constexpr uint8_t kInodeWithNotesFormat = 4;
constexpr uint8_t kMoveLeaseFormat = 1;
// More removals of one directory at once than this is a damaged record.
constexpr uint32_t kMaxRemovalMarks = 1 << 16;
constexpr uint8_t kDirentFormat = 1;
constexpr uint8_t kSuperFormat = 1;

// The reader, with the Timespec records these objects carry.
class Reader : public ByteReader {
 public:
  using ByteReader::ByteReader;
  bool Time(Timespec* t) {
    uint64_t sec = 0;
    if (!U64(&sec) || !U32(&t->nsec)) return false;
    t->sec = static_cast<int64_t>(sec);
    return t->nsec < 1000000000u;
  }
};

void AppendTime(std::string* out, const Timespec& t) {
  AppendBigEndian64(out, static_cast<uint64_t>(t.sec));
  AppendBigEndian32(out, t.nsec);
}

// A name or value: its length (u32), then its bytes.
void AppendName(std::string* out, const std::string& name) {
  AppendBigEndian32(out, static_cast<uint32_t>(name.size()));
  *out += name;
}

}  // namespace

bool Inode::IsDirectory() const { return S_ISDIR(mode); }
bool Inode::IsRegular() const { return S_ISREG(mode); }
bool Inode::IsSymlink() const { return S_ISLNK(mode); }

namespace {
uint32_t SetIdBitsToDrop(uint32_t mode) {
  uint32_t drop = mode & S_ISUID;
  if ((mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP)) drop |= S_ISGID;
  return drop;
}
}  // namespace

bool Inode::HasPrivilegesToDrop() const {
  if (IsDirectory()) return false;
  return SetIdBitsToDrop(mode) != 0;
}

void Inode::DropPrivileges() {
  if (HasPrivilegesToDrop()) mode &= ~SetIdBitsToDrop(mode);
}

std::string EncodeInode(const Inode& inode) {
  std::string out;
  const bool notes = !inode.renames.empty() || inode.excess_links_since != 0 || inode.parent != 0;
  const uint8_t format = notes                  ? kInodeWithNotesFormat
                         : inode.removing()     ? kInodeWithMarksFormat
                         : inode.xattrs.empty() ? kInodeFormat
                                                : kInodeWithXattrsFormat;
  out.push_back(static_cast<char>(format));
  AppendBigEndian32(&out, inode.mode);
  AppendBigEndian32(&out, inode.uid);
  AppendBigEndian32(&out, inode.gid);
  AppendBigEndian32(&out, inode.nlink);
  AppendBigEndian64(&out, inode.size);
  AppendBigEndian64(&out, inode.rdev);
  AppendTime(&out, inode.atime);
  AppendTime(&out, inode.mtime);
  AppendTime(&out, inode.ctime);
  if (format == kInodeWithMarksFormat || format == kInodeWithNotesFormat) {
    AppendBigEndian32(&out, inode.removal_marks);
  }
  if (format == kInodeWithNotesFormat) {
    AppendBigEndian64(&out, static_cast<uint64_t>(inode.excess_links_since));
    AppendBigEndian64(&out, inode.parent);
    AppendBigEndian32(&out, static_cast<uint32_t>(inode.renames.size()));
    for (const RenameNote& note : inode.renames) {
      AppendBigEndian64(&out, note.from_dir);
      AppendName(&out, note.from_name);
      AppendBigEndian64(&out, note.to_dir);
      AppendName(&out, note.to_name);
      AppendTime(&out, note.started);
    }
  }
  if (format != kInodeFormat) {
    AppendBigEndian32(&out, static_cast<uint32_t>(inode.xattrs.size()));
    for (const auto& [name, value] : inode.xattrs) {
      AppendName(&out, name);
      AppendName(&out, value);
    }
  }
  return out;
}

Result<Inode> DecodeInode(std::string_view bytes) {
  Reader r(bytes);
  uint8_t format = 0;
  Inode inode;
  auto corrupt = [&] {
    return Status::Corruption("undecodable inode of " + std::to_string(bytes.size()) + " bytes");
  };
  if (!r.U8(&format) || format < kInodeFormat || format > kInodeWithNotesFormat ||
      !r.U32(&inode.mode) || !r.U32(&inode.uid) || !r.U32(&inode.gid) || !r.U32(&inode.nlink) ||
      !r.U64(&inode.size) || !r.U64(&inode.rdev) || !r.Time(&inode.atime) ||
      !r.Time(&inode.mtime) || !r.Time(&inode.ctime)) {
    return corrupt();
  }
  if (format == kInodeWithMarksFormat || format == kInodeWithNotesFormat) {
    if (!r.U32(&inode.removal_marks) || inode.removal_marks > kMaxRemovalMarks ||
        (inode.removal_marks == 0 && format == kInodeWithMarksFormat)) {
      return corrupt();
    }
  }
  if (format == kInodeWithNotesFormat) {
    uint64_t since = 0;
    uint32_t count = 0;
    if (!r.U64(&since) || !r.U64(&inode.parent) || !r.U32(&count) || count > kMaxRenameNotes) {
      return corrupt();
    }
    inode.excess_links_since = static_cast<int64_t>(since);
    // Format 4 exists for a note or a parent.
    if (count == 0 && inode.excess_links_since == 0 && inode.parent == 0) return corrupt();
    auto name = [&](std::string* out) {
      uint32_t len = 0;
      return r.U32(&len) && len > 0 && len <= kMaxNameLength && r.Bytes(len, out);
    };
    for (uint32_t i = 0; i < count; ++i) {
      RenameNote note;
      if (!r.U64(&note.from_dir) || !name(&note.from_name) || !r.U64(&note.to_dir) ||
          !name(&note.to_name) || !r.Time(&note.started)) {
        return corrupt();
      }
      inode.renames.push_back(std::move(note));
    }
  }
  if (format != kInodeFormat) {
    uint32_t count = 0;
    // Format 2 exists for attributes; format 3 may have none.
    if (!r.U32(&count) || (count == 0 && format == kInodeWithXattrsFormat)) return corrupt();
    for (uint32_t i = 0; i < count; ++i) {
      uint32_t name_len = 0, value_len = 0;
      std::string name, value;
      if (!r.U32(&name_len) || name_len == 0 || name_len > kMaxXattrNameLength ||
          !r.Bytes(name_len, &name) || !r.U32(&value_len) || value_len > kMaxXattrValueLength ||
          !r.Bytes(value_len, &value) || !inode.xattrs.emplace(name, value).second) {
        return corrupt();
      }
    }
  }
  if (!r.done()) return corrupt();
  return inode;
}

std::string EncodeDirentBucket(const std::vector<DirEntry>& entries) {
  std::string out;
  out.push_back(static_cast<char>(kDirentFormat));
  AppendBigEndian32(&out, static_cast<uint32_t>(entries.size()));
  for (const auto& e : entries) {
    AppendBigEndian32(&out, static_cast<uint32_t>(e.name.size()));
    out += e.name;
    AppendBigEndian64(&out, e.fno);
    AppendBigEndian32(&out, e.type);
  }
  return out;
}

Result<std::vector<DirEntry>> DecodeDirentBucket(std::string_view bytes) {
  Reader r(bytes);
  uint8_t format = 0;
  uint32_t count = 0;
  auto corrupt = [&] {
    return Status::Corruption("undecodable directory entry object of " +
                              std::to_string(bytes.size()) + " bytes");
  };
  if (!r.U8(&format) || format != kDirentFormat || !r.U32(&count)) return corrupt();
  std::vector<DirEntry> entries;
  for (uint32_t i = 0; i < count; ++i) {
    DirEntry e;
    uint32_t len = 0;
    if (!r.U32(&len) || len == 0 || len > kMaxNameLength || !r.Bytes(len, &e.name) ||
        !r.U64(&e.fno) || !r.U32(&e.type)) {
      return corrupt();
    }
    entries.push_back(std::move(e));
  }
  if (!r.done()) return corrupt();
  return entries;
}

uint64_t DirentOffset(std::string_view name) { return XXH3_64bits(name.data(), name.size()); }

Status ValidateName(std::string_view name) {
  if (name.empty() || name == "." || name == "..") {
    return Status::InvalidArgument("'" + std::string(name) + "' is not a valid entry name");
  }
  if (name.find('/') != std::string_view::npos || name.find('\0') != std::string_view::npos) {
    return Status::InvalidArgument("entry names cannot contain '/' or NUL");
  }
  return Status::Ok();
}

std::string EncodeMoveLease(const MoveLease& lease) {
  std::string out;
  out.push_back(static_cast<char>(kMoveLeaseFormat));
  AppendBigEndian64(&out, lease.owner);
  AppendBigEndian64(&out, static_cast<uint64_t>(lease.expires_sec));
  return out;
}

Result<MoveLease> DecodeMoveLease(std::string_view bytes) {
  Reader r(bytes);
  uint8_t format = 0;
  MoveLease lease;
  uint64_t expires = 0;
  if (!r.U8(&format) || format != kMoveLeaseFormat || !r.U64(&lease.owner) || !r.U64(&expires) ||
      !r.done()) {
    return Status::Corruption("undecodable move lease of " + std::to_string(bytes.size()) +
                              " bytes");
  }
  lease.expires_sec = static_cast<int64_t>(expires);
  return lease;
}

std::string EncodeSuperBlock(const SuperBlock& super) {
  std::string out;
  out.push_back(static_cast<char>(kSuperFormat));
  AppendBigEndian64(&out, super.next_fno);
  AppendBigEndian32(&out, super.object_size);
  AppendTime(&out, super.created);
  return out;
}

Result<SuperBlock> DecodeSuperBlock(std::string_view bytes) {
  Reader r(bytes);
  uint8_t format = 0;
  SuperBlock super;
  if (!r.U8(&format) || format != kSuperFormat || !r.U64(&super.next_fno) ||
      !r.U32(&super.object_size) || !r.Time(&super.created) || !r.done()) {
    return Status::Corruption("undecodable super block of " + std::to_string(bytes.size()) +
                              " bytes");
  }
  return super;
}

}  // namespace orthofs
