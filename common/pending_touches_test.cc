#include "common/pending_touches.h"

#include <gtest/gtest.h>

namespace orthofs {
namespace {

using std::chrono::milliseconds;
using Clock = PendingTouches::Clock;

TEST(PendingTouchesTest, TheLatestRemovalWinsAndTheFirstStartsTheWait) {
  PendingTouches p;
  const Clock::time_point t0 = Clock::now();
  p.Note(7, Timespec{100, 5}, t0);
  p.Note(7, Timespec{99, 0}, t0 + milliseconds(10));  // an older time never lowers it
  p.Note(7, Timespec{100, 9}, t0 + milliseconds(20));
  EXPECT_EQ(p.Get(7), (Timespec{100, 9}));
  EXPECT_TRUE(p.Due(t0 + milliseconds(49), milliseconds(50)).empty());
  EXPECT_EQ(p.Due(t0 + milliseconds(50), milliseconds(50)), std::vector<uint64_t>{7});
  EXPECT_EQ(p.NextDue(milliseconds(50)), t0 + milliseconds(50));
  EXPECT_FALSE(p.Get(8).has_value());
}

TEST(PendingTouchesTest, ApplyRaisesOnlyEarlierTimes) {
  PendingTouches p;
  p.Note(1, Timespec{200, 0}, Clock::now());
  Inode inode;
  inode.mtime = Timespec{150, 0};
  inode.ctime = Timespec{250, 0};  // a chmod after the removal
  EXPECT_EQ(p.Apply(1, &inode), (Timespec{200, 0}));
  EXPECT_EQ(inode.mtime, (Timespec{200, 0}));
  EXPECT_EQ(inode.ctime, (Timespec{250, 0}));
  Inode other;
  EXPECT_FALSE(p.Apply(2, &other).has_value());
  EXPECT_EQ(other.mtime, Timespec{});
}

TEST(PendingTouchesTest, AWriteEndsItUnlessALaterRemovalCame) {
  PendingTouches p;
  const Clock::time_point t0 = Clock::now();
  p.Note(1, Timespec{10, 0}, t0);
  p.Note(2, Timespec{10, 0}, t0);
  p.Note(2, Timespec{11, 0}, t0);  // after the write below took its time
  p.Written(1, Timespec{10, 0});
  p.Written(2, Timespec{10, 0});
  EXPECT_FALSE(p.Get(1).has_value());
  EXPECT_EQ(p.Get(2), (Timespec{11, 0}));
  p.Retry(2, t0 + milliseconds(100));
  EXPECT_TRUE(p.Due(t0 + milliseconds(120), milliseconds(50)).empty());
  EXPECT_EQ(p.Due(t0 + milliseconds(150), milliseconds(50)), std::vector<uint64_t>{2});
  p.Forget(2);
  EXPECT_TRUE(p.empty());
  EXPECT_FALSE(p.NextDue(milliseconds(50)).has_value());
}

TEST(PendingTouchesTest, AllListsEveryDirectory) {
  PendingTouches p;
  for (uint64_t dir : {5, 3, 9}) p.Note(dir, Timespec{1, 0}, Clock::now());
  EXPECT_EQ(p.All(), (std::vector<uint64_t>{3, 5, 9}));
  EXPECT_EQ(p.size(), 3u);
  EXPECT_TRUE(IsLater(Timespec{1, 1}, Timespec{1, 0}));
  EXPECT_FALSE(IsLater(Timespec{1, 0}, Timespec{1, 0}));
  EXPECT_TRUE(IsLater(Timespec{2, 0}, Timespec{1, 999999999}));
}

}  // namespace
}  // namespace orthofs
