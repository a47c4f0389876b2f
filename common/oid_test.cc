// The OID quintuple, its text form and its order-preserving 22-byte store key.
#include "common/oid.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace orthofs {
namespace {

constexpr uint32_t kMaxU32 = std::numeric_limits<uint32_t>::max();
constexpr uint64_t kMaxU64 = std::numeric_limits<uint64_t>::max();

const ObjectType kAllTypes[] = {ObjectType::kData, ObjectType::kInode, ObjectType::kDirent,
                                ObjectType::kSymlink, ObjectType::kSuper};
const CopyFlag kAllFlags[] = {CopyFlag::kOriginal, CopyFlag::kReplica};

Oid MakeOid(uint32_t fnso, uint64_t fno, uint64_t offset, ObjectType type = ObjectType::kData,
            CopyFlag flag = CopyFlag::kOriginal) {
  Oid o;
  o.fnso = fnso;
  o.fno = fno;
  o.offset = offset;
  o.type = type;
  o.flag = flag;
  return o;
}

// The order the store key must reproduce.
auto KeyTuple(const Oid& o) {
  return std::make_tuple(static_cast<uint8_t>(o.flag), o.fnso, o.fno, static_cast<uint8_t>(o.type),
                         o.offset);
}

// Random OIDs. With `narrow`, fields come from tiny ranges (plus extremes) so that many OIDs
// share leading fields and the comparison is decided by later ones.
Oid RandomOid(std::mt19937_64& rng, bool narrow) {
  auto pick64 = [&](uint64_t small_range) -> uint64_t {
    switch (rng() % 8) {
      case 0:
        return 0;
      case 1:
        return kMaxU64;
      case 2:
        return uint64_t{1} << (rng() % 64);
      default:
        return narrow ? rng() % small_range : rng();
    }
  };
  Oid o;
  o.fnso = static_cast<uint32_t>(rng() % 8 == 0 ? kMaxU32 : (narrow ? rng() % 3 : rng()));
  o.fno = pick64(4);
  o.offset = pick64(4);
  o.type = kAllTypes[rng() % 5];
  o.flag = kAllFlags[rng() % 2];
  return o;
}

int Sign(int v) { return (v > 0) - (v < 0); }

TEST(OidTest, DefaultsAreDataOriginal) {
  Oid o;
  EXPECT_EQ(o.fnso, 0u);
  EXPECT_EQ(o.fno, 0u);
  EXPECT_EQ(o.offset, 0u);
  EXPECT_EQ(o.type, ObjectType::kData);
  EXPECT_EQ(o.flag, CopyFlag::kOriginal);
}

TEST(OidTest, EnumValuesMatchProto) {
  EXPECT_EQ(static_cast<int>(ObjectType::kData), 1);
  EXPECT_EQ(static_cast<int>(ObjectType::kInode), 2);
  EXPECT_EQ(static_cast<int>(ObjectType::kDirent), 3);
  EXPECT_EQ(static_cast<int>(ObjectType::kSymlink), 4);
  EXPECT_EQ(static_cast<int>(ObjectType::kSuper), 5);
  EXPECT_EQ(static_cast<int>(ObjectType::kLock), 6);
  EXPECT_EQ(static_cast<int>(CopyFlag::kOriginal), 0);
  EXPECT_EQ(static_cast<int>(CopyFlag::kReplica), 1);
}

TEST(OidTest, IsValidObjectType) {
  EXPECT_FALSE(IsValidObjectType(0));
  for (uint32_t v = 1; v <= 6; ++v) EXPECT_TRUE(IsValidObjectType(v)) << v;
  EXPECT_FALSE(IsValidObjectType(7));
  EXPECT_FALSE(IsValidObjectType(255));
  EXPECT_FALSE(IsValidObjectType(256 + 1));  // not truncated to a byte
  EXPECT_FALSE(IsValidObjectType(kMaxU32));
}

TEST(OidTest, Names) {
  EXPECT_EQ(ObjectTypeName(ObjectType::kData), "DATA");
  EXPECT_EQ(ObjectTypeName(ObjectType::kInode), "INODE");
  EXPECT_EQ(ObjectTypeName(ObjectType::kDirent), "DIRENT");
  EXPECT_EQ(ObjectTypeName(ObjectType::kSymlink), "SYMLINK");
  EXPECT_EQ(ObjectTypeName(ObjectType::kSuper), "SUPER");
  EXPECT_EQ(ObjectTypeName(ObjectType::kLock), "LOCK");
  EXPECT_EQ(CopyFlagName(CopyFlag::kOriginal), "ORIGINAL");
  EXPECT_EQ(CopyFlagName(CopyFlag::kReplica), "REPLICA");
}

TEST(OidTest, OtherCopyAndWithFlag) {
  Oid o = MakeOid(7, 42, 3, ObjectType::kDirent, CopyFlag::kOriginal);
  Oid r = o.OtherCopy();
  EXPECT_EQ(r.flag, CopyFlag::kReplica);
  EXPECT_EQ(r.fnso, o.fnso);
  EXPECT_EQ(r.fno, o.fno);
  EXPECT_EQ(r.offset, o.offset);
  EXPECT_EQ(r.type, o.type);
  EXPECT_NE(r, o);
  EXPECT_EQ(r.OtherCopy(), o);
  EXPECT_EQ(r.OtherCopy().flag, CopyFlag::kOriginal);

  EXPECT_EQ(o.WithFlag(CopyFlag::kReplica), r);
  EXPECT_EQ(o.WithFlag(CopyFlag::kOriginal), o);
  EXPECT_EQ(r.WithFlag(CopyFlag::kReplica), r);
}

TEST(OidTest, Equality) {
  Oid a = MakeOid(1, 2, 3, ObjectType::kInode, CopyFlag::kReplica);
  EXPECT_EQ(a, a);
  Oid b = a;
  b.fnso = 9;
  EXPECT_NE(a, b);
  b = a;
  b.fno = 9;
  EXPECT_NE(a, b);
  b = a;
  b.offset = 9;
  EXPECT_NE(a, b);
  b = a;
  b.type = ObjectType::kData;
  EXPECT_NE(a, b);
  b = a;
  b.flag = CopyFlag::kOriginal;
  EXPECT_NE(a, b);
}

// ---- text form ----

TEST(OidTextTest, ToStringFormat) {
  EXPECT_EQ(MakeOid(1, 42, 7).ToString(), "1/42/7/DATA/ORIGINAL");
  EXPECT_EQ(MakeOid(0, 0, 0, ObjectType::kSuper, CopyFlag::kReplica).ToString(),
            "0/0/0/SUPER/REPLICA");
  EXPECT_EQ(MakeOid(kMaxU32, kMaxU64, kMaxU64, ObjectType::kSymlink).ToString(),
            "4294967295/18446744073709551615/18446744073709551615/SYMLINK/ORIGINAL");
}

TEST(OidTextTest, RoundTripEveryTypeAndFlag) {
  for (ObjectType t : kAllTypes) {
    for (CopyFlag f : kAllFlags) {
      for (const Oid& o : {MakeOid(0, 0, 0, t, f), MakeOid(1, 42, 7, t, f),
                           MakeOid(kMaxU32, kMaxU64, kMaxU64, t, f)}) {
        Result<Oid> parsed = ParseOid(o.ToString());
        ASSERT_TRUE(parsed.ok()) << o.ToString() << ": " << parsed.status().ToString();
        EXPECT_EQ(*parsed, o) << o.ToString();
      }
    }
  }
}

TEST(OidTextTest, RoundTripRandom) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 10000; ++i) {
    Oid o = RandomOid(rng, false);
    Result<Oid> parsed = ParseOid(o.ToString());
    ASSERT_TRUE(parsed.ok()) << o.ToString();
    ASSERT_EQ(*parsed, o) << o.ToString();
  }
}

