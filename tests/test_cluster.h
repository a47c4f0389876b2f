// Test harness: real orthofs-osd processes on free loopback ports, a map in a temporary
// directory, and cleanup that runs even when a test fails (destructor; children also die
// with the test process through PR_SET_PDEATHSIG).
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "client/cluster_client.h"
#include "common/cluster_map.h"

namespace orthofs::testing {

// Directory of the built binaries (build/bin), and the source tree (deploy/ scripts).
std::string BinDir();
std::string SourceDir();

// A fresh directory under $TMPDIR, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A TCP port on 127.0.0.1 that nothing listens on right now, and that no other test process
// holds (each holds its ports' lock files until ReleasePort or its end).
int FreePort();
// The port's lock is given up: other test processes may take it (this one never does again).
void ReleasePort(int port);

struct CommandResult {
  int exit_code = -1;  // 128 + signal if killed
  std::string out;
  std::string err;
};
// Runs argv[0] (a path) with the arguments, stdin from `input`, and waits for it.
CommandResult RunCommand(const std::vector<std::string>& argv, const std::string& input = "");

struct TestClusterOptions {
  int osds = 3;
  uint32_t object_size = kDefaultObjectSize;
  PlacementStrategy strategy = PlacementStrategy::kMigration;
  uint64_t epoch = 1;
  uint64_t cache_mb = 64;
  PrefetchConfig prefetch;  // written into the cluster map (default: mode none)
  std::vector<std::string> extra_osd_flags;
  bool metrics = false;  // each OSD serves Prometheus metrics on a port of its own
  // Mutual TLS everywhere, as deployed (deploy/make-certs.sh makes a CA and certificates for
  // every OSD, "admin" and "client" in DIR/tls); false runs everything --insecure.
  bool tls = true;
};

class TestCluster {
 public:
  explicit TestCluster(const TestClusterOptions& options = {});
  ~TestCluster();
  TestCluster(const TestCluster&) = delete;
  TestCluster& operator=(const TestCluster&) = delete;

  const ClusterMap& map() const { return map_; }
  const std::string& map_path() const { return map_path_; }
  const std::string& dir() const { return dir_.path(); }
  std::string DataDir(uint32_t osd_id) const;
  // Connected as "admin" (may call everything).
  ClusterClient& client() { return *client_; }

  // The TLS flags a program of the cluster runs with as `identity` (an OSD "osd.N", "admin",
  // "client", or any name made with MakeCertificate): --tls-dir/--tls-cert/--tls-key, or
  // --insecure without TLS.
  std::vector<std::string> SecurityFlags(const std::string& identity) const;
  // "--map MAP" and the admin's security flags: what every `orthofs` command needs.
  std::vector<std::string> ToolFlags() const;
  // Runs `orthofs COMMAND ARGS...` against this cluster as admin.
  CommandResult Orthofs(const std::string& command,
                        const std::vector<std::string>& args = {}) const;
  // `orthofs repair` with a minute per RPC: an OSD finishes a pass under way (one that waited
  // out a peer that was down) before it answers.
  CommandResult Repair() const;
  // RPC options connecting as `identity` (nullptr TLS without TLS).
  RpcOptions Rpc(const std::string& identity,
                 std::chrono::milliseconds deadline = std::chrono::milliseconds(10000)) const;
  // Certificates: DIR/tls/NAME.crt/.key signed by the cluster CA (tls only).
  std::string tls_dir() const { return dir_.path() + "/tls"; }
  void MakeCertificate(const std::string& name) const;

  // Starts OSD osd_id (if not running) and waits until it answers Health and, if
  // `wait_recovered`, has recovered (serves reads).
  void Start(uint32_t osd_id, bool wait_recovered = true);
  // Waits until OSD osd_id answers Health and has recovered.
  void WaitRecovered(uint32_t osd_id) { WaitHealthy(osd_id, /*recovered=*/true); }
  // Sends sig and waits for the process to exit.
  void Stop(uint32_t osd_id, int sig = SIGTERM);
  bool Running(uint32_t osd_id) const;
  pid_t Pid(uint32_t osd_id) const { return pids_[osd_id]; }
  // With options.metrics: where OSD osd_id serves http://127.0.0.1:PORT/metrics.
  int MetricsPort(uint32_t osd_id) const { return metrics_ports_[osd_id]; }
  // The exit status of the last stopped process (128 + signal if killed).
  int LastExitCode(uint32_t osd_id) const;

 private:
  void WaitHealthy(uint32_t osd_id, bool recovered);
  // Where the OSD's stderr goes, and its last 2000 bytes (for a failure's message).
  std::string LogPath(uint32_t osd_id) const;
  std::string LogTail(uint32_t osd_id) const;

  TestClusterOptions options_;
  TempDir dir_;
  ClusterMap map_;
  std::string map_path_;
  std::vector<pid_t> pids_;
  std::vector<int> exit_codes_;
  std::vector<int> metrics_ports_;
  std::unique_ptr<ClusterClient> client_;
};

// Both copies of each of the file's first `objects` data objects exist with the same version
// and checksum (gtest expectations).
void ExpectTwoEqualCopies(TestCluster& cluster, uint32_t fnso, uint64_t fno, uint64_t objects);

// An OSD stats counter ("delete_calls", "objects_listed") summed over the OSDs that answer.
uint64_t ClusterCounter(ClusterClient& client, const std::string& counter);

// A namespace of a TestCluster mounted through orthofs-mount; unmounted by the destructor
// (lazily, if a test left something busy).
class TestMount {
 public:
  // mkfs's namespace `fnso` unless it exists, then mounts it in the cluster's directory.
  explicit TestMount(TestCluster* cluster, uint32_t fnso = 1,
                     const std::vector<std::string>& extra_flags = {});
  ~TestMount();
  TestMount(const TestMount&) = delete;
  TestMount& operator=(const TestMount&) = delete;

  const std::string& path() const { return path_; }
  // A path inside the mount.
  std::string operator/(const std::string& relative) const { return path_ + "/" + relative; }
  void Unmount();
  // kill -9 of the mount process (a client that dies), then a lazy unmount of what it left.
  void Kill();

 private:
  std::string path_;
  bool mounted_ = false;
};

// A cluster and its mounts made once for a whole test suite (from SetUpTestSuite, Stop from
// TearDownTestSuite). A failure to make them is kept for every test to report: a throw there
// would end the test binary.
class SuiteCluster {
 public:
  // One mount of namespace `fnso` per entry of `mount_flags`, with those extra flags.
  void Start(uint32_t fnso, const std::vector<std::vector<std::string>>& mount_flags);
  // Unmounts, then stops the OSDs.
  void Stop();
  // Empty once Start succeeded.
  const std::string& error() const { return error_; }
  TestCluster& cluster() { return *cluster_; }
  TestMount& mount(size_t i) { return *mounts_.at(i); }

 private:
  std::unique_ptr<TestCluster> cluster_;
  std::vector<std::unique_ptr<TestMount>> mounts_;
  std::string error_;
};

}  // namespace orthofs::testing
