// FreePort across test processes: ports one test process holds are never handed to another
// (ctest runs test binaries side by side, and an OSD's port is free while the OSD restarts).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>

#include "tests/test_cluster.h"

namespace orthofs::testing {
namespace {

constexpr int kPorts = 400;
constexpr char kHelperEnv[] = "ORTHOFS_FREE_PORT_HELPER";

// Run in a process of its own by PortsHeldByAnotherProcessAreNotHandedOut: prints kPorts
// ports from FreePort, one per line.
TEST(FreePortTest, HelperPrintsPorts) {
  if (std::getenv(kHelperEnv) == nullptr) {
    GTEST_SKIP() << "a helper of PortsHeldByAnotherProcessAreNotHandedOut";
  }
  for (int i = 0; i < kPorts; ++i) std::cout << "port " << FreePort() << "\n";
}

// Drawn at random from 12,768 ports, two processes' 400 would share about 12 without the
// locks (a chance of about 4 in a million to share none).
TEST(FreePortTest, PortsHeldByAnotherProcessAreNotHandedOut) {
  std::set<int> mine;
  for (int i = 0; i < kPorts; ++i) mine.insert(FreePort());
  ASSERT_EQ(mine.size(), static_cast<size_t>(kPorts)) << "one port twice in one process";
  CommandResult helper = RunCommand({"/usr/bin/env", std::string(kHelperEnv) + "=1",
                                     std::filesystem::read_symlink("/proc/self/exe").string(),
                                     "--gtest_filter=FreePortTest.HelperPrintsPorts"});
  ASSERT_EQ(helper.exit_code, 0) << helper.out << helper.err;
  std::istringstream out(helper.out);
  std::set<int> theirs;
  for (std::string word; out >> word;) {
    int port = 0;
    if (word == "port" && out >> port) theirs.insert(port);
  }
  ASSERT_EQ(theirs.size(), static_cast<size_t>(kPorts)) << helper.out;
  for (int port : theirs) EXPECT_FALSE(mine.contains(port)) << "port " << port << " twice";
  for (int port : mine) ReleasePort(port);
}

}  // namespace
}  // namespace orthofs::testing
