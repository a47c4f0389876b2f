#include "common/prometheus_text.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace orthofs {
namespace {

bool ValidName(const std::string& name, bool allow_colon) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (allow_colon && c == ':');
    if (!letter && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

std::string Escape(const std::string& value, bool quote) {
  std::string out;
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (quote && c == '"') {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buf[64];
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.0f", value);
  } else {
    std::snprintf(buf, sizeof buf, "%.9g", value);
  }
  return buf;
}

}  // namespace

bool IsValidMetricName(const std::string& name) { return ValidName(name, true); }
bool IsValidLabelName(const std::string& name) { return ValidName(name, false); }

void PrometheusText::Family(const std::string& name, const std::string& help, const char* type) {
  if (!IsValidMetricName(name)) throw std::invalid_argument("bad metric name '" + name + "'");
  if (name == last_family_) return;
  last_family_ = name;
  text_ += "# HELP " + name + " " + Escape(help, false) + "\n";
  text_ += "# TYPE " + name + " " + type + "\n";
}

void PrometheusText::Sample(const std::string& name, const MetricLabels& labels, double value) {
  text_ += name;
  if (!labels.empty()) {
    text_ += '{';
    for (size_t i = 0; i < labels.size(); ++i) {
      if (!IsValidLabelName(labels[i].first)) {
        throw std::invalid_argument("bad label name '" + labels[i].first + "'");
      }
      if (i > 0) text_ += ',';
      text_ += labels[i].first + "=\"" + Escape(labels[i].second, true) + "\"";
    }
    text_ += '}';
  }
  text_ += ' ' + FormatValue(value) + '\n';
}

void PrometheusText::Counter(const std::string& name, const std::string& help, double value,
                             const MetricLabels& labels) {
  Family(name, help, "counter");
  Sample(name, labels, value);
}

void PrometheusText::Gauge(const std::string& name, const std::string& help, double value,
                           const MetricLabels& labels) {
  Family(name, help, "gauge");
  Sample(name, labels, value);
}

void PrometheusText::Histogram(const std::string& name, const std::string& help,
                               const HistogramSnapshot& h, const MetricLabels& labels) {
  Family(name, help, "histogram");
  for (size_t i = 0; i < h.upper_bounds.size(); ++i) {
    MetricLabels with_le = labels;
    with_le.emplace_back("le", FormatValue(h.upper_bounds[i]));
    Sample(name + "_bucket", with_le, static_cast<double>(h.counts[i]));
  }
  MetricLabels inf = labels;
  inf.emplace_back("le", "+Inf");
  Sample(name + "_bucket", inf, static_cast<double>(h.count));
  Sample(name + "_sum", labels, h.sum);
  Sample(name + "_count", labels, static_cast<double>(h.count));
}

}  // namespace orthofs