TEST(OidTextTest, TypeAndFlagDefault) {
  Result<Oid> three = ParseOid("1/42/7");
  ASSERT_TRUE(three.ok()) << three.status().ToString();
  EXPECT_EQ(*three, MakeOid(1, 42, 7, ObjectType::kData, CopyFlag::kOriginal));

  Result<Oid> four = ParseOid("1/42/0/INODE");
  ASSERT_TRUE(four.ok()) << four.status().ToString();
  EXPECT_EQ(*four, MakeOid(1, 42, 0, ObjectType::kInode, CopyFlag::kOriginal));
}

TEST(OidTextTest, NamesAreCaseInsensitive) {
  for (const char* text : {"3/4/5/dirent/replica", "3/4/5/Dirent/Replica", "3/4/5/DiReNt/rEpLiCa",
                           "3/4/5/DIRENT/REPLICA"}) {
    Result<Oid> o = ParseOid(text);
    ASSERT_TRUE(o.ok()) << text << ": " << o.status().ToString();
    EXPECT_EQ(*o, MakeOid(3, 4, 5, ObjectType::kDirent, CopyFlag::kReplica)) << text;
  }
  for (ObjectType t : kAllTypes) {
    std::string lower(ObjectTypeName(t));
    for (char& c : lower) c = static_cast<char>(c - 'A' + 'a');
    Result<Oid> o = ParseOid("1/2/3/" + lower + "/original");
    ASSERT_TRUE(o.ok()) << lower;
    EXPECT_EQ(o->type, t);
  }
}

