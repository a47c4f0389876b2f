// A map change on a running cluster (README, "Adding or removing OSDs while mounted"): three
// real OSDs, a new map that reweights them (so copies move without new processes), clients
// that keep the old map and are redirected, copies taken over on first use, orthofs rebalance
// moving the rest, and the maps surviving an OSD restart.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "client/cluster_client.h"
#include "common/checksum.h"
#include "rpc/wire.h"
#include "tests/test_cluster.h"
#include "tools/rebalance.h"
#include "tools/scrub.h"

namespace orthofs {
namespace {

using testing::CommandResult;
using testing::TestCluster;

constexpr uint32_t kFnso = 1;
constexpr uint64_t kFiles = 40;
constexpr uint64_t kObjectsPerFile = 3;

std::string Bytes(uint64_t fno, uint64_t index, int round) {
  return "file " + std::to_string(fno) + " object " + std::to_string(index) + " round " +
         std::to_string(round) + std::string(1000 + fno * 7 + index, 'x');
}

uint64_t SumCounter(TestCluster& cluster, const std::string& name) {
  uint64_t sum = 0;
  for (OsdClient* osd : cluster.client().osds()) {
    Result<wire::StatsResponse> stats = osd->Stats({});
    EXPECT_TRUE(stats.ok()) << stats.status().ToString();
    if (stats.ok()) sum += stats->counters().at(name);
  }
  return sum;
}

// What the OSDs are (re)started with.
void WriteMapFile(TestCluster& cluster, const ClusterMap& map) {
  std::ofstream file(cluster.map_path(), std::ios::trunc);
  file << FormatClusterMap(map);
}

void SetMapEverywhere(TestCluster& cluster, const ClusterMap& map,
                      const std::optional<ClusterMap>& previous) {
  for (OsdClient* osd : cluster.client().osds()) {
    wire::SetMapRequest request;
    request.set_map(FormatClusterMap(map));
    if (previous) request.set_previous_map(FormatClusterMap(*previous));
    Result<wire::SetMapResponse> r = osd->SetMap(request);
    ASSERT_TRUE(r.ok()) << osd->name() << ": " << r.status().ToString();
  }
}

// The next map: OSD 0 takes half of the hash space, so copies move without new processes.
ClusterMap Reweighted(const ClusterMap& map) {
  ClusterMap next = map;
  next.epoch = map.epoch + 1;
  next.osds[0].weight = 3;
  return next;
}

TEST(MapChangeTest, ClientsFollowAndCopiesMoveExactlyOnce) {
  TestCluster cluster;
  const ClusterMap old_map = cluster.map();
  const ClusterMap new_map = Reweighted(old_map);
  const Placement before(old_map);
  const Placement after(new_map);

  ClusterClient writer(old_map, cluster.Rpc("client"));
  uint64_t moving = 0;
  for (uint64_t fno = 10; fno < 10 + kFiles; ++fno) {
    for (uint64_t i = 0; i < kObjectsPerFile; ++i) {
      const Oid oid{kFnso, fno, i, ObjectType::kData, CopyFlag::kOriginal};
      ASSERT_TRUE(writer.WriteBothCopies(oid, Bytes(fno, i, 0), {.replace = true}).ok());
      for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
        if (before.OsdFor(oid.WithFlag(flag)) != after.OsdFor(oid.WithFlag(flag))) ++moving;
      }
    }
  }
  ASSERT_GT(moving, 10u);

  // The map file already names the new map (as local-cluster resize writes it first), and OSD 2
  // restarts before the rebalance: it keeps the map it ran, since jumping ahead alone it would
  // not know where the copies it gains are.
  WriteMapFile(cluster, new_map);
  cluster.Stop(2);
  cluster.Start(2);
  Result<wire::MapResponse> kept = cluster.client().Osd(2)->GetMap({});
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_EQ(kept->map(), FormatClusterMap(old_map));

