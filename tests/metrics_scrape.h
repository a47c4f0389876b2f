// Scraping a metrics endpoint in tests: a plain HTTP GET and a Prometheus text-format checker.
#pragma once

#include <map>
#include <string>
#include <utility>

namespace orthofs::testing {

// METHOD path on 127.0.0.1:port: {status code, body}; code -1 when there is no HTTP answer.
std::pair<int, std::string> HttpGet(int port, const std::string& path,
                                    const std::string& method = "GET");

// Checks the Prometheus text format (families typed before their samples, well-formed sample
// lines, histogram buckets cumulative) with gtest expectations and returns every sample's
// value by its full name with labels, e.g. orthofs_osd_requests_total{osd="0",method="write"}.
std::map<std::string, double> ParsePrometheus(const std::string& text);

// GET /metrics on 127.0.0.1:port (expecting 200), parsed as ParsePrometheus does.
std::map<std::string, double> ScrapeMetrics(int port);

}  // namespace orthofs::testing
