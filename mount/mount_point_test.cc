#include "mount/mount_point.h"

#include <gtest/gtest.h>

namespace orthofs {
namespace {

constexpr std::string_view kMounts =
    "/dev/vda / ext4 rw,relatime 0 0\n"
    "orthofs /mnt/orthofs fuse.orthofs rw,nosuid,nodev 0 0\n"
    "orthofs /mnt/with\\040space fuse.orthofs rw 0 0\n"
    "tmpfs /mnt/stacked tmpfs rw 0 0\n"
    "orthofs /mnt/stacked fuse.orthofs rw 0 0\n"
    "broken line\n";

TEST(MountPointTest, TheTypeMountedAtAPath) {
  EXPECT_EQ(MountTypeAt(kMounts, "/"), "ext4");
  EXPECT_EQ(MountTypeAt(kMounts, "/mnt/orthofs"), "fuse.orthofs");
  EXPECT_EQ(MountTypeAt(kMounts, "/mnt/with space"), "fuse.orthofs") << "\\040 is a space";
  EXPECT_EQ(MountTypeAt(kMounts, "/mnt/stacked"), "fuse.orthofs") << "the last mounted wins";
  EXPECT_EQ(MountTypeAt(kMounts, "/mnt"), std::nullopt);
  EXPECT_EQ(MountTypeAt(kMounts, "/mnt/orthofs/sub"), std::nullopt);
  EXPECT_EQ(MountTypeAt("", "/"), std::nullopt);
}

TEST(MountPointTest, ARegularFileOrNothingIsRefused) {
  char dir[] = "/tmp/orthofs-mount-point-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string file = std::string(dir) + "/file";
  FILE* f = fopen(file.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fclose(f);
  EXPECT_TRUE(PrepareMountPoint(dir).ok());
  const Status on_file = PrepareMountPoint(file);
  EXPECT_FALSE(on_file.ok());
  EXPECT_NE(on_file.message().find("not a directory"), std::string::npos) << on_file.ToString();
  EXPECT_FALSE(PrepareMountPoint(std::string(dir) + "/missing").ok());
  remove(file.c_str());
  rmdir(dir);
}

}  // namespace
}  // namespace orthofs