  // Step 1 of a rebalance only: every OSD runs the new map and remembers the old one.
  SetMapEverywhere(cluster, new_map, old_map);
  // A restart in the middle resumes with both maps.
  cluster.Stop(0);
  cluster.Start(0);
  Result<wire::MapResponse> both = cluster.client().Osd(0)->GetMap({});
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_EQ(both->map(), FormatClusterMap(new_map));
  EXPECT_EQ(both->previous_map(), FormatClusterMap(old_map));
  // Scrub would take copies on their way for missing ones: it waits for the end.
  Result<ScrubReport> early = RunScrub(&cluster.client(), kFnso, {});
  EXPECT_TRUE(early.status().Is(StatusCode::kUnavailable)) << early.status().ToString();
  EXPECT_NE(early.status().message().find("rebalances to map epoch 2"), std::string::npos);

  // The writer still places with epoch 1: redirected, not failed. The first half of the files
  // is read (both copies) and rewritten; moved copies are taken over on first use.
  for (uint64_t fno = 10; fno < 10 + kFiles / 2; ++fno) {
    for (uint64_t i = 0; i < kObjectsPerFile; ++i) {
      const Oid oid{kFnso, fno, i, ObjectType::kData, CopyFlag::kOriginal};
      for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
        Result<wire::ReadResponse> read = writer.Read(oid.WithFlag(flag));
        ASSERT_TRUE(read.ok()) << oid.WithFlag(flag).ToString() << ": " << read.status().ToString();
        EXPECT_EQ(read->data(), Bytes(fno, i, 0));
      }
      ASSERT_TRUE(writer.WriteBothCopies(oid, Bytes(fno, i, 1), {.replace = true}).ok());
    }
  }
  EXPECT_EQ(writer.map().epoch, new_map.epoch);
  EXPECT_EQ(writer.map_changes(), 1u);
  const uint64_t taken_over = SumCounter(cluster, "rebalance_copies_taken_over");
  EXPECT_GT(taken_over, 0u);
  EXPECT_EQ(taken_over, SumCounter(cluster, "rebalance_copies_discarded"));

  // A moved object deleted by a client stays deleted: its old holder cannot bring it back.
  Oid deleted;
  for (uint64_t fno = 10 + kFiles / 2; fno < 10 + kFiles && deleted.fno == 0; ++fno) {
    const Oid oid{kFnso, fno, 0, ObjectType::kData, CopyFlag::kOriginal};
    if (before.OsdFor(oid) != after.OsdFor(oid)) deleted = oid;
  }
  ASSERT_NE(deleted.fno, 0u);
  ASSERT_TRUE(writer.DeleteBothCopies(deleted).ok());
  EXPECT_TRUE(writer.Read(deleted).status().Is(StatusCode::kNotFound));
  EXPECT_TRUE(writer.Read(deleted.WithFlag(CopyFlag::kReplica)).status().Is(StatusCode::kNotFound));