TEST(OidTextTest, ParsesMaxValues) {
  Result<Oid> o = ParseOid("4294967295/18446744073709551615/18446744073709551615");
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->fnso, kMaxU32);
  EXPECT_EQ(o->fno, kMaxU64);
  EXPECT_EQ(o->offset, kMaxU64);
}

void ExpectParseError(const std::string& text, const std::string& want_in_message) {
  Result<Oid> o = ParseOid(text);
  ASSERT_FALSE(o.ok()) << "'" << text << "' parsed as " << o->ToString();
  EXPECT_EQ(o.status().code(), StatusCode::kInvalidArgument) << text;
  EXPECT_NE(o.status().message().find(want_in_message), std::string::npos)
      << "'" << text << "': message '" << o.status().message() << "' lacks '" << want_in_message
      << "'";
}

TEST(OidTextTest, WrongNumberOfParts) {
  ExpectParseError("", "is not fnso/fno/offset");
  ExpectParseError("1", "is not fnso/fno/offset");
  ExpectParseError("1/2", "is not fnso/fno/offset");
  ExpectParseError("1/2/3/DATA/ORIGINAL/x", "is not fnso/fno/offset");
  ExpectParseError("1/2/3/DATA/ORIGINAL/", "is not fnso/fno/offset");
}

TEST(OidTextTest, NonNumericFields) {
  ExpectParseError("a/2/3", "fnso");
  ExpectParseError("1/b/3", "fno");
  ExpectParseError("1/2/c", "offset");
  ExpectParseError("/2/3", "fnso");
  ExpectParseError("1//3", "fno");
  ExpectParseError("1/2/", "offset");
  ExpectParseError("-1/2/3", "fnso");
  ExpectParseError("+1/2/3", "fnso");
  ExpectParseError(" 1/2/3", "fnso");
  ExpectParseError("1 /2/3", "fnso");
  ExpectParseError("1/2x/3", "fno");
  ExpectParseError("1/0x10/3", "fno");
  ExpectParseError("1/2/3.5", "offset");
}

TEST(OidTextTest, Overflow) {
  ExpectParseError("4294967296/2/3", "fnso");  // u32 max + 1
  ExpectParseError("99999999999/2/3", "fnso");
  ExpectParseError("1/18446744073709551616/3", "fno");  // u64 max + 1
  ExpectParseError("1/2/18446744073709551616", "offset");
}

TEST(OidTextTest, UnknownTypeOrFlag) {
  ExpectParseError("1/2/3/FOO", "type");
  ExpectParseError("1/2/3/", "type");
  ExpectParseError("1/2/3/DATAX", "type");
  ExpectParseError("1/2/3/1", "type");  // numbers are not names
  ExpectParseError("1/2/3/DATA/BOTH", "flag");
  ExpectParseError("1/2/3/DATA/", "flag");
  ExpectParseError("1/2/3/DATA/0", "flag");
}

// ---- store key ----

