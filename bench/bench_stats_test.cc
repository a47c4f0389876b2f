// Summary statistics of orthofs-bench's per-run figures.
#include "bench/bench_stats.h"

#include <gtest/gtest.h>

#include <vector>

namespace orthofs {
namespace {

TEST(SummarizeTest, EmptyIsAllZeros) {
  const SummaryStats stats = Summarize({});
  EXPECT_EQ(stats.count, 0u);
  EXPECT_EQ(stats.mean, 0);
  EXPECT_EQ(stats.median, 0);
  EXPECT_EQ(stats.min, 0);
  EXPECT_EQ(stats.max, 0);
}

TEST(SummarizeTest, OneValue) {
  const std::vector<double> values = {42.5};
  const SummaryStats stats = Summarize(values);
  EXPECT_EQ(stats.count, 1u);
  EXPECT_DOUBLE_EQ(stats.mean, 42.5);
  EXPECT_DOUBLE_EQ(stats.median, 42.5);
  EXPECT_DOUBLE_EQ(stats.min, 42.5);
  EXPECT_DOUBLE_EQ(stats.max, 42.5);
}

TEST(SummarizeTest, OddCountTakesTheMiddleValueOfUnsortedInput) {
  const std::vector<double> values = {5, 1, 100, 3, 2};
  const SummaryStats stats = Summarize(values);
  EXPECT_EQ(stats.count, 5u);
  EXPECT_DOUBLE_EQ(stats.mean, 22.2);
  EXPECT_DOUBLE_EQ(stats.median, 3);
  EXPECT_DOUBLE_EQ(stats.min, 1);
  EXPECT_DOUBLE_EQ(stats.max, 100);
}

TEST(SummarizeTest, EvenCountAveragesTheMiddleTwo) {
  const std::vector<double> values = {10, 4, 1, 7};
  const SummaryStats stats = Summarize(values);
  EXPECT_EQ(stats.count, 4u);
  EXPECT_DOUBLE_EQ(stats.mean, 5.5);
  EXPECT_DOUBLE_EQ(stats.median, 5.5);  // (4 + 7) / 2
  EXPECT_DOUBLE_EQ(stats.min, 1);
  EXPECT_DOUBLE_EQ(stats.max, 10);
}

TEST(SummarizeTest, RepeatedValues) {
  const std::vector<double> values = {2, 2, 2, 8};
  const SummaryStats stats = Summarize(values);
  EXPECT_DOUBLE_EQ(stats.median, 2);
  EXPECT_DOUBLE_EQ(stats.mean, 3.5);
}

}  // namespace
}  // namespace orthofs