  // orthofs rebalance resumes it (the cluster runs epoch 2 already) and moves the rest.
  const uint64_t taken_before_tool = SumCounter(cluster, "rebalance_copies_taken_over");
  Result<RebalanceReport> report = Rebalance(&cluster.client(), new_map);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->resumed);
  EXPECT_EQ(report->from_epoch, old_map.epoch);
  EXPECT_EQ(report->to_epoch, new_map.epoch);
  EXPECT_GT(report->moved, 0u);
  // Every copy whose placement changed moved exactly once: on first use or by the tool (the
  // deleted object's copies were taken over by the delete).
  const uint64_t taken_total = SumCounter(cluster, "rebalance_copies_taken_over");
  EXPECT_EQ(report->moved, taken_total - taken_before_tool);
  EXPECT_EQ(taken_total, moving);
  EXPECT_EQ(report->already_moved, 0u);
  EXPECT_EQ(SumCounter(cluster, "rebalancing"), 0u);

  // Afterwards each OSD holds exactly the copies the new map gives it.
  ClusterClient fresh(new_map, cluster.Rpc("client"));
  for (uint64_t fno = 10; fno < 10 + kFiles; ++fno) {
    for (uint64_t i = 0; i < kObjectsPerFile; ++i) {
      const Oid oid{kFnso, fno, i, ObjectType::kData, CopyFlag::kOriginal};
      const int round = fno < 10 + kFiles / 2 ? 1 : 0;
      for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
        Result<wire::ReadResponse> read = fresh.Read(oid.WithFlag(flag));
        if (oid == deleted) {
          EXPECT_TRUE(read.status().Is(StatusCode::kNotFound));
          continue;
        }
        ASSERT_TRUE(read.ok()) << oid.WithFlag(flag).ToString() << ": " << read.status().ToString();
        EXPECT_EQ(read->data(), Bytes(fno, i, round));
      }
    }
  }
  uint64_t stored = 0;
  for (OsdClient* osd : fresh.osds()) {
    for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
      wire::ListRequest list;
      list.set_epoch(new_map.epoch);
      list.set_flag(static_cast<wire::CopyFlag>(flag));
      Result<wire::ListResponse> page = osd->List(list);
      ASSERT_TRUE(page.ok()) << page.status().ToString();
      for (const wire::ObjectMeta& meta : page->objects()) {
        Result<Oid> oid = FromWire(meta.oid());
        ASSERT_TRUE(oid.ok());
        EXPECT_EQ(after.OsdFor(*oid), osd->osd_id()) << oid->ToString();
        ++stored;
      }
    }
  }
  EXPECT_EQ(stored, 2 * (kFiles * kObjectsPerFile - 1));

  // A rerun has nothing left to do.
  Result<RebalanceReport> again = Rebalance(&cluster.client(), new_map);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->moved, 0u);
  EXPECT_FALSE(again->resumed);

  // A restarted OSD runs the map its store holds, not an older map file it is started with.
  WriteMapFile(cluster, old_map);
  cluster.Stop(1);
  cluster.Start(1);
  Result<wire::MapResponse> map = cluster.client().Osd(1)->GetMap({});
  ASSERT_TRUE(map.ok()) << map.status().ToString();
  EXPECT_EQ(map->map(), FormatClusterMap(new_map));
  EXPECT_TRUE(map->previous_map().empty());

  // A client started from the old map file is redirected too.
  ClusterClient late(old_map, cluster.Rpc("client"));
  const Oid first{kFnso, 10, 0, ObjectType::kData, CopyFlag::kOriginal};
  Result<wire::ReadResponse> read = late.ReadEitherCopy(first);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->data(), Bytes(10, 0, 1));
  EXPECT_EQ(late.map().epoch, new_map.epoch);

  // Scrub, with the old map file, after the rebalance: two matching copies of every object, each
  // where the new map puts it.
  Result<ScrubReport> scrub = RunScrub(&cluster.client(), kFnso, {});
  ASSERT_TRUE(scrub.ok()) << scrub.status().ToString();
  EXPECT_EQ(scrub->objects, kFiles * kObjectsPerFile - 1);
  EXPECT_EQ(scrub->matched, scrub->objects);
  EXPECT_EQ(scrub->misplaced, 0u);
  EXPECT_EQ(scrub->repaired, 0u);
}

// Writes one copy on its OSD (its version + 1), when `damaged` as if its bytes had changed on
// their way there: the record holds the client's checksum of the intact bytes, and fails it.
void WriteCopy(TestCluster& cluster, const Placement& placement, const Oid& copy,
               const std::string& intact, bool damaged) {
  std::string sent = intact;
  if (damaged) sent[10] ^= 1;
  wire::WriteRequest w;
  w.set_epoch(placement.map().epoch);
  *w.mutable_oid() = ToWire(copy);
  w.set_data(sent);
  w.set_replace(true);
  w.set_checksum(ObjectChecksum(intact));
  Result<wire::WriteResponse> written = cluster.client().Osd(placement.OsdFor(copy))->Write(w);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
}