TEST(StoreKeyTest, Is22BytesBigEndianFlagFnsoFnoTypeOffset) {
  EXPECT_EQ(kStoreKeySize, 22u);
  Oid o = MakeOid(0x01020304, 0x05060708090a0b0c, 0x0d0e0f1011121314, ObjectType::kSymlink,
                  CopyFlag::kReplica);
  std::string key = EncodeStoreKey(o);
  ASSERT_EQ(key.size(), 22u);
  const std::string want(
      "\x01"                               // flag
      "\x01\x02\x03\x04"                   // fnso
      "\x05\x06\x07\x08\x09\x0a\x0b\x0c"   // fno
      "\x04"                               // type
      "\x0d\x0e\x0f\x10\x11\x12\x13\x14",  // offset
      22);
  EXPECT_EQ(key, want);
}

TEST(StoreKeyTest, AlwaysFixedSize) {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(EncodeStoreKey(RandomOid(rng, false)).size(), 22u);
  EXPECT_EQ(EncodeStoreKey(Oid{}).size(), 22u);
}

TEST(StoreKeyTest, RoundTripIncludingExtremes) {
  for (ObjectType t : kAllTypes) {
    for (CopyFlag f : kAllFlags) {
      for (const Oid& o : {MakeOid(0, 0, 0, t, f), MakeOid(kMaxU32, kMaxU64, kMaxU64, t, f),
                           MakeOid(1, uint64_t{1} << 63, 0xff, t, f)}) {
        Result<Oid> back = DecodeStoreKey(EncodeStoreKey(o));
        ASSERT_TRUE(back.ok()) << o.ToString() << ": " << back.status().ToString();
        EXPECT_EQ(*back, o) << o.ToString();
      }
    }
  }
  std::mt19937_64 rng(4);
  for (int i = 0; i < 20000; ++i) {
    Oid o = RandomOid(rng, i % 2 == 0);
    Result<Oid> back = DecodeStoreKey(EncodeStoreKey(o));
    ASSERT_TRUE(back.ok()) << o.ToString();
    ASSERT_EQ(*back, o) << o.ToString();
  }
}

TEST(StoreKeyTest, ByteOrderEqualsTupleOrder) {
  std::mt19937_64 rng(5);
  std::vector<Oid> oids;
  for (int i = 0; i < 3000; ++i) oids.push_back(RandomOid(rng, i % 3 != 0));
  std::vector<std::string> keys;
  for (const Oid& o : oids) keys.push_back(EncodeStoreKey(o));
  int64_t compared = 0;
  for (size_t i = 0; i < oids.size(); ++i) {
    for (size_t j = i; j < oids.size(); j += 7) {
      auto ti = KeyTuple(oids[i]);
      auto tj = KeyTuple(oids[j]);
      int want = ti < tj ? -1 : (tj < ti ? 1 : 0);
      // std::string compares as unsigned bytes (char_traits<char>::compare is memcmp-like).
      ASSERT_EQ(Sign(keys[i].compare(keys[j])), want)
          << oids[i].ToString() << " vs " << oids[j].ToString();
      ASSERT_EQ(keys[i] == keys[j], oids[i] == oids[j]);
      ++compared;
    }
  }
  EXPECT_GT(compared, 500000);
}

TEST(StoreKeyTest, FieldsWithHighBitSetSortAfterSmallOnes) {
  // A signed-char comparison would put 0x80.. before 0x7f..; keys must compare unsigned.
  EXPECT_LT(EncodeStoreKey(MakeOid(0x7fffffff, 0, 0)), EncodeStoreKey(MakeOid(0x80000000, 0, 0)));
  EXPECT_LT(EncodeStoreKey(MakeOid(1, 0x7f, 0)), EncodeStoreKey(MakeOid(1, 0x80, 0)));
  EXPECT_LT(EncodeStoreKey(MakeOid(1, 1, 255)), EncodeStoreKey(MakeOid(1, 1, 256)));
  EXPECT_LT(EncodeStoreKey(MakeOid(1, 1, 0x7fffffffffffffff)),
            EncodeStoreKey(MakeOid(1, 1, 0x8000000000000000)));
  // Flag is the most significant field: every original sorts before every replica.
  EXPECT_LT(EncodeStoreKey(MakeOid(kMaxU32, kMaxU64, kMaxU64, ObjectType::kSuper)),
            EncodeStoreKey(MakeOid(0, 0, 0, ObjectType::kData, CopyFlag::kReplica)));
}

