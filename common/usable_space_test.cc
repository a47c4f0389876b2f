#include "common/usable_space.h"

#include <gtest/gtest.h>

namespace orthofs {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

OsdSpace Osd(uint32_t id, uint64_t capacity_gib, uint64_t free_gib, uint64_t fs = 0,
             double weight = 1, uint64_t reserve_gib = 0) {
  return OsdSpace{id,
                  weight,
                  capacity_gib * kGiB,
                  free_gib * kGiB,
                  reserve_gib * kGiB,
                  fs,
                  "host-" + std::to_string(fs == 0 ? id : 0)};
}

TEST(UsableSpaceTest, SixDisksOfOneSizeHoldHalfTheirSum) {
  std::vector<OsdSpace> osds;
  for (uint32_t i = 0; i < 6; ++i) osds.push_back(Osd(i, 100, 60));
  const UsableSpace u = ComputeUsableSpace(osds);
  EXPECT_EQ(u.capacity_bytes, 300 * kGiB);
  EXPECT_EQ(u.available_bytes, 180 * kGiB);
}

TEST(UsableSpaceTest, TheFullestOsdBoundsWhatCanBeWritten) {
  // Every file puts a sixth of its copies on OSD 3: its 6 GiB free take 18 GiB of files.
  std::vector<OsdSpace> osds;
  for (uint32_t i = 0; i < 6; ++i) osds.push_back(Osd(i, 100, i == 3 ? 6 : 60));
  const UsableSpace u = ComputeUsableSpace(osds);
  EXPECT_EQ(u.available_bytes, 18 * kGiB);
  EXPECT_EQ(u.bounding_osd, 3u);
}

TEST(UsableSpaceTest, OsdsSharingAFileSystemCountItOnce) {
  // The df: 6 OSDs on one 252 GiB disk with 233 free: not 756 / 233, but 126 / 116.
  std::vector<OsdSpace> osds;
  for (uint32_t i = 0; i < 6; ++i) {
    OsdSpace o = Osd(i, 252, 233, /*fs=*/77);
    o.host = "127.0.0.1";
    osds.push_back(o);
  }
  const UsableSpace u = ComputeUsableSpace(osds);
  EXPECT_EQ(u.capacity_bytes, 126 * kGiB);
  EXPECT_EQ(u.available_bytes, 233 * kGiB / 2);
}

TEST(UsableSpaceTest, AFileSystemIdOnlyJoinsOsdsOfOneHost) {
  OsdSpace a = Osd(0, 100, 50, 9);
  OsdSpace b = Osd(1, 100, 50, 9);
  a.host = "10.0.0.1";
  b.host = "10.0.0.2";
  const UsableSpace u = ComputeUsableSpace({a, b});
  EXPECT_EQ(u.available_bytes, 50 * kGiB) << "two disks, each with half the copies";
}

TEST(UsableSpaceTest, ReservesAreNotUsable) {
  std::vector<OsdSpace> osds;
  for (uint32_t i = 0; i < 4; ++i) osds.push_back(Osd(i, 100, 10, 0, 1, /*reserve=*/4));
  const UsableSpace u = ComputeUsableSpace(osds);
  EXPECT_EQ(u.available_bytes, 12 * kGiB);  // (10 - 4) x 4 / 2
  EXPECT_EQ(u.capacity_bytes, 192 * kGiB);  // (100 - 4) x 4 / 2
  osds[1].available_bytes = 3 * kGiB;       // under its reserve: nothing more can be written
  EXPECT_EQ(ComputeUsableSpace(osds).available_bytes, 0u);
}

TEST(UsableSpaceTest, WeightsSetTheShares) {
  // Twice the weight: twice the copies. 30 GiB free on each: the heavy one fills first.
  const UsableSpace u =
      ComputeUsableSpace({Osd(0, 100, 30, 0, 2), Osd(1, 100, 30), Osd(2, 100, 30)});
  // The heavy OSD holds half of all copies: 30 GiB of its room is 2 x X x 1/2, X = 30 GiB.
  EXPECT_EQ(u.available_bytes, 30 * kGiB);
  EXPECT_EQ(u.bounding_osd, 0u);
}

TEST(UsableSpaceTest, NoOsdsNoSpace) {
  const UsableSpace u = ComputeUsableSpace({});
  EXPECT_EQ(u.capacity_bytes, 0u);
  EXPECT_EQ(u.available_bytes, 0u);
}

}  // namespace
}  // namespace orthofs