// A damaged copy still moves, on first use, by a file's listing or by the rebalance: its new
// owner takes the other copy's bytes and version, and the damaged record is dropped. One whose
// other copy is damaged too stays where it is, reported, and the rest of its batch moves (also
// when both damaged copies move: neither new owner waits for the other); a damaged copy that
// does not move is no business of the rebalance. Scrub then finds matching copies of the rest.
TEST(MapChangeTest, ADamagedCopyMovesFromItsOtherCopy) {
  TestCluster cluster;
  const ClusterMap old_map = cluster.map();
  const ClusterMap new_map = Reweighted(old_map);
  const Placement before(old_map);
  const Placement after(new_map);
  ClusterClient writer(old_map, cluster.Rpc("client"));

  // Five objects whose originals move (replicas stay): two damaged (one read before the
  // rebalance), one intact, one with both copies damaged, one damaged at a version its replica
  // never got; one with both copies damaged and moving; and a damaged one that stays.
  std::vector<Oid> moving;
  Oid both_move;
  Oid staying;
  auto moves = [&](const Oid& copy) { return before.OsdFor(copy) != after.OsdFor(copy); };
  for (uint64_t fno = 100;
       (moving.size() < 5 || both_move.fno == 0 || staying.fno == 0) && fno < 5000; ++fno) {
    const Oid oid{kFnso, fno, 0, ObjectType::kData, CopyFlag::kOriginal};
    const bool replica_moves = moves(oid.WithFlag(CopyFlag::kReplica));
    if (moves(oid) && replica_moves) {
      if (both_move.fno == 0) both_move = oid;
    } else if (moves(oid)) {
      if (moving.size() < 5) moving.push_back(oid);
    } else if (!replica_moves && staying.fno == 0) {
      staying = oid;
    }
  }
  ASSERT_EQ(moving.size(), 5u);
  ASSERT_NE(both_move.fno, 0u);
  ASSERT_NE(staying.fno, 0u);
  std::vector<Oid> all = moving;
  all.push_back(both_move);
  all.push_back(staying);
  const Oid lost = moving[3];
  for (const Oid& oid : all) {
    ASSERT_TRUE(writer.WriteBothCopies(oid, Bytes(oid.fno, 0, 0), {.replace = true}).ok());
    // The second write (version 2) damaged on its way to the original, or to both copies.
    const bool damaged = oid != moving[2];
    const bool replica_damaged = oid == lost || oid == both_move;
    WriteCopy(cluster, before, oid, Bytes(oid.fno, 0, 1), damaged);
    WriteCopy(cluster, before, oid.WithFlag(CopyFlag::kReplica), Bytes(oid.fno, 0, 1),
              replica_damaged);
    EXPECT_EQ(writer.Read(oid).status().Is(StatusCode::kCorruption), damaged);
  }
  // Version 3 of this one reached its original only, damaged: version 2 cannot stand in.
  const Oid newer = moving[4];
  WriteCopy(cluster, before, newer, Bytes(newer.fno, 0, 2), true);

  SetMapEverywhere(cluster, new_map, old_map);
  ClusterClient fresh(new_map, cluster.Rpc("client"));
  Result<wire::ReadResponse> first_use = fresh.Read(moving[0]);
  ASSERT_TRUE(first_use.ok()) << first_use.status().ToString();
  EXPECT_EQ(first_use->data(), Bytes(moving[0].fno, 0, 1));
  // A listing of a file at its new owner takes its copies over first, damaged ones too.
  wire::ListRequest list;
  list.set_epoch(new_map.epoch);
  list.set_flag(wire::ORIGINAL);
  list.set_fnso(kFnso);
  list.set_fno(moving[1].fno);
  Result<wire::ListResponse> listed = cluster.client().Osd(after.OsdFor(moving[1]))->List(list);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->objects_size(), 1);
  EXPECT_EQ(listed->objects(0).version(), 2u);
  Result<RebalanceReport> report = Rebalance(&cluster.client(), new_map);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->originals_moved, 1u);  // moving[2]; the ones left are not counted
  EXPECT_EQ(report->replicas_moved, 0u);
  EXPECT_EQ(report->moved, 1u);
  const std::set<std::string> left(report->left_damaged.begin(), report->left_damaged.end());
  const Oid both_replica = both_move.WithFlag(CopyFlag::kReplica);
  EXPECT_EQ(left, (std::set<std::string>{
                      lost.ToString() + " on OSD " + std::to_string(before.OsdFor(lost)),
                      newer.ToString() + " on OSD " + std::to_string(before.OsdFor(newer)),
                      both_move.ToString() + " on OSD " + std::to_string(before.OsdFor(both_move)),
                      both_replica.ToString() + " on OSD " +
                          std::to_string(before.OsdFor(both_replica))}));
  EXPECT_EQ(SumCounter(cluster, "rebalance_damaged_copies_replaced"), 2u);
  EXPECT_EQ(SumCounter(cluster, "rebalancing"), 0u);

  for (const Oid& oid : {moving[0], moving[1], moving[2]}) {
    for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
      Result<wire::ReadResponse> read = fresh.Read(oid.WithFlag(flag));
      ASSERT_TRUE(read.ok()) << read.status().ToString();
      EXPECT_EQ(read->data(), Bytes(oid.fno, 0, 1));
      EXPECT_EQ(read->meta().version(), 2u);
    }
  }
  // Scrub rewrites the damaged copy that stayed from its replica, has nothing intact for the
  // objects damaged twice, and names the copies left where they were.
  Result<ScrubReport> scrub = RunScrub(&cluster.client(), kFnso, {});
  ASSERT_TRUE(scrub.ok()) << scrub.status().ToString();
  EXPECT_EQ(scrub->matched, 3u);
  EXPECT_EQ(scrub->misplaced, 4u);  // the four copies left
  // lost; the original of newer is missing where placement says and is rewritten from its
  // replica; both_move has no copy in place.
  EXPECT_EQ(scrub->unrecoverable, 1u);
  Result<wire::ReadResponse> repaired = fresh.Read(staying);
  ASSERT_TRUE(repaired.ok()) << repaired.status().ToString();
  EXPECT_EQ(repaired->data(), Bytes(staying.fno, 0, 1));
}

