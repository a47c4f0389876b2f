// Real orthofs-osd processes: object round trips, ranged and conditional writes,
// transactions, listing, refusals (wrong OSD, stale epoch, malformed, oversized) and
// durability across kill -9.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <future>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "client/cluster_client.h"
#include "common/checksum.h"
#include "common/limits.h"
#include "common/object_version.h"
#include "common/peer_role.h"
#include "rpc/wire.h"
#include "tests/metrics_scrape.h"
#include "tests/test_cluster.h"

namespace orthofs::testing {
namespace {

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

Oid Data(uint64_t fno, uint64_t offset, CopyFlag flag = CopyFlag::kOriginal) {
  return Oid{1, fno, offset, ObjectType::kData, flag};
}

// Writes both copies of an object, as a client does.
void PutBoth(ClusterClient& c, const Oid& oid, const std::string& data) {
  ObjectWrite how;
  how.replace = true;
  for (CopyFlag f : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
    Result<wire::ObjectMeta> meta = c.Write(oid.WithFlag(f), data, how);
    ASSERT_TRUE(meta.ok()) << meta.status().ToString();
  }
}

std::string ReadAll(ClusterClient& c, const Oid& oid) {
  Result<wire::ReadResponse> r = c.Read(oid);
  EXPECT_TRUE(r.ok()) << oid.ToString() << ": " << r.status().ToString();
  return r.ok() ? r->data() : std::string("<error>");
}

// One raw WriteRequest to the OSD holding `oid` (epoch and oid filled in, the rest by `fill`);
// the version it answers, 0 on failure.
uint64_t WriteVersion(ClusterClient& c, const Oid& oid,
                      const std::function<void(wire::WriteRequest*)>& fill) {
  wire::WriteRequest w;
  w.set_epoch(c.map().epoch);
  *w.mutable_oid() = ToWire(oid);
  fill(&w);
  Result<wire::WriteResponse> r = c.Osd(c.placement().OsdFor(oid))->Write(w);
  EXPECT_TRUE(r.ok()) << oid.ToString() << ": " << r.status().ToString();
  return r.ok() ? r->meta().version() : 0;
}

// An OSD that does not hold the copy.
uint32_t SomeOtherOsd(const ClusterClient& c, const Oid& oid) {
  uint32_t holder = c.placement().OsdFor(oid);
  for (const auto& osd : c.map().osds) {
    if (osd.id != holder) return osd.id;
  }
  return holder;
}

// The first data object of a file after `*fno` whose original OSD is `osd_id`.
Oid DataOn(const Placement& placement, uint32_t osd_id, uint64_t* fno) {
  Oid oid = Data(++*fno, 0);
  while (placement.OsdFor(oid) != osd_id) oid = Data(++*fno, 0);
  return oid;
}

class OsdTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { cluster_ = new TestCluster(TestClusterOptions{.osds = 3}); }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }
  ClusterClient& client() { return cluster_->client(); }
  static TestCluster* cluster_;
};
TestCluster* OsdTest::cluster_ = nullptr;

TEST_F(OsdTest, RoundTripsObjectsOfEverySize) {
  const uint32_t object_size = cluster_->map().object_size;
  uint64_t fno = 100;
  for (size_t size : {size_t{0}, size_t{1}, size_t{4096}, size_t{object_size}}) {
    const std::string data = RandomBytes(size, static_cast<uint32_t>(size));
    const Oid oid = Data(fno++, 3);
    PutBoth(client(), oid, data);
    EXPECT_EQ(ReadAll(client(), oid), data) << size;
    EXPECT_EQ(ReadAll(client(), oid.WithFlag(CopyFlag::kReplica)), data) << size;
    Result<wire::ObjectMeta> meta = client().Stat(oid);
    ASSERT_TRUE(meta.ok());
    EXPECT_EQ(meta->length(), size);
    EXPECT_EQ(meta->version(), 1u);
    Result<wire::ObjectMeta> replica_meta = client().Stat(oid.WithFlag(CopyFlag::kReplica));
    ASSERT_TRUE(replica_meta.ok());
    EXPECT_EQ(replica_meta->checksum(), meta->checksum());
  }
}

// DropCaches empties the OSD's object cache: the next read of an object read before is a miss
// served from the store, with the same bytes.
TEST_F(OsdTest, DropCachesMakesTheNextReadAMiss) {
  const Oid oid = Data(150, 0);
  const std::string data = RandomBytes(cluster_->map().object_size, 150);
  PutBoth(client(), oid, data);
  OsdClient* osd = client().Osd(client().placement().OsdFor(oid));
  auto counter = [&](const char* name) {
    Result<wire::StatsResponse> stats = osd->Stats({});
    EXPECT_TRUE(stats.ok()) << stats.status().ToString();
    return stats.ok() ? stats->counters().at(name) : 0;
  };
  EXPECT_EQ(ReadAll(client(), oid), data);
  const uint64_t hits = counter("cache_hits");
  EXPECT_EQ(ReadAll(client(), oid), data);
  EXPECT_EQ(counter("cache_hits"), hits + 1) << "read twice: the second from the cache";
  ASSERT_GE(counter("cache_bytes"), data.size());

  Result<wire::DropCachesResponse> dropped = osd->DropCaches({});
  ASSERT_TRUE(dropped.ok()) << dropped.status().ToString();
  EXPECT_GE(dropped->dropped_bytes(), data.size());
  EXPECT_EQ(counter("cache_bytes"), 0u);
  const uint64_t misses = counter("cache_misses");
  EXPECT_EQ(ReadAll(client(), oid), data);
  EXPECT_EQ(counter("cache_misses"), misses + 1) << "after drop-caches";
}

// Either copy answers a read: the original when it has the object, the replica when only it has
// (an original that missed a change while partitioned away), NotFound only when neither has it.
TEST_F(OsdTest, ReadEitherCopyFindsTheCopyThatHasTheObject) {
  const Oid on_both = Data(150, 0), replica_only = Data(151, 0), original_only = Data(152, 0);
  PutBoth(client(), on_both, "both");
  ObjectWrite how;
  how.replace = true;
  ASSERT_TRUE(client().Write(replica_only.WithFlag(CopyFlag::kReplica), "replica", how).ok());
  ASSERT_TRUE(client().Write(original_only, "original", how).ok());
  for (const auto& [oid, want] :
       {std::pair{on_both, "both"}, {replica_only, "replica"}, {original_only, "original"}}) {
    Result<wire::ReadResponse> read = client().ReadEitherCopy(oid);
    ASSERT_TRUE(read.ok()) << oid.ToString() << ": " << read.status().ToString();
    EXPECT_EQ(read->data(), want);
  }
  Result<wire::ReadResponse> none = client().ReadEitherCopy(Data(153, 0));
  EXPECT_TRUE(none.status().Is(StatusCode::kNotFound)) << none.status().ToString();
}

// ReadEitherCopyMany answers each object as ReadEitherCopy would, in the order asked, with
// more objects per OSD than one ReadMany call takes (metadata objects: a listing's INODEs).
TEST_F(OsdTest, ReadEitherCopyManyAnswersEachAsReadEitherCopyWould) {
  auto inode = [](uint64_t fno) { return Oid{1, fno, 0, ObjectType::kInode, CopyFlag::kOriginal}; };
  std::vector<Oid> oids;
  std::vector<std::optional<std::string>> want;
  ObjectWrite how;
  how.replace = true;
  for (uint64_t fno = 1000; fno < 1000 + 3 * kMaxReadManyReads * 6; ++fno) {
    const std::string data = "inode " + std::to_string(fno);
    switch (fno % 4) {
      case 0:
        PutBoth(client(), inode(fno), data);
        break;
      case 1:  // the replica only (the original missed it)
        ASSERT_TRUE(client().Write(inode(fno).WithFlag(CopyFlag::kReplica), data, how).ok());
        break;
      case 2:  // the original only
        ASSERT_TRUE(client().Write(inode(fno), data, how).ok());
        break;
      case 3:  // neither
        break;
    }
    oids.push_back(inode(fno));
    want.push_back(fno % 4 == 3 ? std::nullopt : std::optional<std::string>(data));
  }
  std::vector<Result<wire::ReadResponse>> reads = client().ReadEitherCopyMany(oids);
  ASSERT_EQ(reads.size(), oids.size());
  for (size_t i = 0; i < oids.size(); ++i) {
    if (!want[i]) {
      EXPECT_TRUE(reads[i].status().Is(StatusCode::kNotFound))
          << oids[i].ToString() << ": " << reads[i].status().ToString();
      continue;
    }
    ASSERT_TRUE(reads[i].ok()) << oids[i].ToString() << ": " << reads[i].status().ToString();
    EXPECT_EQ(reads[i]->data(), *want[i]) << oids[i].ToString();
  }
  EXPECT_TRUE(client().ReadEitherCopyMany({}).empty());
}

// A new metadata object's two copies, written at once: equal, at version 1, and only if absent
// (a second creation is refused and changes neither copy).
TEST_F(OsdTest, CreateBothCopiesWritesTwoEqualCopiesOnlyIfAbsent) {
  const Oid oid{1, 160, 0, ObjectType::kInode, CopyFlag::kOriginal};
  Result<wire::ObjectMeta> created = client().CreateBothCopies(oid, "first");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->version(), 1u);
  Result<wire::ObjectMeta> again = client().CreateBothCopies(oid, "second");
  EXPECT_TRUE(again.status().Is(StatusCode::kVersionMismatch)) << again.status().ToString();
  for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
    Result<wire::ReadResponse> read = client().Read(oid.WithFlag(flag));
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    EXPECT_EQ(read->data(), "first");
    EXPECT_EQ(read->meta().version(), 1u);
  }
}

// When the original refuses the new object (here: it exists already) but the replica took it,
// the replica's copy is taken back: no replica stays without its original.
TEST_F(OsdTest, CreateBothCopiesTakesTheReplicaBackWhenTheOriginalRefuses) {
  const Oid oid{1, 161, 0, ObjectType::kInode, CopyFlag::kOriginal};
  ObjectWrite how;
  how.replace = true;
  ASSERT_TRUE(client().Write(oid, "existing", how).ok());
  Result<wire::ObjectMeta> created = client().CreateBothCopies(oid, "new");
  EXPECT_TRUE(created.status().Is(StatusCode::kVersionMismatch)) << created.status().ToString();
  Result<wire::ReadResponse> original = client().Read(oid);
  ASSERT_TRUE(original.ok()) << original.status().ToString();
  EXPECT_EQ(original->data(), "existing");
  Result<wire::ReadResponse> replica = client().Read(oid.WithFlag(CopyFlag::kReplica));
  EXPECT_TRUE(replica.status().Is(StatusCode::kNotFound)) << replica.status().ToString();
}

// A ranged read carries the range's own checksum (the object's covers only the whole), so the
// client checks every byte it receives; a whole-object read carries none.
TEST_F(OsdTest, RangedReadsCarryTheirRangesChecksum) {
  const std::string data = RandomBytes(100000, 77);
  const Oid oid = Data(150, 2);
  PutBoth(client(), oid, data);
  for (auto [offset, length] : {std::pair<uint64_t, uint64_t>{0, 100},
                                {4096, 16384},
                                {99990, 0},
                                {99990, 100},
                                {100000, 0}}) {
    SCOPED_TRACE(std::to_string(offset) + "+" + std::to_string(length));
    Result<wire::ReadResponse> r = client().Read(oid, offset, length);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const std::string want = data.substr(offset, length == 0 ? std::string::npos : length);
    EXPECT_EQ(r->data(), want);
    ASSERT_TRUE(r->has_range_checksum());
    EXPECT_EQ(r->range_checksum(), ObjectChecksum(want));
    EXPECT_EQ(r->meta().length(), data.size());
    EXPECT_EQ(r->meta().checksum(), ObjectChecksum(data));
  }
  Result<wire::ReadResponse> whole = client().Read(oid, 0, 0);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  EXPECT_EQ(whole->data(), data);
  EXPECT_FALSE(whole->has_range_checksum());
  // A range that is the whole object is checked against the object's checksum.
  Result<wire::ReadResponse> all = client().Read(oid, 0, data.size());
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_FALSE(all->has_range_checksum());
}

