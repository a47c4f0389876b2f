// INODE, DIRENT and SUPER object encodings, entry-name validation and DIRENT offsets.
#include "common/inode.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <xxhash.h>

#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/oid.h"

namespace orthofs {
namespace {

constexpr uint32_t kMaxU32 = std::numeric_limits<uint32_t>::max();
constexpr uint64_t kMaxU64 = std::numeric_limits<uint64_t>::max();
constexpr int64_t kMinI64 = std::numeric_limits<int64_t>::min();
constexpr int64_t kMaxI64 = std::numeric_limits<int64_t>::max();
constexpr uint32_t kMaxNsec = 999999999;

// Encoded sizes and field offsets, as laid out by inode.cc: a format byte, then big-endian
// fields; a Timespec is 8 bytes of seconds then 4 of nanoseconds.
constexpr size_t kInodeSize = 1 + 4 * 4 + 2 * 8 + 3 * 12;  // 69
constexpr size_t kInodeNsecOffsets[] = {1 + 16 + 16 + 8, 1 + 16 + 16 + 12 + 8,
                                        1 + 16 + 16 + 24 + 8};
constexpr size_t kSuperSize = 1 + 8 + 4 + 12;  // 25
constexpr size_t kSuperNsecOffset = 1 + 8 + 4 + 8;

Inode SampleInode() {
  Inode inode;
  inode.mode = S_IFREG | 0644;
  inode.uid = 1000;
  inode.gid = 100;
  inode.nlink = 1;
  inode.size = 123456789;
  inode.rdev = 0;
  inode.atime = {1700000000, 1};
  inode.mtime = {1700000001, 500000000};
  inode.ctime = {1700000002, kMaxNsec};
  return inode;
}

void ExpectInodeRoundTrip(const Inode& inode) {
  std::string bytes = EncodeInode(inode);
  if (!inode.removing() && inode.xattrs.empty() && inode.renames.empty() &&
      inode.excess_links_since == 0 && inode.parent == 0) {
    EXPECT_EQ(bytes.size(), kInodeSize);
  }
  auto decoded = DecodeInode(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, inode);
  // Encoding is a function of the value.
  EXPECT_EQ(EncodeInode(*decoded), bytes);
}

void ExpectCorruptInode(std::string_view bytes) {
  auto decoded = DecodeInode(bytes);
  ASSERT_FALSE(decoded.ok()) << "decoded " << bytes.size() << " bytes";
  EXPECT_EQ(decoded.status().code(), StatusCode::kCorruption) << decoded.status().ToString();
}

void ExpectCorruptBucket(std::string_view bytes) {
  auto decoded = DecodeDirentBucket(bytes);
  ASSERT_FALSE(decoded.ok()) << "decoded " << bytes.size() << " bytes";
  EXPECT_EQ(decoded.status().code(), StatusCode::kCorruption) << decoded.status().ToString();
}

void ExpectCorruptSuper(std::string_view bytes) {
  auto decoded = DecodeSuperBlock(bytes);
  ASSERT_FALSE(decoded.ok()) << "decoded " << bytes.size() << " bytes";
  EXPECT_EQ(decoded.status().code(), StatusCode::kCorruption) << decoded.status().ToString();
}

void PatchBigEndian32(std::string* bytes, size_t offset, uint32_t v) {
  std::string be;
  AppendBigEndian32(&be, v);
  bytes->replace(offset, 4, be);
}

// ---------------------------------------------------------------------------------------------
// Inode

TEST(InodeTest, DefaultRoundTrips) { ExpectInodeRoundTrip(Inode{}); }

TEST(InodeTest, SampleRoundTrips) { ExpectInodeRoundTrip(SampleInode()); }

TEST(InodeTest, MaximumValuesRoundTrip) {
  Inode inode;
  inode.mode = kMaxU32;
  inode.uid = kMaxU32;
  inode.gid = kMaxU32;
  inode.nlink = kMaxU32;
  inode.size = kMaxU64;
  inode.rdev = kMaxU64;
  inode.atime = {kMaxI64, kMaxNsec};
  inode.mtime = {kMaxI64, kMaxNsec};
  inode.ctime = {kMaxI64, kMaxNsec};
  ExpectInodeRoundTrip(inode);
}

TEST(InodeTest, NegativeSecondsRoundTrip) {
  Inode inode = SampleInode();
  inode.atime = {-1, 0};
  inode.mtime = {kMinI64, kMaxNsec};
  inode.ctime = {-1700000000, 123456789};
  ExpectInodeRoundTrip(inode);
}

TEST(InodeTest, EachFieldIsEncodedIndependently) {
  // Changing any one field changes the encoding and survives the round trip, so no two fields
  // share or overwrite bytes.
  const Inode base = SampleInode();
  std::vector<Inode> variants;
  auto vary = [&](auto mutate) {
    Inode v = base;
    mutate(v);
    variants.push_back(v);
  };
  vary([](Inode& i) { i.mode = S_IFDIR | 0755; });
  vary([](Inode& i) { i.uid = 0xdeadbeef; });
  vary([](Inode& i) { i.gid = 0xfeedface; });
  vary([](Inode& i) { i.nlink = 77; });
  vary([](Inode& i) { i.size = 0x0102030405060708; });
  vary([](Inode& i) { i.rdev = 0x8877665544332211; });
  vary([](Inode& i) { i.atime.sec = -5; });
  vary([](Inode& i) { i.atime.nsec = 42; });
  vary([](Inode& i) { i.mtime.sec = -6; });
  vary([](Inode& i) { i.mtime.nsec = 43; });
  vary([](Inode& i) { i.ctime.sec = -7; });
  vary([](Inode& i) { i.ctime.nsec = 44; });
  vary([](Inode& i) { i.removal_marks = 1; });
  vary([](Inode& i) { i.removal_marks = 2; });
  vary([](Inode& i) { i.excess_links_since = 1700000003; });
  vary([](Inode& i) { i.parent = 5; });
  vary([](Inode& i) { i.renames.push_back(RenameNote{2, "a", 3, "b", {1700000004, 5}}); });
  vary([](Inode& i) { i.renames.push_back(RenameNote{2, "a", 3, "c", {1700000004, 5}}); });
  vary([](Inode& i) {
    i.renames.push_back(RenameNote{2, "a", 3, "b", {1700000004, 5}});
    i.removal_marks = 1;
  });
  std::set<std::string> encodings = {EncodeInode(base)};
  for (const Inode& v : variants) {
    ExpectInodeRoundTrip(v);
    EXPECT_TRUE(encodings.insert(EncodeInode(v)).second);
  }
}

TEST(InodeTest, EncodingIsVersionedBigEndian) {
  Inode inode;
  inode.mode = 0x01020304;
  std::string bytes = EncodeInode(inode);
  ASSERT_EQ(bytes.size(), kInodeSize);
  EXPECT_EQ(static_cast<uint8_t>(bytes[0]), 1);
  EXPECT_EQ(bytes.substr(1, 4), std::string("\x01\x02\x03\x04", 4));
}

// A directory being removed is marked in a format of its own (3: the count of removals under
// way, then attributes that may be none); without a mark an inode keeps format 1 or 2, which
// older clients read.
TEST(InodeTest, RemovalMarksRoundTripInFormat3Only) {
  Inode dir = SampleInode();
  dir.mode = S_IFDIR | 0755;
  dir.xattrs.clear();
  EXPECT_EQ(static_cast<uint8_t>(EncodeInode(dir)[0]), 1);
  dir.removal_marks = 1;
  const std::string marked = EncodeInode(dir);
  EXPECT_EQ(static_cast<uint8_t>(marked[0]), 3);
  EXPECT_EQ(marked.size(), EncodeInode(Inode{}).size() + 8);  // the marks and a count of 0
  ExpectInodeRoundTrip(dir);
  dir.xattrs["user.a"] = "b";
  ExpectInodeRoundTrip(dir);
  dir.removal_marks = 3;
  ExpectInodeRoundTrip(dir);
  dir.removal_marks = 0;
  EXPECT_EQ(static_cast<uint8_t>(EncodeInode(dir)[0]), 2);
}

TEST(InodeDecodeTest, RejectsNoOrImplausiblyManyRemovalMarks) {
  Inode dir;
  dir.removal_marks = 1;
  std::string bytes = EncodeInode(dir);
  const size_t marks_at = EncodeInode(Inode{}).size();
  for (uint32_t marks : {0u, (1u << 16) + 1, 0x80000000u}) {
    PatchBigEndian32(&bytes, marks_at, marks);
    ExpectCorruptInode(bytes);
  }
}

// Rename notes and fsck's note of excess links take format 4 (marks, that time, the notes,
// attributes), written only while one is set; the marks may then be none.
TEST(InodeTest, NotesRoundTripInFormat4Only) {
  Inode dir = SampleInode();
  dir.mode = S_IFDIR | 0755;
  dir.renames.push_back(RenameNote{7, "old", 9, std::string(kMaxNameLength, 'n'), {5, 6}});
  EXPECT_EQ(static_cast<uint8_t>(EncodeInode(dir)[0]), 4);
  ExpectInodeRoundTrip(dir);
  dir.renames.push_back(RenameNote{9, "x", 7, "y", {-1, 0}});
  dir.removal_marks = 2;
  dir.xattrs["user.a"] = "b";
  ExpectInodeRoundTrip(dir);
  dir.renames.clear();
  EXPECT_EQ(static_cast<uint8_t>(EncodeInode(dir)[0]), 3);
  dir.excess_links_since = 1700000000;
  EXPECT_EQ(static_cast<uint8_t>(EncodeInode(dir)[0]), 4);
  ExpectInodeRoundTrip(dir);
  dir.excess_links_since = 0;
  dir.parent = 12;
  EXPECT_EQ(static_cast<uint8_t>(EncodeInode(dir)[0]), 4);
  ExpectInodeRoundTrip(dir);
  dir.parent = 0;
  dir.removal_marks = 0;
  EXPECT_EQ(static_cast<uint8_t>(EncodeInode(dir)[0]), 2);
}

TEST(MoveLeaseTest, RoundTripsAndRejectsDamage) {
  const MoveLease lease{0x0102030405060708, 1700000000};
  const std::string bytes = EncodeMoveLease(lease);
  ASSERT_EQ(bytes.size(), 17u);
  Result<MoveLease> decoded = DecodeMoveLease(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, lease);
  EXPECT_FALSE(DecodeMoveLease(bytes.substr(0, 16)).ok());
  EXPECT_FALSE(DecodeMoveLease(bytes + "x").ok());
  std::string other_format = bytes;
  other_format[0] = 2;
  EXPECT_FALSE(DecodeMoveLease(other_format).ok());
}

TEST(InodeDecodeTest, RejectsMalformedNotes) {
  Inode dir;
  dir.renames.push_back(RenameNote{7, "o", 9, "t", {5, 6}});
  const std::string good = EncodeInode(dir);
  const size_t base = EncodeInode(Inode{}).size();
  const size_t count_at = base + 4 + 8 + 8;
  const size_t from_len_at = count_at + 4 + 8;
  std::string bytes = good;
  PatchBigEndian32(&bytes, count_at, 0);  // no note, excess time or parent: no format 4
  ExpectCorruptInode(bytes);
  bytes = good;
  PatchBigEndian32(&bytes, count_at, kMaxRenameNotes + 1);
  ExpectCorruptInode(bytes);
  bytes = good;
  PatchBigEndian32(&bytes, from_len_at, 0);  // an empty name
  ExpectCorruptInode(bytes);
  bytes = good;
  PatchBigEndian32(&bytes, from_len_at, kMaxNameLength + 1);
  ExpectCorruptInode(bytes);
  ExpectCorruptInode(good.substr(0, good.size() - 1));
  ExpectCorruptInode(good + "x");
}

TEST(InodeTest, FileTypePredicates) {
  struct Case {
    uint32_t type;
    bool dir, reg, lnk;
  };
  const Case cases[] = {
      {S_IFDIR, true, false, false},   {S_IFREG, false, true, false},
      {S_IFLNK, false, false, true},   {S_IFCHR, false, false, false},
      {S_IFBLK, false, false, false},  {S_IFIFO, false, false, false},
      {S_IFSOCK, false, false, false}, {0, false, false, false},
  };
  for (const Case& c : cases) {
    for (uint32_t perm : {0u, 0644u, 0755u, 07777u}) {
      Inode inode;
      inode.mode = c.type | perm;
      EXPECT_EQ(inode.IsDirectory(), c.dir) << std::oct << inode.mode;
      EXPECT_EQ(inode.IsRegular(), c.reg) << std::oct << inode.mode;
      EXPECT_EQ(inode.IsSymlink(), c.lnk) << std::oct << inode.mode;
    }
  }
}

TEST(InodeTest, PredicatesSurviveRoundTrip) {
  Inode inode = SampleInode();
  inode.mode = S_IFLNK | 0777;
  auto decoded = DecodeInode(EncodeInode(inode));
  ASSERT_TRUE(decoded.ok());
  EXPECT_TRUE(decoded->IsSymlink());
  EXPECT_FALSE(decoded->IsRegular());
  EXPECT_FALSE(decoded->IsDirectory());
}

TEST(InodeDecodeTest, RejectsEmpty) { ExpectCorruptInode(""); }

TEST(InodeDecodeTest, RejectsEveryOtherFormatByte) {
  std::string bytes = EncodeInode(SampleInode());
  for (int format = 0; format < 256; ++format) {
    if (format == 1) continue;
    bytes[0] = static_cast<char>(format);
    ExpectCorruptInode(bytes);
  }
}

TEST(InodeDecodeTest, RejectsEveryTruncation) {
  for (const Inode& inode : {Inode{}, SampleInode()}) {
    const std::string bytes = EncodeInode(inode);
    for (size_t len = 0; len < bytes.size(); ++len) {
      SCOPED_TRACE(len);
      ExpectCorruptInode(std::string_view(bytes).substr(0, len));
    }
  }
}

TEST(InodeDecodeTest, RejectsTrailingBytes) {
  const std::string bytes = EncodeInode(SampleInode());
  ExpectCorruptInode(bytes + '\0');
  ExpectCorruptInode(bytes + 'x');
  ExpectCorruptInode(bytes + bytes);
}

TEST(InodeDecodeTest, RejectsNanosecondsOutOfRange) {
  const std::string good = EncodeInode(SampleInode());
  for (size_t offset : kInodeNsecOffsets) {
    for (uint32_t nsec : {1000000000u, 1000000001u, 0x80000000u, kMaxU32}) {
      SCOPED_TRACE(testing::Message() << "offset " << offset << " nsec " << nsec);
      std::string bytes = good;
      PatchBigEndian32(&bytes, offset, nsec);
      ExpectCorruptInode(bytes);
    }
    // The largest valid value at the same position decodes.
    std::string bytes = good;
    PatchBigEndian32(&bytes, offset, kMaxNsec);
    EXPECT_TRUE(DecodeInode(bytes).ok()) << offset;
  }
}

// ---------------------------------------------------------------------------------------------
// DirentBucket

void ExpectBucketRoundTrip(const std::vector<DirEntry>& entries) {
  std::string bytes = EncodeDirentBucket(entries);
  auto decoded = DecodeDirentBucket(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, entries);
  EXPECT_EQ(EncodeDirentBucket(*decoded), bytes);
}

std::vector<DirEntry> SeveralEntries() {
  return {
      {"a", kRootFno, S_IFDIR},    {std::string(kMaxNameLength, 'z'), kMaxU64, S_IFREG},
      {"link", 0, S_IFLNK},        {"fifo", 12345, S_IFIFO},
      {"weird-type", 99, kMaxU32}, {"a", 7, 0},  // duplicates are not the decoder's business
  };
}

// Builds a bucket by hand: format byte, count, then (length, name bytes, fno, type) per entry.
std::string RawBucket(uint8_t format, uint32_t count) {
  std::string out(1, static_cast<char>(format));
  AppendBigEndian32(&out, count);
  return out;
}

void AppendRawEntry(std::string* out, uint32_t len, std::string_view name, uint64_t fno,
                    uint32_t type) {
  AppendBigEndian32(out, len);
  out->append(name);
  AppendBigEndian64(out, fno);
  AppendBigEndian32(out, type);
}

TEST(DirentBucketTest, EmptyRoundTrips) {
  ExpectBucketRoundTrip({});
  EXPECT_EQ(EncodeDirentBucket({}).size(), 5u);
}

TEST(DirentBucketTest, OneEntryRoundTrips) {
  ExpectBucketRoundTrip({{"x", 2, S_IFREG}});
  ExpectBucketRoundTrip({{"hello.txt", kMaxU64, S_IFDIR}});
}

TEST(DirentBucketTest, SeveralEntriesRoundTripInOrder) { ExpectBucketRoundTrip(SeveralEntries()); }

TEST(DirentBucketTest, NameLengthBounds) {
  ExpectBucketRoundTrip({{"q", 3, S_IFREG}});
  ExpectBucketRoundTrip({{std::string(kMaxNameLength, 'n'), 4, S_IFREG}});
  ExpectBucketRoundTrip({{std::string(1, '\xff'), 5, S_IFREG}});
}

TEST(DirentBucketTest, BinaryNamesRoundTrip) {
  // The decoder accepts any bytes in a name, including '/' and NUL (ValidateName polices those).
  std::string all_bytes;
  for (int b = 1; b < 256; ++b) all_bytes.push_back(static_cast<char>(b));
  ASSERT_EQ(all_bytes.size(), kMaxNameLength);
  ExpectBucketRoundTrip({
      {all_bytes, 10, S_IFREG},
      {std::string("\0", 1), 11, S_IFREG},
      {std::string("a\0b", 3), 12, S_IFREG},
      {"a/b", 13, S_IFDIR},
      {"/", 14, S_IFDIR},
      {"\x80\xfe\xff", 15, S_IFLNK},
      {"\xc3\xa9t\xc3\xa9", 16, S_IFREG},
  });
}

TEST(DirentBucketTest, TypeValuesRoundTrip) {
  std::vector<DirEntry> entries;
  uint64_t fno = 100;
  for (uint32_t type : {0u, static_cast<uint32_t>(S_IFREG), static_cast<uint32_t>(S_IFDIR),
                        static_cast<uint32_t>(S_IFLNK), static_cast<uint32_t>(S_IFCHR),
                        static_cast<uint32_t>(S_IFBLK), static_cast<uint32_t>(S_IFSOCK),
                        static_cast<uint32_t>(S_IFIFO), 1u, kMaxU32}) {
    entries.push_back({"t" + std::to_string(type), fno++, type});
  }
  ExpectBucketRoundTrip(entries);
}

TEST(DirentBucketTest, HandBuiltBucketDecodes) {
  // The decoder's view of the format agrees with a hand-built encoding.
  std::string bytes = RawBucket(1, 2);
  AppendRawEntry(&bytes, 3, "foo", 42, S_IFREG);
  AppendRawEntry(&bytes, 1, "d", kMaxU64, S_IFDIR);
  EXPECT_EQ(bytes, EncodeDirentBucket({{"foo", 42, S_IFREG}, {"d", kMaxU64, S_IFDIR}}));
  auto decoded = DecodeDirentBucket(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  ASSERT_EQ(decoded->size(), 2u);
  EXPECT_EQ((*decoded)[0], (DirEntry{"foo", 42, S_IFREG}));
  EXPECT_EQ((*decoded)[1], (DirEntry{"d", kMaxU64, S_IFDIR}));
}

TEST(DirentBucketDecodeTest, RejectsEmpty) { ExpectCorruptBucket(""); }

TEST(DirentBucketDecodeTest, RejectsEveryOtherFormatByte) {
  for (const auto& entries : {std::vector<DirEntry>{}, SeveralEntries()}) {
    std::string bytes = EncodeDirentBucket(entries);
    for (int format = 0; format < 256; ++format) {
      if (format == 1) continue;
      bytes[0] = static_cast<char>(format);
      ExpectCorruptBucket(bytes);
    }
  }
}

TEST(DirentBucketDecodeTest, RejectsCountLargerThanEntries) {
  ExpectCorruptBucket(RawBucket(1, 1));
  ExpectCorruptBucket(RawBucket(1, kMaxU32));  // must fail fast, not allocate 4G entries

  std::string bytes = RawBucket(1, 2);
  AppendRawEntry(&bytes, 3, "foo", 42, S_IFREG);
  ExpectCorruptBucket(bytes);

  std::string full = EncodeDirentBucket(SeveralEntries());
  PatchBigEndian32(&full, 1, static_cast<uint32_t>(SeveralEntries().size() + 1));
  ExpectCorruptBucket(full);
  PatchBigEndian32(&full, 1, kMaxU32);
  ExpectCorruptBucket(full);
}

TEST(DirentBucketDecodeTest, RejectsCountSmallerThanEntries) {
  std::string full = EncodeDirentBucket(SeveralEntries());
  PatchBigEndian32(&full, 1, static_cast<uint32_t>(SeveralEntries().size() - 1));
  ExpectCorruptBucket(full);
  PatchBigEndian32(&full, 1, 0);
  ExpectCorruptBucket(full);
}

TEST(DirentBucketDecodeTest, RejectsZeroLengthName) {
  std::string bytes = RawBucket(1, 1);
  AppendRawEntry(&bytes, 0, "", 42, S_IFREG);
  ExpectCorruptBucket(bytes);

  // Also when it is not the first entry.
  bytes = RawBucket(1, 2);
  AppendRawEntry(&bytes, 1, "a", 42, S_IFREG);
  AppendRawEntry(&bytes, 0, "", 43, S_IFREG);
  ExpectCorruptBucket(bytes);
}

TEST(DirentBucketDecodeTest, RejectsOverlongName) {
  for (uint32_t len : {static_cast<uint32_t>(kMaxNameLength + 1), 4096u}) {
    std::string bytes = RawBucket(1, 1);
    AppendRawEntry(&bytes, len, std::string(len, 'n'), 42, S_IFREG);
    ExpectCorruptBucket(bytes);
  }
  // A huge length with too few bytes behind it.
  std::string bytes = RawBucket(1, 1);
  AppendRawEntry(&bytes, kMaxU32, "abc", 42, S_IFREG);
  ExpectCorruptBucket(bytes);

  // The same hand-built layout with 255 bytes is fine.
  bytes = RawBucket(1, 1);
  AppendRawEntry(&bytes, kMaxNameLength, std::string(kMaxNameLength, 'n'), 42, S_IFREG);
  EXPECT_TRUE(DecodeDirentBucket(bytes).ok());
}

TEST(DirentBucketDecodeTest, RejectsEveryTruncation) {
  for (const auto& entries :
       {std::vector<DirEntry>{}, std::vector<DirEntry>{{"x", 2, S_IFREG}}, SeveralEntries()}) {
    const std::string bytes = EncodeDirentBucket(entries);
    for (size_t len = 0; len < bytes.size(); ++len) {
      SCOPED_TRACE(testing::Message() << entries.size() << " entries, " << len << " bytes");
      ExpectCorruptBucket(std::string_view(bytes).substr(0, len));
    }
  }
}

TEST(DirentBucketDecodeTest, RejectsTrailingBytes) {
  for (const auto& entries :
       {std::vector<DirEntry>{}, std::vector<DirEntry>{{"x", 2, S_IFREG}}, SeveralEntries()}) {
    const std::string bytes = EncodeDirentBucket(entries);
    ExpectCorruptBucket(bytes + '\0');
    ExpectCorruptBucket(bytes + "garbage");
    // A complete extra entry not covered by the count.
    std::string extra = bytes;
    AppendRawEntry(&extra, 1, "e", 9, S_IFREG);
    ExpectCorruptBucket(extra);
  }
}

// ---------------------------------------------------------------------------------------------
// DirentOffset

TEST(DirentOffsetTest, Deterministic) {
  for (std::string_view name : {"a", "hello.txt", "\xc3\xa9t\xc3\xa9", ""}) {
    EXPECT_EQ(DirentOffset(name), DirentOffset(name));
    EXPECT_EQ(DirentOffset(name), DirentOffset(std::string(name)));
  }
}

TEST(DirentOffsetTest, IsXxh3Of64Bits) {
  const std::string long_name(kMaxNameLength, 'L');
  const std::string with_nul("a\0b", 3);
  for (std::string_view name :
       {std::string_view("a"), std::string_view("hello.txt"), std::string_view(long_name),
        std::string_view(with_nul), std::string_view("\xff\xfe")}) {
    EXPECT_EQ(DirentOffset(name), XXH3_64bits(name.data(), name.size()));
  }
  // Only the view's bytes count, not what lies after them.
  const std::string buffer = "abcdef";
  EXPECT_EQ(DirentOffset(std::string_view(buffer).substr(0, 3)), XXH3_64bits("abc", 3));
  EXPECT_EQ(DirentOffset(std::string_view(buffer).substr(0, 3)), DirentOffset("abc"));
}

TEST(DirentOffsetTest, DistinctNamesGiveDistinctOffsets) {
  std::set<uint64_t> offsets;
  for (int i = 0; i < 10000; ++i) offsets.insert(DirentOffset("file" + std::to_string(i)));
  EXPECT_EQ(offsets.size(), 10000u);
  // Names differing only in case, length or a trailing NUL differ too.
  EXPECT_NE(DirentOffset("a"), DirentOffset("A"));
  EXPECT_NE(DirentOffset("a"), DirentOffset("aa"));
  EXPECT_NE(DirentOffset("a"), DirentOffset(std::string_view("a\0", 2)));
}

// ---------------------------------------------------------------------------------------------
// ValidateName

void ExpectInvalidName(std::string_view name) {
  Status st = ValidateName(name);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument)
      << "name of " << name.size() << " bytes: " << st.ToString();
}

TEST(ValidateNameTest, RejectsReservedNames) {
  ExpectInvalidName("");
  ExpectInvalidName(".");
  ExpectInvalidName("..");
}

TEST(ValidateNameTest, RejectsSlash) {
  ExpectInvalidName("a/b");
  ExpectInvalidName("/");
  ExpectInvalidName("/a");
  ExpectInvalidName("a/");
  ExpectInvalidName("./");
}

TEST(ValidateNameTest, RejectsNul) {
  ExpectInvalidName(std::string_view("a\0b", 3));
  ExpectInvalidName(std::string_view("\0", 1));
  ExpectInvalidName(std::string_view("ab\0", 3));
  ExpectInvalidName(std::string_view(".\0", 2));
}

TEST(ValidateNameTest, AcceptsOrdinaryNames) {
  for (std::string_view name :
       {"a", "...", ".hidden", "..x", "x..", ". ", " ", "file.txt", "\xc3\xa9t\xc3\xa9",
        "\xe6\x97\xa5\xe6\x9c\xac", "\xf0\x9f\x98\x80", "\x01\x7f\xff"}) {
    Status st = ValidateName(name);
    EXPECT_TRUE(st.ok()) << "'" << name << "': " << st.ToString();
  }
}

TEST(ValidateNameTest, AcceptsMaximumLengthNames) {
  EXPECT_TRUE(ValidateName(std::string(kMaxNameLength, 'a')).ok());
  // 255 bytes of UTF-8: 85 three-byte characters.
  std::string utf8;
  while (utf8.size() < kMaxNameLength) utf8 += "\xe2\x82\xac";
  ASSERT_EQ(utf8.size(), kMaxNameLength);
  EXPECT_TRUE(ValidateName(utf8).ok());
}

TEST(ValidateNameTest, LengthIsCheckedElsewhere) {
  // Per inode.h, over-long names are refused by a separate check (ENAMETOOLONG), not here.
  EXPECT_TRUE(ValidateName(std::string(kMaxNameLength + 1, 'a')).ok());
}

// ---------------------------------------------------------------------------------------------
// SuperBlock

void ExpectSuperRoundTrip(const SuperBlock& super) {
  std::string bytes = EncodeSuperBlock(super);
  EXPECT_EQ(bytes.size(), kSuperSize);
  auto decoded = DecodeSuperBlock(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, super);
  EXPECT_EQ(EncodeSuperBlock(*decoded), bytes);
}

SuperBlock SampleSuper() {
  SuperBlock super;
  super.next_fno = 1234567;
  super.object_size = 4 << 20;
  super.created = {1700000000, 250000000};
  return super;
}

TEST(SuperBlockTest, DefaultNextFnoFollowsRoot) {
  SuperBlock super;
  EXPECT_EQ(kRootFno, 1u);
  EXPECT_EQ(super.next_fno, kRootFno + 1);
  EXPECT_EQ(super.next_fno, 2u);
  EXPECT_EQ(super.object_size, 0u);
  EXPECT_EQ(super.created, Timespec{});
}

TEST(SuperBlockTest, RoundTrips) {
  ExpectSuperRoundTrip(SuperBlock{});
  ExpectSuperRoundTrip(SampleSuper());

  SuperBlock max;
  max.next_fno = kMaxU64;
  max.object_size = kMaxU32;
  max.created = {kMaxI64, kMaxNsec};
  ExpectSuperRoundTrip(max);

  SuperBlock negative;
  negative.next_fno = 0;
  negative.created = {kMinI64, 0};
  ExpectSuperRoundTrip(negative);

  negative.created = {-1, kMaxNsec};
  ExpectSuperRoundTrip(negative);
}

TEST(SuperBlockDecodeTest, RejectsEveryOtherFormatByte) {
  std::string bytes = EncodeSuperBlock(SampleSuper());
  for (int format = 0; format < 256; ++format) {
    if (format == 1) continue;
    bytes[0] = static_cast<char>(format);
    ExpectCorruptSuper(bytes);
  }
}

TEST(SuperBlockDecodeTest, RejectsEveryTruncation) {
  const std::string bytes = EncodeSuperBlock(SampleSuper());
  for (size_t len = 0; len < bytes.size(); ++len) {
    SCOPED_TRACE(len);
    ExpectCorruptSuper(std::string_view(bytes).substr(0, len));
  }
}

TEST(SuperBlockDecodeTest, RejectsTrailingBytes) {
  const std::string bytes = EncodeSuperBlock(SampleSuper());
  ExpectCorruptSuper(bytes + '\0');
  ExpectCorruptSuper(bytes + bytes);
}

TEST(SuperBlockDecodeTest, RejectsNanosecondsOutOfRange) {
  const std::string good = EncodeSuperBlock(SampleSuper());
  for (uint32_t nsec : {1000000000u, kMaxU32}) {
    std::string bytes = good;
    PatchBigEndian32(&bytes, kSuperNsecOffset, nsec);
    ExpectCorruptSuper(bytes);
  }
  std::string bytes = good;
  PatchBigEndian32(&bytes, kSuperNsecOffset, kMaxNsec);
  EXPECT_TRUE(DecodeSuperBlock(bytes).ok());
}

TEST(SuperBlockDecodeTest, DoesNotAcceptOtherObjectKinds) {
  // An inode or a bucket handed to the super block decoder (and vice versa) is refused.
  ExpectCorruptSuper(EncodeInode(SampleInode()));
  ExpectCorruptSuper(EncodeDirentBucket(SeveralEntries()));
  ExpectCorruptInode(EncodeSuperBlock(SampleSuper()));
  ExpectCorruptBucket(EncodeSuperBlock(SampleSuper()));
}

}  // namespace
TEST(InodeXattrTest, RoundTripAndFormat) {
  Inode inode;
  inode.mode = S_IFREG | 0644;
  EXPECT_EQ(static_cast<uint8_t>(EncodeInode(inode)[0]), 1);  // no attributes: format 1
  inode.xattrs["user.a"] = "1";
  inode.xattrs["user.empty"] = "";
  inode.xattrs["security.bin"] = std::string("\0\xff\x01", 3);
  inode.xattrs[std::string(kMaxXattrNameLength, 'n')] = std::string(kMaxXattrValueLength, 'v');
  const std::string bytes = EncodeInode(inode);
  EXPECT_EQ(static_cast<uint8_t>(bytes[0]), 2);
  Result<Inode> back = DecodeInode(bytes);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, inode);
}

