// Prometheus text exposition (common/prometheus_text.h) and the latency histogram feeding it.
#include "common/prometheus_text.h"

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>

#include "common/latency_histogram.h"

namespace orthofs {
namespace {

TEST(PrometheusTextTest, WritesHelpAndTypeOncePerFamily) {
  PrometheusText out;
  out.Counter("orthofs_rpc_calls_total", "RPCs served", 3, {{"method", "read"}});
  out.Counter("orthofs_rpc_calls_total", "RPCs served", 4, {{"method", "write"}});
  out.Gauge("orthofs_store_bytes", "bytes stored", 1.5);
  EXPECT_EQ(out.text(),
            "# HELP orthofs_rpc_calls_total RPCs served\n"
            "# TYPE orthofs_rpc_calls_total counter\n"
            "orthofs_rpc_calls_total{method=\"read\"} 3\n"
            "orthofs_rpc_calls_total{method=\"write\"} 4\n"
            "# HELP orthofs_store_bytes bytes stored\n"
            "# TYPE orthofs_store_bytes gauge\n"
            "orthofs_store_bytes 1.5\n");
}

TEST(PrometheusTextTest, EscapesLabelValuesAndHelp) {
  PrometheusText out;
  out.Gauge("g", "a\\b\nc", 1, {{"path", "x\"y\\z\n"}});
  EXPECT_EQ(out.text(), "# HELP g a\\\\b\\nc\n# TYPE g gauge\ng{path=\"x\\\"y\\\\z\\n\"} 1\n");
}

TEST(PrometheusTextTest, RejectsInvalidNames) {
  PrometheusText out;
  EXPECT_THROW(out.Gauge("1abc", "h", 1), std::invalid_argument);
  EXPECT_THROW(out.Gauge("a-b", "h", 1), std::invalid_argument);
  EXPECT_THROW(out.Gauge("ok", "h", 1, {{"le:x", "v"}}), std::invalid_argument);
  EXPECT_TRUE(IsValidMetricName("orthofs:ratio_total"));
  EXPECT_FALSE(IsValidLabelName("a:b"));
}

TEST(PrometheusTextTest, HistogramHasCumulativeBucketsInfSumAndCount) {
  HistogramSnapshot h{{0.1, 1}, {2, 5}, 7, 3.25};
  PrometheusText out;
  out.Histogram("lat_seconds", "latency", h, {{"method", "read"}});
  EXPECT_EQ(out.text(),
            "# HELP lat_seconds latency\n"
            "# TYPE lat_seconds histogram\n"
            "lat_seconds_bucket{method=\"read\",le=\"0.1\"} 2\n"
            "lat_seconds_bucket{method=\"read\",le=\"1\"} 5\n"
            "lat_seconds_bucket{method=\"read\",le=\"+Inf\"} 7\n"
            "lat_seconds_sum{method=\"read\"} 3.25\n"
            "lat_seconds_count{method=\"read\"} 7\n");
}

TEST(LatencyHistogramTest, CountsIntoTheFirstBucketThatHoldsTheLatency) {
  using std::chrono::microseconds;
  LatencyHistogram h;
  h.Observe(microseconds(50));          // <= 100 us
  h.Observe(microseconds(100));         // <= 100 us (bounds are inclusive)
  h.Observe(microseconds(3000));        // <= 5 ms
  h.Observe(std::chrono::seconds(60));  // +Inf only
  HistogramSnapshot s = h.Snapshot();
  ASSERT_EQ(s.upper_bounds.size(), LatencyHistogram::kUpperBoundsSeconds.size());
  EXPECT_EQ(s.counts[0], 2u);
  EXPECT_EQ(s.counts[4], 2u);  // 2.5 ms
  EXPECT_EQ(s.counts[5], 3u);  // 5 ms
  EXPECT_EQ(s.counts.back(), 3u);
  EXPECT_EQ(s.count, 4u);
  EXPECT_NEAR(s.sum, 60.00315, 1e-9);
}

}  // namespace
}  // namespace orthofs