TEST_F(OsdTest, MetadataObjectTypesRoundTrip) {
  for (ObjectType type :
       {ObjectType::kInode, ObjectType::kDirent, ObjectType::kSymlink, ObjectType::kSuper}) {
    Oid oid{7, 55, type == ObjectType::kDirent ? 0xdeadbeefull : 0, type, CopyFlag::kOriginal};
    PutBoth(client(), oid, "meta-" + std::string(ObjectTypeName(type)));
    EXPECT_EQ(ReadAll(client(), oid.WithFlag(CopyFlag::kReplica)),
              "meta-" + std::string(ObjectTypeName(type)));
  }
}

TEST_F(OsdTest, RangedWritesKeepSurroundingBytesAndZeroFillGaps) {
  const Oid oid = Data(200, 0);
  ObjectWrite at;
  at.offset = 10;
  ASSERT_TRUE(client().Write(oid, "hello", at).ok());
  std::string expected(10, '\0');
  expected += "hello";
  EXPECT_EQ(ReadAll(client(), oid), expected);

  at.offset = 12;
  ASSERT_TRUE(client().Write(oid, "LL", at).ok());
  expected.replace(12, 2, "LL");
  EXPECT_EQ(ReadAll(client(), oid), expected);

  at.offset = 0;
  ASSERT_TRUE(client().Write(oid, "ab", at).ok());
  expected.replace(0, 2, "ab");
  EXPECT_EQ(ReadAll(client(), oid), expected);

  // A ranged read inside, and one past the end.
  Result<wire::ReadResponse> part = client().Read(oid, 11, 3);
  ASSERT_TRUE(part.ok());
  EXPECT_EQ(part->data(), "eLL");
  Result<wire::ReadResponse> past = client().Read(oid, 1000, 10);
  ASSERT_TRUE(past.ok());
  EXPECT_EQ(past->data(), "");
  EXPECT_EQ(past->meta().length(), expected.size());

  // Replace shrinks the object.
  ObjectWrite replace;
  replace.replace = true;
  ASSERT_TRUE(client().Write(oid, "xy", replace).ok());
  EXPECT_EQ(ReadAll(client(), oid), "xy");
  Result<wire::ObjectMeta> meta = client().Stat(oid);
  ASSERT_TRUE(meta.ok());
  EXPECT_EQ(meta->version(), 4u);

  // A ranged write ending exactly at the object size is fine; one byte more is not.
  const uint32_t object_size = cluster_->map().object_size;
  at.offset = object_size - 2;
  EXPECT_TRUE(client().Write(oid, "zz", at).ok());
  at.offset = object_size - 1;
  Result<wire::ObjectMeta> over = client().Write(oid, "zz", at);
  EXPECT_TRUE(over.status().Is(StatusCode::kInvalidArgument)) << over.status().ToString();
}

TEST_F(OsdTest, ConcurrentRangedWritesToOneObjectLoseNothing) {
  const Oid oid = Data(201, 1);
  constexpr int kThreads = 8, kPieces = 16, kPiece = 512;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int p = t; p < kPieces * kThreads; p += kThreads) {
        ObjectWrite at;
        at.offset = static_cast<uint64_t>(p) * kPiece;
        Result<wire::ObjectMeta> m =
            client().Write(oid, std::string(kPiece, static_cast<char>('A' + p % 26)), at);
        EXPECT_TRUE(m.ok()) << m.status().ToString();
      }
    });
  }
  for (auto& th : threads) th.join();
  const std::string got = ReadAll(client(), oid);
  ASSERT_EQ(got.size(), static_cast<size_t>(kPieces * kThreads * kPiece));
  for (int p = 0; p < kPieces * kThreads; ++p) {
    EXPECT_EQ(got.substr(p * kPiece, kPiece), std::string(kPiece, static_cast<char>('A' + p % 26)))
        << "piece " << p;
  }
  Result<wire::ObjectMeta> meta = client().Stat(oid);
  ASSERT_TRUE(meta.ok());
  EXPECT_EQ(meta->version(), static_cast<uint64_t>(kPieces * kThreads));
}

TEST_F(OsdTest, ConditionalWritesAndDeletesCheckVersions) {
  const Oid oid = Data(202, 0);
  ObjectWrite create;
  create.replace = true;
  create.expected_version = 0;  // must not exist
  ASSERT_TRUE(client().Write(oid, "v1", create).ok());
  Result<wire::ObjectMeta> again = client().Write(oid, "v1'", create);
  EXPECT_TRUE(again.status().Is(StatusCode::kVersionMismatch)) << again.status().ToString();

  ObjectWrite update;
  update.replace = true;
  update.expected_version = 1;
  Result<wire::ObjectMeta> v2 = client().Write(oid, "v2", update);
  ASSERT_TRUE(v2.ok());
  EXPECT_EQ(v2->version(), 2u);
  Result<wire::ObjectMeta> stale = client().Write(oid, "lost", update);
  EXPECT_TRUE(stale.status().Is(StatusCode::kVersionMismatch));
  EXPECT_EQ(ReadAll(client(), oid), "v2");

  EXPECT_TRUE(client().Delete(oid, 1).status().Is(StatusCode::kVersionMismatch));
  Result<bool> deleted = client().Delete(oid, 2);
  ASSERT_TRUE(deleted.ok());
  EXPECT_TRUE(*deleted);
  Result<bool> absent = client().Delete(oid);
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(*absent);
  EXPECT_TRUE(client().Read(oid).status().Is(StatusCode::kNotFound));
  EXPECT_TRUE(client().Stat(oid).status().Is(StatusCode::kNotFound));
}

wire::TransactRequest NewTxn(const ClusterClient& c) {
  wire::TransactRequest t;
  t.set_epoch(c.map().epoch);
  return t;
}

wire::TxnOp* AddOp(wire::TransactRequest* t, wire::TxnOp::Kind kind, const Oid& oid,
                   std::optional<uint64_t> expected, const std::string& data = "") {
  wire::TxnOp* op = t->add_ops();
  op->set_kind(kind);
  *op->mutable_oid() = ToWire(oid);
  if (expected) op->set_expected_version(*expected);
  op->set_data(data);
  return op;
}

TEST_F(OsdTest, TransactionsApplyAllOrNothing) {
  const uint64_t fno = 300;
  const Oid inode{1, fno, 0, ObjectType::kInode, CopyFlag::kReplica};
  const Oid entry{1, fno, 42, ObjectType::kDirent, CopyFlag::kReplica};
  OsdClient* osd = client().Osd(client().placement().ReplicaOsdFor(1, fno));

  wire::TransactRequest create = NewTxn(client());
  AddOp(&create, wire::TxnOp::PUT, inode, 0, "inode-v1");
  AddOp(&create, wire::TxnOp::PUT, entry, 0, "entry-v1");
  Result<wire::TransactResponse> created = osd->Transact(create);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  ASSERT_EQ(created->versions_size(), 2);
  EXPECT_EQ(created->versions(0), 1u);
  EXPECT_EQ(created->versions(1), 1u);

  // One failing check: nothing applies.
  wire::TransactRequest conflicting = NewTxn(client());
  AddOp(&conflicting, wire::TxnOp::PUT, inode, 1, "inode-v2");
  AddOp(&conflicting, wire::TxnOp::CHECK, entry, 7);
  Result<wire::TransactResponse> refused = osd->Transact(conflicting);
  EXPECT_TRUE(refused.status().Is(StatusCode::kVersionMismatch)) << refused.status().ToString();
  EXPECT_EQ(ReadAll(client(), inode), "inode-v1");

  // Check + put + delete together.
  wire::TransactRequest mixed = NewTxn(client());
  AddOp(&mixed, wire::TxnOp::PUT, inode, 1, "inode-v2");
  AddOp(&mixed, wire::TxnOp::DELETE, entry, 1);
  Result<wire::TransactResponse> applied = osd->Transact(mixed);
  ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  EXPECT_EQ(applied->versions(0), 2u);
  EXPECT_EQ(applied->versions(1), 0u);
  EXPECT_EQ(ReadAll(client(), inode), "inode-v2");
  EXPECT_TRUE(client().Read(entry).status().Is(StatusCode::kNotFound));

  // Malformed transactions.
  wire::TransactRequest empty = NewTxn(client());
  EXPECT_TRUE(osd->Transact(empty).status().Is(StatusCode::kInvalidArgument));
  wire::TransactRequest twice = NewTxn(client());
  AddOp(&twice, wire::TxnOp::PUT, inode, std::nullopt, "a");
  AddOp(&twice, wire::TxnOp::PUT, inode, std::nullopt, "b");
  EXPECT_TRUE(osd->Transact(twice).status().Is(StatusCode::kInvalidArgument));
  wire::TransactRequest too_many = NewTxn(client());
  for (int i = 0; i <= kMaxTxnOps; ++i) {
    AddOp(&too_many, wire::TxnOp::PUT,
          Oid{1, fno, static_cast<uint64_t>(i), ObjectType::kDirent, CopyFlag::kReplica},
          std::nullopt, "x");
  }
  EXPECT_TRUE(osd->Transact(too_many).status().Is(StatusCode::kInvalidArgument));
  wire::TransactRequest check_without_version = NewTxn(client());
  AddOp(&check_without_version, wire::TxnOp::CHECK, inode, std::nullopt);
  EXPECT_TRUE(osd->Transact(check_without_version).status().Is(StatusCode::kInvalidArgument));
  // An op on an object this OSD does not hold refuses the whole transaction.
  wire::TransactRequest misplaced = NewTxn(client());
  AddOp(&misplaced, wire::TxnOp::PUT, inode, std::nullopt, "x");
  AddOp(&misplaced, wire::TxnOp::PUT, inode.WithFlag(CopyFlag::kOriginal), std::nullopt, "y");
  EXPECT_TRUE(osd->Transact(misplaced).status().Is(StatusCode::kWrongOsd));
  EXPECT_EQ(ReadAll(client(), inode), "inode-v2");
}

