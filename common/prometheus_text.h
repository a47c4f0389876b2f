// Prometheus text exposition format (version 0.0.4): counters, gauges and histograms written
// with their HELP and TYPE lines, names and label values checked and escaped. Pure formatting;
// osd/metrics_server.h serves the text over HTTP.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace orthofs {

using MetricLabels = std::vector<std::pair<std::string, std::string>>;

// Cumulative bucket counts of one histogram: counts[i] observations <= upper_bounds[i].
struct HistogramSnapshot {
  std::vector<double> upper_bounds;
  std::vector<uint64_t> counts;  // cumulative, same size as upper_bounds
  uint64_t count = 0;            // all observations (the +Inf bucket)
  double sum = 0;
};

class PrometheusText {
 public:
  // Each family's HELP/TYPE is written once, before its first sample; samples of one family
  // must be added together. Names are constants of the program: an invalid one is a bug and
  // throws std::invalid_argument.
  void Counter(const std::string& name, const std::string& help, double value,
               const MetricLabels& labels = {});
  void Gauge(const std::string& name, const std::string& help, double value,
             const MetricLabels& labels = {});
  void Histogram(const std::string& name, const std::string& help,
                 const HistogramSnapshot& histogram, const MetricLabels& labels = {});

  const std::string& text() const { return text_; }

 private:
  void Family(const std::string& name, const std::string& help, const char* type);
  void Sample(const std::string& name, const MetricLabels& labels, double value);

  std::string text_;
  std::string last_family_;
};

// [a-zA-Z_:][a-zA-Z0-9_:]*, and for labels without ':'.
bool IsValidMetricName(const std::string& name);
bool IsValidLabelName(const std::string& name);

}  // namespace orthofs
