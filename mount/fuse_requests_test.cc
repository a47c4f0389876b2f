#include "mount/fuse_requests.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>
#include <vector>

namespace orthofs {
namespace {

TEST(FuseOpName, EveryOperationHasItsOwnLowercaseName) {
  std::set<std::string> names;
  for (size_t i = 0; i < kFuseOpCount; ++i) {
    const std::string name = FuseOpName(static_cast<FuseOp>(i));
    EXPECT_NE(name, "unknown") << "operation " << i;
    EXPECT_FALSE(name.empty());
    for (char c : name) EXPECT_TRUE(c >= 'a' && c <= 'z') << name;
    names.insert(name);
  }
  EXPECT_EQ(names.size(), kFuseOpCount);
  EXPECT_STREQ(FuseOpName(FuseOp::kGetattr), "getattr");
  EXPECT_STREQ(FuseOpName(FuseOp::kRemovexattr), "removexattr");
}

TEST(FuseRequestCounts, StartAtZeroAndCountEachOperationApart) {
  FuseRequestCounts counts;
  for (size_t i = 0; i < kFuseOpCount; ++i) EXPECT_EQ(counts.count(static_cast<FuseOp>(i)), 0u);
  counts.Count(FuseOp::kRead);
  counts.Count(FuseOp::kRead);
  counts.Count(FuseOp::kWrite);
  EXPECT_EQ(counts.count(FuseOp::kRead), 2u);
  EXPECT_EQ(counts.count(FuseOp::kWrite), 1u);
  EXPECT_EQ(counts.count(FuseOp::kGetattr), 0u);
}

TEST(FuseRequestCounts, ThreadsCountingAtOnceLoseNothing) {
  FuseRequestCounts counts;
  constexpr int kThreads = 4;
  constexpr int kEach = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kEach; ++i) counts.Count(FuseOp::kGetattr);
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(counts.count(FuseOp::kGetattr), static_cast<uint64_t>(kThreads * kEach));
}

}  // namespace
}  // namespace orthofs