TEST_F(OsdTest, ListPagesThroughOneFilesReplicasInOffsetOrder) {
  const uint64_t fno = 400;
  constexpr int kObjects = 25;
  ObjectWrite how;
  how.replace = true;
  for (int i = kObjects - 1; i >= 0; --i) {
    ASSERT_TRUE(
        client().Write(Data(fno, i, CopyFlag::kReplica), "r" + std::to_string(i), how).ok());
  }
  OsdClient* osd = client().Osd(client().placement().ReplicaOsdFor(1, fno));
  auto listing = [&] {  // the file's data replicas
    wire::ListRequest request;
    request.set_epoch(client().map().epoch);
    request.set_flag(wire::REPLICA);
    request.set_fnso(1);
    request.set_fno(fno);
    request.set_type(wire::DATA);
    return request;
  };
  std::vector<uint64_t> offsets;
  std::string token;
  int pages = 0;
  do {
    wire::ListRequest request = listing();
    request.set_limit(10);
    request.set_page_token(token);
    Result<wire::ListResponse> page = osd->List(request);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    for (const auto& meta : page->objects()) {
      EXPECT_EQ(meta.oid().fno(), fno);
      EXPECT_EQ(meta.length(), ("r" + std::to_string(meta.oid().offset())).size());
      offsets.push_back(meta.oid().offset());
    }
    token = page->next_page_token();
    ++pages;
  } while (!token.empty());
  EXPECT_EQ(pages, 3);
  ASSERT_EQ(offsets.size(), static_cast<size_t>(kObjects));
  for (int i = 0; i < kObjects; ++i) EXPECT_EQ(offsets[i], static_cast<uint64_t>(i));

  // From an offset on, and its pages go on from there too.
  wire::ListRequest from = listing();
  from.set_from_offset(17);
  from.set_limit(5);
  Result<wire::ListResponse> first = osd->List(from);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(first->objects_size(), 5);
  EXPECT_EQ(first->objects(0).oid().offset(), 17u);
  EXPECT_EQ(first->objects(4).oid().offset(), 21u);
  from.set_page_token(first->next_page_token());
  Result<wire::ListResponse> rest = osd->List(from);
  ASSERT_TRUE(rest.ok()) << rest.status().ToString();
  ASSERT_EQ(rest->objects_size(), 3);
  EXPECT_EQ(rest->objects(0).oid().offset(), 22u);
  EXPECT_TRUE(rest->next_page_token().empty());
  from.clear_page_token();
  from.set_from_offset(kObjects);
  Result<wire::ListResponse> past = osd->List(from);
  ASSERT_TRUE(past.ok()) << past.status().ToString();
  EXPECT_EQ(past->objects_size(), 0);
  from.clear_type();
  Result<wire::ListResponse> untyped = osd->List(from);
  EXPECT_TRUE(untyped.status().Is(StatusCode::kInvalidArgument)) << untyped.status().ToString();

  wire::ListRequest bad;
  bad.set_epoch(client().map().epoch);
  bad.set_flag(wire::REPLICA);
  bad.set_fnso(1);
  bad.set_fno(fno);
  bad.set_page_token("not-a-key");
  EXPECT_TRUE(osd->List(bad).status().Is(StatusCode::kInvalidArgument));
}

TEST_F(OsdTest, RefusesObjectsPlacedElsewhere) {
  const Oid oid = Data(500, 9);
  for (CopyFlag f : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
    const Oid copy = oid.WithFlag(f);
    OsdClient* wrong = client().Osd(SomeOtherOsd(client(), copy));
    wire::WriteRequest w;
    w.set_epoch(client().map().epoch);
    *w.mutable_oid() = ToWire(copy);
    w.set_data("misplaced");
    Result<wire::WriteResponse> r = wrong->Write(w);
    EXPECT_TRUE(r.status().Is(StatusCode::kWrongOsd)) << r.status().ToString();
    EXPECT_NE(r.status().message().find("belongs on OSD"), std::string::npos);
    wire::ReadRequest rd;
    rd.set_epoch(client().map().epoch);
    *rd.mutable_oid() = ToWire(copy);
    EXPECT_TRUE(wrong->Read(rd).status().Is(StatusCode::kWrongOsd));
  }
}

TEST_F(OsdTest, RefusesStaleEpochs) {
  const Oid oid = Data(501, 0);
  OsdClient* holder = client().Osd(client().placement().OsdFor(oid));
  for (uint64_t epoch : {uint64_t{0}, client().map().epoch + 1, client().map().epoch - 1}) {
    wire::WriteRequest w;
    w.set_epoch(epoch);
    *w.mutable_oid() = ToWire(oid);
    w.set_data("x");
    Result<wire::WriteResponse> r = holder->Write(w);
    EXPECT_TRUE(r.status().Is(StatusCode::kStaleEpoch)) << epoch << ": " << r.status().ToString();
    wire::ListRequest l;
    l.set_epoch(epoch);
    EXPECT_TRUE(holder->List(l).status().Is(StatusCode::kStaleEpoch));
  }
  EXPECT_TRUE(client().Read(oid).status().Is(StatusCode::kNotFound));
}

TEST_F(OsdTest, MalformedAndOversizedRequestsGetErrorsAndTheDaemonStaysUp) {
  const Oid oid = Data(502, 0);
  OsdClient* holder = client().Osd(client().placement().OsdFor(oid));
  const uint32_t object_size = cluster_->map().object_size;

  wire::WriteRequest bad_type;
  bad_type.set_epoch(client().map().epoch);
  *bad_type.mutable_oid() = ToWire(oid);
  bad_type.mutable_oid()->set_type(static_cast<wire::ObjectType>(99));
  EXPECT_TRUE(holder->Write(bad_type).status().Is(StatusCode::kInvalidArgument));

  wire::WriteRequest bad_flag;
  bad_flag.set_epoch(client().map().epoch);
  *bad_flag.mutable_oid() = ToWire(oid);
  bad_flag.mutable_oid()->set_flag(static_cast<wire::CopyFlag>(7));
  EXPECT_TRUE(holder->Write(bad_flag).status().Is(StatusCode::kInvalidArgument));

  wire::WriteRequest too_big;
  too_big.set_epoch(client().map().epoch);
  *too_big.mutable_oid() = ToWire(oid);
  too_big.set_data(std::string(object_size + 1, 'x'));
  EXPECT_TRUE(holder->Write(too_big).status().Is(StatusCode::kInvalidArgument));

  wire::WriteRequest shifted_replace;
  shifted_replace.set_epoch(client().map().epoch);
  *shifted_replace.mutable_oid() = ToWire(oid);
  shifted_replace.set_replace(true);
  shifted_replace.set_offset(1);
  EXPECT_TRUE(holder->Write(shifted_replace).status().Is(StatusCode::kInvalidArgument));

  // Beyond the server's message limit: refused by the transport, not by a crash.
  wire::WriteRequest huge = too_big;
  huge.set_data(std::string(8u << 20, 'x'));
  Result<wire::WriteResponse> refused = holder->Write(huge);
  EXPECT_FALSE(refused.ok());
  EXPECT_FALSE(refused.status().Is(StatusCode::kUnavailable)) << refused.status().ToString();

  wire::ReadRequest far;
  far.set_epoch(client().map().epoch);
  *far.mutable_oid() = ToWire(oid);
  far.set_offset(uint64_t{1} << 40);
  EXPECT_TRUE(holder->Read(far).status().Is(StatusCode::kInvalidArgument));

  wire::HealthRequest health;
  EXPECT_TRUE(holder->Health(health).ok());
  EXPECT_TRUE(cluster_->Running(holder->osd_id()));
  PutBoth(client(), oid, "still serving");
  EXPECT_EQ(ReadAll(client(), oid), "still serving");
}

// The wire contract (proto/orthofs.proto) seen by a raw gRPC stub, as any client would: every
// RPC that names an object refuses a malformed OID, an oversized payload and a wrong epoch with
// its gRPC code and the OrthoFS code in the details, and the OSD keeps serving.
TEST_F(OsdTest, BadRequestsGetTheirGrpcCodesOnEveryRpc) {
  const Oid oid = Data(504, 0);
  OsdClient* holder = client().Osd(client().placement().OsdFor(oid));
  const RpcOptions rpc = cluster_->Rpc("client");
  grpc::ChannelArguments args = OrthoChannelArguments();
  SetExpectedServerName(rpc.tls.get(), OsdCertificateName(holder->osd_id()), &args);
  auto channel =
      grpc::CreateCustomChannel(holder->address(), ChannelCredentialsFor(rpc.tls.get()), args);
  std::unique_ptr<wire::Osd::Stub> stub = wire::Osd::NewStub(channel);
  const uint64_t epoch = client().map().epoch;
  const uint32_t object_size = cluster_->map().object_size;
  // Calls one RPC with `epoch` and `wire_oid` and returns its status.
  auto call = [&](auto method, auto request, auto response, uint64_t e, const wire::Oid& o) {
    request.set_epoch(e);
    *request.mutable_oid() = o;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return ((*stub).*method)(&context, request, &response);
  };
  auto expect = [](const grpc::Status& st, grpc::StatusCode code, const std::string& details,
                   const std::string& what) {
    EXPECT_EQ(st.error_code(), code) << what << ": " << st.error_message();
    EXPECT_EQ(st.error_details(), details) << what;
  };
  wire::Oid bad_type = ToWire(oid);
  bad_type.set_type(static_cast<wire::ObjectType>(99));
  wire::Oid bad_flag = ToWire(oid);
  bad_flag.set_flag(static_cast<wire::CopyFlag>(7));
  for (const auto& [malformed, what] : {std::pair{bad_type, "type 99"}, {bad_flag, "flag 7"}}) {
    for (uint64_t e : {epoch, epoch + 1}) {
      // Malformed with the right epoch; with a wrong one the epoch is refused first.
      const grpc::StatusCode code =
          e == epoch ? grpc::StatusCode::INVALID_ARGUMENT : grpc::StatusCode::FAILED_PRECONDITION;
      const std::string details = e == epoch ? "INVALID_ARGUMENT" : "STALE_EPOCH";
      expect(call(&wire::Osd::Stub::Read, wire::ReadRequest(), wire::ReadResponse(), e, malformed),
             code, details, std::string("read ") + what);
      expect(call(&wire::Osd::Stub::Stat, wire::StatRequest(), wire::StatResponse(), e, malformed),
             code, details, std::string("stat ") + what);
      expect(call(&wire::Osd::Stub::Delete, wire::DeleteRequest(), wire::DeleteResponse(), e,
                  malformed),
             code, details, std::string("delete ") + what);
      expect(
          call(&wire::Osd::Stub::Write, wire::WriteRequest(), wire::WriteResponse(), e, malformed),
          code, details, std::string("write ") + what);
    }
  }
  for (uint64_t stale : {uint64_t{0}, epoch - 1, epoch + 1}) {
    expect(
        call(&wire::Osd::Stub::Read, wire::ReadRequest(), wire::ReadResponse(), stale, ToWire(oid)),
        grpc::StatusCode::FAILED_PRECONDITION, "STALE_EPOCH", "stale read");
    expect(
        call(&wire::Osd::Stub::Stat, wire::StatRequest(), wire::StatResponse(), stale, ToWire(oid)),
        grpc::StatusCode::FAILED_PRECONDITION, "STALE_EPOCH", "stale stat");
    expect(call(&wire::Osd::Stub::Delete, wire::DeleteRequest(), wire::DeleteResponse(), stale,
                ToWire(oid)),
           grpc::StatusCode::FAILED_PRECONDITION, "STALE_EPOCH", "stale delete");
  }

  // Oversized: a write past the object size, a transaction op past it, and a message past the
  // OSD's receive limit (refused by gRPC itself: RESOURCE_EXHAUSTED, no OrthoFS details).
  wire::WriteRequest big;
  big.set_data(std::string(object_size + 1, 'x'));
  expect(call(&wire::Osd::Stub::Write, big, wire::WriteResponse(), epoch, ToWire(oid)),
         grpc::StatusCode::INVALID_ARGUMENT, "INVALID_ARGUMENT", "oversized write");
  big.set_data(std::string(8u << 20, 'x'));
  expect(call(&wire::Osd::Stub::Write, big, wire::WriteResponse(), epoch, ToWire(oid)),
         grpc::StatusCode::RESOURCE_EXHAUSTED, "", "write beyond the message limit");
  wire::TransactRequest txn;
  txn.set_epoch(epoch);
  wire::TxnOp* put = txn.add_ops();
  put->set_kind(wire::TxnOp::PUT);
  *put->mutable_oid() = ToWire(oid);
  put->set_data(std::string(object_size + 1, 'x'));
  {
    grpc::ClientContext context;
    wire::TransactResponse response;
    expect(stub->Transact(&context, txn, &response), grpc::StatusCode::INVALID_ARGUMENT,
           "INVALID_ARGUMENT", "oversized transaction op");
  }
  txn.set_epoch(epoch + 1);
  put->set_data("fits");
  {
    grpc::ClientContext context;
    wire::TransactResponse response;
    expect(stub->Transact(&context, txn, &response), grpc::StatusCode::FAILED_PRECONDITION,
           "STALE_EPOCH", "stale transaction");
  }

  // Still serving, on the same connection.
  wire::WriteRequest good;
  good.set_data("after the bad ones");
  const grpc::Status wrote =
      call(&wire::Osd::Stub::Write, good, wire::WriteResponse(), epoch, ToWire(oid));
  EXPECT_TRUE(wrote.ok()) << wrote.error_message();
  EXPECT_TRUE(cluster_->Running(holder->osd_id()));
  EXPECT_EQ(ReadAll(client(), oid), "after the bad ones");
}

