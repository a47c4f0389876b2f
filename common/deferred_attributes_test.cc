#include "common/deferred_attributes.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

namespace orthofs {
namespace {

Inode RegularFile(uint32_t bits) {
  Inode inode;
  inode.mode = S_IFREG | bits;
  inode.uid = 1000;
  inode.gid = 100;
  inode.mtime = inode.ctime = Timespec{100, 0};
  return inode;
}

SetAttrRequest Mode(uint32_t bits) {
  SetAttrRequest r;
  r.mode = bits;
  return r;
}

TEST(DeferredAttributesTest, TimesAlwaysWait) {
  SetAttrRequest times;
  times.atime = Timespec{5, 0};
  times.mtime = Timespec{6, 0};
  EXPECT_TRUE(DeferredAttributes::MayWait(RegularFile(0600), times));
}

TEST(DeferredAttributesTest, AModeWaitsOnlyIfItTakesNothingAway) {
  const Inode file = RegularFile(0600);
  EXPECT_TRUE(DeferredAttributes::MayWait(file, Mode(0644)));  // tar's widening after create
  EXPECT_TRUE(DeferredAttributes::MayWait(file, Mode(0600)));
  EXPECT_FALSE(DeferredAttributes::MayWait(file, Mode(0400)));  // takes the owner's write
  EXPECT_FALSE(DeferredAttributes::MayWait(RegularFile(0644), Mode(0640)));
  // Set-ID and sticky bits change only at once, either way.
  EXPECT_FALSE(DeferredAttributes::MayWait(file, Mode(04755)));
  EXPECT_FALSE(DeferredAttributes::MayWait(RegularFile(02755), Mode(0755)));
  EXPECT_TRUE(DeferredAttributes::MayWait(RegularFile(04700), Mode(04755)));
}

TEST(DeferredAttributesTest, AnOwnerWaitsOnlyWhenUnchangedWithNothingToDrop) {
  SetAttrRequest same;
  same.uid = 1000;
  same.gid = 100;
  same.drop_privileges = true;  // Linux flags every chown
  EXPECT_TRUE(DeferredAttributes::MayWait(RegularFile(0644), same));
  EXPECT_FALSE(DeferredAttributes::MayWait(RegularFile(04755), same));  // drops set-user-ID
  SetAttrRequest other = same;
  other.uid = 0;
  EXPECT_FALSE(DeferredAttributes::MayWait(RegularFile(0644), other));
  other = same;
  other.gid = 0;
  EXPECT_FALSE(DeferredAttributes::MayWait(RegularFile(0644), other));
}

TEST(DeferredAttributesTest, SizesAndOtherTypesNeverWait) {
  SetAttrRequest cut;
  cut.size = 0;
  EXPECT_FALSE(DeferredAttributes::MayWait(RegularFile(0644), cut));
  Inode dir = RegularFile(0755);
  dir.mode = S_IFDIR | 0755;
  SetAttrRequest times;
  times.mtime = Timespec{1, 0};
  EXPECT_FALSE(DeferredAttributes::MayWait(dir, times));
}

TEST(DeferredAttributesTest, ApplyPutsTheLatestChangesOnTopAndRaisesCtime) {
  DeferredAttributes d;
  EXPECT_TRUE(d.empty());
  SetAttrRequest times;
  times.mtime = Timespec{50, 0};  // tar restores an old mtime
  d.Add(times, Timespec{200, 0});
  d.Add(Mode(0644), Timespec{201, 0});
  d.Add(Mode(0664), Timespec{202, 0});
  EXPECT_FALSE(d.empty());
  Inode inode = RegularFile(0600);
  d.ApplyTo(&inode);
  EXPECT_EQ(inode.mode, static_cast<uint32_t>(S_IFREG | 0664));
  EXPECT_EQ(inode.mtime, (Timespec{50, 0}));
  EXPECT_EQ(inode.ctime, (Timespec{202, 0}));
  EXPECT_EQ(inode.uid, 1000u);  // untouched
  // A later ctime on the INODE (another client's change) is not lowered.
  Inode newer = RegularFile(0600);
  newer.ctime = Timespec{300, 0};
  d.ApplyTo(&newer);
  EXPECT_EQ(newer.ctime, (Timespec{300, 0}));
}

TEST(DeferredAttributesTest, AWriteAfterAnExplicitMtimeLetsThePublishStampItsOwn) {
  DeferredAttributes d;
  SetAttrRequest times;
  times.mtime = Timespec{50, 0};
  times.atime = Timespec{40, 0};
  d.Add(times, Timespec{200, 0});
  d.Wrote();
  Inode inode = RegularFile(0600);
  inode.mtime = Timespec{210, 0};  // the publish's own stamp
  d.ApplyTo(&inode);
  EXPECT_EQ(inode.mtime, (Timespec{210, 0}));
  EXPECT_EQ(inode.atime, (Timespec{40, 0}));
  EXPECT_FALSE(d.empty());
}

TEST(DeferredAttributesTest, RestoreKeepsChangesMadeSinceOverTheFailedOnes) {
  DeferredAttributes failed;
  failed.Add(Mode(0644), Timespec{200, 0});
  SetAttrRequest times;
  times.mtime = Timespec{50, 0};
  failed.Add(times, Timespec{201, 0});
  DeferredAttributes since;
  since.Add(Mode(0664), Timespec{205, 0});
  since.RestoreUnder(failed);
  Inode inode = RegularFile(0600);
  since.ApplyTo(&inode);
  EXPECT_EQ(inode.mode, static_cast<uint32_t>(S_IFREG | 0664));
  EXPECT_EQ(inode.mtime, (Timespec{50, 0}));
  EXPECT_EQ(inode.ctime, (Timespec{205, 0}));
  DeferredAttributes none;
  none.RestoreUnder(failed);
  EXPECT_FALSE(none.empty());
  none.RestoreUnder(DeferredAttributes{});
  EXPECT_FALSE(none.empty());
}

}  // namespace
}  // namespace orthofs
