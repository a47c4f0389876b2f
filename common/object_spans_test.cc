#include "common/object_spans.h"

#include <gtest/gtest.h>

namespace orthofs {
namespace {

constexpr uint64_t kObj = 128 * 1024;

TEST(SplitIntoObjectsTest, EmptyRange) { EXPECT_TRUE(SplitIntoObjects(12345, 0, kObj).empty()); }

TEST(SplitIntoObjectsTest, InsideOneObject) {
  auto spans = SplitIntoObjects(kObj * 3 + 10, 100, kObj);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].index, 3u);
  EXPECT_EQ(spans[0].offset, 10u);
  EXPECT_EQ(spans[0].length, 100u);
  EXPECT_EQ(spans[0].buffer_offset, 0u);
}

TEST(SplitIntoObjectsTest, ExactlyOneAlignedObject) {
  auto spans = SplitIntoObjects(kObj, kObj, kObj);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].index, 1u);
  EXPECT_EQ(spans[0].offset, 0u);
  EXPECT_EQ(spans[0].length, kObj);
}

TEST(SplitIntoObjectsTest, UnalignedAcrossSeveralObjects) {
  auto spans = SplitIntoObjects(kObj - 1, 2 * kObj + 2, kObj);
  ASSERT_EQ(spans.size(), 4u);
  EXPECT_EQ(spans[0].index, 0u);
  EXPECT_EQ(spans[0].offset, kObj - 1);
  EXPECT_EQ(spans[0].length, 1u);
  EXPECT_EQ(spans[1].index, 1u);
  EXPECT_EQ(spans[1].length, kObj);
  EXPECT_EQ(spans[1].buffer_offset, 1u);
  EXPECT_EQ(spans[2].index, 2u);
  EXPECT_EQ(spans[3].index, 3u);
  EXPECT_EQ(spans[3].offset, 0u);
  EXPECT_EQ(spans[3].length, 1u);
  uint64_t total = 0;
  for (const auto& s : spans) total += s.length;
  EXPECT_EQ(total, 2 * kObj + 2);
}

TEST(SplitIntoObjectsTest, BeyondFourGiB) {
  const uint64_t at = (uint64_t{5} << 30) + 7;
  auto spans = SplitIntoObjects(at, 1, kObj);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].index, at / kObj);
  EXPECT_EQ(spans[0].offset, at % kObj);
}

}  // namespace
}  // namespace orthofs
