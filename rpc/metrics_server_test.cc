#include "rpc/metrics_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace orthofs {
namespace {

// One GET over a real socket; the whole answer, headers included.
std::string Get(int port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "";
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(port));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string answer;
  if (connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0) {
    const std::string request = "GET " + path + " HTTP/1.0\r\nHost: x\r\n\r\n";
    if (write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
      char buf[4096];
      for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) answer.append(buf, n);
    }
  }
  close(fd);
  return answer;
}

TEST(MetricsServerTest, PortZeroBindsAFreePortThatTheUrlNames) {
  auto server = MetricsServer::Start("127.0.0.1:0", [] { return std::string("up 1\n"); });
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const int port = (*server)->port();
  ASSERT_GT(port, 0);
  EXPECT_EQ((*server)->url(), "http://127.0.0.1:" + std::to_string(port) + "/metrics");
  const std::string answer = Get(port, "/metrics");
  EXPECT_NE(answer.find("200"), std::string::npos) << answer;
  EXPECT_NE(answer.find("\r\n\r\nup 1\n"), std::string::npos) << answer;
  EXPECT_NE(Get(port, "/other").find("404"), std::string::npos);
}

TEST(MetricsServerTest, BadAddressesAreRefusedWithTheReason) {
  auto render = [] { return std::string(); };
  auto no_port = MetricsServer::Start("127.0.0.1", render);
  ASSERT_FALSE(no_port.ok());
  EXPECT_NE(no_port.status().message().find("not host:port"), std::string::npos);
  EXPECT_FALSE(MetricsServer::Start("127.0.0.1:", render).ok());
  auto first = MetricsServer::Start("127.0.0.1:0", render);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto taken = MetricsServer::Start("127.0.0.1:" + std::to_string((*first)->port()), render);
  ASSERT_FALSE(taken.ok());
  EXPECT_NE(taken.status().message().find("cannot listen"), std::string::npos)
      << taken.status().ToString();
}

}  // namespace
}  // namespace orthofs