TEST_F(OsdTest, DeletedMetadataKeepsItsVersionAsATombstone) {
  const Oid inode{1, 700, 0, ObjectType::kInode, CopyFlag::kOriginal};
  ObjectWrite create;
  create.replace = true;
  create.expected_version = 0;
  ASSERT_TRUE(client().Write(inode, "v1", create).ok());
  Result<wire::DeleteResponse> gone = client().DeleteCopy(inode, 1, std::nullopt);
  ASSERT_TRUE(gone.ok()) << gone.status().ToString();
  EXPECT_TRUE(gone->existed());
  EXPECT_EQ(gone->version(), 2u);
  EXPECT_TRUE(client().Read(inode).status().Is(StatusCode::kNotFound));
  EXPECT_TRUE(client().Stat(inode).status().Is(StatusCode::kNotFound));
  // "Must not exist" still holds for a deleted object, and the version continues.
  Result<wire::ObjectMeta> again = client().Write(inode, "v3", create);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->version(), 3u);
  // Listings never show tombstones.
  ASSERT_TRUE(client().Delete(inode).ok());
  OsdClient* osd = client().Osd(client().placement().OsdFor(inode));
  wire::ListRequest l;
  l.set_epoch(client().map().epoch);
  l.set_flag(wire::ORIGINAL);
  l.set_fnso(1);
  l.set_fno(700);
  Result<wire::ListResponse> page = osd->List(l);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->objects_size(), 0);
}

// min_version (a client's clock): the next version is at least the floor, and a degraded
// delete of an absent copy leaves a tombstone at it, so that its replay carries that version.
TEST_F(OsdTest, AVersionFloorRaisesTheNextVersion) {
  const Oid inode{1, 703, 0, ObjectType::kInode, CopyFlag::kOriginal};
  auto write = [&](uint64_t floor) {
    return WriteVersion(client(), inode, [&](wire::WriteRequest* w) {
      w->set_replace(true);
      w->set_data("bytes");
      w->set_min_version(floor);
    });
  };
  EXPECT_EQ(write(1000), 1000u);
  EXPECT_EQ(write(500), 1001u);  // a floor behind the stored version: one up
  EXPECT_EQ(write(0), 1002u);
  // A floor far ahead of the OSD's clock (a wrong clock, a crafted request) is cut to a day
  // ahead of it, so versions never reach the top, where they would stop growing.
  const uint64_t cut = write(std::numeric_limits<uint64_t>::max());
  EXPECT_LE(cut, VersionFloorAt(std::chrono::system_clock::now() + kMaxVersionFloorLead));
  EXPECT_GT(cut, VersionFloorAt(std::chrono::system_clock::now()));
  EXPECT_EQ(write(0), cut + 1);

  const Oid absent{1, 704, 3, ObjectType::kData, CopyFlag::kReplica};
  OsdClient* holder = client().Osd(client().placement().OsdFor(absent));
  wire::DeleteRequest d;
  d.set_epoch(client().map().epoch);
  *d.mutable_oid() = ToWire(absent);
  d.set_record_repair(true);
  d.set_min_version(5000);
  Result<wire::DeleteResponse> gone = holder->Delete(d);
  ASSERT_TRUE(gone.ok()) << gone.status().ToString();
  EXPECT_FALSE(gone->existed());
  EXPECT_TRUE(gone->tombstone());
  EXPECT_EQ(gone->version(), 5000u);
  // An older copy write arriving later stays out.
  wire::WriteRequest older;
  older.set_epoch(client().map().epoch);
  *older.mutable_oid() = ToWire(absent);
  older.set_replace(true);
  older.set_data("older");
  older.set_set_version(4999);
  ASSERT_TRUE(holder->Write(older).ok());
  EXPECT_TRUE(client().Read(absent).status().Is(StatusCode::kNotFound));
  // Not so for metadata (no floor): a tombstone at version 1 would tie with the other copy's
  // object at 1 (the replica took the create alone), and neither replay would change a thing.
  const Oid absent_inode{1, 706, 0, ObjectType::kInode, CopyFlag::kReplica};
  *d.mutable_oid() = ToWire(absent_inode);
  d.clear_min_version();
  Result<wire::DeleteResponse> not_there =
      client().Osd(client().placement().OsdFor(absent_inode))->Delete(d);
  ASSERT_TRUE(not_there.ok()) << not_there.status().ToString();
  EXPECT_FALSE(not_there->tombstone());
  EXPECT_EQ(not_there->version(), 0u);

  // A repair record asked for after the write (its other copy's write failed) moves a copy
  // that is still at the write's version up to the floor, bytes unchanged; one asked for at a
  // version that is no longer stored changes nothing.
  const Oid data{1, 705, 0, ObjectType::kData, CopyFlag::kOriginal};
  ASSERT_TRUE(client().Write(data, "kept", ObjectWrite{.replace = true}).ok());
  auto record = [&](uint64_t at, uint64_t floor) {
    return WriteVersion(client(), data, [&](wire::WriteRequest* w) {
      w->set_set_version(at);
      w->set_record_repair(true);
      w->set_min_version(floor);
    });
  };
  EXPECT_EQ(record(1, 7000), 7000u);
  EXPECT_EQ(record(1, 8000), 7000u);
  EXPECT_EQ(ReadAll(client(), data), "kept");
  // Asked for once the copy is gone (deleted after that write: no tombstone for DATA), the
  // record is kept but the object stays gone: a ranged write of no bytes would bring it back
  // empty.
  Result<wire::DeleteResponse> deleted = client().DeleteCopy(data, std::nullopt, std::nullopt);
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  ASSERT_FALSE(deleted->tombstone());
  EXPECT_EQ(record(7000, 9000), 0u);
  EXPECT_TRUE(client().Read(data).status().Is(StatusCode::kNotFound));
}

// A write of both copies that finds them out of step (they answer different versions: a
// repair's push crossed the write, whose record may be gone already) leaves a record on the
// newer copy, and the repair makes the two equal.
TEST_F(OsdTest, AWriteThatFindsTheCopiesOutOfStepRecordsARepair) {
  const Oid original{1, 707, 0, ObjectType::kData, CopyFlag::kOriginal};
  const Oid replica = original.OtherCopy();
  const uint32_t size = cluster_->map().object_size;
  ASSERT_TRUE(client().Write(replica, std::string(size, 'b'), ObjectWrite{.replace = true}).ok());
  ASSERT_TRUE(client().Write(original, std::string(size, 'a'), ObjectWrite{.replace = true}).ok());
  ASSERT_TRUE(client().Write(original, std::string(size, 'a'), ObjectWrite{.replace = true}).ok());
  ASSERT_TRUE(client().WriteBothCopies(original, "cccc", ObjectWrite{.offset = 0}).ok());
  CommandResult repaired = cluster_->Repair();
  ASSERT_EQ(repaired.exit_code, 0) << repaired.out << repaired.err;
  Result<wire::ReadResponse> a = client().Read(original);
  Result<wire::ReadResponse> b = client().Read(replica);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->meta().version(), b->meta().version());
  EXPECT_TRUE(a->data() == b->data()) << "replica starts " << b->data().substr(0, 8);
  EXPECT_EQ(a->data().substr(0, 8), "ccccaaaa");
}

// A record kept for a copy that a delete of both copies removed since (asked for late, after
// the delete) deletes nothing newer on the other copy: a write made there alone afterwards
// (its original's OSD taken for down a moment) survives the repair, on both copies. (The
// record's push used to be a delete of any version: the write was gone from both.)
TEST_F(OsdTest, ARecordOfADeletedCopyDeletesNoNewerWriteOfTheOther) {
  // `orthofs repair` asks the OSDs in id order: the original's record is pushed first.
  Oid original{1, 708, 0, ObjectType::kData, CopyFlag::kOriginal};
  const Placement& placement = client().placement();
  while (placement.OsdFor(original) > placement.OsdFor(original.OtherCopy())) ++original.fno;
  const Oid replica = original.OtherCopy();
  const uint32_t size = cluster_->map().object_size;
  ASSERT_TRUE(client().WriteBothCopies(original, std::string(size, 'x'), {.replace = true}).ok());
  Result<wire::ObjectMeta> written = client().Stat(original);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  ASSERT_TRUE(client().DeleteBothCopies(original).ok());
  // The write's record, asked for after the delete: a record of an absent copy.
  wire::WriteRequest late;
  late.set_epoch(client().map().epoch);
  *late.mutable_oid() = ToWire(original);
  late.set_set_version(written->version());
  late.set_record_repair(true);
  ASSERT_TRUE(client().Osd(client().placement().OsdFor(original))->Write(late).ok());
  ASSERT_TRUE(client()
                  .Write(replica, std::string(size, 'z'), {.replace = true, .record_repair = true})
                  .ok());
  CommandResult repaired = cluster_->Repair();
  ASSERT_EQ(repaired.exit_code, 0) << repaired.out << repaired.err;
  for (const Oid& copy : {original, replica}) {
    Result<wire::ReadResponse> read = client().Read(copy);
    ASSERT_TRUE(read.ok()) << copy.ToString() << ": " << read.status().ToString();
    EXPECT_TRUE(read->data() == std::string(size, 'z')) << copy.ToString();
  }
}

// A delete of a metadata object that reached only its replica's OSD, where that copy was
// absent (its create's replica write was lost), records at version 0 with no tombstone: the
// repair deletes the original, as the delete meant. (A review found the push skipped as
// "nothing newer to delete", and the deleted inode came back.)
TEST_F(OsdTest, AMetadataDeleteRecordedOnAnAbsentCopyDeletesTheOther) {
  const Oid original{1, 709, 0, ObjectType::kInode, CopyFlag::kOriginal};
  const Oid replica = original.OtherCopy();
  ASSERT_TRUE(client().Write(original, "inode", {.replace = true}).ok());
  wire::DeleteRequest d;
  d.set_epoch(client().map().epoch);
  *d.mutable_oid() = ToWire(replica);
  d.set_record_repair(true);
  Result<wire::DeleteResponse> recorded =
      client().Osd(client().placement().OsdFor(replica))->Delete(d);
  ASSERT_TRUE(recorded.ok()) << recorded.status().ToString();
  CommandResult repaired = cluster_->Repair();
  ASSERT_EQ(repaired.exit_code, 0) << repaired.out << repaired.err;
  for (const Oid& copy : {original, replica}) {
    EXPECT_TRUE(client().Read(copy).status().Is(StatusCode::kNotFound)) << copy.ToString();
  }
}