TEST(StoreKeyTest, ObjectsOfOneFileAreAdjacentAndOrderedByOffset) {
  std::mt19937_64 rng(6);
  struct File {
    uint32_t fnso;
    uint64_t fno;
  };
  // Files that collide in fnso and in fno with each other and include extreme values.
  std::vector<File> files = {{1, 1},       {1, 2},   {2, 1},   {0, 0},   {kMaxU32, 0},
                             {0, kMaxU64}, {1, 256}, {1, 255}, {256, 1}, {kMaxU32, kMaxU64}};
  for (int i = 0; i < 20; ++i) files.push_back({static_cast<uint32_t>(rng() % 4), rng()});
  std::vector<Oid> oids;
  for (const File& f : files) {
    for (CopyFlag flag : kAllFlags) {
      for (ObjectType t : kAllTypes) {
        int count = t == ObjectType::kData ? 40 : 3;
        for (int i = 0; i < count; ++i) {
          // Offsets straddle byte boundaries (255/256, 65535/65536) and include extremes.
          uint64_t off = (i < 30) ? static_cast<uint64_t>(i) * 97 % 1000
                                  : (i == 30 ? kMaxU64 : rng() >> (rng() % 64));
          if (i == 31) off = 255;
          if (i == 32) off = 256;
          if (i == 33) off = 65535;
          if (i == 34) off = 65536;
          oids.push_back(MakeOid(f.fnso, f.fno, off, t, flag));
        }
      }
    }
  }
  std::shuffle(oids.begin(), oids.end(), rng);
  std::vector<std::string> keys;
  for (const Oid& o : oids) keys.push_back(EncodeStoreKey(o));
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());

  std::vector<Oid> sorted;
  for (const std::string& k : keys) {
    Result<Oid> o = DecodeStoreKey(k);
    ASSERT_TRUE(o.ok());
    sorted.push_back(*o);
  }
  // Each (flag, fnso, fno) forms one contiguous run, and each (flag, fnso, fno, type) too.
  std::set<std::tuple<int, uint32_t, uint64_t>> finished_files;
  std::set<std::tuple<int, uint32_t, uint64_t, int>> finished_types;
  for (size_t i = 0; i < sorted.size(); ++i) {
    const Oid& o = sorted[i];
    auto file = std::make_tuple(static_cast<int>(o.flag), o.fnso, o.fno);
    auto file_type =
        std::make_tuple(static_cast<int>(o.flag), o.fnso, o.fno, static_cast<int>(o.type));
    ASSERT_EQ(finished_files.count(file), 0u) << "file of " << o.ToString() << " is split";
    ASSERT_EQ(finished_types.count(file_type), 0u) << "type run of " << o.ToString() << " is split";
    if (i + 1 < sorted.size()) {
      const Oid& n = sorted[i + 1];
      auto next_file = std::make_tuple(static_cast<int>(n.flag), n.fnso, n.fno);
      if (next_file != file) finished_files.insert(file);
      if (next_file != file || n.type != o.type) {
        finished_types.insert(file_type);
      } else {
        // Same file, flag and type: strictly increasing offset.
        ASSERT_LT(o.offset, n.offset) << o.ToString() << " before " << n.ToString();
      }
    }
  }
  EXPECT_EQ(finished_files.size() + 1, files.size() * 2);
}

TEST(StoreKeyTest, DataObjectsOfAFileFormOneRangeInOffsetOrder) {
  // What the replica window scan relies on: [FileTypeKeyPrefix, successor) yields exactly the
  // file's DATA objects of one flag, in offset order.
  std::set<std::string> store;
  for (uint64_t fno : {9u, 10u, 11u}) {
    for (CopyFlag flag : kAllFlags) {
      for (uint64_t off = 0; off < 300; ++off) {
        store.insert(EncodeStoreKey(MakeOid(5, fno, off, ObjectType::kData, flag)));
      }
      store.insert(EncodeStoreKey(MakeOid(5, fno, 0, ObjectType::kInode, flag)));
      store.insert(EncodeStoreKey(MakeOid(5, fno, 12345, ObjectType::kDirent, flag)));
    }
  }
  const std::string prefix = FileTypeKeyPrefix(CopyFlag::kReplica, 5, 10, ObjectType::kData);
  auto begin = store.lower_bound(prefix);
  auto end = store.lower_bound(PrefixSuccessor(prefix));
  uint64_t want = 0;
  for (auto it = begin; it != end; ++it) {
    Result<Oid> o = DecodeStoreKey(*it);
    ASSERT_TRUE(o.ok());
    EXPECT_EQ(*o, MakeOid(5, 10, want, ObjectType::kData, CopyFlag::kReplica));
    ++want;
  }
  EXPECT_EQ(want, 300u);
}

