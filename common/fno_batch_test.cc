#include "common/fno_batch.h"

#include <gtest/gtest.h>

#include <limits>

namespace orthofs {
namespace {

constexpr uint64_t kTop = std::numeric_limits<uint64_t>::max();

TEST(FnoBatchTest, ABatchStartsAtTheCounterWhenAllCopiesAreUp) {
  Result<FnoBatch> batch = NextFnoBatch(2, std::nullopt);
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  EXPECT_EQ(batch->first, 2u);
  EXPECT_EQ(batch->end, 2 + kFnoBatch);
}

TEST(FnoBatchTest, AJumpedBatchStartsWholeBatchesAheadWithinTheLimit) {
  for (uint64_t random : {uint64_t{0}, uint64_t{1}, uint64_t{12345}, kMaxFnoJumpBatches - 1,
                          kMaxFnoJumpBatches, kTop}) {
    Result<FnoBatch> batch = NextFnoBatch(5000, random);
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    EXPECT_GE(batch->first, 5000 + kFnoBatch) << random;  // never the plain batch
    EXPECT_LE(batch->first, 5000 + kMaxFnoJumpBatches * kFnoBatch) << random;
    EXPECT_EQ((batch->first - 5000) % kFnoBatch, 0u) << random;
    EXPECT_EQ(batch->end, batch->first + kFnoBatch) << random;
  }
  EXPECT_EQ(NextFnoBatch(5000, 0)->first, 5000 + kFnoBatch);
  EXPECT_EQ(NextFnoBatch(5000, kMaxFnoJumpBatches - 1)->first,
            5000 + kMaxFnoJumpBatches * kFnoBatch);
}

// The two sides of a fork start from one counter: different random numbers, different batches.
TEST(FnoBatchTest, TwoJumpsFromOneCounterDoNotOverlap) {
  Result<FnoBatch> a = NextFnoBatch(77, 3);
  Result<FnoBatch> b = NextFnoBatch(77, 4);
  Result<FnoBatch> plain = NextFnoBatch(77, std::nullopt);
  ASSERT_TRUE(a.ok() && b.ok() && plain.ok());
  EXPECT_TRUE(a->end <= b->first || b->end <= a->first);
  EXPECT_TRUE(plain->end <= a->first && plain->end <= b->first);
}

TEST(FnoBatchTest, NearTheTopABatchDoesNotJumpAndPastItNoneIsLeft) {
  const uint64_t last_whole = kTop - kFnoBatch;
  Result<FnoBatch> batch = NextFnoBatch(last_whole, 99);
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  EXPECT_EQ(batch->first, last_whole);
  EXPECT_EQ(batch->end, kTop);
  Result<FnoBatch> none = NextFnoBatch(last_whole + 1, std::nullopt);
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(none.status().Is(StatusCode::kNoSpace)) << none.status().ToString();
  EXPECT_FALSE(NextFnoBatch(kTop, 1).ok());
}

}  // namespace
}  // namespace orthofs