TEST_F(OsdTest, LateCopyUpdatesOlderThanTheStoredVersionChangeNothing) {
  const Oid replica{1, 701, 5, ObjectType::kDirent, CopyFlag::kReplica};
  auto copy_write = [&](uint64_t version, const std::string& data) {
    return WriteVersion(client(), replica, [&](wire::WriteRequest* w) {
      w->set_replace(true);
      w->set_data(data);
      w->set_set_version(version);
    });
  };
  EXPECT_EQ(copy_write(4, "four"), 4u);
  EXPECT_EQ(copy_write(3, "three"), 4u);  // arrived late: dropped
  EXPECT_EQ(ReadAll(client(), replica), "four");
  // A copy delete at version 6, then a late copy write of version 5: the object stays deleted.
  Result<wire::DeleteResponse> gone = client().DeleteCopy(replica, std::nullopt, 6);
  ASSERT_TRUE(gone.ok());
  EXPECT_EQ(gone->version(), 6u);
  copy_write(5, "five");
  EXPECT_TRUE(client().Read(replica).status().Is(StatusCode::kNotFound));
  // A copy delete of a copy that never arrived still records the version.
  const Oid never{1, 702, 5, ObjectType::kDirent, CopyFlag::kReplica};
  ASSERT_TRUE(client().DeleteCopy(never, std::nullopt, 9).ok());
  wire::WriteRequest late;
  late.set_epoch(client().map().epoch);
  *late.mutable_oid() = ToWire(never);
  late.set_replace(true);
  late.set_data("ghost");
  late.set_set_version(8);
  ASSERT_TRUE(client().Osd(client().placement().OsdFor(never))->Write(late).ok());
  EXPECT_TRUE(client().Read(never).status().Is(StatusCode::kNotFound));
}

// A sync request answers only once what the copy holds is durable, even when it changes
// nothing (a copy update or delete not newer than what is kept, which may itself have come
// without sync): a repair's pusher then drops its record.
TEST_F(OsdTest, ASyncRequestThatChangesNothingStillSyncs) {
  const Oid replica{1, 703, 5, ObjectType::kDirent, CopyFlag::kReplica};
  OsdClient* osd = client().Osd(client().placement().OsdFor(replica));
  auto wal_syncs = [&] {
    Result<wire::StatsResponse> s = osd->Stats(wire::StatsRequest());
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? s->counters().at("store_wal_syncs") : 0;
  };
  auto copy_write = [&](uint64_t version, bool sync) {
    wire::WriteRequest w;
    w.set_epoch(client().map().epoch);
    *w.mutable_oid() = ToWire(replica);
    w.set_replace(true);
    w.set_data("v" + std::to_string(version));
    w.set_set_version(version);
    w.set_sync(sync);
    Result<wire::WriteResponse> r = osd->Write(w);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
  };
  copy_write(4, false);
  uint64_t before = wal_syncs();
  copy_write(4, true);  // the same version again: kept as it is
  EXPECT_GT(wal_syncs(), before) << "a sync copy write that changed nothing synced nothing";

  wire::DeleteRequest late_delete;
  late_delete.set_epoch(client().map().epoch);
  *late_delete.mutable_oid() = ToWire(replica);
  late_delete.set_set_version(3);  // older than what is kept: changes nothing
  late_delete.set_sync(true);
  before = wal_syncs();
  ASSERT_TRUE(osd->Delete(late_delete).ok());
  EXPECT_GT(wal_syncs(), before) << "a sync delete that changed nothing synced nothing";
  EXPECT_EQ(ReadAll(client(), replica), "v4");
}

TEST_F(OsdTest, DeletedDataLeavesNoTombstone) {
  const Oid data = Data(703, 0);
  ObjectWrite how;
  how.replace = true;
  ASSERT_TRUE(client().Write(data, "abc", how).ok());
  ASSERT_TRUE(client().Delete(data).ok());
  Result<wire::ObjectMeta> again = client().Write(data, "abc", how);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->version(), 1u);
}

TEST_F(OsdTest, StatsCountObjectsAndBytes) {
  // A private file so other tests' objects do not interfere: count on its replica OSD.
  const uint64_t fno = 600;
  OsdClient* osd = client().Osd(client().placement().ReplicaOsdFor(1, fno));
  auto stats = [&] {
    wire::StatsRequest r;
    Result<wire::StatsResponse> s = osd->Stats(r);
    EXPECT_TRUE(s.ok());
    return *s;
  };
  const wire::StatsResponse before = stats();
  ObjectWrite how;
  how.replace = true;
  ASSERT_TRUE(client().Write(Data(fno, 0, CopyFlag::kReplica), std::string(1000, 'a'), how).ok());
  ASSERT_TRUE(client().Write(Data(fno, 1, CopyFlag::kReplica), std::string(500, 'b'), how).ok());
  ASSERT_TRUE(client().Write(Data(fno, 1, CopyFlag::kReplica), std::string(200, 'c'), how).ok());
  wire::StatsResponse after = stats();
  EXPECT_EQ(after.objects(), before.objects() + 2);
  EXPECT_EQ(after.bytes(), before.bytes() + 1200);
  ASSERT_TRUE(client().Delete(Data(fno, 0, CopyFlag::kReplica)).ok());
  after = stats();
  EXPECT_EQ(after.objects(), before.objects() + 1);
  EXPECT_EQ(after.bytes(), before.bytes() + 200);
  EXPECT_GT(after.capacity_bytes(), 0u);
  EXPECT_GT(after.counters().at("write_calls"), 0u);
  EXPECT_EQ(after.osd_id(), osd->osd_id());
  EXPECT_EQ(after.epoch(), client().map().epoch);
}

// A write of a whole object, as one of a WriteMany call.
wire::WriteRequest ReplacingWrite(uint64_t epoch, const Oid& oid, const std::string& data) {
  wire::WriteRequest w;
  w.set_epoch(epoch);
  *w.mutable_oid() = ToWire(oid);
  w.set_data(data);
  w.set_replace(true);
  return w;
}

using WriteManyDone = std::function<void(Result<wire::WriteManyResponse>)>;
using ReadManyDone = std::function<void(Result<wire::ReadManyResponse>)>;

// Starts an asynchronous call with `start` and waits for its answer.
template <typename Response>
Result<Response> Await(const std::function<void(std::function<void(Result<Response>)>)>& start) {
  std::promise<Result<Response>> answered;
  start([&](Result<Response> r) { answered.set_value(std::move(r)); });
  return answered.get_future().get();
}
Result<wire::WriteManyResponse> AwaitWriteMany(const std::function<void(WriteManyDone)>& start) {
  return Await<wire::WriteManyResponse>(start);
}
Result<wire::ReadManyResponse> AwaitReadMany(OsdClient* osd,
                                             std::shared_ptr<const wire::ReadManyRequest> many) {
  return Await<wire::ReadManyResponse>(
      [&](ReadManyDone done) { osd->ReadManyAsync(many, std::move(done)); });
}

// Every write of a WriteMany call is applied and answered on its own: good ones land, the
// others get the error their own Write would get, in order.
TEST_F(OsdTest, WriteManyAnswersEachWriteOnItsOwn) {
  // Files 2000 and up: no other test of the suite uses them.
  const uint32_t osd_id = client().placement().OsdFor(Data(2000, 0));
  uint64_t fno = 2000;
  const Oid fresh = DataOn(client().placement(), osd_id, &fno);
  const Oid conditional = DataOn(client().placement(), osd_id, &fno);
  const Oid stale = DataOn(client().placement(), osd_id, &fno);
  const Oid too_far = DataOn(client().placement(), osd_id, &fno);
  auto write = [&](const Oid& oid, const std::string& data) {
    return ReplacingWrite(client().map().epoch, oid, data);
  };
  auto many = std::make_shared<wire::WriteManyRequest>();
  *many->add_writes() = write(fresh, "fresh bytes");
  wire::WriteRequest w = write(conditional, "must not land");
  w.set_expected_version(5);
  *many->add_writes() = w;
  w = write(stale, "stale epoch");
  w.set_epoch(client().map().epoch + 1);
  *many->add_writes() = w;
  w = write(too_far, "beyond the object");
  w.set_replace(false);
  w.set_offset(client().map().object_size);
  *many->add_writes() = w;
  Result<wire::WriteManyResponse> r = AwaitWriteMany(
      [&](WriteManyDone done) { client().Osd(osd_id)->WriteManyAsync(many, std::move(done)); });
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->results_size(), 4);
  EXPECT_EQ(r->results(0).error_code(), "");
  EXPECT_EQ(r->results(0).response().meta().version(), 1u);
  EXPECT_EQ(r->results(1).error_code(), StatusCodeName(StatusCode::kVersionMismatch));
  EXPECT_EQ(r->results(2).error_code(), StatusCodeName(StatusCode::kStaleEpoch));
  EXPECT_EQ(r->results(3).error_code(), StatusCodeName(StatusCode::kInvalidArgument));
  EXPECT_NE(r->results(3).error_message().find("exceeds the object size"), std::string::npos);
  EXPECT_EQ(ReadAll(client(), fresh), "fresh bytes");
  for (const Oid& absent : {conditional, stale, too_far}) {
    EXPECT_TRUE(client().Read(absent).status().Is(StatusCode::kNotFound)) << absent.ToString();
  }
}

// A WriteMany's writes are committed together (one data-log append, one index write): each
// keeps its own version and bytes, a ranged write among them merges into its object, and a
// request that names one object twice applies the two writes in order.
TEST_F(OsdTest, WriteManyCommitsItsWritesTogetherAndAnObjectTwiceInOrder) {
  const uint32_t osd_id = client().placement().OsdFor(Data(2100, 0));
  uint64_t fno = 2100;
  const Oid whole = DataOn(client().placement(), osd_id, &fno);
  const Oid ranged = DataOn(client().placement(), osd_id, &fno);
  const Oid other = DataOn(client().placement(), osd_id, &fno);
  const uint64_t epoch = client().map().epoch;
  auto ranged_write = [&](uint64_t offset, const std::string& data) {
    wire::WriteRequest w = ReplacingWrite(epoch, ranged, data);
    w.set_replace(false);
    w.set_offset(offset);
    return w;
  };
  auto send = [&](const std::vector<wire::WriteRequest>& writes) {
    auto many = std::make_shared<wire::WriteManyRequest>();
    for (const wire::WriteRequest& w : writes) *many->add_writes() = w;
    return AwaitWriteMany(
        [&](WriteManyDone done) { client().Osd(osd_id)->WriteManyAsync(many, std::move(done)); });
  };
  const std::string big(client().map().object_size, 'b');  // into the data log
  Result<wire::WriteManyResponse> r =
      send({ReplacingWrite(epoch, whole, "first"), ranged_write(4, "xyz"),
            ReplacingWrite(epoch, other, big), ReplacingWrite(epoch, whole, "second")});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->results_size(), 4);
  const std::vector<uint64_t> versions = {1, 1, 1, 2};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(r->results(i).error_code(), "") << i << " " << r->results(i).error_message();
    EXPECT_EQ(r->results(i).response().meta().version(), versions[i]) << i;
  }
  EXPECT_EQ(ReadAll(client(), whole), "second");
  EXPECT_EQ(ReadAll(client(), ranged), std::string(4, '\0') + "xyz");
  EXPECT_EQ(ReadAll(client(), other), big);

  // No object twice: one commit for all, each write at its own next version.
  r = send({ReplacingWrite(epoch, whole, "third"), ranged_write(1, "QQ"),
            ReplacingWrite(epoch, other, std::string(1000, 'o'))});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->results_size(), 3);
  EXPECT_EQ(r->results(0).response().meta().version(), 3u);
  EXPECT_EQ(r->results(1).response().meta().version(), 2u);
  EXPECT_EQ(r->results(2).response().meta().version(), 2u);
  EXPECT_EQ(r->results(2).response().meta().length(), 1000u);
  EXPECT_EQ(ReadAll(client(), whole), "third");
  EXPECT_EQ(ReadAll(client(), ranged), std::string(1, '\0') + "QQ" + std::string(1, '\0') + "xyz");
  EXPECT_EQ(ReadAll(client(), other), std::string(1000, 'o'));
}

