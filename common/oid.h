// The object identifier quintuple (fnso, fno, offset, type, flag) and its store key.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace orthofs {

// Numbers match proto/orthofs.proto's ObjectType.
enum class ObjectType : uint8_t {
  kData = 1,     // file contents; offset = object index in the file
  kInode = 2,    // attributes; offset 0
  kDirent = 3,   // one directory entry; offset = hash of the name
  kSymlink = 4,  // link target; offset 0
  kSuper = 5,    // per-namespace: offset 0 the counters, offset 1 the directory move lease
  kLock = 6,     // fcntl/flock locks (common/file_locks.h): fno > 0 a file's (offset 0);
                 // fno 0 a client's lock session, offset = the client's lock id
};

// Numbers match proto/orthofs.proto's CopyFlag.
enum class CopyFlag : uint8_t {
  kOriginal = 0,
  kReplica = 1,
};

bool IsValidObjectType(uint32_t value);
std::string_view ObjectTypeName(ObjectType type);  // "DATA"
std::string_view CopyFlagName(CopyFlag flag);      // "ORIGINAL"

struct Oid {
  uint32_t fnso = 0;
  uint64_t fno = 0;
  uint64_t offset = 0;
  ObjectType type = ObjectType::kData;
  CopyFlag flag = CopyFlag::kOriginal;

  // The same object's other copy.
  Oid OtherCopy() const;
  Oid WithFlag(CopyFlag f) const;

  // "fnso/fno/offset/TYPE/FLAG", e.g. "1/42/7/DATA/ORIGINAL"; ParseOid reads it back.
  std::string ToString() const;

  friend bool operator==(const Oid&, const Oid&) = default;
};

// Parses "fnso/fno/offset[/TYPE[/FLAG]]" (TYPE defaults to DATA, FLAG to ORIGINAL;
// names are case-insensitive).
Result<Oid> ParseOid(std::string_view text);

// Store keys: (flag, fnso, fno, type, offset), big-endian, fixed 22 bytes. Byte order equals
// tuple order, so all objects of one file are adjacent and sorted by offset: a window of a
// file's replicas is one range scan.
inline constexpr size_t kStoreKeySize = 1 + 4 + 8 + 1 + 8;

std::string EncodeStoreKey(const Oid& oid);
Result<Oid> DecodeStoreKey(std::string_view key);

// Key prefix shared by every object of one file with one flag and type; used for range scans.
std::string FileTypeKeyPrefix(CopyFlag flag, uint32_t fnso, uint64_t fno, ObjectType type);
// Key prefix shared by every object of one file with one flag (all types).
std::string FileKeyPrefix(CopyFlag flag, uint32_t fnso, uint64_t fno);
// Key prefix of one namespace's objects with one flag.
std::string NamespaceKeyPrefix(CopyFlag flag, uint32_t fnso);
// Key prefix of every object with one flag.
std::string FlagKeyPrefix(CopyFlag flag);

// Smallest key greater than every key starting with prefix ("" if none exists).
std::string PrefixSuccessor(std::string_view prefix);

// Big-endian fixed-width integer helpers (also used by placement hashing).
void AppendBigEndian32(std::string* out, uint32_t v);
void AppendBigEndian64(std::string* out, uint64_t v);
uint32_t ReadBigEndian32(const char* p);
uint64_t ReadBigEndian64(const char* p);

}  // namespace orthofs