TEST(InodeXattrTest, RejectsCorruptAttributes) {
  Inode inode;
  inode.xattrs["user.x"] = "value";
  const std::string bytes = EncodeInode(inode);
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_TRUE(DecodeInode(bytes.substr(0, n)).status().Is(StatusCode::kCorruption)) << n;
  }
  EXPECT_TRUE(DecodeInode(bytes + "z").status().Is(StatusCode::kCorruption));
  // Format 2 with a zero attribute count is not an encoding the encoder makes.
  Inode plain;
  std::string zero = EncodeInode(plain);
  zero[0] = 2;
  zero += std::string(4, '\0');
  EXPECT_TRUE(DecodeInode(zero).status().Is(StatusCode::kCorruption));
}

// ---- privileges a modification drops ----

namespace {
Inode RegularWithMode(uint32_t permissions) {
  Inode inode;
  inode.mode = S_IFREG | permissions;
  return inode;
}
}  // namespace

TEST(InodeDropPrivilegesTest, SetUserIdIsDropped) {
  Inode inode = RegularWithMode(04755);
  EXPECT_TRUE(inode.HasPrivilegesToDrop());
  inode.DropPrivileges();
  EXPECT_EQ(inode.mode, S_IFREG | 0755u);
  EXPECT_FALSE(inode.HasPrivilegesToDrop());
  inode.DropPrivileges();
  EXPECT_EQ(inode.mode, S_IFREG | 0755u) << "nothing left to drop";
}