// A replacing write carries the client's checksum of its bytes, and the OSD stores that one:
// bytes that do not match it (damaged on the way) are found at the next read.
TEST_F(OsdTest, AReplacingWriteKeepsTheClientsChecksum) {
  const uint32_t osd_id = client().placement().OsdFor(Data(2150, 0));
  uint64_t fno = 2150;
  const Oid intact = DataOn(client().placement(), osd_id, &fno);
  const Oid damaged = DataOn(client().placement(), osd_id, &fno);
  const Oid ranged = DataOn(client().placement(), osd_id, &fno);
  const std::string big(client().map().object_size, 'k');
  wire::WriteRequest w = ReplacingWrite(client().map().epoch, intact, big);
  w.set_checksum(ObjectChecksum(big));
  Result<wire::WriteResponse> r = client().Osd(osd_id)->Write(w);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->meta().checksum(), ObjectChecksum(big));
  EXPECT_EQ(ReadAll(client(), intact), big);

  // As if a byte had changed between the client and the OSD.
  std::string changed = big;
  changed[1000] = 'x';
  w = ReplacingWrite(client().map().epoch, damaged, changed);
  w.set_checksum(ObjectChecksum(big));
  r = client().Osd(osd_id)->Write(w);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->meta().checksum(), ObjectChecksum(big));
  Result<wire::ReadResponse> read = client().Read(damaged);
  ASSERT_FALSE(read.ok()) << "damaged bytes were read as intact";
  EXPECT_TRUE(read.status().Is(StatusCode::kCorruption)) << read.status().ToString();

  w = ReplacingWrite(client().map().epoch, ranged, "abc");
  w.set_replace(false);
  w.set_checksum(ObjectChecksum("abc"));
  r = client().Osd(osd_id)->Write(w);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().Is(StatusCode::kInvalidArgument)) << r.status().ToString();
}

// The OSD's WriteMany handler parses the raw request itself (StreamedWriteMany, so the writes'
// bytes are stored from where they arrived): bytes that are no WriteManyRequest get its own
// answer, not gRPC's generic parse failure, and the OSD goes on serving.
TEST_F(OsdTest, MalformedWriteManyBytesAreRefusedByTheStreamedHandler) {
  const uint32_t osd_id = client().placement().OsdFor(Data(2050, 0));
  const std::string garbage = "\x0a\xff\xff\xff\xff\x0f not a request";
  grpc::Slice slice(garbage.data(), garbage.size());
  auto encoded = std::make_shared<const grpc::ByteBuffer>(&slice, 1);
  Result<wire::WriteManyResponse> r = AwaitWriteMany([&](WriteManyDone done) {
    client().Osd(osd_id)->WriteManyEncodedAsync(encoded, std::move(done));
  });
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().Is(StatusCode::kInvalidArgument)) << r.status().ToString();
  EXPECT_NE(r.status().message().find("malformed WriteMany request"), std::string::npos)
      << r.status().ToString();

  uint64_t fno = 2050;
  const Oid oid = DataOn(client().placement(), osd_id, &fno);
  auto many = std::make_shared<wire::WriteManyRequest>();
  *many->add_writes() = ReplacingWrite(client().map().epoch, oid, "after the garbage");
  Result<wire::WriteManyResponse> ok = AwaitWriteMany(
      [&](WriteManyDone done) { client().Osd(osd_id)->WriteManyAsync(many, std::move(done)); });
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  ASSERT_EQ(ok->results_size(), 1);
  EXPECT_EQ(ok->results(0).error_code(), "");
  EXPECT_EQ(ReadAll(client(), oid), "after the garbage");
}

// A write-back of many objects: both copies of each land, with one WriteMany call per OSD
// (the replicas of one file all go to its replica OSD). With an owner for the bytes (the
// mount's write-back), both copies' requests refer to the caller's buffer, which the calls keep
// alive after the caller let go, and release once sent.
TEST_F(OsdTest, SendWritesWritesBothCopiesWithOneCallPerOsd) {
  auto write_many_calls = [&] {
    uint64_t sum = 0;
    for (const auto& osd : client().map().osds) {
      Result<wire::StatsResponse> s = client().Osd(osd.id)->Stats(wire::StatsRequest());
      EXPECT_TRUE(s.ok());
      if (s.ok()) sum += s->counters().at("write_many_calls");
    }
    return sum;
  };
  for (bool shared : {false, true}) {
    SCOPED_TRACE(shared ? "bytes shared with their owner" : "bytes copied");
    const uint64_t before = write_many_calls();
    const uint64_t fno = shared ? 2101 : 2100;
    auto content = [&](uint64_t index) {
      return "object " + std::to_string(index) + std::string(index * 1000, 'x');
    };
    CopyWriteBatch batch;
    PendingCalls pending;
    std::map<uint32_t, int> copies_per_osd;
    std::vector<std::weak_ptr<std::string>> owners;
    for (uint64_t index = 0; index < 12; ++index) {
      const Oid original = Data(fno, index * client().map().object_size);
      for (CopyFlag f : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
        ++copies_per_osd[client().placement().OsdFor(original.WithFlag(f))];
      }
      ObjectWrite how;
      how.replace = true;
      pending.Add();
      auto bytes = std::make_shared<std::string>(content(index));
      owners.push_back(bytes);
      client().WriteBothCopiesAsync(
          original, *bytes, how, [&pending](Status st) { pending.Done(st); }, &batch,
          shared ? bytes : nullptr);
    }  // the caller's references end here
    client().SendWrites(std::move(batch));
    ASSERT_TRUE(pending.Wait().ok());
    for (uint64_t index = 0; index < 12; ++index) {
      const Oid original = Data(fno, index * client().map().object_size);
      for (CopyFlag f : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
        EXPECT_EQ(ReadAll(client(), original.WithFlag(f)), content(index));
      }
    }
    int osds_with_several = 0;
    for (const auto& [osd, copies] : copies_per_osd) osds_with_several += copies > 1 ? 1 : 0;
    EXPECT_EQ(write_many_calls() - before, static_cast<uint64_t>(osds_with_several));
    // The transport may let go of the last slices a moment after the answers.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    auto released = [&] {
      return std::all_of(owners.begin(), owners.end(), [](const auto& w) { return w.expired(); });
    };
    while (!released() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_TRUE(released()) << "every owner is released once its bytes are sent";
  }
}

uint64_t CounterSum(ClusterClient& c, const std::string& counter) {
  uint64_t sum = 0;
  for (const auto& osd : c.map().osds) {
    Result<wire::StatsResponse> s = c.Osd(osd.id)->Stats(wire::StatsRequest());
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    if (!s.ok()) continue;
    auto it = s->counters().find(counter);
    EXPECT_NE(it, s->counters().end()) << "no counter " << counter;
    if (it != s->counters().end()) sum += it->second;
  }
  return sum;
}

// Every read of a ReadMany call is served and answered on its own, in order: present objects
// with their bytes (a range with its checksum), the others with the error their own Read gets.
// Too many reads refuse the whole call.
TEST_F(OsdTest, ReadManyAnswersEachReadOnItsOwn) {
  const uint32_t osd_id = client().placement().OsdFor(Data(2200, 0));
  uint64_t fno = 2200;
  const Oid present = DataOn(client().placement(), osd_id, &fno);
  const Oid absent = DataOn(client().placement(), osd_id, &fno);
  const Oid ranged = DataOn(client().placement(), osd_id, &fno);
  const Oid elsewhere = present.WithFlag(CopyFlag::kReplica);
  ASSERT_NE(client().placement().OsdFor(elsewhere), osd_id)
      << "a replica is never with its original";
  const std::string bytes = RandomBytes(client().map().object_size, 2200);
  PutBoth(client(), present, bytes);
  PutBoth(client(), ranged, bytes);
  auto read = [&](const Oid& oid) {
    wire::ReadRequest r;
    r.set_epoch(client().map().epoch);
    *r.mutable_oid() = ToWire(oid);
    return r;
  };
  auto many = std::make_shared<wire::ReadManyRequest>();
  *many->add_reads() = read(present);
  *many->add_reads() = read(absent);
  wire::ReadRequest r = read(ranged);
  r.set_offset(100);
  r.set_length(1000);
  *many->add_reads() = r;
  r = read(present);
  r.set_epoch(client().map().epoch + 1);
  *many->add_reads() = r;
  *many->add_reads() = read(elsewhere);
  const uint64_t calls_before = CounterSum(client(), "read_many_calls");
  const uint64_t reads_before = CounterSum(client(), "read_calls");
  Result<wire::ReadManyResponse> answer = AwaitReadMany(client().Osd(osd_id), many);
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  ASSERT_EQ(answer->results_size(), 5);
  EXPECT_EQ(answer->results(0).error_code(), "");
  EXPECT_EQ(answer->results(0).response().data(), bytes);
  EXPECT_EQ(answer->results(0).response().meta().checksum(), ObjectChecksum(bytes));
  EXPECT_EQ(answer->results(1).error_code(), StatusCodeName(StatusCode::kNotFound));
  EXPECT_EQ(answer->results(2).error_code(), "");
  EXPECT_EQ(answer->results(2).response().data(), bytes.substr(100, 1000));
  EXPECT_EQ(answer->results(2).response().range_checksum(),
            ObjectChecksum(bytes.substr(100, 1000)));
  EXPECT_EQ(answer->results(3).error_code(), StatusCodeName(StatusCode::kStaleEpoch));
  EXPECT_NE(answer->results(4).error_code(), "") << "a copy this OSD does not hold";
  EXPECT_EQ(CounterSum(client(), "read_many_calls") - calls_before, 1u);
  EXPECT_EQ(CounterSum(client(), "read_calls") - reads_before, 5u) << "each read counts as a read";

  // No reads: an empty answer. Too many: the whole call is refused.
  Result<wire::ReadManyResponse> none =
      AwaitReadMany(client().Osd(osd_id), std::make_shared<wire::ReadManyRequest>());
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(none->results_size(), 0);
  // Too many reads, or (with fewer) more objects' bytes than kMaxReadManyBytes: the whole call
  // is refused, and the OSD goes on serving.
  const uint64_t object_size = client().map().object_size;
  ASSERT_LE(kMaxReadManyBytes / object_size + 1, uint64_t{kMaxReadManyReads});
  for (uint64_t reads : {uint64_t{kMaxReadManyReads} + 1, kMaxReadManyBytes / object_size + 1}) {
    auto too_many = std::make_shared<wire::ReadManyRequest>();
    for (uint64_t i = 0; i < reads; ++i) *too_many->add_reads() = read(present);
    Result<wire::ReadManyResponse> refused = AwaitReadMany(client().Osd(osd_id), too_many);
    ASSERT_FALSE(refused.ok()) << reads << " reads";
    EXPECT_TRUE(refused.status().Is(StatusCode::kInvalidArgument)) << refused.status().ToString();
  }
  auto at_the_limit = std::make_shared<wire::ReadManyRequest>();
  for (uint64_t i = 0; i < kMaxReadManyBytes / object_size; ++i) {
    *at_the_limit->add_reads() = read(present);
  }
  Result<wire::ReadManyResponse> served = AwaitReadMany(client().Osd(osd_id), at_the_limit);
  ASSERT_TRUE(served.ok()) << served.status().ToString();
  EXPECT_EQ(served->results_size(), at_the_limit->reads_size());
  EXPECT_TRUE(cluster_->Running(osd_id));
}

