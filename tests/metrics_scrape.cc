#include "tests/metrics_scrape.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <regex>
#include <sstream>

namespace orthofs::testing {

std::pair<int, std::string> HttpGet(int port, const std::string& path, const std::string& method) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return {-1, ""};
  }
  const std::string request = method + " " + path + " HTTP/1.0\r\nHost: x\r\n\r\n";
  (void)!write(fd, request.data(), request.size());
  std::string response;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) response.append(buf, static_cast<size_t>(n));
  close(fd);
  const size_t body = response.find("\r\n\r\n");
  if (response.rfind("HTTP/1.0 ", 0) != 0 || body == std::string::npos) return {-1, response};
  return {std::stoi(response.substr(9, 3)), response.substr(body + 4)};
}

std::map<std::string, double> ParsePrometheus(const std::string& text) {
  std::map<std::string, std::string> types;
  std::map<std::string, double> samples;
  const std::regex sample_line(R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$)");
  const std::regex type_line(R"(^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram)$)");
  std::istringstream in(text);
  std::string line;
  std::map<std::string, double> last_bucket;  // histogram series -> last cumulative count
  while (std::getline(in, line)) {
    std::smatch m;
    if (line.rfind("# HELP ", 0) == 0) continue;
    if (line.rfind("# TYPE ", 0) == 0) {
      EXPECT_TRUE(std::regex_match(line, m, type_line)) << line;
      if (!m.empty()) {
        EXPECT_TRUE(types.emplace(m[1], m[2]).second) << "typed twice: " << line;
      }
      continue;
    }
    EXPECT_TRUE(std::regex_match(line, m, sample_line)) << "malformed: " << line;
    if (m.empty()) continue;
    std::string family = m[1];
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      const std::string base = family.substr(0, family.size() - std::strlen(suffix));
      if (family.ends_with(suffix) && types.count(base) && types[base] == "histogram") {
        family = base;
      }
    }
    EXPECT_TRUE(types.count(family)) << "sample before its TYPE: " << line;
    const double value = std::stod(m[3]);
    samples[std::string(m[1]) + std::string(m[2])] = value;
    if (std::string(m[1]).ends_with("_bucket")) {
      std::string series = m[2];
      series = series.substr(0, series.find(",le="));
      EXPECT_GE(value, last_bucket[m[1].str() + series]) << "buckets not cumulative: " << line;
      last_bucket[m[1].str() + series] = value;
    }
  }
  return samples;
}

std::map<std::string, double> ScrapeMetrics(int port) {
  auto [code, text] = HttpGet(port, "/metrics");
  EXPECT_EQ(code, 200) << text;
  return ParsePrometheus(text);
}

}  // namespace orthofs::testing