// The first `count` DATA objects (offset 0) from file `from` on of which only the `moving`
// copy changes owner between the two maps.
std::vector<Oid> ObjectsWhereOnlyOneCopyMoves(const ClusterMap& before_map,
                                              const ClusterMap& after_map, CopyFlag moving,
                                              size_t count, uint64_t from = 100) {
  const Placement before(before_map);
  const Placement after(after_map);
  auto moves = [&](const Oid& copy) { return before.OsdFor(copy) != after.OsdFor(copy); };
  const CopyFlag staying = moving == CopyFlag::kOriginal ? CopyFlag::kReplica : CopyFlag::kOriginal;
  std::vector<Oid> found;
  for (uint64_t fno = from; found.size() < count && fno < from + 5000; ++fno) {
    const Oid oid{kFnso, fno, 0, ObjectType::kData, CopyFlag::kOriginal};
    if (moves(oid.WithFlag(moving)) && !moves(oid.WithFlag(staying))) found.push_back(oid);
  }
  EXPECT_EQ(found.size(), count) << "too few objects move that way";
  return found;
}

// A data object deleted while one of its copies moves, then written again: both copies go on
// from one version. The moving copy keeps a tombstone against its old holder, and the other
// copy, plainly deleted, gets the same one; else the moving copy's versions ran ahead, and when
// it later missed a write, the other copy's replay there, being no newer, was a no-op and left
// it the old bytes. Once with the original moving, once with the replica.
TEST(MapChangeTest, ACopyDeletedWhileItMovesGoesOnInStepWithTheOther) {
  TestCluster cluster;
  const ClusterMap old_map = cluster.map();
  const ClusterMap new_map = Reweighted(old_map);
  const Placement after(new_map);
  const std::vector<Oid> originals_move =
      ObjectsWhereOnlyOneCopyMoves(old_map, new_map, CopyFlag::kOriginal, 1);
  const std::vector<Oid> replicas_move =
      ObjectsWhereOnlyOneCopyMoves(old_map, new_map, CopyFlag::kReplica, 1);
  ASSERT_FALSE(originals_move.empty() || replicas_move.empty());
  const Oid original_moves = originals_move[0];
  const Oid replica_moves = replicas_move[0];
  {
    ClusterClient writer(old_map, cluster.Rpc("client"));
    for (const Oid& oid : {original_moves, replica_moves}) {
      for (int round = 0; round < 2; ++round) {  // versions 1 and 2
        ASSERT_TRUE(writer.WriteBothCopies(oid, Bytes(oid.fno, 0, round), {.replace = true}).ok());
      }
    }
  }
  SetMapEverywhere(cluster, new_map, old_map);

  for (const Oid& oid : {original_moves, replica_moves}) {
    const CopyFlag moving = oid == original_moves ? CopyFlag::kOriginal : CopyFlag::kReplica;
    SCOPED_TRACE(moving == CopyFlag::kOriginal ? "the original moves" : "the replica moves");
    const uint32_t new_owner = after.OsdFor(oid.WithFlag(moving));
    {
      ClusterClient writer(old_map, cluster.Rpc("client"));
      ASSERT_TRUE(writer.DeleteBothCopies(oid).ok());
      ASSERT_TRUE(writer.WriteBothCopies(oid, Bytes(oid.fno, 0, 3), {.replace = true}).ok());
      std::set<uint64_t> versions;
      for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
        Result<wire::ReadResponse> read = writer.Read(oid.WithFlag(flag));
        ASSERT_TRUE(read.ok()) << read.status().ToString();
        versions.insert(read->meta().version());
      }
      EXPECT_EQ(versions.size(), 1u)
          << "the copies count apart: " << *versions.begin() << " and " << *versions.rbegin();
      // The moving copy misses a write; the other copy's replay brings it up to date.
      cluster.Stop(new_owner, SIGKILL);
      ASSERT_TRUE(writer.WriteBothCopies(oid, Bytes(oid.fno, 0, 4), {.replace = true}).ok());
    }
    cluster.Start(new_owner);
    const CommandResult repair = cluster.Repair();
    EXPECT_EQ(repair.exit_code, 0) << repair.out << repair.err;
    ClusterClient reader(new_map, cluster.Rpc("client"));
    for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
      Result<wire::ReadResponse> read = reader.Read(oid.WithFlag(flag));
      ASSERT_TRUE(read.ok()) << read.status().ToString();
      EXPECT_TRUE(read->data() == Bytes(oid.fno, 0, 4))
          << oid.WithFlag(flag).ToString() << " holds " << read->data().substr(0, 25);
    }
  }
}