// ClusterClient::ReadManyAsync: every copy asked for is answered once, at its own index, with
// one ReadMany call per OSD for each kReadManyBytes of objects (a lone read as a Read): a
// file's replicas, all on its replica OSD, and its originals spread over the others.
TEST_F(OsdTest, ReadManyAsyncAnswersEveryCopyWithOneCallPerOsdAndBatch) {
  const uint64_t fno = 2300;
  const uint64_t object_size = client().map().object_size;
  const uint64_t objects = 20;
  std::vector<Oid> copies;
  std::vector<std::string> expected;
  for (uint64_t index = 0; index < objects; ++index) {
    const Oid original = Data(fno, index * object_size);
    const std::string bytes = "object " + std::to_string(index) + std::string(index * 777, 'r');
    PutBoth(client(), original, bytes);
    for (CopyFlag f : {CopyFlag::kReplica, CopyFlag::kOriginal}) {
      copies.push_back(original.WithFlag(f));
      expected.push_back(bytes);
    }
  }
  copies.push_back(Data(fno, objects * object_size));  // never written: NotFound
  const size_t per_call =
      std::clamp<uint64_t>(ClusterClient::kReadManyBytes / object_size, 1, kMaxReadManyReads);
  std::map<uint32_t, size_t> copies_per_osd;
  for (const Oid& oid : copies) ++copies_per_osd[client().placement().OsdFor(oid)];
  uint64_t expected_calls = 0;
  for (const auto& [osd, n] : copies_per_osd) {
    // Batches of per_call; a batch of one is a plain Read.
    if (per_call > 1) expected_calls += n / per_call + (n % per_call > 1 ? 1 : 0);
  }

  ASSERT_GT(expected_calls, 0u) << "objects of " << object_size << " bytes are read in batches";
  const uint64_t calls_before = CounterSum(client(), "read_many_calls");
  std::mutex mu;
  std::vector<int> answers(copies.size(), 0);
  std::vector<Result<wire::ReadResponse>> results(copies.size(), Status::Internal("unanswered"));
  PendingCalls pending;
  pending.Add(static_cast<int>(copies.size()));
  client().ReadManyAsync(copies, [&](size_t i, Result<wire::ReadResponse> r) {
    {
      std::lock_guard lock(mu);
      ++answers[i];
      results[i] = std::move(r);
    }
    pending.Done(Status::Ok());
  });
  ASSERT_TRUE(pending.Wait().ok());
  std::lock_guard lock(mu);
  for (size_t i = 0; i < copies.size(); ++i) {
    EXPECT_EQ(answers[i], 1) << copies[i].ToString();
    if (i < expected.size()) {
      ASSERT_TRUE(results[i].ok())
          << copies[i].ToString() << ": " << results[i].status().ToString();
      EXPECT_EQ(results[i]->data(), expected[i]) << copies[i].ToString();
    } else {
      EXPECT_TRUE(results[i].status().Is(StatusCode::kNotFound)) << results[i].status().ToString();
    }
  }
  EXPECT_EQ(CounterSum(client(), "read_many_calls") - calls_before, expected_calls);
}

// kill -9 after acknowledged writes: the WAL holds them; restart and every object is intact,
// and so are the exact counts.
TEST(OsdDurabilityTest, AcknowledgedObjectsSurviveKillNine) {
  TestCluster cluster(TestClusterOptions{.osds = 3});
  ClusterClient& c = cluster.client();
  std::map<std::string, std::string> written;
  for (uint64_t fno = 1; fno <= 20; ++fno) {
    for (uint64_t off = 0; off < 6; ++off) {
      const Oid oid = Data(fno, off);
      std::string data =
          RandomBytes(1000 + fno * 997 + off * 131, static_cast<uint32_t>(fno * 7 + off));
      PutBoth(c, oid, data);
      written[oid.ToString()] = data;
    }
  }
  std::vector<uint64_t> objects_before;
  for (const auto& osd : c.osds()) objects_before.push_back(osd->Stats({})->objects());
  for (uint32_t id = 0; id < 3; ++id) {
    cluster.Stop(id, SIGKILL);
    EXPECT_EQ(cluster.LastExitCode(id), 128 + SIGKILL);
    cluster.Start(id);
  }
  for (const auto& [text, data] : written) {
    const Oid oid = *ParseOid(text);
    EXPECT_EQ(ReadAll(c, oid), data) << text;
    EXPECT_EQ(ReadAll(c, oid.WithFlag(CopyFlag::kReplica)), data) << text;
  }
  for (size_t i = 0; i < c.osds().size(); ++i) {
    EXPECT_EQ(c.osds()[i]->Stats({})->objects(), objects_before[i]);
  }
}

// A new metadata object's copies written at once while one copy's OSD has just been killed:
// first before the client knows (the failure shows in that very write), then after. The live
// copy takes each write with a repair record, and the restarted OSD gets its copy back, equal
// in bytes and version.
TEST(OsdCreateTest, CreateBothCopiesWithAnOsdDownLeavesARepairForIt) {
  for (CopyFlag lost : {CopyFlag::kReplica, CopyFlag::kOriginal}) {
    TestCluster cluster(TestClusterOptions{.osds = 3});
    ClusterClient& c = cluster.client();
    const Oid first{1, 170, 0, ObjectType::kInode, CopyFlag::kOriginal};
    const uint32_t down = c.placement().OsdFor(first.WithFlag(lost));
    Oid second{1, 171, 0, ObjectType::kInode, CopyFlag::kOriginal};
    while (c.placement().OsdFor(second.WithFlag(lost)) != down) ++second.fno;
    cluster.Stop(down, SIGKILL);
    for (const Oid& oid : {first, second}) {
      Result<wire::ObjectMeta> created = c.CreateBothCopies(oid, "inode " + oid.ToString());
      ASSERT_TRUE(created.ok()) << oid.ToString() << ": " << created.status().ToString();
      EXPECT_EQ(ReadAll(c, oid.WithFlag(lost == CopyFlag::kOriginal ? CopyFlag::kReplica
                                                                    : CopyFlag::kOriginal)),
                "inode " + oid.ToString());
    }
    cluster.Start(down);
    for (const Oid& oid : {first, second}) {
      // The restarted OSD answers once the other OSDs replayed its repair records.
      Result<wire::ReadResponse> copy = c.Read(oid.WithFlag(lost));
      for (int i = 0; i < 200 && !copy.ok(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        copy = c.Read(oid.WithFlag(lost));
      }
      ASSERT_TRUE(copy.ok()) << oid.ToString() << ": " << copy.status().ToString();
      EXPECT_EQ(copy->data(), "inode " + oid.ToString());
      EXPECT_EQ(copy->meta().version(), 1u);
    }
  }
}

// Peak resident memory of a process (VmHWM), in MiB.
uint64_t PeakMemoryMiB(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) / 1024;
  }
  return 0;
}

// Offers `clients` x 32 concurrent 128 KiB writes to one OSD, `durable` ones (each waits for
// the log's fsync) or not; returns how many were served and how many refused as overloaded
// (anything else fails the test).
std::pair<int, int> Overload(const TestCluster& cluster, uint32_t osd_id, int clients,
                             bool durable) {
  const OsdInfo info = *cluster.map().FindOsd(osd_id);
  Placement placement(cluster.map());
  std::vector<std::unique_ptr<OsdClient>> osds;
  for (int i = 0; i < clients; ++i) {
    osds.push_back(
        std::make_unique<OsdClient>(info, cluster.Rpc("client", std::chrono::seconds(30))));
  }
  const std::string data = RandomBytes(128 * 1024, 5);
  std::mutex mu;
  std::condition_variable cv;
  int pending = 0, served = 0, refused = 0;
  uint64_t fno = 1000;
  for (int c = 0; c < clients; ++c) {
    for (int k = 0; k < 32; ++k) {
      const Oid oid = DataOn(placement, osd_id, &fno);
      wire::WriteRequest w;
      w.set_epoch(cluster.map().epoch);
      *w.mutable_oid() = ToWire(oid);
      w.set_data(data);
      w.set_replace(true);
      w.set_sync(durable);
      {
        std::lock_guard lock(mu);
        ++pending;
      }
      osds[c]->WriteAsync(std::make_shared<const wire::WriteRequest>(std::move(w)),
                          [&](Result<wire::WriteResponse> r) {
                            std::lock_guard lock(mu);
                            if (r.ok()) {
                              ++served;
                            } else if (r.status().Is(StatusReason::kOverloaded)) {
                              ++refused;
                            } else {
                              ADD_FAILURE() << r.status().ToString();
                            }
                            if (--pending == 0) cv.notify_all();
                          });
    }
  }
  std::unique_lock lock(mu);
  cv.wait(lock, [&] { return pending == 0; });
  return {served, refused};
}

// Too many writers at once: the OSD runs a bounded number of calls (its gRPC thread quota)
// and refuses the rest as overloaded (the client treats that like a down OSD: the other copy
// serves), instead of queueing without bound; it keeps answering, and its memory stays bounded
// (the printed peaks are mostly RocksDB's memtables filling with what was served).
TEST(OsdOverloadTest, ConcurrentWritersBeyondCapacityAreRefusedNotBuffered) {
  TestCluster cluster(TestClusterOptions{.osds = 2, .cache_mb = 16});
  // Half the thread quota (256) at once: all served.
  auto [served_within, refused_within] = Overload(cluster, 0, 4, /*durable=*/false);
  EXPECT_EQ(served_within, 4 * 32);
  EXPECT_EQ(refused_within, 0);
  // Durable writes hold their threads for the fsyncs: the OSD cannot drain 2048 of them as fast
  // as they arrive, however fast its CPU (plain writes sometimes were).
  auto [served, refused] = Overload(cluster, 0, 64, /*durable=*/true);
  const uint64_t peak = PeakMemoryMiB(cluster.Pid(0));
  std::printf(
      "overload: 64 clients x 32 concurrent 128 KiB writes: %d served, %d refused, "
      "OSD peak RSS %llu MiB\n",
      served, refused, static_cast<unsigned long long>(peak));
  EXPECT_GT(served, 0);
  EXPECT_GT(refused, 0);
  EXPECT_EQ(served + refused, 64 * 32);
  EXPECT_LT(peak, 1024u);
  wire::HealthRequest health;
  health.set_epoch(cluster.map().epoch);
  EXPECT_TRUE(cluster.client().Osd(0)->Health(health).ok());
}