TEST(InodeDropPrivilegesTest, SetGroupIdIsDroppedOnlyWhenTheGroupMayExecute) {
  Inode executable = RegularWithMode(02750);
  executable.DropPrivileges();
  EXPECT_EQ(executable.mode, S_IFREG | 0750u);

  // Set-group-ID without group execute grants nothing on exec: kept.
  Inode locking = RegularWithMode(02644);
  EXPECT_FALSE(locking.HasPrivilegesToDrop());
  locking.DropPrivileges();
  EXPECT_EQ(locking.mode, S_IFREG | 02644u);

  Inode both = RegularWithMode(06644);  // set-user-ID goes, the locking bit stays
  both.DropPrivileges();
  EXPECT_EQ(both.mode, S_IFREG | 02644u);
}

TEST(InodeDropPrivilegesTest, OtherAttributesAreKept) {
  Inode inode = RegularWithMode(04755);
  inode.uid = 1000;
  inode.size = 77;
  inode.xattrs["user.note"] = "kept";
  Inode expected = inode;
  expected.mode = S_IFREG | 0755;
  inode.DropPrivileges();
  EXPECT_EQ(inode, expected);
}

TEST(InodeDropPrivilegesTest, DirectoriesAndPlainFilesAreLeftAlone) {
  Inode dir;
  dir.mode = S_IFDIR | 02775;  // a directory's set-group-ID bit is inheritance
  EXPECT_FALSE(dir.HasPrivilegesToDrop());
  dir.DropPrivileges();
  EXPECT_EQ(dir.mode, S_IFDIR | 02775u);

  Inode plain = RegularWithMode(01777);  // the sticky bit is no privilege
  plain.DropPrivileges();
  EXPECT_EQ(plain.mode, S_IFREG | 01777u);
}

}  // namespace orthofs
