// orthofs-bench's size parsing and request plans.
#include "bench/bench_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

namespace orthofs {
namespace {

constexpr uint64_t kKiB = 1024;
constexpr uint64_t kMiB = 1024 * kKiB;
constexpr uint64_t kGiB = 1024 * kMiB;

uint64_t Size(const std::string& text) {
  Result<uint64_t> size = ParseByteSize(text);
  EXPECT_TRUE(size.ok()) << text << ": " << size.status().ToString();
  return size.ok() ? *size : 0;
}

TEST(ParseByteSizeTest, PlainBytesAndSuffixes) {
  EXPECT_EQ(Size("4096"), 4096u);
  EXPECT_EQ(Size("1"), 1u);
  EXPECT_EQ(Size("16K"), 16 * kKiB);
  EXPECT_EQ(Size("16k"), 16 * kKiB);
  EXPECT_EQ(Size("16KiB"), 16 * kKiB);
  EXPECT_EQ(Size("16kib"), 16 * kKiB);
  EXPECT_EQ(Size("100M"), 100 * kMiB);
  EXPECT_EQ(Size("100MiB"), 100 * kMiB);
  EXPECT_EQ(Size("100m"), 100 * kMiB);
  EXPECT_EQ(Size("1G"), kGiB);
  EXPECT_EQ(Size("1GiB"), kGiB);
  EXPECT_EQ(Size("3g"), 3 * kGiB);
  EXPECT_EQ(Size("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(Size("17179869183G"), 17179869183 * kGiB);  // the largest whole number of GiB
}

TEST(ParseByteSizeTest, RejectsGarbageZeroAndOverflow) {
  for (const char* text : {"", "K", "abc", "16X", "16KB", "16 K", " 16K", "16K ", "-16K", "+16K",
                           "1.5M", "0x10", "16KiBs", "0", "0K", "000", "18446744073709551616",
                           "17179869184G", "99999999999999999999M"}) {
    Result<uint64_t> size = ParseByteSize(text);
    EXPECT_FALSE(size.ok()) << "'" << text << "' parsed as " << (size.ok() ? *size : 0);
    if (!size.ok()) {
      EXPECT_EQ(size.status().code(), StatusCode::kInvalidArgument);
      EXPECT_NE(size.status().message().find("'" + std::string(text) + "'"), std::string::npos)
          << size.status().message();
    }
  }
}

TEST(ParseByteSizeTest, SaysWhatIsWrong) {
  EXPECT_NE(ParseByteSize("0").status().message().find("more than 0"), std::string::npos);
  EXPECT_NE(ParseByteSize("99999999999G").status().message().find("too large"), std::string::npos);
  EXPECT_NE(ParseByteSize("5T").status().message().find("unit"), std::string::npos);
}

TEST(AccessModeTest, NamesRoundTrip) {
  ASSERT_TRUE(ParseAccessMode("seq").ok());
  EXPECT_EQ(*ParseAccessMode("seq"), AccessMode::kSequential);
  ASSERT_TRUE(ParseAccessMode("random").ok());
  EXPECT_EQ(*ParseAccessMode("random"), AccessMode::kRandom);
  EXPECT_EQ(AccessModeName(AccessMode::kSequential), "seq");
  EXPECT_EQ(AccessModeName(AccessMode::kRandom), "random");
  EXPECT_FALSE(ParseAccessMode("bogus").ok());
  EXPECT_FALSE(ParseAccessMode("").ok());
}

TEST(RequestsPerFileTest, RoundsUp) {
  EXPECT_EQ(RequestsPerFile(100 * kMiB, 16 * kKiB), 6400u);
  EXPECT_EQ(RequestsPerFile(10, 4), 3u);
  EXPECT_EQ(RequestsPerFile(8, 4), 2u);
  EXPECT_EQ(RequestsPerFile(3, 4), 1u);
}

std::vector<BenchRequest> ReadPlan(uint32_t files, uint64_t file_bytes, uint64_t request_bytes,
                                   AccessMode mode, uint64_t seed = 1) {
  Result<std::vector<BenchRequest>> plan =
      MakeReadPlan({files, file_bytes, request_bytes, mode, seed});
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  return plan.ok() ? *plan : std::vector<BenchRequest>{};
}

TEST(ReadPlanTest, SequentialIsRoundRobinAcrossFiles) {
  const std::vector<BenchRequest> expected = {
      {0, 0, 4}, {1, 0, 4}, {2, 0, 4},  // block 0 of each file
      {0, 4, 4}, {1, 4, 4}, {2, 4, 4},  // block 1
      {0, 8, 4}, {1, 8, 4}, {2, 8, 4},
  };
  EXPECT_EQ(ReadPlan(3, 12, 4, AccessMode::kSequential), expected);
}

TEST(ReadPlanTest, SequentialLastRequestOfAFileIsShort) {
  const std::vector<BenchRequest> expected = {
      {0, 0, 4}, {1, 0, 4}, {0, 4, 4}, {1, 4, 4}, {0, 8, 2}, {1, 8, 2},
  };
  EXPECT_EQ(ReadPlan(2, 10, 4, AccessMode::kSequential), expected);
  // A request larger than the file reads the whole file in one.
  const std::vector<BenchRequest> whole_file = {{0, 0, 3}};
  EXPECT_EQ(ReadPlan(1, 3, 16, AccessMode::kSequential), whole_file);
}

TEST(ReadPlanTest, PaperSizedPlanHasOneRequestPerBlockOfEachFile) {
  const std::vector<BenchRequest> plan =
      ReadPlan(5, 100 * kMiB, 16 * kKiB, AccessMode::kSequential);
  ASSERT_EQ(plan.size(), 5u * 6400);
  uint64_t bytes = 0;
  for (const BenchRequest& r : plan) bytes += r.length;
  EXPECT_EQ(bytes, 5 * 100 * kMiB);
  EXPECT_EQ(plan.back(), (BenchRequest{4, 100 * kMiB - 16 * kKiB, 16 * kKiB}));
}

TEST(ReadPlanTest, RandomHasTheSameCountAndRoundRobinFiles) {
  for (uint64_t file_bytes : {uint64_t{40}, uint64_t{42}}) {
    const std::vector<BenchRequest> plan = ReadPlan(3, file_bytes, 4, AccessMode::kRandom, 7);
    ASSERT_EQ(plan.size(), 3 * RequestsPerFile(file_bytes, 4));
    for (size_t i = 0; i < plan.size(); ++i) EXPECT_EQ(plan[i].file, i % 3) << i;
  }
}

TEST(ReadPlanTest, RandomOffsetsAreAlignedAndInsideTheFile) {
  const uint64_t file_bytes = 1000 * 16 + 5;  // a short last block
  const std::vector<BenchRequest> plan = ReadPlan(4, file_bytes, 16, AccessMode::kRandom, 42);
  bool saw_short = false;
  std::set<uint64_t> offsets;
  for (const BenchRequest& r : plan) {
    EXPECT_EQ(r.offset % 16, 0u);
    EXPECT_LT(r.offset, file_bytes);
    EXPECT_GT(r.length, 0u);
    EXPECT_LE(r.offset + r.length, file_bytes);
    EXPECT_EQ(r.length, std::min<uint64_t>(16, file_bytes - r.offset));
    saw_short |= r.length == 5;
    offsets.insert(r.offset);
  }
  EXPECT_TRUE(saw_short);           // 4004 draws over 1001 blocks hit the last one
  EXPECT_GT(offsets.size(), 500u);  // spread over the file, not stuck on a few blocks
}

TEST(ReadPlanTest, RandomIsReproducibleBySeed) {
  const auto a = ReadPlan(5, kMiB, 16 * kKiB, AccessMode::kRandom, 1);
  const auto b = ReadPlan(5, kMiB, 16 * kKiB, AccessMode::kRandom, 1);
  const auto c = ReadPlan(5, kMiB, 16 * kKiB, AccessMode::kRandom, 2);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a, ReadPlan(5, kMiB, 16 * kKiB, AccessMode::kSequential, 1));
}

TEST(ReadPlanTest, SequentialIgnoresTheSeed) {
  EXPECT_EQ(ReadPlan(3, 100, 7, AccessMode::kSequential, 1),
            ReadPlan(3, 100, 7, AccessMode::kSequential, 99));
}

TEST(ReadPlanTest, RejectsEmptyShapesAndHugePlans) {
  EXPECT_FALSE(MakeReadPlan({0, 100, 4, AccessMode::kSequential, 1}).ok());
  EXPECT_FALSE(MakeReadPlan({1, 0, 4, AccessMode::kSequential, 1}).ok());
  EXPECT_FALSE(MakeReadPlan({1, 100, 0, AccessMode::kSequential, 1}).ok());
  Result<std::vector<BenchRequest>> huge =
      MakeReadPlan({1000, 100 * kGiB, 1, AccessMode::kRandom, 1});
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("limit"), std::string::npos);
  // Just over the limit: 2 files x (kMaxPlanRequests / 2 + 1) requests.
  EXPECT_FALSE(MakeWritePlan(2, kMaxPlanRequests / 2 + 1, 1).ok());
}

TEST(WritePlanTest, EachFileSequentiallyOneAfterTheOther) {
  Result<std::vector<BenchRequest>> plan = MakeWritePlan(2, 10, 4);
  ASSERT_TRUE(plan.ok());
  const std::vector<BenchRequest> expected = {
      {0, 0, 4}, {0, 4, 4}, {0, 8, 2}, {1, 0, 4}, {1, 4, 4}, {1, 8, 2},
  };
  EXPECT_EQ(*plan, expected);
}

TEST(WritePlanTest, DefaultWriteRequestCoversThePaperFiles) {
  Result<std::vector<BenchRequest>> plan = MakeWritePlan(5, 100 * kMiB, kMiB);
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->size(), 500u);
  EXPECT_EQ(plan->front(), (BenchRequest{0, 0, kMiB}));
  EXPECT_EQ((*plan)[100], (BenchRequest{1, 0, kMiB}));
  EXPECT_EQ(plan->back(), (BenchRequest{4, 99 * kMiB, kMiB}));
}

TEST(ShuffledOrderTest, IsAReproduciblePermutation) {
  const std::vector<uint32_t> a = ShuffledOrder(1000, 1);
  std::vector<uint32_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (uint32_t i = 0; i < 1000; ++i) ASSERT_EQ(sorted[i], i);
  EXPECT_EQ(a, ShuffledOrder(1000, 1));
  EXPECT_NE(a, ShuffledOrder(1000, 2));
  EXPECT_NE(a, sorted);
  EXPECT_TRUE(ShuffledOrder(0, 1).empty());
  EXPECT_EQ(ShuffledOrder(1, 1), std::vector<uint32_t>{0});
}

}  // namespace
}  // namespace orthofs