// orthofs-osd --metrics: the endpoint speaks Prometheus text, and its counters and latency
// histograms move with the load.
TEST(OsdMetricsTest, PrometheusEndpointParsesAndCountersMove) {
  TestCluster cluster(TestClusterOptions{.osds = 2, .metrics = true});
  const int port = cluster.MetricsPort(0);
  auto [code, before_text] = HttpGet(port, "/metrics");
  ASSERT_EQ(code, 200) << before_text;
  std::map<std::string, double> before = ParsePrometheus(before_text);
  const std::string writes = R"(orthofs_osd_requests_total{osd="0",method="write"})";
  const std::string timed = R"(orthofs_osd_request_duration_seconds_count{osd="0",method="write"})";
  const std::string inf =
      R"(orthofs_osd_request_duration_seconds_bucket{osd="0",method="write",le="+Inf"})";
  ASSERT_TRUE(before.count(writes)) << before_text;
  ASSERT_TRUE(before.count(timed));
  ASSERT_TRUE(before.count(R"(orthofs_osd_objects{osd="0"})"));
  // make-certs.sh certificates last 3650 days: the expiry is years ahead.
  const double now = static_cast<double>(std::time(nullptr));
  const std::string expiry = R"(orthofs_osd_tls_certificate_expiry_timestamp_seconds{osd="0"})";
  ASSERT_TRUE(before.count(expiry)) << before_text;
  EXPECT_GT(before[expiry], now + 3600.0 * 24 * 3600);
  EXPECT_LT(before[expiry], now + 3600.0 * 24 * 3660);

  ClusterClient& c = cluster.client();
  int on_osd0 = 0;
  for (uint64_t fno = 1; on_osd0 < 10; ++fno) {
    const Oid oid = Data(fno, 0);
    if (c.placement().OsdFor(oid) != 0) continue;
    ASSERT_TRUE(c.Write(oid, "metrics", ObjectWrite{.replace = true}).ok());
    ++on_osd0;
  }
  auto [code_after, after_text] = HttpGet(port, "/metrics");
  ASSERT_EQ(code_after, 200);
  std::map<std::string, double> after = ParsePrometheus(after_text);
  EXPECT_EQ(after[writes] - before[writes], 10);
  EXPECT_EQ(after[timed] - before[timed], 10);
  EXPECT_EQ(after[inf], after[timed]);
  EXPECT_EQ(after[R"(orthofs_osd_objects{osd="0"})"] - before[R"(orthofs_osd_objects{osd="0"})"],
            10);
  EXPECT_GT(after[R"(orthofs_osd_bytes_in_total{osd="0"})"], 0);

  EXPECT_EQ(HttpGet(port, "/").first, 404);
  EXPECT_EQ(HttpGet(port, "/metrics", "POST").first, 405);
}

TEST(OsdLifecycleTest, SigtermShutsDownCleanly) {
  TestCluster cluster(TestClusterOptions{.osds = 2});
  PutBoth(cluster.client(), Data(1, 0), "bye");
  cluster.Stop(0, SIGTERM);
  EXPECT_EQ(cluster.LastExitCode(0), 0);
  cluster.Stop(1, SIGINT);
  EXPECT_EQ(cluster.LastExitCode(1), 0);
  cluster.Start(0);
  cluster.Start(1);
  EXPECT_EQ(ReadAll(cluster.client(), Data(1, 0)), "bye");
}

// --disk-model hdd: reads of the emulated disk count, and the seeks among them follow the
// model (the next object of a copy continues, a jump seeks). Only counters are checked.
TEST(OsdDiskModelTest, EmulatedDiskCountsReadsAndSeeks) {
  TestCluster cluster(
      TestClusterOptions{.osds = 2, .cache_mb = 0, .extra_osd_flags = {"--disk-model", "hdd"}});
  ClusterClient& c = cluster.client();
  const uint64_t fno = 77;
  for (uint64_t i = 0; i < 4; ++i) PutBoth(c, Data(fno, i), std::string(4096, 'd'));
  OsdClient* replica_osd = c.Osd(c.placement().ReplicaOsdFor(1, fno));
  const wire::StatsResponse before = *replica_osd->Stats({});
  // The replicas in order: one positioning, then three continuing reads.
  for (uint64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(ReadAll(c, Data(fno, i, CopyFlag::kReplica)), std::string(4096, 'd'));
  }
  const wire::StatsResponse sequential = *replica_osd->Stats({});
  EXPECT_EQ(sequential.counters().at("disk_model_reads") - before.counters().at("disk_model_reads"),
            4u);
  EXPECT_EQ(sequential.counters().at("disk_model_seeks") - before.counters().at("disk_model_seeks"),
            1u);
  // Backwards, skipping one: every read seeks.
  EXPECT_EQ(ReadAll(c, Data(fno, 2, CopyFlag::kReplica)), std::string(4096, 'd'));
  EXPECT_EQ(ReadAll(c, Data(fno, 0, CopyFlag::kReplica)), std::string(4096, 'd'));
  const wire::StatsResponse jumps = *replica_osd->Stats({});
  EXPECT_EQ(jumps.counters().at("disk_model_seeks") - sequential.counters().at("disk_model_seeks"),
            2u);

  // An unknown model is refused with one line.
  CommandResult bad = RunCommand(
      {BinDir() + "/orthofs-osd", "--id", "0", "--map", cluster.map_path(), "--disk-model", "ssd"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("disk-model"), std::string::npos) << bad.err;
}

// A write that replaces an object whole (a newer copy update too), and a delete, learn the old
// version and length from the record's summary: no read of the old bytes (--disk-model counts
// the store's object reads). A ranged write reads them, and a replaced object reads back whole
// at its next version.
TEST(OsdDiskModelTest, ReplacingWritesReadNoObjectBytes) {
  TestCluster cluster(
      TestClusterOptions{.osds = 2, .cache_mb = 0, .extra_osd_flags = {"--disk-model", "hdd"}});
  ClusterClient& c = cluster.client();
  const Oid oid = Data(78, 0);
  OsdClient* osd = c.Osd(c.placement().OsdFor(oid));
  auto disk_reads = [&] { return osd->Stats({})->counters().at("disk_model_reads"); };
  ObjectWrite replace;
  replace.replace = true;
  ASSERT_TRUE(c.Write(oid, std::string(8192, 'a'), replace).ok());
  const uint64_t before = disk_reads();
  Result<wire::ObjectMeta> second = c.Write(oid, std::string(4096, 'b'), replace);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->version(), 2u);
  EXPECT_EQ(second->length(), 4096u);
  EXPECT_EQ(disk_reads(), before) << "a replacing write read the old object";

  // A copy update (set_version) newer than the stored copy replaces it, summary only; one that
  // is not newer reads the record (to replace it if damaged) and changes nothing.
  auto copy_update = [&](uint64_t version, const std::string& data) {
    wire::WriteRequest w;
    w.set_epoch(c.map().epoch);
    *w.mutable_oid() = ToWire(oid);
    w.set_data(data);
    w.set_replace(true);
    w.set_set_version(version);
    return osd->Write(w);
  };
  Result<wire::WriteResponse> newer = copy_update(5, std::string(4096, 'b'));
  ASSERT_TRUE(newer.ok()) << newer.status().ToString();
  EXPECT_EQ(newer->meta().version(), 5u);
  EXPECT_EQ(disk_reads(), before) << "a newer copy update read the old object";
  ASSERT_TRUE(copy_update(4, "stale").ok());
  EXPECT_EQ(disk_reads(), before + 1) << "a copy update that is not newer reads the record";
  EXPECT_EQ(ReadAll(c, oid), std::string(4096, 'b')) << "a stale copy update changed the copy";

  const uint64_t before_ranged = disk_reads();
  ObjectWrite ranged;
  ranged.offset = 100;
  ASSERT_TRUE(c.Write(oid, "cc", ranged).ok());
  EXPECT_EQ(disk_reads(), before_ranged + 1) << "a ranged write needs the old bytes";
  std::string expected(4096, 'b');
  expected.replace(100, 2, "cc");
  EXPECT_EQ(ReadAll(c, oid), expected);

  // A delete needs the version and length only.
  const uint64_t before_delete = disk_reads();
  ASSERT_TRUE(c.DeleteCopy(oid, {}, {}).ok());
  EXPECT_EQ(disk_reads(), before_delete) << "a delete read the object";
  EXPECT_TRUE(c.Read(oid).status().Is(StatusCode::kNotFound));
}

// A bare listing (no bytes asked for) answers from the records' summaries: no object is read,
// and it names the same copies, versions, lengths and checksums as a listing with the bytes.
TEST(OsdDiskModelTest, BareListingsReadNoObjectBytes) {
  TestCluster cluster(
      TestClusterOptions{.osds = 2, .cache_mb = 0, .extra_osd_flags = {"--disk-model", "hdd"}});
  ClusterClient& c = cluster.client();
  const uint64_t fno = 79;
  for (uint64_t i = 0; i < 3; ++i) PutBoth(c, Data(fno, i), std::string(1000 * (i + 1), 'l'));
  OsdClient* replica_osd = c.Osd(c.placement().ReplicaOsdFor(1, fno));
  auto disk_reads = [&] { return replica_osd->Stats({})->counters().at("disk_model_reads"); };
  const uint64_t before = disk_reads();
  auto bare = c.ListFileObjects(CopyFlag::kReplica, 1, fno, ObjectType::kData, 0, false);
  ASSERT_TRUE(bare.ok()) << bare.status().ToString();
  EXPECT_EQ(disk_reads(), before) << "a bare listing read objects";
  auto full = c.ListFileObjects(CopyFlag::kReplica, 1, fno, ObjectType::kData, 0, true);
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  EXPECT_GT(disk_reads(), before);
  ASSERT_EQ(bare->size(), 3u);
  ASSERT_EQ(full->size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const wire::ObjectMeta& b = (*bare)[i].first;
    const wire::ObjectMeta& f = (*full)[i].first;
    EXPECT_EQ(b.oid().offset(), i);
    EXPECT_EQ(b.oid().offset(), f.oid().offset());
    EXPECT_EQ(b.version(), f.version());
    EXPECT_EQ(b.length(), 1000 * (i + 1));
    EXPECT_EQ(b.length(), f.length());
    EXPECT_EQ(b.checksum(), f.checksum());
    EXPECT_TRUE((*bare)[i].second.empty());
  }
}

TEST(OsdLargeObjectTest, RoundTripsTheMaximumObjectSize) {
  TestCluster cluster(TestClusterOptions{.osds = 2, .object_size = kMaxObjectSize});
  const std::string data = RandomBytes(kMaxObjectSize, 99);
  PutBoth(cluster.client(), Data(9, 0), data);
  EXPECT_EQ(ReadAll(cluster.client(), Data(9, 0)), data);
  EXPECT_EQ(ReadAll(cluster.client(), Data(9, 0, CopyFlag::kReplica)), data);
}

TEST(OsdPlacementTest, RepartitionClusterServesItsOwnPlacement) {
  TestCluster cluster(TestClusterOptions{.osds = 4, .strategy = PlacementStrategy::kRepartition});
  for (uint64_t off = 0; off < 40; ++off) {
    PutBoth(cluster.client(), Data(77, off), "obj" + std::to_string(off));
  }
  // Every original sits on an OSD other than the file's replica OSD, and each OSD holds
  // exactly what placement assigns it.
  const uint32_t replica = cluster.client().placement().ReplicaOsdFor(1, 77);
  uint64_t originals_listed = 0;
  for (const auto& osd : cluster.client().osds()) {
    wire::ListRequest l;
    l.set_epoch(cluster.map().epoch);
    l.set_flag(wire::ORIGINAL);
    Result<wire::ListResponse> page = osd->List(l);
    ASSERT_TRUE(page.ok());
    if (osd->osd_id() == replica) {
      EXPECT_EQ(page->objects_size(), 0);
    }
    for (const auto& meta : page->objects()) {
      EXPECT_EQ(cluster.client().placement().OriginalOsdFor(*FromWire(meta.oid())), osd->osd_id());
    }
    originals_listed += page->objects_size();
  }
  EXPECT_EQ(originals_listed, 40u);
}

}  // namespace
}  // namespace orthofs::testing
