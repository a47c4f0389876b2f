// Integration tests of the two binaries' command lines: orthofs-osd's start-up checks
// (every bad input is one clear line on stderr and a non-zero exit) and the orthofs admin
// CLI (status, put/get/stat/rm, locate, placement-report), all through real processes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/placement.h"
#include "rpc/map_file.h"
#include "rpc/wire.h"
#include "tests/test_cluster.h"

namespace orthofs::testing {
namespace {

using ::testing::AssertionFailure;
using ::testing::AssertionResult;
using ::testing::AssertionSuccess;

std::string OsdBin() { return BinDir() + "/orthofs-osd"; }
std::string CliBin() { return BinDir() + "/orthofs"; }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

// Runs an orthofs-osd invocation that is expected to exit by itself. Unlike RunCommand it
// is bounded: a daemon that wrongly starts serving is killed after `limit` and reported as
// exit code -2 instead of hanging the test. stdout/stderr go through files in `scratch`.
CommandResult RunDaemonExpectingExit(const std::vector<std::string>& argv,
                                     const std::string& scratch,
                                     std::chrono::seconds limit = std::chrono::seconds(20)) {
  static int serial = 0;
  const std::string base = scratch + "/run-" + std::to_string(++serial);
  const std::string out_path = base + ".out", err_path = base + ".err";
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) return CommandResult{-1, "", "fork failed"};
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    int in = open("/dev/null", O_RDONLY);
    int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0) _exit(126);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    execv(args[0], args.data());
    _exit(127);
  }
  CommandResult result;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  bool exited = false;
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!exited) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    result.exit_code = -2;
  } else if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.exit_code = 128 + WTERMSIG(status);
  }
  result.out = ReadFile(out_path);
  result.err = ReadFile(err_path);
  return result;
}

std::string Describe(const CommandResult& r) {
  return "exit code " + std::to_string(r.exit_code) + "\n--- stdout ---\n" + r.out +
         "\n--- stderr ---\n" + r.err + "\n---";
}

// The process failed (with `exit_code`, or any non-zero code if exit_code < 0) and wrote
// exactly one non-empty, newline-terminated line on stderr that contains `needle`.
AssertionResult FailedWithOneLine(const CommandResult& r, int exit_code,
                                  const std::string& needle) {
  if (r.exit_code == -2)
    return AssertionFailure() << "did not exit within the limit; " << Describe(r);
  if (exit_code >= 0 ? r.exit_code != exit_code : r.exit_code <= 0) {
    return AssertionFailure() << "want exit code "
                              << (exit_code >= 0 ? std::to_string(exit_code) : "!= 0") << ", got "
                              << Describe(r);
  }
  if (std::count(r.err.begin(), r.err.end(), '\n') != 1 || r.err.back() != '\n') {
    return AssertionFailure() << "stderr is not exactly one line; " << Describe(r);
  }
  if (r.err.size() < 2) return AssertionFailure() << "stderr line is empty; " << Describe(r);
  if (r.err.find(needle) == std::string::npos) {
    return AssertionFailure() << "stderr does not mention '" << needle << "'; " << Describe(r);
  }
  return AssertionSuccess();
}

size_t CountOf(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = haystack.find(needle); pos != std::string::npos;
       pos = haystack.find(needle, pos + needle.size())) {
    ++n;
  }
  return n;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// A map with OSDs 0..n-1 on 127.0.0.1 ports base, base+1, ... (nothing needs to listen).
std::string MapYaml(int n, int base_port = 7100, const std::string& placement = "migration") {
  std::string y = "epoch: 1\nobject_size: 131072\nplacement: " + placement + "\nosds:\n";
  for (int i = 0; i < n; ++i) {
    y += "  - id: " + std::to_string(i) +
         "\n    address: \"127.0.0.1:" + std::to_string(base_port + i) + "\"\n";
  }
  return y;
}

// ---------------------------------------------------------------------------------------
// orthofs-osd: bad input that needs no running cluster.

class OsdBadInputTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) const { return tmp_.path() + "/" + name; }
  std::string MapFile(const std::string& name, const std::string& yaml) {
    std::string path = Path(name);
    WriteFile(path, yaml);
    return path;
  }
  // Plaintext unless the test asks otherwise (these tests are about other bad input).
  CommandResult RunOsd(std::vector<std::string> args, bool insecure = true) {
    args.insert(args.begin(), OsdBin());
    if (insecure) args.push_back("--insecure");
    return RunDaemonExpectingExit(args, tmp_.path());
  }
  // Starts OSD 0 of `yaml` with a fresh data dir; map errors must stop it before it
  // touches the data dir.
  CommandResult RunWithMap(const std::string& yaml) {
    const std::string map = MapFile("map-" + std::to_string(++maps_) + ".yaml", yaml);
    CommandResult r = RunOsd({"--id", "0", "--map", map, "--data-dir", Path("data")});
    EXPECT_FALSE(std::filesystem::exists(Path("data")))
        << "a bad map must be rejected before the data dir is created";
    return r;
  }

  TempDir tmp_;
  int maps_ = 0;
};

