#include "common/rebalance_plan.h"

#include <gtest/gtest.h>

#include "common/cluster_map_testing.h"

namespace orthofs {
namespace {

TEST(RebalancePlanTest, MapChangeRules) {
  const ClusterMap four = EqualMap(1, {0, 1, 2, 3});
  EXPECT_TRUE(CheckMapChange(four, EqualMap(2, {0, 1, 2, 3, 4, 5})).ok());
  EXPECT_TRUE(CheckMapChange(four, EqualMap(7, {0, 1, 2})).ok());
  Status same_epoch = CheckMapChange(four, EqualMap(1, {0, 1, 2, 3, 4}));
  EXPECT_TRUE(same_epoch.Is(StatusCode::kInvalidArgument));
  EXPECT_NE(same_epoch.message().find("must be above the current 1"), std::string::npos);
  ClusterMap bigger_objects = EqualMap(2, {0, 1, 2, 3});
  bigger_objects.object_size *= 2;
  EXPECT_NE(CheckMapChange(four, bigger_objects).message().find("object size cannot change"),
            std::string::npos);
  EXPECT_FALSE(CheckMapChange(four, EqualMap(2, {0})).ok());  // one OSD is no valid map
}

TEST(RebalancePlanTest, IdealFractionIsTheWeightThatChangesHands) {
  const ClusterMap four = EqualMap(1, {0, 1, 2, 3});
  const ClusterMap six = EqualMap(2, {0, 1, 2, 3, 4, 5});
  EXPECT_NEAR(IdealMovedFraction(four, six), 1.0 / 3, 1e-12);
  EXPECT_NEAR(IdealMovedFraction(six, EqualMap(3, {0, 1, 2, 3, 4})), 1.0 / 6, 1e-12);
  EXPECT_NEAR(IdealMovedFraction(four, EqualMap(2, {0, 1, 2, 3})), 0, 1e-12);
  ClusterMap heavier = EqualMap(2, {0, 1, 2, 3});
  heavier.osds[0].weight = 2;  // shares 2/5, 1/5 x 3: 0.15 moves to OSD 0
  EXPECT_NEAR(IdealMovedFraction(four, heavier), 0.15, 1e-12);
}

// Every stored copy is counted where the old map put it; exactly those whose OSD differs under
// the new map move, to where it says, and the new layout stays orthogonal.
TEST(RebalancePlanTest, MovesExactlyTheCopiesWhosePlacementChanged) {
  for (const auto& [from, to] :
       {std::pair{EqualMap(1, {0, 1, 2, 3}), EqualMap(2, {0, 1, 2, 3, 4, 5})},
        std::pair{EqualMap(2, {0, 1, 2, 3, 4, 5}), EqualMap(3, {0, 1, 2, 3, 4})},
        std::pair{EqualMap(1, {0, 1, 2, 3}), EqualMap(2, {0, 1, 2, 3})}}) {
    SCOPED_TRACE(std::to_string(from.osds.size()) + " -> " + std::to_string(to.osds.size()));
    RebalancePlan plan(from, to);
    const Placement old_placement(from);
    const Placement new_placement(to);
    uint64_t expected_moves = 0, copies = 0;
    for (uint64_t fno = 1; fno <= 300; ++fno) {
      const uint32_t replica_osd = new_placement.ReplicaOsdFor(1, fno);
      for (uint64_t index = 0; index < 20; ++index) {
        for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
          const Oid copy{1, fno, index, ObjectType::kData, flag};
          const uint32_t holder = old_placement.OsdFor(copy);
          const uint32_t destination = new_placement.OsdFor(copy);
          plan.Count(copy, holder);
          ++copies;
          EXPECT_EQ(plan.DestinationOf(copy), destination);
          if (destination == holder) {
            EXPECT_FALSE(plan.MoveFor(copy, holder));
          } else {
            ++expected_moves;
            EXPECT_EQ(plan.MoveFor(copy, holder), destination);
          }
          if (flag == CopyFlag::kOriginal) {
            EXPECT_NE(destination, replica_osd) << "original on its file's replica OSD";
          }
        }
      }
    }
    const RebalanceSummary& s = plan.summary();
    EXPECT_EQ(s.copies, copies);
    EXPECT_EQ(s.moved, expected_moves);
    EXPECT_EQ(s.originals_moved + s.replicas_moved, s.moved);
    EXPECT_EQ(s.misplaced, 0u);
    uint64_t flowing = 0;
    for (const auto& [edge, n] : s.flows) {
      EXPECT_NE(edge.first, edge.second);
      flowing += n;
    }
    EXPECT_EQ(flowing, s.moved);
    // Never less than the minimum any placement could move (sampling noise aside).
    EXPECT_GE(s.moved_fraction(), IdealMovedFraction(from, to) - 0.05);
    std::printf("%zu -> %zu OSDs: %.3f of copies move (ideal %.3f)\n", from.osds.size(),
                to.osds.size(), s.moved_fraction(), IdealMovedFraction(from, to));
  }
}

TEST(RebalancePlanTest, CopiesFoundOffTheirOldPlaceAreCounted) {
  RebalancePlan plan(EqualMap(1, {0, 1, 2, 3}), EqualMap(2, {0, 1, 2, 3}));
  const Oid copy{1, 5, 0, ObjectType::kInode, CopyFlag::kOriginal};
  const uint32_t right = plan.old_placement().OsdFor(copy);
  const uint32_t wrong = (right + 1) % 4;
  plan.Count(copy, wrong);
  EXPECT_EQ(plan.summary().misplaced, 1u);
  EXPECT_EQ(plan.summary().moved, 1u);  // it goes where the new map says
  EXPECT_EQ(plan.MoveFor(copy, wrong), right);
}

}  // namespace
}  // namespace orthofs