// The matching of MatchDataTombstones when it cannot simply give the copy behind the other's
// tombstone, with the fault between the delete and the matching (ClusterClient::TestHooks):
// the copy behind's OSD dies, or another client writes the object again. Either way a repair
// record on the copy ahead settles it: both copies end with one version and the same bytes,
// and the delete reports success. The original moves, so the replica is the copy behind.
TEST(MapChangeTest, TheMatchingFallsBackToARepairRecord) {
  TestCluster cluster;
  const ClusterMap old_map = cluster.map();
  const ClusterMap new_map = Reweighted(old_map);
  const std::vector<Oid> objects =
      ObjectsWhereOnlyOneCopyMoves(old_map, new_map, CopyFlag::kOriginal, 2);
  ASSERT_EQ(objects.size(), 2u);
  const Oid behind_down = objects[0];
  const Oid written_between = objects[1];
  {
    ClusterClient writer(old_map, cluster.Rpc("client"));
    for (const Oid& oid : objects) {
      ASSERT_TRUE(writer.WriteBothCopies(oid, Bytes(oid.fno, 0, 1), {.replace = true}).ok());
    }
  }
  SetMapEverywhere(cluster, new_map, old_map);
  const uint32_t behind_osd = Placement(new_map).OsdFor(behind_down.WithFlag(CopyFlag::kReplica));

  {
    SCOPED_TRACE("the copy behind is down");
    ClusterClient deleter(old_map, cluster.Rpc("client"));
    int hooked = 0;
    deleter.SetTestHooks({.before_matching_tombstone = [&](const Oid& behind) {
      ++hooked;
      EXPECT_EQ(behind, behind_down.WithFlag(CopyFlag::kReplica));
      cluster.Stop(behind_osd, SIGKILL);
    }});
    Status deleted = deleter.DeleteBothCopies(behind_down);
    EXPECT_TRUE(deleted.ok()) << deleted.ToString();
    EXPECT_EQ(hooked, 1);
  }
  cluster.Start(behind_osd);
  {
    SCOPED_TRACE("written in between");
    ClusterClient deleter(new_map, cluster.Rpc("client"));
    ClusterClient other(new_map, cluster.Rpc("client"));
    deleter.SetTestHooks({.before_matching_tombstone = [&](const Oid&) {
      Status written = other.WriteBothCopies(written_between, Bytes(written_between.fno, 0, 2),
                                             {.replace = true});
      EXPECT_TRUE(written.ok()) << written.ToString();
    }});
    Status deleted = deleter.DeleteBothCopies(written_between);
    EXPECT_TRUE(deleted.ok()) << deleted.ToString();
  }
  const CommandResult repair = cluster.Repair();
  EXPECT_EQ(repair.exit_code, 0) << repair.out << repair.err;

  ClusterClient client(new_map, cluster.Rpc("client"));
  // The write in between stays, on both copies and at one version.
  std::set<uint64_t> versions;
  for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
    Result<wire::ReadResponse> read = client.Read(written_between.WithFlag(flag));
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    EXPECT_TRUE(read->data() == Bytes(written_between.fno, 0, 2))
        << written_between.WithFlag(flag).ToString() << " holds " << read->data().substr(0, 25);
    versions.insert(read->meta().version());
  }
  EXPECT_EQ(versions.size(), 1u) << "the copies count apart after the write in between";
  // The deleted one, written again, goes on from one version on both copies.
  ASSERT_TRUE(
      client.WriteBothCopies(behind_down, Bytes(behind_down.fno, 0, 3), {.replace = true}).ok());
  versions.clear();
  for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
    Result<wire::ReadResponse> read = client.Read(behind_down.WithFlag(flag));
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    versions.insert(read->meta().version());
  }
  EXPECT_EQ(versions.size(), 1u) << "the copies count apart: " << *versions.begin() << " and "
                                 << *versions.rbegin();
}