TEST_F(OsdBadInputTest, UnknownFlagExitsTwoAndNamesTheFlag) {
  const std::string map = MapFile("ok.yaml", MapYaml(2));
  CommandResult r = RunOsd({"--id", "0", "--map", map, "--data-dir", Path("data"), "--bogus"});
  EXPECT_TRUE(FailedWithOneLine(r, 2, "--bogus"));
  EXPECT_TRUE(r.out.empty()) << r.out;

  // A stray positional argument is a usage error too.
  r = RunOsd({"--id", "0", "--map", map, "--data-dir", Path("data"), "extra"});
  EXPECT_TRUE(FailedWithOneLine(r, 2, "extra"));

  // Alone, the unknown flag is still a usage error with one line. (CLI11 reports the
  // missing required --id first, so this line does not name --bogus.)
  r = RunOsd({"--bogus"});
  EXPECT_TRUE(FailedWithOneLine(r, 2, "orthofs-osd:"));
  EXPECT_FALSE(std::filesystem::exists(Path("data")));
}

TEST_F(OsdBadInputTest, MissingIdOrMap) {
  const std::string map = MapFile("ok.yaml", MapYaml(2));
  EXPECT_TRUE(FailedWithOneLine(RunOsd({"--map", map, "--data-dir", Path("data")}), 2, "--id"));
  EXPECT_TRUE(FailedWithOneLine(RunOsd({"--id", "0", "--data-dir", Path("data")}), 2, "--map"));
  EXPECT_TRUE(FailedWithOneLine(RunOsd({"--id", "zero", "--map", map}), 2, "--id"));
  EXPECT_FALSE(std::filesystem::exists(Path("data")));
}