TEST(StoreKeyTest, PrefixSizes) {
  EXPECT_EQ(FlagKeyPrefix(CopyFlag::kOriginal), std::string(1, '\0'));
  EXPECT_EQ(FlagKeyPrefix(CopyFlag::kReplica), std::string(1, '\x01'));
  EXPECT_EQ(NamespaceKeyPrefix(CopyFlag::kReplica, 0x01020304),
            std::string("\x01\x01\x02\x03\x04"));
  EXPECT_EQ(FileKeyPrefix(CopyFlag::kOriginal, 1, 2).size(), 13u);
  EXPECT_EQ(FileTypeKeyPrefix(CopyFlag::kOriginal, 1, 2, ObjectType::kData).size(), 14u);
}

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

TEST(StoreKeyTest, PrefixesMatchExactlyTheRightKeys) {
  std::mt19937_64 rng(8);
  std::vector<Oid> oids;
  for (int i = 0; i < 1500; ++i) oids.push_back(RandomOid(rng, true));
  for (const Oid& a : oids) {
    const std::string file_type = FileTypeKeyPrefix(a.flag, a.fnso, a.fno, a.type);
    const std::string file = FileKeyPrefix(a.flag, a.fnso, a.fno);
    const std::string ns = NamespaceKeyPrefix(a.flag, a.fnso);
    const std::string flag = FlagKeyPrefix(a.flag);
    EXPECT_TRUE(StartsWith(file_type, file));
    EXPECT_TRUE(StartsWith(file, ns));
    EXPECT_TRUE(StartsWith(ns, flag));
    for (size_t j = 0; j < oids.size(); j += 13) {
      const Oid& b = oids[j];
      const std::string kb = EncodeStoreKey(b);
      bool same_flag = a.flag == b.flag;
      bool same_ns = same_flag && a.fnso == b.fnso;
      bool same_file = same_ns && a.fno == b.fno;
      bool same_type = same_file && a.type == b.type;
      ASSERT_EQ(StartsWith(kb, flag), same_flag);
      ASSERT_EQ(StartsWith(kb, ns), same_ns);
      ASSERT_EQ(StartsWith(kb, file), same_file) << a.ToString() << " / " << b.ToString();
      ASSERT_EQ(StartsWith(kb, file_type), same_type) << a.ToString() << " / " << b.ToString();
    }
  }
}

TEST(StoreKeyTest, PrefixSuccessor) {
  EXPECT_EQ(PrefixSuccessor("abc"), "abd");
  EXPECT_EQ(PrefixSuccessor("a"), "b");
  EXPECT_EQ(PrefixSuccessor(std::string(1, '\0')), std::string(1, '\x01'));
  EXPECT_EQ(PrefixSuccessor(std::string("a\xfe", 2)), std::string("a\xff", 2));
  // Trailing 0xff bytes are dropped and the last lower byte is incremented.
  EXPECT_EQ(PrefixSuccessor(std::string("a\xff", 2)), "b");
  EXPECT_EQ(PrefixSuccessor(std::string("a\xff\xff\xff", 4)), "b");
  EXPECT_EQ(PrefixSuccessor(std::string("\x01\x7f\xff", 3)), std::string("\x01\x80", 2));
  EXPECT_EQ(PrefixSuccessor(std::string("\x00\xff", 2)), std::string("\x01", 1));
  // No key is greater than every key that starts with all-0xff or with nothing.
  EXPECT_EQ(PrefixSuccessor(std::string("\xff", 1)), "");
  EXPECT_EQ(PrefixSuccessor(std::string("\xff\xff\xff\xff", 4)), "");
  EXPECT_EQ(PrefixSuccessor(""), "");
}

