#include "common/map_view.h"

#include <gtest/gtest.h>

#include "common/cluster_map_testing.h"

namespace orthofs {
namespace {

// An OSD asks the previous owner exactly for the copies it gained, whichever copy they are.
TEST(MapViewTest, PreviousOwnerOnlyForCopiesThisOsdGained) {
  const ClusterMap four = EqualMap(1, {0, 1, 2, 3});
  const ClusterMap six = EqualMap(2, {0, 1, 2, 3, 4, 5});
  const MapView view(six, four);
  const Placement before(four);
  const Placement after(six);
  ASSERT_TRUE(view.rebalancing());
  EXPECT_EQ(view.epoch(), 2u);
  int gained = 0, kept = 0;
  for (uint64_t fno = 1; fno <= 200; ++fno) {
    for (uint64_t index = 0; index < 8; ++index) {
      for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
        const Oid copy{1, fno, index, ObjectType::kData, flag};
        for (uint32_t self = 0; self < 6; ++self) {
          const std::optional<uint32_t> ask = view.PreviousOwnerOf(copy, self);
          if (after.OsdFor(copy) != self || before.OsdFor(copy) == self) {
            EXPECT_FALSE(ask.has_value());
            if (after.OsdFor(copy) == self) ++kept;
          } else {
            ASSERT_TRUE(ask.has_value());
            EXPECT_EQ(*ask, before.OsdFor(copy));
            EXPECT_NE(*ask, self);
            ++gained;
          }
        }
      }
    }
  }
  EXPECT_GT(gained, 0);
  EXPECT_GT(kept, 0);
  // Outside a rebalance nobody asks anybody.
  const MapView settled(six);
  EXPECT_FALSE(settled.rebalancing());
  EXPECT_EQ(settled.previous(), nullptr);
  EXPECT_FALSE(
      settled
          .PreviousOwnerOf(Oid{1, 5, 0, ObjectType::kData, CopyFlag::kOriginal},
                           after.OsdFor(Oid{1, 5, 0, ObjectType::kData, CopyFlag::kOriginal}))
          .has_value());
}

TEST(MapViewTest, FindsOsdsOfBothMaps) {
  const MapView shrinking(EqualMap(3, {0, 1, 2, 3, 4}), EqualMap(2, {0, 1, 2, 3, 4, 5}));
  ASSERT_NE(shrinking.FindOsd(5), nullptr);  // being removed: still reachable for its copies
  EXPECT_EQ(shrinking.FindOsd(5)->address, "10.0.0.6:7000");
  EXPECT_EQ(shrinking.FindOsd(9), nullptr);
  EXPECT_EQ(MapView(EqualMap(3, {0, 1, 2, 3, 4})).FindOsd(5), nullptr);
}

TEST(MapViewTest, InstallRules) {
  const ClusterMap four = EqualMap(1, {0, 1, 2, 3});
  const ClusterMap six = EqualMap(2, {0, 1, 2, 3, 4, 5});
  const MapView running(four);
  EXPECT_TRUE(CheckMapInstall(running, six, four).ok());
  EXPECT_TRUE(CheckMapInstall(running, four, std::nullopt).ok());  // what it runs: a no-op
  Status no_previous = CheckMapInstall(running, six, std::nullopt);
  EXPECT_NE(no_previous.message().find("needs the map it replaces"), std::string::npos);
  ClusterMap other_previous = four;
  other_previous.osds[0].address = "10.9.9.9:7000";
  EXPECT_NE(CheckMapInstall(running, six, other_previous).message().find("is not the one"),
            std::string::npos);
  EXPECT_FALSE(CheckMapInstall(running, EqualMap(0, {0, 1}), std::nullopt).ok());  // invalid
  ClusterMap changed_same_epoch = EqualMap(1, {0, 1, 2, 3, 4});
  EXPECT_NE(CheckMapInstall(running, changed_same_epoch, std::nullopt)
                .message()
                .find("needs a higher epoch"),
            std::string::npos);

  const MapView rebalancing(six, four);
  EXPECT_TRUE(CheckMapInstall(rebalancing, six, four).ok());          // retried: a no-op
  EXPECT_TRUE(CheckMapInstall(rebalancing, six, std::nullopt).ok());  // the end
  EXPECT_TRUE(CheckMapInstall(rebalancing, four, std::nullopt).Is(StatusCode::kStaleEpoch));
  EXPECT_NE(CheckMapInstall(rebalancing, EqualMap(3, {0, 1, 2, 3, 4}), six)
                .message()
                .find("still running"),
            std::string::npos);
  EXPECT_TRUE(CheckMapInstall(MapView(six), six, four).ok());  // an added OSD joins
  ClusterMap three = EqualMap(1, {0, 1, 2});
  EXPECT_NE(CheckMapInstall(rebalancing, six, three).message().find("rebalances from another map"),
            std::string::npos);
  three.epoch = 3;
  EXPECT_FALSE(CheckMapInstall(MapView(six), six, three).ok());  // a "previous" that is later
}

TEST(MapViewTest, CatchUpOnlyForward) {
  const ClusterMap four = EqualMap(1, {0, 1, 2, 3});
  const ClusterMap six = EqualMap(2, {0, 1, 2, 3, 4, 5});
  const ClusterMap five = EqualMap(3, {0, 1, 2, 3, 4});
  EXPECT_TRUE(CheckMapCatchUp(MapView(four), six, four).ok());
  EXPECT_TRUE(CheckMapCatchUp(MapView(four), five, six).ok());  // missed two changes
  EXPECT_TRUE(CheckMapCatchUp(MapView(six), six, std::nullopt).Is(StatusCode::kStaleEpoch));
  EXPECT_TRUE(CheckMapCatchUp(MapView(six), four, std::nullopt).Is(StatusCode::kStaleEpoch));
  ClusterMap other_size = five;
  other_size.object_size *= 2;
  EXPECT_FALSE(CheckMapCatchUp(MapView(six), other_size, std::nullopt).ok());
}

}  // namespace
}  // namespace orthofs