// orthofs repair, started from a map file older than the cluster's map, while one OSD still
// runs that older map (a rebalance cut short after the others took the new one): it follows
// the latest map any OSD runs, the OSD left behind catches up when asked, and every OSD
// answers.
TEST(MapChangeTest, RepairFollowsTheLatestMapAnOsdRuns) {
  TestCluster cluster;
  const ClusterMap old_map = cluster.map();
  const ClusterMap new_map = Reweighted(old_map);
  for (uint32_t id : {1u, 2u}) {  // OSD 0, the first asked, keeps the old map
    wire::SetMapRequest request;
    request.set_map(FormatClusterMap(new_map));
    request.set_previous_map(FormatClusterMap(old_map));
    Result<wire::SetMapResponse> set = cluster.client().Osd(id)->SetMap(request);
    ASSERT_TRUE(set.ok()) << set.status().ToString();
  }
  const CommandResult repair = cluster.Repair();
  EXPECT_EQ(repair.exit_code, 0) << repair.out << repair.err;
  EXPECT_NE(repair.out.find("0 OSDs did not answer"), std::string::npos) << repair.out;
  Result<wire::MapResponse> caught_up = cluster.client().Osd(0)->GetMap({});
  ASSERT_TRUE(caught_up.ok()) << caught_up.status().ToString();
  EXPECT_EQ(caught_up->map(), FormatClusterMap(new_map));
}

// An OSD refuses a map that cannot follow its own, and nothing changes.
TEST(MapChangeTest, BadMapsAreRefused) {
  TestCluster cluster;
  OsdClient* osd = cluster.client().Osd(0);
  ClusterMap bigger = cluster.map();
  bigger.epoch += 1;
  bigger.object_size *= 2;
  wire::SetMapRequest request;
  request.set_map(FormatClusterMap(bigger));
  request.set_previous_map(FormatClusterMap(cluster.map()));
  Result<wire::SetMapResponse> r = osd->SetMap(request);
  EXPECT_TRUE(r.status().Is(StatusCode::kInvalidArgument)) << r.status().ToString();
  EXPECT_NE(r.status().message().find("object size cannot change"), std::string::npos);

  ClusterMap next = cluster.map();
  next.epoch += 1;
  request.set_map(FormatClusterMap(next));
  request.clear_previous_map();
  r = osd->SetMap(request);
  EXPECT_NE(r.status().message().find("needs the map it replaces"), std::string::npos)
      << r.status().ToString();

  ClusterMap without_it = next;
  without_it.osds.erase(without_it.osds.begin());  // OSD 0 is in neither map then? it is in old
  without_it.osds.push_back({7, "127.0.0.1:1", 1});
  request.set_map(FormatClusterMap(without_it));
  request.set_previous_map(FormatClusterMap(cluster.map()));
  EXPECT_TRUE(osd->SetMap(request).ok());  // OSD 0 is being removed: allowed, it drains
  Result<wire::MapResponse> map = osd->GetMap({});
  ASSERT_TRUE(map.ok());
  EXPECT_EQ(map->previous_map(), FormatClusterMap(cluster.map()));
}

}  // namespace
}  // namespace orthofs
