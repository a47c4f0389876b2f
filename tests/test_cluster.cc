#include "tests/test_cluster.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>

#include "common/peer_role.h"
#include "tests/posix_files.h"

#if !defined(ORTHOFS_BIN_DIR) || !defined(ORTHOFS_SOURCE_DIR)
#error "ORTHOFS_BIN_DIR must point at build/bin, ORTHOFS_SOURCE_DIR at the source tree"
#endif

namespace orthofs::testing {

std::string BinDir() { return ORTHOFS_BIN_DIR; }
std::string SourceDir() { return ORTHOFS_SOURCE_DIR; }

TempDir::TempDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp ? tmp : "/tmp") + "/orthofs-test-XXXXXX";
  if (mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = templ;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

namespace {

std::mutex port_mu;
std::set<int> handed_out;          // never the same port twice in this process (port_mu)
std::map<int, int> port_lock_fds;  // each handed-out port's lock file, held open (port_mu)

// The port of a map address, 127.0.0.1:PORT.
int PortOf(const std::string& address) { return std::stoi(address.substr(address.rfind(':') + 1)); }

// Takes the port's lock file in a directory all test processes share; -1 when another live
// process holds it. The lock lasts as long as the descriptor (ReleasePort, or this process's
// end): a port an OSD leaves while it restarts is not handed to another test process meanwhile.
int LockPortAcrossProcesses(int port) {
  static const std::string dir =
      std::filesystem::temp_directory_path().string() + "/orthofs-test-ports";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::string path = dir + "/" + std::to_string(port);
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

int FreePort() {
  // Below the kernel's ephemeral ports (32768-60999 by default), as local-cluster does: a port
  // the kernel handed out as free is the next local end of any outgoing connection, and tests
  // running side by side open many; one took an OSD's port before the OSD bound it.
  static std::mt19937 rng(std::random_device{}() ^ static_cast<unsigned>(getpid()));
  std::lock_guard lock(port_mu);
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const int port = std::uniform_int_distribution<int>(20000, 32767)(rng);
    if (handed_out.contains(port)) continue;
    const int lock_fd = LockPortAcrossProcesses(port);
    if (lock_fd < 0) continue;  // another test process's
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    const bool free = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    close(fd);
    if (!free) {
      close(lock_fd);
      continue;
    }
    handed_out.insert(port);
    port_lock_fds[port] = lock_fd;
    return port;
  }
  throw std::runtime_error("no free port in 20000-32767 after 1000 tries");
}

void ReleasePort(int port) {
  std::lock_guard lock(port_mu);
  auto it = port_lock_fds.find(port);
  if (it == port_lock_fds.end()) return;
  close(it->second);
  port_lock_fds.erase(it);
}

namespace {

// fork + exec with the child bound to our lifetime; stdio redirected to the given fds.
pid_t Spawn(const std::vector<std::string>& argv, int in_fd, int out_fd, int err_fd) {
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    if (in_fd >= 0) dup2(in_fd, 0);
    if (out_fd >= 0) dup2(out_fd, 1);
    if (err_fd >= 0) dup2(err_fd, 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

int DecodeWaitStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

CommandResult RunCommand(const std::vector<std::string>& argv, const std::string& input) {
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) || pipe2(out_pipe, O_CLOEXEC) || pipe2(err_pipe, O_CLOEXEC)) {
    throw std::runtime_error("pipe failed");
  }
  pid_t pid = Spawn(argv, in_pipe[0], out_pipe[1], err_pipe[1]);
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  // Feed stdin and drain stdout/stderr together so no pipe fills up and blocks the child.
  CommandResult result;
  size_t written = 0;
  int in_fd = in_pipe[1];
  if (input.empty()) {
    close(in_fd);
    in_fd = -1;
  } else {
    fcntl(in_fd, F_SETFL, O_NONBLOCK);
  }
  bool out_open = true, err_open = true;
  signal(SIGPIPE, SIG_IGN);
  while (out_open || err_open || in_fd >= 0) {
    pollfd fds[3] = {{out_open ? out_pipe[0] : -1, POLLIN, 0},
                     {err_open ? err_pipe[0] : -1, POLLIN, 0},
                     {in_fd, POLLOUT, 0}};
    if (poll(fds, 3, -1) < 0) break;
    char buf[65536];
    for (int i = 0; i < 2; ++i) {
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
        ssize_t n = read(fds[i].fd, buf, sizeof buf);
        if (n > 0) {
          (i == 0 ? result.out : result.err).append(buf, n);
        } else {
          (i == 0 ? out_open : err_open) = false;
        }
      }
    }
    if (in_fd >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t n = write(in_fd, input.data() + written, input.size() - written);
      if (n > 0) written += n;
      if (n < 0 || written == input.size()) {
        close(in_fd);
        in_fd = -1;
      }
    }
  }
  close(out_pipe[0]);
  close(err_pipe[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = DecodeWaitStatus(status);
  return result;
}

TestCluster::TestCluster(const TestClusterOptions& options) : options_(options) {
  map_.epoch = options.epoch;
  map_.object_size = options.object_size;
  map_.strategy = options.strategy;
  map_.prefetch = options.prefetch;
  for (int i = 0; i < options.osds; ++i) {
    map_.osds.push_back(
        OsdInfo{static_cast<uint32_t>(i), "127.0.0.1:" + std::to_string(FreePort()), 1.0});
  }
  map_path_ = dir_.path() + "/cluster.yaml";
  std::ofstream(map_path_) << FormatClusterMap(map_);
  pids_.assign(options.osds, -1);
  exit_codes_.assign(options.osds, -1);
  if (options.metrics) {
    std::set<int> taken;
    for (const OsdInfo& osd : map_.osds) {
      taken.insert(PortOf(osd.address));
    }
    for (int i = 0; i < options.osds; ++i) {
      int port = FreePort();
      while (!taken.insert(port).second) port = FreePort();
      metrics_ports_.push_back(port);
    }
  }
  if (options.tls) {
    MakeCertificate("admin");
    MakeCertificate("client");
    for (int i = 0; i < options.osds; ++i) MakeCertificate(OsdCertificateName(i));
  }
  client_ = std::make_unique<ClusterClient>(map_, Rpc("admin"));
  for (int i = 0; i < options.osds; ++i) Start(i);
}

void TestCluster::MakeCertificate(const std::string& name) const {
  CommandResult made =
      RunCommand({SourceDir() + "/deploy/make-certs.sh", "--dir", tls_dir(), name});
  if (made.exit_code != 0) throw std::runtime_error("make-certs.sh failed: " + made.err);
}

std::vector<std::string> TestCluster::SecurityFlags(const std::string& identity) const {
  if (!options_.tls) return {"--insecure"};
  return {"--tls-dir",  tls_dir(),
          "--tls-cert", tls_dir() + "/" + identity + ".crt",
          "--tls-key",  tls_dir() + "/" + identity + ".key"};
}

std::vector<std::string> TestCluster::ToolFlags() const {
  std::vector<std::string> flags = {"--map", map_path_};
  for (const std::string& f : SecurityFlags("admin")) flags.push_back(f);
  return flags;
}

CommandResult TestCluster::Orthofs(const std::string& command,
                                   const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {BinDir() + "/orthofs", command};
  for (const std::string& f : ToolFlags()) argv.push_back(f);
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv);
}

CommandResult TestCluster::Repair() const { return Orthofs("repair", {"--timeout-ms", "60000"}); }

RpcOptions TestCluster::Rpc(const std::string& identity, std::chrono::milliseconds deadline) const {
  RpcOptions rpc;
  rpc.deadline = deadline;
  if (options_.tls) {
    TlsFlags flags;
    flags.dir = tls_dir();
    Result<std::shared_ptr<const TlsIdentity>> tls = LoadTlsIdentity(flags, identity);
    if (!tls.ok()) throw std::runtime_error(tls.status().ToString());
    rpc.tls = *tls;
  }
  return rpc;
}

TestCluster::~TestCluster() {
  for (size_t i = 0; i < pids_.size(); ++i) {
    if (pids_[i] > 0) Stop(static_cast<uint32_t>(i), SIGKILL);
  }
  for (const OsdInfo& osd : map_.osds) {
    ReleasePort(PortOf(osd.address));
  }
  for (int port : metrics_ports_) ReleasePort(port);
}

std::string TestCluster::DataDir(uint32_t osd_id) const {
  return dir_.path() + "/osd-" + std::to_string(osd_id);
}

void TestCluster::Start(uint32_t osd_id, bool wait_recovered) {
  if (pids_[osd_id] > 0) return;
  std::vector<std::string> argv = {BinDir() + "/orthofs-osd",
                                   "--id",
                                   std::to_string(osd_id),
                                   "--map",
                                   map_path_,
                                   "--data-dir",
                                   DataDir(osd_id),
                                   "--cache-mb",
                                   std::to_string(options_.cache_mb),
                                   "--log-level",
                                   "warn"};
  argv.insert(argv.end(), options_.extra_osd_flags.begin(), options_.extra_osd_flags.end());
  for (const std::string& f : SecurityFlags(OsdCertificateName(osd_id))) argv.push_back(f);
  if (options_.metrics) {
    argv.insert(argv.end(), {"--metrics", "127.0.0.1:" + std::to_string(metrics_ports_[osd_id])});
  }
  const std::string log = LogPath(osd_id);
  int log_fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  pids_[osd_id] = Spawn(argv, -1, log_fd, log_fd);
  close(log_fd);
  WaitHealthy(osd_id, wait_recovered);
}

namespace {

// True once something accepts TCP connections on 127.0.0.1:port. Probing with a raw socket
// first keeps gRPC's reconnect backoff out of start-up time.
bool Accepting(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return ok;
}

}  // namespace

std::string TestCluster::LogPath(uint32_t osd_id) const {
  return dir_.path() + "/osd-" + std::to_string(osd_id) + ".log";
}

std::string TestCluster::LogTail(uint32_t osd_id) const {
  std::string log;
  try {
    log = ReadFile(LogPath(osd_id));
  } catch (const std::exception& e) {
    return std::string("(no log: ") + e.what() + ")";
  }
  constexpr size_t kTail = 2000;
  return log.size() > kTail ? log.substr(log.size() - kTail) : log;
}

void TestCluster::WaitHealthy(uint32_t osd_id, bool recovered) {
  OsdInfo info = *map_.FindOsd(osd_id);
  const int port = PortOf(info.address);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    if (Accepting(port)) {
      OsdClient probe(info, Rpc("admin", std::chrono::milliseconds(2000)));
      wire::HealthRequest request;
      request.set_epoch(map_.epoch);
      // Serving reads: recovery (the others replaying what it missed) is done.
      Result<wire::HealthResponse> health = probe.Health(request);
      if (health.ok() && (!recovered || !health->recovering())) return;
    }
    int status = 0;
    if (waitpid(pids_[osd_id], &status, WNOHANG) == pids_[osd_id]) {
      pids_[osd_id] = -1;
      throw std::runtime_error("OSD " + std::to_string(osd_id) + " exited during start-up; " +
                               "the end of its log:\n" + LogTail(osd_id));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  throw std::runtime_error("OSD " + std::to_string(osd_id) + " not healthy after 20 s");
}

void TestCluster::Stop(uint32_t osd_id, int sig) {
  pid_t pid = pids_[osd_id];
  if (pid <= 0) return;
  kill(pid, sig);
  int status = 0;
  waitpid(pid, &status, 0);
  exit_codes_[osd_id] = DecodeWaitStatus(status);
  pids_[osd_id] = -1;
}

bool TestCluster::Running(uint32_t osd_id) const { return pids_[osd_id] > 0; }

int TestCluster::LastExitCode(uint32_t osd_id) const { return exit_codes_[osd_id]; }

namespace {

bool IsMounted(const std::string& path) {
  std::ifstream mounts("/proc/mounts");
  std::string line;
  while (std::getline(mounts, line)) {
    if (line.find(" " + path + " fuse.orthofs ") != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TestMount::TestMount(TestCluster* cluster, uint32_t fnso,
                     const std::vector<std::string>& extra_flags) {
  static int counter = 0;
  path_ = cluster->dir() + "/mnt-" + std::to_string(fnso) + "-" + std::to_string(counter++);
  std::filesystem::create_directories(path_);
  CommandResult mkfs = cluster->Orthofs("mkfs", {"--fnso", std::to_string(fnso)});
  if (mkfs.exit_code != 0 && mkfs.err.find("already exists") == std::string::npos) {
    throw std::runtime_error("mkfs failed: " + mkfs.err);
  }
  std::vector<std::string> argv = {BinDir() + "/orthofs-mount", "--map",
                                   cluster->map_path(),         "--fnso",
                                   std::to_string(fnso),        path_};
  for (const std::string& f : cluster->SecurityFlags("client")) argv.push_back(f);
  argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
  CommandResult mount = RunCommand(argv);
  if (mount.exit_code != 0 || !IsMounted(path_)) {
    throw std::runtime_error("mount failed (" + std::to_string(mount.exit_code) +
                             "): " + mount.err);
  }
  mounted_ = true;
}

void TestMount::Unmount() {
  if (!mounted_) return;
  CommandResult r = RunCommand({"/usr/bin/fusermount3", "-u", path_});
  if (r.exit_code != 0) RunCommand({"/usr/bin/fusermount3", "-uz", path_});
  mounted_ = false;
}

void TestMount::Kill() {
  if (!mounted_) return;
  // The daemonized mount process is the one whose command line names this mount point.
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string pid = entry.path().filename();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::string> args;
    for (size_t start = 0; start < cmdline.size();) {
      const size_t end = cmdline.find('\0', start);
      args.push_back(cmdline.substr(start, end - start));
      start = end == std::string::npos ? cmdline.size() : end + 1;
    }
    if (args.empty() || args[0].find("orthofs-mount") == std::string::npos) continue;
    if (std::find(args.begin(), args.end(), path_) == args.end()) continue;
    kill(std::stoi(pid), SIGKILL);
  }
  RunCommand({"/usr/bin/fusermount3", "-uz", path_});
  mounted_ = false;
}

TestMount::~TestMount() { Unmount(); }

void SuiteCluster::Start(uint32_t fnso, const std::vector<std::vector<std::string>>& mount_flags) {
  try {
    cluster_ = std::make_unique<TestCluster>();
    for (const std::vector<std::string>& flags : mount_flags) {
      mounts_.push_back(std::make_unique<TestMount>(cluster_.get(), fnso, flags));
    }
  } catch (const std::exception& e) {
    error_ = e.what();
  }
}

void SuiteCluster::Stop() {
  mounts_.clear();
  cluster_.reset();
}

uint64_t ClusterCounter(ClusterClient& client, const std::string& counter) {
  uint64_t total = 0;
  for (const auto& osd : client.osds()) {
    Result<wire::StatsResponse> stats = osd->Stats({});
    if (!stats.ok()) continue;
    auto it = stats->counters().find(counter);
    if (it != stats->counters().end()) total += it->second;
  }
  return total;
}

void ExpectTwoEqualCopies(TestCluster& cluster, uint32_t fnso, uint64_t fno, uint64_t objects) {
  for (uint64_t i = 0; i < objects; ++i) {
    const Oid original{fnso, fno, i, ObjectType::kData, CopyFlag::kOriginal};
    Result<wire::ObjectMeta> o = cluster.client().Stat(original);
    Result<wire::ObjectMeta> r = cluster.client().Stat(original.OtherCopy());
    ASSERT_TRUE(o.ok()) << "object " << i << ": " << o.status().ToString();
    ASSERT_TRUE(r.ok()) << "object " << i << ": " << r.status().ToString();
    EXPECT_EQ(o->version(), r->version()) << "object " << i;
    EXPECT_EQ(o->checksum(), r->checksum()) << "object " << i;
  }
}

}  // namespace orthofs::testing
