#include "common/oid.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <vector>

namespace orthofs {

bool IsValidObjectType(uint32_t value) {
  return value >= static_cast<uint32_t>(ObjectType::kData) &&
         value <= static_cast<uint32_t>(ObjectType::kLock);
}

std::string_view ObjectTypeName(ObjectType type) {
  switch (type) {
    case ObjectType::kData:
      return "DATA";
    case ObjectType::kInode:
      return "INODE";
    case ObjectType::kDirent:
      return "DIRENT";
    case ObjectType::kSymlink:
      return "SYMLINK";
    case ObjectType::kSuper:
      return "SUPER";
    case ObjectType::kLock:
      return "LOCK";
  }
  return "UNKNOWN";
}

std::string_view CopyFlagName(CopyFlag flag) {
  return flag == CopyFlag::kOriginal ? "ORIGINAL" : "REPLICA";
}

Oid Oid::OtherCopy() const {
  return WithFlag(flag == CopyFlag::kOriginal ? CopyFlag::kReplica : CopyFlag::kOriginal);
}

Oid Oid::WithFlag(CopyFlag f) const {
  Oid o = *this;
  o.flag = f;
  return o;
}

std::string Oid::ToString() const {
  std::string s = std::to_string(fnso) + "/" + std::to_string(fno) + "/" + std::to_string(offset);
  s += "/";
  s += ObjectTypeName(type);
  s += "/";
  s += CopyFlagName(flag);
  return s;
}

namespace {

std::string Upper(std::string_view s) {
  std::string u(s);
  std::transform(u.begin(), u.end(), u.begin(), [](unsigned char c) { return std::toupper(c); });
  return u;
}

template <typename T>
bool ParseUnsigned(std::string_view s, T* out) {
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

}  // namespace

Result<Oid> ParseOid(std::string_view text) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t slash = text.find('/', start);
    parts.push_back(text.substr(start, slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  if (parts.size() < 3 || parts.size() > 5) {
    return Status::InvalidArgument("OID '" + std::string(text) +
                                   "' is not fnso/fno/offset[/TYPE[/FLAG]]");
  }
  Oid oid;
  if (!ParseUnsigned(parts[0], &oid.fnso)) {
    return Status::InvalidArgument("OID fnso '" + std::string(parts[0]) + "' is not a u32");
  }
  if (!ParseUnsigned(parts[1], &oid.fno)) {
    return Status::InvalidArgument("OID fno '" + std::string(parts[1]) + "' is not a u64");
  }
  if (!ParseUnsigned(parts[2], &oid.offset)) {
    return Status::InvalidArgument("OID offset '" + std::string(parts[2]) + "' is not a u64");
  }
  if (parts.size() >= 4) {
    std::string t = Upper(parts[3]);
    bool found = false;
    for (uint32_t v = 1; IsValidObjectType(v); ++v) {
      if (ObjectTypeName(static_cast<ObjectType>(v)) == t) {
        oid.type = static_cast<ObjectType>(v);
        found = true;
      }
    }
    if (!found) {
      return Status::InvalidArgument("OID type '" + std::string(parts[3]) +
                                     "' is not DATA, INODE, DIRENT, SYMLINK, SUPER or LOCK");
    }
  }
  if (parts.size() == 5) {
    std::string f = Upper(parts[4]);
    if (f == "ORIGINAL") {
      oid.flag = CopyFlag::kOriginal;
    } else if (f == "REPLICA") {
      oid.flag = CopyFlag::kReplica;
    } else {
      return Status::InvalidArgument("OID flag '" + std::string(parts[4]) +
                                     "' is not ORIGINAL or REPLICA");
    }
  }
  return oid;
}

void AppendBigEndian32(std::string* out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<char>(v >> shift));
}

void AppendBigEndian64(std::string* out, uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out->push_back(static_cast<char>(v >> shift));
}

uint32_t ReadBigEndian32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

uint64_t ReadBigEndian64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

std::string FlagKeyPrefix(CopyFlag flag) { return std::string(1, static_cast<char>(flag)); }

std::string NamespaceKeyPrefix(CopyFlag flag, uint32_t fnso) {
  std::string k = FlagKeyPrefix(flag);
  AppendBigEndian32(&k, fnso);
  return k;
}

std::string FileKeyPrefix(CopyFlag flag, uint32_t fnso, uint64_t fno) {
  std::string k = NamespaceKeyPrefix(flag, fnso);
  AppendBigEndian64(&k, fno);
  return k;
}

std::string FileTypeKeyPrefix(CopyFlag flag, uint32_t fnso, uint64_t fno, ObjectType type) {
  std::string k = FileKeyPrefix(flag, fnso, fno);
  k.push_back(static_cast<char>(type));
  return k;
}

std::string EncodeStoreKey(const Oid& oid) {
  std::string k = FileTypeKeyPrefix(oid.flag, oid.fnso, oid.fno, oid.type);
  AppendBigEndian64(&k, oid.offset);
  return k;
}

Result<Oid> DecodeStoreKey(std::string_view key) {
  if (key.size() != kStoreKeySize) {
    return Status::Corruption("store key has " + std::to_string(key.size()) + " bytes, want " +
                              std::to_string(kStoreKeySize));
  }
  uint8_t flag = static_cast<uint8_t>(key[0]);
  uint8_t type = static_cast<uint8_t>(key[13]);
  if (flag > 1 || !IsValidObjectType(type)) {
    return Status::Corruption("store key has an invalid flag or type byte");
  }
  Oid oid;
  oid.flag = static_cast<CopyFlag>(flag);
  oid.fnso = ReadBigEndian32(key.data() + 1);
  oid.fno = ReadBigEndian64(key.data() + 5);
  oid.type = static_cast<ObjectType>(type);
  oid.offset = ReadBigEndian64(key.data() + 14);
  return oid;
}

std::string PrefixSuccessor(std::string_view prefix) {
  std::string s(prefix);
  while (!s.empty()) {
    if (static_cast<uint8_t>(s.back()) != 0xff) {
      s.back() = static_cast<char>(static_cast<uint8_t>(s.back()) + 1);
      return s;
    }
    s.pop_back();
  }
  return s;
}

}  // namespace orthofs