TEST_F(OsdBadInputTest, HelpExitsZeroAndDocumentsFlags) {
  CommandResult r = RunOsd({"--help"});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("--data-dir"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--map"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--id"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Usage"), std::string::npos) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST_F(OsdBadInputTest, MalformedMap) {
  EXPECT_TRUE(FailedWithOneLine(RunWithMap("epoch: [1, 2\nosds: {\n"), 1, "not valid YAML"));
  EXPECT_TRUE(FailedWithOneLine(RunWithMap("just a string\n"), 1, "must be a YAML mapping"));
  EXPECT_TRUE(FailedWithOneLine(RunWithMap("- 1\n- 2\n"), 1, "must be a YAML mapping"));
  // The message starts with the map's path.
  EXPECT_TRUE(FailedWithOneLine(RunWithMap("just a string\n"), 1, Path("map-")));
  EXPECT_TRUE(FailedWithOneLine(RunWithMap("epoch: 1\nosds: 3\n"), 1, "osds: must be a list"));
  EXPECT_TRUE(FailedWithOneLine(RunWithMap(MapYaml(2) + "colour: blue\n"), 1, "unknown key"));
}

TEST_F(OsdBadInputTest, DuplicateOsdIds) {
  std::string yaml = MapYaml(2) + "  - id: 1\n    address: \"127.0.0.1:7300\"\n";
  EXPECT_TRUE(FailedWithOneLine(RunWithMap(yaml), 1, "duplicate id"));
}

TEST_F(OsdBadInputTest, SingleOsdMap) {
  EXPECT_TRUE(FailedWithOneLine(RunWithMap(MapYaml(1)), 1, "at least 2"));
}

TEST_F(OsdBadInputTest, BadAddress) {
  std::string bad_port =
      "epoch: 1\nosds:\n  - id: 0\n    address: \"127.0.0.1:99999\"\n"
      "  - id: 1\n    address: \"127.0.0.1:7101\"\n";
  EXPECT_TRUE(FailedWithOneLine(RunWithMap(bad_port), 1, "port"));
  std::string no_port =
      "epoch: 1\nosds:\n  - id: 0\n    address: \"127.0.0.1:x\"\n"
      "  - id: 1\n    address: \"127.0.0.1:7101\"\n";
  EXPECT_TRUE(FailedWithOneLine(RunWithMap(no_port), 1, "port"));
  // A bad --listen is rejected before the data dir is created too.
  const std::string map = MapFile("ok.yaml", MapYaml(2));
  EXPECT_TRUE(FailedWithOneLine(
      RunOsd({"--id", "0", "--map", map, "--data-dir", Path("data"), "--listen", "127.0.0.1:0"}), 1,
      "port"));
  EXPECT_FALSE(std::filesystem::exists(Path("data")));
}

TEST_F(OsdBadInputTest, UnknownPlacementStrategy) {
  EXPECT_TRUE(
      FailedWithOneLine(RunWithMap(MapYaml(2, 7100, "bogus")), 1, "unknown placement strategy"));
}

TEST_F(OsdBadInputTest, MapFileDoesNotExist) {
  CommandResult r = RunOsd({"--id", "0", "--map", Path("nope.yaml"), "--data-dir", Path("data")});
  EXPECT_TRUE(FailedWithOneLine(r, 1, Path("nope.yaml")));
  EXPECT_TRUE(FailedWithOneLine(r, 1, "cannot read"));
  EXPECT_FALSE(std::filesystem::exists(Path("data")));
}

TEST_F(OsdBadInputTest, IdNotInMap) {
  const std::string map = MapFile("ok.yaml", MapYaml(2));
  CommandResult r = RunOsd({"--id", "7", "--map", map, "--data-dir", Path("data")});
  EXPECT_TRUE(FailedWithOneLine(r, 1, "OSD id 7 is not in cluster map"));
  EXPECT_FALSE(std::filesystem::exists(Path("data")));
}

TEST_F(OsdBadInputTest, DataDirCannotBeCreated) {
  // Root ignores permission bits, so put the data dir below a regular file.
  WriteFile(Path("file"), "not a directory\n");
  const std::string map = MapFile("ok.yaml", MapYaml(2));
  CommandResult r = RunOsd({"--id", "0", "--map", map, "--data-dir", Path("file/sub"), "--listen",
                            "127.0.0.1:" + std::to_string(FreePort())});
  EXPECT_TRUE(FailedWithOneLine(r, 1, "cannot create data dir"));
  EXPECT_TRUE(FailedWithOneLine(r, 1, Path("file/sub")));
}

// TLS is the default: missing or mismatched certificates stop the OSD with one line naming the
// file and the fix, before it creates its data dir or listens.
TEST_F(OsdBadInputTest, CertificateProblemsAreClearErrors) {
  const std::string map = MapFile("ok.yaml", MapYaml(2));
  const std::string tls = Path("tls");
  auto run = [&](std::vector<std::string> tls_flags) {
    std::vector<std::string> args = {"--id", "0", "--map", map, "--data-dir", Path("data")};
    args.insert(args.end(), tls_flags.begin(), tls_flags.end());
    return RunOsd(args, /*insecure=*/false);
  };
  CommandResult r = run({"--tls-dir", tls});
  EXPECT_TRUE(FailedWithOneLine(r, 1, "TLS CA " + tls + "/ca.crt"));
  EXPECT_TRUE(FailedWithOneLine(r, 1, "--insecure"));

  ASSERT_EQ(
      RunCommand({SourceDir() + "/deploy/make-certs.sh", "--dir", tls, "--osds", "2", "client"})
          .exit_code,
      0);
  EXPECT_TRUE(FailedWithOneLine(
      run({"--tls-dir", tls, "--tls-cert", tls + "/osd.1.crt", "--tls-key", tls + "/osd.1.key"}), 1,
      "its certificate must name osd.0"));
  EXPECT_TRUE(FailedWithOneLine(run({"--tls-dir", tls, "--tls-key", tls + "/client.key"}), 1,
                                "does not belong to certificate " + tls + "/osd.0.crt"));
  const std::string other = Path("other-ca");
  ASSERT_EQ(RunCommand({SourceDir() + "/deploy/make-certs.sh", "--dir", other, "osd.0"}).exit_code,
            0);
  EXPECT_TRUE(FailedWithOneLine(run({"--tls-dir", tls, "--tls-ca", other + "/ca.crt"}), 1,
                                "is not valid for CA " + other + "/ca.crt"));
  WriteFile(Path("garbage.crt"), "not a certificate\n");
  EXPECT_TRUE(FailedWithOneLine(run({"--tls-dir", tls, "--tls-cert", Path("garbage.crt")}), 1,
                                "TLS certificate " + Path("garbage.crt")));
  EXPECT_FALSE(std::filesystem::exists(Path("data")));
}

TEST(MakeCertsTest, BadArgumentsAreRefused) {
  TempDir tmp;
  const std::string script = SourceDir() + "/deploy/make-certs.sh";
  EXPECT_EQ(RunCommand({script, "--dir", tmp.path(), "--osds", "x"}).exit_code, 2);
  EXPECT_EQ(RunCommand({script, "--dir", tmp.path(), "bad name"}).exit_code, 2);
  EXPECT_EQ(RunCommand({script, "--dir", tmp.path(), "--frobnicate"}).exit_code, 2);
  EXPECT_EQ(RunCommand({script, "--help"}).exit_code, 0);
  // Idempotent: a second run keeps the CA and the certificates.
  ASSERT_EQ(RunCommand({script, "--dir", tmp.path(), "admin"}).exit_code, 0);
  std::ifstream first(tmp.path() + "/ca.crt");
  const std::string ca((std::istreambuf_iterator<char>(first)), std::istreambuf_iterator<char>());
  CommandResult again = RunCommand({script, "--dir", tmp.path(), "admin", "client"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, "made " + tmp.path() + "/client.crt\n");
  std::ifstream second(tmp.path() + "/ca.crt");
  EXPECT_EQ(
      ca, std::string((std::istreambuf_iterator<char>(second)), std::istreambuf_iterator<char>()));
}

// ---------------------------------------------------------------------------------------
// orthofs: usage errors.

TEST(CliUsageTest, UsageErrorsExitTwo) {
  CommandResult r = RunCommand({CliBin()});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_NE(r.err.find("subcommand"), std::string::npos) << r.err;

  r = RunCommand({CliBin(), "frobnicate"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_FALSE(r.err.empty());
  EXPECT_TRUE(r.out.empty()) << r.out;

  r = RunCommand({CliBin(), "put"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_NE(r.err.find("oid"), std::string::npos) << r.err;

  r = RunCommand({CliBin(), "status", "--bogus"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_NE(r.err.find("--bogus"), std::string::npos) << r.err;

  r = RunCommand({CliBin(), "put", "1/2/3", "--copies", "several"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);

  r = RunCommand({CliBin(), "--help"});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  for (const char* sub : {"status", "put", "get", "stat", "rm", "locate", "placement-report"}) {
    EXPECT_NE(r.out.find(sub), std::string::npos) << sub << " missing from --help:\n" << r.out;
  }
}

TEST(CliUsageTest, BadOidIsAClearError) {
  TempDir tmp;
  const std::string map = tmp.path() + "/map.yaml";
  WriteFile(map, MapYaml(2));
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"get", "1/x/0"}, "OID fno 'x' is not a u64"},
      {{"get", "1/2"}, "is not fnso/fno/offset"},
      {{"stat", "1/2/3/BLOB"}, "OID type 'BLOB'"},
      {{"rm", "1/2/3/DATA/THIRD"}, "OID flag 'THIRD'"},
      {{"put", "-1/2/3"}, "OID fnso '-1'"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv = {CliBin()};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    argv.insert(argv.end(), {"--map", map, "--timeout-ms", "1000"});
    CommandResult r = RunCommand(argv, "data");
    EXPECT_TRUE(FailedWithOneLine(r, 1, c.message)) << c.args[0] << " " << c.args[1];
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

// ---------------------------------------------------------------------------------------
// One cluster of 3 OSDs shared by every test that needs running OSDs, started once to keep
// the test fast (OSD start-up can take seconds on a loaded machine). Tests that need every
// OSD up call RequireAllUp(); the last two tests take OSD 1 down.
//
// put / get / stat / rm.

class ClusterTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    try {
      cluster_ = new TestCluster(TestClusterOptions{.osds = 3});
    } catch (const std::exception& e) {
      start_error_ = new std::string(e.what());
    }
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
    delete start_error_;
    start_error_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(cluster_, nullptr) << "cluster did not start: "
                                 << (start_error_ ? *start_error_ : "?");
  }
  // (Re)starts any OSD an earlier test stopped; a no-op in the normal test order.
  static void RequireAllUp() {
    for (const OsdInfo& osd : cluster_->map().osds) cluster_->Start(osd.id);
  }

  CommandResult Cli(std::vector<std::string> args, const std::string& input = "") {
    const std::vector<std::string> flags = cluster_->ToolFlags();
    args.insert(args.begin() + 1, flags.begin(), flags.end());
    args.insert(args.begin() + 1, {"--timeout-ms", "5000"});
    args.insert(args.begin(), CliBin());
    return RunCommand(args, input);
  }

  // checksum of each copy from `orthofs stat`, keyed by copy flag name.
  std::map<std::string, std::string> Checksums(const std::string& oid, uint64_t length) {
    CommandResult r = Cli({"stat", oid});
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
    std::map<std::string, std::string> sums;
    const std::regex row(R"((\S+)/(ORIGINAL|REPLICA) on OSD (\d+): version \d+, (\d+) bytes, )"
                         R"(checksum ([0-9a-f]{16}))");
    for (const std::string& line : Lines(r.out)) {
      std::smatch m;
      if (!std::regex_search(line, m, row)) {
        ADD_FAILURE() << "unexpected stat line: " << line;
        continue;
      }
      EXPECT_EQ(m[4].str(), std::to_string(length)) << line;
      Oid copy = *ParseOid(oid);
      copy.flag = m[2].str() == "REPLICA" ? CopyFlag::kReplica : CopyFlag::kOriginal;
      EXPECT_EQ(m[3].str(), std::to_string(cluster_->client().placement().OsdFor(copy))) << line;
      sums[m[2].str()] = m[5].str();
    }
    return sums;
  }

  // put, then both copies read back equal through the CLI and the in-process client.
  void RoundTrip(const std::string& oid_text, const std::string& data) {
    SCOPED_TRACE(oid_text);
    RequireAllUp();
    CommandResult r = Cli({"put", oid_text}, data);
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
    const Oid oid = *ParseOid(oid_text);
    const Placement& placement = cluster_->client().placement();
    const uint32_t original = placement.OriginalOsdFor(oid);
    const uint32_t replica = placement.ReplicaOsdFor(oid.fnso, oid.fno);
    ASSERT_NE(original, replica);
    EXPECT_NE(r.out.find(oid.WithFlag(CopyFlag::kOriginal).ToString() + " on OSD " +
                         std::to_string(original) + ": version"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find(oid.WithFlag(CopyFlag::kReplica).ToString() + " on OSD " +
                         std::to_string(replica) + ": version"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find(std::to_string(data.size()) + " bytes"), std::string::npos) << r.out;

    for (const char* suffix : {"", "/DATA/ORIGINAL", "/DATA/REPLICA"}) {
      CommandResult get = Cli({"get", oid_text + suffix});
      ASSERT_EQ(get.exit_code, 0) << suffix << ": " << get.err;
      EXPECT_EQ(get.out.size(), data.size()) << suffix;
      EXPECT_TRUE(get.out == data) << suffix << ": bytes differ";
    }
    // The CLI wrote what the placement says where it says it.
    for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
      Result<wire::ReadResponse> read = cluster_->client().Read(oid.WithFlag(flag));
      ASSERT_TRUE(read.ok()) << read.status().ToString();
      EXPECT_TRUE(read->data() == data);
    }
    std::map<std::string, std::string> sums = Checksums(oid_text, data.size());
    ASSERT_EQ(sums.size(), 2u);
    EXPECT_EQ(sums["ORIGINAL"], sums["REPLICA"]);
  }

  static TestCluster* cluster_;
  static std::string* start_error_;
};

TestCluster* ClusterTest::cluster_ = nullptr;
std::string* ClusterTest::start_error_ = nullptr;

TEST_F(ClusterTest, BinaryRoundTripWithNuls) {
  std::string data;
  for (int round = 0; round < 4; ++round) {
    for (int b = 0; b < 256; ++b) data.push_back(static_cast<char>(b));
    data.append(3, '\0');
  }
  data.append("\0tail\0\n\r\xff", 9);
  ASSERT_EQ(data.size(), 4u * 259 + 9);
  RoundTrip("1/1001/0", data);
  RoundTrip("1/1002/7", std::string(1, '\0'));
}

TEST_F(ClusterTest, FullObjectRoundTrip) {
  // One whole 128 KiB object of deterministic pseudo-random bytes.
  std::string data(128 * 1024, '\0');
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (char& c : data) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    c = static_cast<char>(x >> 56);
  }
  RoundTrip("1/2001/3", data);
  RoundTrip("2/2001/3", std::string(data.rbegin(), data.rend()));

  // A different namespace is a different object.
  CommandResult a = Cli({"get", "1/2001/3"});
  CommandResult b = Cli({"get", "2/2001/3"});
  ASSERT_EQ(a.exit_code, 0);
  ASSERT_EQ(b.exit_code, 0);
  EXPECT_TRUE(a.out != b.out);
}

TEST_F(ClusterTest, RangedWriteAndRangedRead) {
  RoundTrip("1/3001/0", "hello world");
  CommandResult r = Cli({"put", "1/3001/0", "--offset", "5"}, "XYZ");
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  for (const char* suffix : {"", "/DATA/REPLICA"}) {
    CommandResult get = Cli({"get", std::string("1/3001/0") + suffix});
    ASSERT_EQ(get.exit_code, 0) << get.err;
    EXPECT_EQ(get.out, "helloXYZrld") << suffix;
  }
  std::map<std::string, std::string> sums = Checksums("1/3001/0", 11);
  EXPECT_EQ(sums["ORIGINAL"], sums["REPLICA"]);

  // Extending past the end.
  r = Cli({"put", "1/3001/0", "--offset", "11"}, "!!");
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  CommandResult get = Cli({"get", "1/3001/0/DATA/REPLICA"});
  EXPECT_EQ(get.out, "helloXYZrld!!");

  get = Cli({"get", "1/3001/0", "--offset", "5", "--length", "3"});
  ASSERT_EQ(get.exit_code, 0) << get.err;
  EXPECT_EQ(get.out, "XYZ");

  // A plain put replaces the whole object.
  r = Cli({"put", "1/3001/0"}, "abc");
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  get = Cli({"get", "1/3001/0"});
  EXPECT_EQ(get.out, "abc");
}

TEST_F(ClusterTest, PutFromFileGetToFile) {
  RequireAllUp();
  TempDir tmp;
  const std::string in = tmp.path() + "/in.bin", out = tmp.path() + "/out.bin";
  const std::string data("file\0contents", 13);
  WriteFile(in, data);
  CommandResult r = Cli({"put", "1/4001/1", "--file", in});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  r = Cli({"get", "1/4001/1/DATA/REPLICA", "--out", out});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(r.out.empty());
  EXPECT_TRUE(ReadFile(out) == data);

  r = Cli({"put", "1/4001/2", "--file", tmp.path() + "/missing"});
  EXPECT_TRUE(FailedWithOneLine(r, 1, "cannot read"));
}

TEST_F(ClusterTest, RemoveThenGetFails) {
  RoundTrip("1/5001/0", "doomed");
  CommandResult r = Cli({"rm", "1/5001/0"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(CountOf(r.out, ": deleted"), 2u) << r.out;

  for (const char* suffix : {"", "/DATA/REPLICA"}) {
    CommandResult get = Cli({"get", std::string("1/5001/0") + suffix});
    EXPECT_TRUE(FailedWithOneLine(get, 1, "1/5001/0")) << suffix;
    EXPECT_TRUE(get.out.empty()) << suffix;
  }
  r = Cli({"stat", "1/5001/0"});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);

  r = Cli({"rm", "1/5001/0"});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(CountOf(r.out, ": was absent"), 2u) << r.out;
}

TEST_F(ClusterTest, StatJson) {
  RoundTrip("1/6001/0", "json me");
  CommandResult r = Cli({"stat", "1/6001/0", "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  const std::regex checksum(R"("checksum":(\d+))");
  std::smatch m0, m1;
  ASSERT_TRUE(std::regex_search(lines[0], m0, checksum)) << lines[0];
  ASSERT_TRUE(std::regex_search(lines[1], m1, checksum)) << lines[1];
  EXPECT_EQ(m0[1].str(), m1[1].str());
  EXPECT_NE(lines[0].find("\"length\":7"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("\"oid\":\"1/6001/0/DATA/REPLICA\""), std::string::npos) << lines[1];
}

TEST_F(ClusterTest, WritesBeyondTheObjectSizeAreRefused) {
  RequireAllUp();
  CommandResult r = Cli({"put", "1/7001/0"}, std::string(128 * 1024 + 1, 'x'));
  EXPECT_TRUE(FailedWithOneLine(r, 1, "exceeds the object size"));
  r = Cli({"put", "1/7001/1", "--offset", std::to_string(128 * 1024 - 1)}, "ab");
  EXPECT_TRUE(FailedWithOneLine(r, 1, "exceeds the object size"));
  // Neither copy of either object exists.
  for (const char* oid : {"1/7001/0", "1/7001/1"}) {
    r = Cli({"stat", oid});
    EXPECT_EQ(r.exit_code, 1) << Describe(r);
    EXPECT_EQ(CountOf(r.out, "NOT_FOUND"), 2u) << r.out;
  }
  // An empty object is fine.
  RoundTrip("1/7001/2", "");
}

// orthofs status against real OSDs.

// The status line of OSD `id` (the table row that starts with its id and address).
std::string StatusRow(const std::string& out, const OsdInfo& osd) {
  for (const std::string& line : Lines(out)) {
    std::istringstream fields(line);
    std::string id, address;
    fields >> id >> address;
    if (id == std::to_string(osd.id) && address == osd.address) return line;
  }
  return "";
}

// plan-rebalance lists what the OSDs hold and counts exactly the copies a bigger map moves.
TEST_F(ClusterTest, PlanRebalanceCountsTheCopiesANewMapMoves) {
  RequireAllUp();
  ClusterClient& client = cluster_->client();
  for (uint64_t fno = 9000; fno < 9040; ++fno) {
    for (uint64_t index = 0; index < 3; ++index) {
      ASSERT_TRUE(
          client.WriteBothCopies(Oid{5, fno, index, ObjectType::kData, CopyFlag::kOriginal}, "x")
              .ok());
    }
  }
  // Every stored copy, from the OSDs themselves, and where a 5-OSD map puts it.
  ClusterMap bigger = cluster_->map();
  bigger.epoch += 1;
  bigger.osds.push_back({3, "127.0.0.1:1", 1});
  bigger.osds.push_back({4, "127.0.0.1:2", 1});
  const Placement after(bigger);
  uint64_t copies = 0, moves = 0;
  for (const auto& osd : client.osds()) {
    for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
      wire::ListRequest request;
      request.set_epoch(cluster_->map().epoch);
      request.set_flag(static_cast<wire::CopyFlag>(flag));
      request.set_limit(100000);
      Result<wire::ListResponse> page = osd->List(request);
      ASSERT_TRUE(page.ok()) << page.status().ToString();
      ASSERT_TRUE(page->next_page_token().empty()) << "more than one page";
      for (const wire::ObjectMeta& meta : page->objects()) {
        ++copies;
        if (after.OsdFor(*FromWire(meta.oid())) != osd->osd_id()) ++moves;
      }
    }
  }
  ASSERT_GE(copies, 240u);
  const std::string new_map = cluster_->dir() + "/bigger.yaml";
  WriteFile(new_map, FormatClusterMap(bigger));
  CommandResult r = Cli({"plan-rebalance", "--new-map", new_map, "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("\"copies\":" + std::to_string(copies) + ","), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"moved\":" + std::to_string(moves) + ","), std::string::npos) << r.out;
  std::smatch ideal;
  ASSERT_TRUE(std::regex_search(r.out, ideal, std::regex(R"("ideal_fraction":([0-9.e-]+))")))
      << r.out;
  EXPECT_NEAR(std::stod(ideal[1]), 0.4, 1e-9);  // 3 -> 5 equal OSDs
  EXPECT_NE(r.out.find("\"misplaced\":0,"), std::string::npos) << r.out;

  // A map that cannot follow the current one is refused with the reason.
  bigger.epoch = cluster_->map().epoch;
  WriteFile(new_map, FormatClusterMap(bigger));
  EXPECT_TRUE(FailedWithOneLine(Cli({"plan-rebalance", "--new-map", new_map}), 1,
                                "must be above the current"));
}

TEST_F(ClusterTest, StatusUpThenDown) {
  RequireAllUp();
  TestCluster& cluster = *cluster_;
  std::vector<std::string> status = {CliBin(), "status", "--timeout-ms", "3000"};
  for (const std::string& f : cluster.ToolFlags()) status.push_back(f);
  CommandResult r = RunCommand(status);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  for (const OsdInfo& osd : cluster.map().osds) {
    std::string row = StatusRow(r.out, osd);
    EXPECT_NE(row.find(" up "), std::string::npos) << "OSD " << osd.id << ":\n" << r.out;
  }
  EXPECT_NE(r.out.find("3 OSDs, 0 down"), std::string::npos) << r.out;

  std::vector<std::string> json = status;
  json.push_back("--json");
  r = RunCommand(json);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(CountOf(r.out, "\"state\":\"up\""), 3u) << r.out;
  EXPECT_EQ(CountOf(r.out, "\"state\":\"down\""), 0u) << r.out;
  EXPECT_EQ(r.out.front(), '{') << r.out;
  EXPECT_EQ(CountOf(r.out, "\n"), 1u) << "one JSON object on one line:\n" << r.out;
  EXPECT_NE(r.out.find("\"epoch\":1"), std::string::npos) << r.out;

  // A map that cannot be read is exit 1 with one line naming the problem.
  r = RunCommand({CliBin(), "status", "--map", cluster.dir() + "/none.yaml"});
  EXPECT_TRUE(FailedWithOneLine(r, 1, "cannot read"));

  cluster.Stop(1, SIGKILL);
  r = RunCommand(status);
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  for (const OsdInfo& osd : cluster.map().osds) {
    std::string row = StatusRow(r.out, osd);
    const char* want = osd.id == 1 ? " down " : " up ";
    EXPECT_NE(row.find(want), std::string::npos) << "OSD " << osd.id << ":\n" << r.out;
  }
  EXPECT_NE(r.out.find("3 OSDs, 1 down"), std::string::npos) << r.out;

  r = RunCommand(json);
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_EQ(CountOf(r.out, "\"state\":\"up\""), 2u) << r.out;
  EXPECT_EQ(CountOf(r.out, "\"state\":\"down\""), 1u) << r.out;
  EXPECT_NE(r.out.find("\"id\":1,\"state\":\"down\""), std::string::npos) << r.out;
}

// status says what files can still take, and catches a map that is not the cluster's: one
// listing fewer OSDs at the same epoch placed every object elsewhere, and status said all is
// well while a mount with it failed. fsck of a namespace nobody made, and a negative file
// number, are errors.
TEST_F(ClusterTest, StatusSaysWhatFilesCanTakeAndCatchesAWrongMap) {
  RequireAllUp();
  TestCluster& cluster = *cluster_;
  CommandResult r = cluster.Orthofs("status", {"--timeout-ms", "3000"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("usable for files: "), std::string::npos) << r.out;

  ClusterMap fewer = cluster.map();
  fewer.osds.pop_back();
  const std::string wrong = cluster.dir() + "/fewer.yaml";
  {
    std::ofstream out(wrong);
    out << FormatClusterMap(fewer);
  }
  std::vector<std::string> argv = {CliBin(), "status", "--timeout-ms", "3000"};
  for (const std::string& f : cluster.ToolFlags()) argv.push_back(f);
  argv[std::find(argv.begin(), argv.end(), "--map") - argv.begin() + 1] = wrong;
  r = RunCommand(argv);
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find("is not the one the OSDs run"), std::string::npos) << Describe(r);

  r = cluster.Orthofs("fsck", {"--fnso", "999"});
  EXPECT_TRUE(FailedWithOneLine(r, 1, "namespace 999 does not exist"));
  r = cluster.Orthofs("locate", {"--fno", "-1"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
}

// orthofs-osd: conflicts with OSDs that are already running (runs after StatusUpThenDown,
// so OSD 1 is normally down already).

TEST_F(ClusterTest, OsdRefusesPortDataDirAndIdentityConflicts) {
  TestCluster& cluster = *cluster_;
  cluster.Start(0);
  TempDir scratch;
  const std::string& map = cluster.map_path();
  auto run = [&](std::vector<std::string> args) {
    args.insert(args.begin(), OsdBin());
    for (const std::string& f : cluster.SecurityFlags("osd.0")) args.push_back(f);
    return RunDaemonExpectingExit(args, scratch.path());
  };

  // OSD 0's port (from the map) is taken by the running OSD 0.
  EXPECT_TRUE(
      FailedWithOneLine(run({"--id", "0", "--map", map, "--data-dir", scratch.path() + "/other"}),
                        1, "cannot listen"));

  // OSD 0's data dir is open in the running OSD 0 (RocksDB LOCK).
  EXPECT_TRUE(FailedWithOneLine(run({"--id", "0", "--map", map, "--data-dir", cluster.DataDir(0),
                                     "--listen", "127.0.0.1:" + std::to_string(FreePort())}),
                                1, "in use"));

  // OSD 1's data dir, with OSD 1 stopped, must not be served as OSD 0.
  cluster.Stop(1, SIGKILL);
  EXPECT_TRUE(FailedWithOneLine(run({"--id", "0", "--map", map, "--data-dir", cluster.DataDir(1),
                                     "--listen", "127.0.0.1:" + std::to_string(FreePort())}),
                                1, "belongs to OSD 1"));

  // None of the failed attempts disturbed the running OSDs.
  std::vector<std::string> status_argv = {CliBin(), "status", "--timeout-ms", "3000"};
  for (const std::string& f : cluster.ToolFlags()) status_argv.push_back(f);
  CommandResult status = RunCommand(status_argv);
  EXPECT_EQ(status.exit_code, 3) << Describe(status);
  EXPECT_NE(status.out.find("3 OSDs, 1 down"), std::string::npos) << status.out;
  EXPECT_NE(StatusRow(status.out, *cluster.map().FindOsd(0)).find(" up "), std::string::npos)
      << status.out;
}

// ---------------------------------------------------------------------------------------
// locate and placement-report: pure placement, no OSDs needed.

TEST(CliLocateTest, MatchesInProcessPlacement) {
  TempDir tmp;
  for (const std::string strategy : {"migration", "repartition"}) {
    const std::string map_path = tmp.path() + "/" + strategy + ".yaml";
    WriteFile(map_path, MapYaml(5, 7100, strategy));
    Result<ClusterMap> map = LoadClusterMapFile(map_path);
    ASSERT_TRUE(map.ok()) << map.status().ToString();
    const Placement placement(*map);

    struct Case {
      uint32_t fnso;
      uint64_t fno;
      uint64_t first;
    };
    for (const Case& c : {Case{1, 42, 0}, Case{1, 43, 0}, Case{7, 123456789, 1000}}) {
      SCOPED_TRACE(strategy + " " + std::to_string(c.fnso) + "/" + std::to_string(c.fno));
      CommandResult r = RunCommand({CliBin(), "locate", "--map", map_path, "--fnso",
                                    std::to_string(c.fnso), "--fno", std::to_string(c.fno),
                                    "--offset", std::to_string(c.first), "--count", "50"});
      ASSERT_EQ(r.exit_code, 0) << Describe(r);
      std::vector<std::string> lines = Lines(r.out);
      ASSERT_EQ(lines.size(), 52u) << r.out;
      const uint32_t replica = placement.ReplicaOsdFor(c.fnso, c.fno);
      EXPECT_NE(lines[0].find("replica OSD " + std::to_string(replica) + " ("), std::string::npos)
          << lines[0];
      std::set<uint32_t> replica_column, originals;
      for (size_t i = 2; i < lines.size(); ++i) {
        std::istringstream fields(lines[i]);
        uint64_t offset = 0;
        uint32_t original = 0, replica_osd = 0;
        ASSERT_TRUE(fields >> offset >> original >> replica_osd) << lines[i];
        EXPECT_EQ(offset, c.first + i - 2);
        replica_column.insert(replica_osd);
        originals.insert(original);
        EXPECT_NE(original, replica_osd) << lines[i];
        Oid oid{c.fnso, c.fno, offset, ObjectType::kData, CopyFlag::kOriginal};
        EXPECT_EQ(original, placement.OriginalOsdFor(oid)) << lines[i];
      }
      EXPECT_EQ(replica_column, std::set<uint32_t>{replica});
      EXPECT_GE(originals.size(), 3u) << "50 originals should spread over the other OSDs";

      // --json: one object per object, same answers.
      r = RunCommand({CliBin(), "locate", "--map", map_path, "--fnso", std::to_string(c.fnso),
                      "--fno", std::to_string(c.fno), "--offset", std::to_string(c.first),
                      "--count", "50", "--json"});
      ASSERT_EQ(r.exit_code, 0) << Describe(r);
      lines = Lines(r.out);
      ASSERT_EQ(lines.size(), 50u);
      for (size_t i = 0; i < lines.size(); ++i) {
        Oid oid{c.fnso, c.fno, c.first + i, ObjectType::kData, CopyFlag::kOriginal};
        EXPECT_NE(lines[i].find(
                      "\"original_osd\":" + std::to_string(placement.OriginalOsdFor(oid)) + ","),
                  std::string::npos)
            << lines[i];
        EXPECT_NE(lines[i].find("\"replica_osd\":" + std::to_string(replica) + "}"),
                  std::string::npos)
            << lines[i];
      }
    }
  }

  // Metadata types are placed too; an unknown type is an error.
  const std::string map_path = tmp.path() + "/migration.yaml";
  CommandResult r = RunCommand(
      {CliBin(), "locate", "--map", map_path, "--fno", "9", "--type", "INODE", "--count", "1"});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  r = RunCommand({CliBin(), "locate", "--map", map_path, "--fno", "9", "--type", "BLOB"});
  EXPECT_TRUE(FailedWithOneLine(r, 1, "BLOB"));
  r = RunCommand({CliBin(), "locate", "--map", map_path});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  r = RunCommand({CliBin(), "locate", "--map", tmp.path() + "/none.yaml", "--fno", "1"});
  EXPECT_TRUE(FailedWithOneLine(r, 1, "cannot read"));
}

TEST(CliPlacementReportTest, NoConflictsForAnyClusterSize) {
  for (int n : {2, 6, 12}) {
    for (const std::string strategy : {"migration", "repartition"}) {
      SCOPED_TRACE(strategy + " N=" + std::to_string(n));
      const std::vector<std::string> argv = {
          CliBin(), "placement-report", "--files",         "200",        "--objects",
          "100",    "--osds",           std::to_string(n), "--strategy", strategy};
      CommandResult r = RunCommand(argv);
      ASSERT_EQ(r.exit_code, 0) << Describe(r);
      EXPECT_NE(r.out.find("conflicts: 0"), std::string::npos) << r.out;
      EXPECT_NE(r.out.find("strategy " + strategy + ", " + std::to_string(n) + " OSDs"),
                std::string::npos)
          << r.out;
      EXPECT_NE(r.out.find("20000 originals + 20000 replicas"), std::string::npos) << r.out;

      std::vector<std::string> json = argv;
      json.push_back("--json");
      r = RunCommand(json);
      ASSERT_EQ(r.exit_code, 0) << Describe(r);
      EXPECT_NE(r.out.find("\"conflicts\":0"), std::string::npos) << r.out;
      EXPECT_NE(r.out.find("\"strategy\":\"" + strategy + "\""), std::string::npos) << r.out;
      EXPECT_EQ(CountOf(r.out, "\"originals\":"), static_cast<size_t>(n)) << r.out;
    }
  }

  CommandResult r = RunCommand(
      {CliBin(), "placement-report", "--files", "10", "--objects", "10", "--strategy", "bogus"});
  EXPECT_TRUE(FailedWithOneLine(r, 1, "unknown placement strategy"));
  r = RunCommand({CliBin(), "placement-report", "--osds", "1"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
}

}  // namespace
}  // namespace orthofs::testing