TEST(StoreKeyTest, PrefixSuccessorBoundsEveryKeyWithThePrefix) {
  std::mt19937_64 rng(9);
  for (int i = 0; i < 5000; ++i) {
    Oid o = RandomOid(rng, false);
    std::string key = EncodeStoreKey(o);
    for (const std::string& prefix :
         {FlagKeyPrefix(o.flag), NamespaceKeyPrefix(o.flag, o.fnso),
          FileKeyPrefix(o.flag, o.fnso, o.fno), FileTypeKeyPrefix(o.flag, o.fnso, o.fno, o.type)}) {
      std::string succ = PrefixSuccessor(prefix);
      ASSERT_FALSE(succ.empty());  // flag bytes are 0 or 1, so never all-0xff
      ASSERT_LE(prefix, key);
      ASSERT_LT(key, succ);
      ASSERT_FALSE(StartsWith(succ, prefix));
    }
  }
  // The largest possible file prefix still has a successor: the next flag value.
  EXPECT_EQ(PrefixSuccessor(FileKeyPrefix(CopyFlag::kReplica, kMaxU32, kMaxU64)),
            std::string(1, '\x02'));
}

void ExpectDecodeCorruption(const std::string& key, const std::string& want_in_message) {
  Result<Oid> o = DecodeStoreKey(key);
  ASSERT_FALSE(o.ok()) << "decoded as " << o->ToString();
  EXPECT_EQ(o.status().code(), StatusCode::kCorruption);
  EXPECT_NE(o.status().message().find(want_in_message), std::string::npos) << o.status().message();
}

TEST(StoreKeyTest, DecodeRejectsWrongSize) {
  std::string key = EncodeStoreKey(MakeOid(1, 2, 3));
  ExpectDecodeCorruption("", "0 bytes");
  ExpectDecodeCorruption(key.substr(0, 21), "21 bytes");
  ExpectDecodeCorruption(key + "x", "23 bytes");
  ExpectDecodeCorruption(FileTypeKeyPrefix(CopyFlag::kOriginal, 1, 2, ObjectType::kData),
                         "14 bytes");
}

TEST(StoreKeyTest, DecodeRejectsBadFlagByte) {
  std::string key = EncodeStoreKey(MakeOid(1, 2, 3));
  for (int flag : {2, 3, 0x7f, 0x80, 0xff}) {
    std::string bad = key;
    bad[0] = static_cast<char>(flag);
    ExpectDecodeCorruption(bad, "invalid flag or type");
  }
}

TEST(StoreKeyTest, DecodeRejectsBadTypeByte) {
  std::string key = EncodeStoreKey(MakeOid(1, 2, 3));
  for (int type : {0, 7, 8, 0x80, 0xff}) {
    std::string bad = key;
    bad[13] = static_cast<char>(type);
    ExpectDecodeCorruption(bad, "invalid flag or type");
  }
}

TEST(BigEndianTest, AppendAndRead) {
  std::string s;
  AppendBigEndian32(&s, 0x01020304);
  AppendBigEndian64(&s, 0x05060708090a0b0c);
  EXPECT_EQ(s, std::string("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c"));
  EXPECT_EQ(ReadBigEndian32(s.data()), 0x01020304u);
  EXPECT_EQ(ReadBigEndian64(s.data() + 4), 0x05060708090a0b0cu);

  std::mt19937_64 rng(10);
  for (int i = 0; i < 1000; ++i) {
    uint32_t a = static_cast<uint32_t>(rng());
    uint64_t b = rng();
    std::string t;
    AppendBigEndian32(&t, a);
    AppendBigEndian64(&t, b);
    ASSERT_EQ(t.size(), 12u);
    ASSERT_EQ(ReadBigEndian32(t.data()), a);
    ASSERT_EQ(ReadBigEndian64(t.data() + 4), b);
  }
  std::string m;
  AppendBigEndian32(&m, kMaxU32);
  AppendBigEndian64(&m, kMaxU64);
  EXPECT_EQ(m, std::string(12, '\xff'));
  EXPECT_EQ(ReadBigEndian32(m.data()), kMaxU32);
  EXPECT_EQ(ReadBigEndian64(m.data() + 4), kMaxU64);
}

}  // namespace
}  // namespace orthofs
