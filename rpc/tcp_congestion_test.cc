// The congestion control in use reaches the sockets gRPC makes: a channel's connection, a
// server's listener and the connection it accepts (checked with getsockopt on this process's
// own descriptors), and a name the kernel lacks is refused with the list it offers.
#include "rpc/tcp_congestion.h"

#include <dirent.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include "rpc/osd_client.h"

namespace orthofs {
namespace {

std::string HostDefault() {
  std::ifstream in("/proc/sys/net/ipv4/tcp_congestion_control");
  std::string name;
  in >> name;
  return name;
}

// One this process may use that is not the host's default ("" when there is none).
std::string OtherThanDefault() {
  for (const char* name : {"reno", "cubic", "bbr"}) {
    if (name != HostDefault() && CheckTcpCongestion(name).ok()) return name;
  }
  return "";
}

// How many of this process's TCP sockets use each congestion control.
std::map<std::string, int> TcpSocketsByAlgorithm() {
  std::map<std::string, int> counts;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return counts;
  while (dirent* entry = readdir(dir)) {
    const int fd = atoi(entry->d_name);
    if (entry->d_name[0] == '.' || fd == dirfd(dir)) continue;
    int protocol = 0;
    socklen_t length = sizeof(protocol);
    if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &protocol, &length) != 0 ||
        protocol != IPPROTO_TCP) {
      continue;
    }
    char name[16] = {};
    length = sizeof(name);
    if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &length) == 0) ++counts[name];
  }
  closedir(dir);
  return counts;
}

// A server and a channel connected to it.
struct Connected {
  // Answers every call UNIMPLEMENTED: a server needs a service to start; no call is made.
  std::unique_ptr<grpc::CallbackGenericService> service =
      std::make_unique<grpc::CallbackGenericService>();
  std::unique_ptr<grpc::Server> server;
  std::shared_ptr<grpc::Channel> channel;
};

Connected Connect() {
  Connected c;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.SetOption(TcpCongestionServerOption());
  builder.RegisterCallbackGenericService(c.service.get());
  c.server = builder.BuildAndStart();
  EXPECT_NE(port, 0);
  c.channel =
      grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(port),
                                grpc::InsecureChannelCredentials(), OrthoChannelArguments());
  EXPECT_TRUE(
      c.channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10)));
  return c;
}

// Each test starts and ends on the host's default, whatever it asserted in between.
class TcpCongestionTest : public testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(UseTcpCongestion("").ok()); }
  void TearDown() override { ASSERT_TRUE(UseTcpCongestion("").ok()); }
};

TEST_F(TcpCongestionTest, UnknownNameIsRefusedWithTheKernelsList) {
  EXPECT_NE(CheckTcpCongestion("cu bic").message().find("letters"), std::string::npos);
  Status st = CheckTcpCongestion("no_such_cc");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'no_such_cc' is not available on this host"), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("offers: "), std::string::npos) << st.message();

  EXPECT_FALSE(UseTcpCongestion("no_such_cc").ok());
  EXPECT_EQ(TcpCongestionInUse(), "");  // unchanged: connections keep the host's default
}

TEST_F(TcpCongestionTest, ConnectionsListenerAndAcceptedSocketsUseIt) {
  const std::string other = OtherThanDefault();
  if (other.empty()) GTEST_SKIP() << "this host offers no congestion control but its default";

  // Without one in use, gRPC's sockets keep the host's default.
  {
    Connected plain = Connect();
    EXPECT_EQ(TcpSocketsByAlgorithm()[other], 0);
    EXPECT_GE(TcpSocketsByAlgorithm()[HostDefault()], 3);
  }

  ASSERT_TRUE(UseTcpCongestion(other).ok());
  EXPECT_EQ(TcpCongestionInUse(), other);
  {
    Connected tuned = Connect();
    // The listener, the channel's connection and the one the server accepted.
    EXPECT_GE(TcpSocketsByAlgorithm()[other], 3) << other;
  }
}

TEST_F(TcpCongestionTest, ClusterMapSettingIsUsedAndAMissingOneKeepsTheDefault) {
  ClusterMap map;
  map.tcp_congestion = "no_such_cc";
  UseClusterTcpCongestion(map);  // warns, does not fail
  EXPECT_EQ(TcpCongestionInUse(), "");
  map.tcp_congestion = "reno";
  if (!CheckTcpCongestion("reno").ok()) GTEST_SKIP() << "reno not offered here";
  UseClusterTcpCongestion(map);
  EXPECT_EQ(TcpCongestionInUse(), "reno");
}

}  // namespace
}  // namespace orthofs
