#include "common/kernel_sizes.h"

#include <gtest/gtest.h>

namespace orthofs {
namespace {

TEST(KernelSizes, AnUnknownFileIsNotThoughtLarger) {
  KernelSizes sizes;
  EXPECT_FALSE(sizes.MayExceed(7, 0));
  EXPECT_EQ(sizes.tracked_files(), 0u);
}

TEST(KernelSizes, AShrinkSinceTheLastAnswerIsSeen) {
  KernelSizes sizes;
  sizes.Told(7, 524288);
  EXPECT_TRUE(sizes.MayExceed(7, 1234)) << "another client shrank it";
  EXPECT_FALSE(sizes.MayExceed(7, 524288)) << "unchanged";
  EXPECT_FALSE(sizes.MayExceed(7, 600000)) << "grown: a read past the end asks anyway";
  EXPECT_FALSE(sizes.MayExceed(8, 0)) << "other files are not affected";
}

TEST(KernelSizes, TheLatestAnswerReplacesALargerOne) {
  KernelSizes sizes;
  sizes.Told(7, 524288);
  sizes.Told(7, 1234);  // e.g. a stat after the open refreshed the kernel's size
  EXPECT_FALSE(sizes.MayExceed(7, 1234));
  EXPECT_TRUE(sizes.MayExceed(7, 1000));
}

TEST(KernelSizes, TheKernelsOwnWritesOnlyRaiseTheSize) {
  KernelSizes sizes;
  sizes.Grew(7, 4096);  // written before any answer carried its size
  EXPECT_TRUE(sizes.MayExceed(7, 100));
  sizes.Told(7, 10000);
  sizes.Grew(7, 5000);  // an overwrite inside the file: the kernel's size stays 10000
  EXPECT_TRUE(sizes.MayExceed(7, 9999));
  EXPECT_FALSE(sizes.MayExceed(7, 10000));
  sizes.Grew(7, 20000);
  EXPECT_TRUE(sizes.MayExceed(7, 10000));
}

TEST(KernelSizes, PastItsBoundItStartsOver) {
  KernelSizes sizes(/*max_files=*/3);
  sizes.Told(1, 100);
  sizes.Told(2, 100);
  sizes.Told(3, 100);
  EXPECT_EQ(sizes.tracked_files(), 3u);
  sizes.Told(2, 200);  // known files are updated in place
  EXPECT_EQ(sizes.tracked_files(), 3u);
  sizes.Grew(4, 100);  // a fourth starts over
  EXPECT_EQ(sizes.tracked_files(), 1u);
  EXPECT_FALSE(sizes.MayExceed(1, 0)) << "forgotten";
  EXPECT_TRUE(sizes.MayExceed(4, 50));
}

}  // namespace
}  // namespace orthofs
