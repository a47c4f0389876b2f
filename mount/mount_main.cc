// orthofs-mount (also installed as mount.orthofs): the OrthoFS FUSE file system, on the
// low-level libfuse3 API (structured after libfuse's passthrough_ll.c). Inode number = fno.
// This file parses the arguments, connects to the cluster, detaches, and runs the session;
// the callbacks are mount/fuse_ops.cc, the mount's state mount/mount_fs.h.
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <linux/capability.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <stop_token>
#include <thread>

#include "client/file_io.h"
#include "client/lock_manager.h"
#include "client/namespace.h"
#include "client/open_files.h"
#include "common/await_all.h"
#include "common/cached_versions.h"
#include "common/kernel_dentries.h"
#include "common/kernel_sizes.h"
#include "common/shared_bytes.h"
#include "mount/fuse_killpriv.h"
#include "mount/fuse_ops.h"
#include "mount/fuse_requests.h"
#include "mount/mount_args.h"
#include "mount/mount_fs.h"
#include "mount/mount_metrics.h"
#include "mount/mount_point.h"
#include "rpc/grpc_logging.h"
#include "rpc/map_file.h"
#include "rpc/metrics_server.h"
#include "rpc/process_tuning.h"
#include "rpc/tcp_congestion.h"
#include "rpc/tls.h"

namespace orthofs {
namespace {

// Forks before any gRPC state exists (gRPC does not survive fork). The parent waits until the
// child reports the mount ready (exit 0) or failed (exit 1); the child carries on detached.
// Returns the write end of the report pipe in the child, -1 in the foreground.
int DetachBeforeMount() {
  int report[2];
  if (pipe(report) != 0) {
    std::perror("orthofs-mount: pipe");
    std::exit(1);
  }
  pid_t pid = fork();
  if (pid < 0) {
    std::perror("orthofs-mount: fork");
    std::exit(1);
  }
  if (pid > 0) {
    close(report[1]);
    char status = 1;
    if (read(report[0], &status, 1) != 1) status = 1;  // the child died before reporting
    std::_Exit(status == 0 ? 0 : 1);
  }
  close(report[0]);
  setsid();
  return report[1];
}

// Tells the waiting parent how the mount went; on success the child lets go of the terminal.
void ReportMount(int* report_fd, bool ok) {
  if (*report_fd < 0) return;
  char status = ok ? 0 : 1;
  if (write(*report_fd, &status, 1) != 1) {
    // The parent is gone; nothing else to tell.
  }
  close(*report_fd);
  *report_fd = -1;
  if (ok) {
    int null_fd = open("/dev/null", O_RDWR);
    if (null_fd >= 0) {
      // Output sent to a file stays there (`2>> mount.log`: the warnings of a daemon nobody
      // watches are its only trace); a terminal or a pipe is let go (a pipe's reader may
      // leave, and a write then would kill the mount).
      auto to_file = [](int fd) {
        struct stat st;
        return fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
      };
      dup2(null_fd, 0);
      if (!to_file(1)) dup2(null_fd, 1);
      if (!to_file(2)) dup2(null_fd, 2);
      if (null_fd > 2) close(null_fd);
    }
    if (chdir("/") != 0) {
      // Staying in the old directory only pins it; not fatal.
    }
  }
}

// A random id for this mount: the OSDs keep their prefetch windows per client.
std::string NewClientId() {
  std::random_device random;
  std::string id;
  for (int i = 0; i < 4; ++i) id += fmt::format("{:08x}", random());
  return id;
}

void Usage(const char* prog) {
  std::cout << "usage: " << prog
            << " --map FILE [--fnso N] [--cache-mb MB] [--flush-threads N] [--read-ahead N]\n"
               "       [--negative-timeout S] [--lock-lease S] [--local-locks] [--private]\n"
               "       [--log-level LEVEL] [--prefetch MODE]\n"
               "       [--metrics HOST:PORT]\n"
               "       [--tls-dir DIR | --insecure]\n"
               "       MOUNTPOINT [-f] [-d] [-o opts]\n"
               "       "
            << prog
            << " FILE MOUNTPOINT -o fnso=N[,opts]   (mount(8), fstab)\n"
               "  Mounts OrthoFS namespace N (default 1) of the cluster whose map is FILE.\n"
               "  -f stays in the foreground, -d also prints every FUSE request;\n"
               "  --cache-mb sizes the client object cache (default 1/16 of memory, 256..4096;\n"
               "  written bytes wait there for write-back at most 5 s), --flush-threads the\n"
               "  write-back threads (default 4), --read-ahead how many objects a sequential\n"
               "  reader gets fetched ahead at most (default 16, 0: none).\n"
               "  --negative-timeout S lets the kernel remember for S seconds (up to 3600) that a\n"
               "  name does not exist: repeated lookups of missing names (compilers' include\n"
               "  paths) cost nothing, but a file another client creates stays unseen that long\n"
               "  (default 0: asked every time).\n"
               "  fcntl and flock locks hold across every client of the namespace; --lock-lease\n"
               "  S (1..3600, default 15) is how long a client may stay silent (killed, cut\n"
               "  off) before the others take its locks. --local-locks (-o local_locks) keeps\n"
               "  them in this mount's kernel instead: free, but not seen by other clients.\n"
               "  Mounted by root, it serves every local user under the kernel's permission\n"
               "  checks (allow_other, default_permissions); --private (-o private) keeps it to\n"
               "  root. Other users' mounts serve only themselves, as FUSE does.\n"
               "  -o passes FUSE mount options (allow_other, ro, ...); map=, fnso=, cache_mb=,\n"
               "  flush_threads=, read_ahead=, negative_timeout=, lock_lease= and log_level= may\n"
               "  also be given there.\n"
               "  --prefetch none|spa|cor (-o prefetch=) refuses a map that prefetches otherwise.\n"
               "  --metrics HOST:PORT (-o metrics=) serves Prometheus text at /metrics.\n"
               "  Mutual TLS with --tls-dir DIR (default /etc/orthofs/tls: ca.crt, client.crt,\n"
               "  client.key), or --tls-ca/--tls-cert/--tls-key FILE (-o tls_dir=, tls_ca=,\n"
               "  tls_cert=, tls_key=); --insecure (-o insecure) for plaintext.\n"
               "  fstab: /etc/orthofs/cluster.yaml /mnt/orthofs fuse.orthofs fnso=1,_netdev 0 0\n";
}

// What the mount needs loaded before it forks: the cluster map and the TLS identity.
struct MountInputs {
  ClusterMap map;
  std::shared_ptr<const TlsIdentity> tls;  // null with --insecure
};

// Loads them, or says why not (exit 1).
std::optional<MountInputs> LoadMountInputs(const MountArgs& cli) {
  Result<ClusterMap> map = LoadClusterMapFile(cli.map_path);
  if (!map.ok()) {
    std::cerr << "orthofs-mount: " << map.status().message() << "\n";
    return std::nullopt;
  }
  if (Status st = CheckExpectedPrefetchMode(map->prefetch, cli.expected_prefetch); !st.ok()) {
    std::cerr << "orthofs-mount: " << st.message() << "\n";
    return std::nullopt;
  }
  Result<std::shared_ptr<const TlsIdentity>> tls = LoadTlsIdentity(cli.tls, "client");
  if (!tls.ok()) {
    std::cerr << "orthofs-mount: " << tls.status().message() << "\n";
    return std::nullopt;
  }
  return MountInputs{std::move(*map), std::move(*tls)};
}

// libfuse gets its own arguments; the kernel enforces permissions from our attributes.
std::vector<std::string> FuseArgv(const char* prog, const MountArgs& cli) {
  std::vector<std::string> fuse_argv = {prog};
  fuse_argv.insert(fuse_argv.end(), cli.fuse_flags.begin(), cli.fuse_flags.end());
  fuse_argv.push_back("-o" + FuseMountOptions(cli, geteuid() == 0));
  return fuse_argv;
}

// Logs to stderr at `log_level`, gRPC's too.
void StartLogging(const std::string& log_level) {
  auto logger = spdlog::stderr_color_mt("mount");
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ mount %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(log_level));
  RouteGrpcLogsToSpdlog();
}

// The client object cache's size: --cache-mb, or a share of the memory.
uint64_t CacheBytes(const MountArgs& cli) {
  const uint64_t cache_mb =
      cli.cache_mb != 0 ? cli.cache_mb : DefaultCacheMb(PhysicalMemoryBytes());
  spdlog::debug("client cache {} MiB{}", cache_mb, cli.cache_mb != 0 ? "" : " (1/16 of memory)");
  return cache_mb << 20;
}

// The mounted file system over a client of the cluster.
std::unique_ptr<OrthoFs> MakeFs(const MountArgs& cli, const MountInputs& inputs,
                                uint64_t cache_bytes) {
  FileIoOptions io_options;
  io_options.cache_bytes = cache_bytes;
  io_options.flush_threads = static_cast<int>(cli.flush_threads);
  io_options.read_ahead.max_objects = cli.read_ahead;
  UseClusterTcpCongestion(inputs.map);
  RpcOptions rpc;
  rpc.tls = inputs.tls;
  auto cluster = std::make_unique<ClusterClient>(inputs.map, rpc);
  cluster->set_client_id(NewClientId());
  LockManagerOptions lock_options;
  lock_options.lease = std::chrono::milliseconds(static_cast<int64_t>(cli.lock_lease * 1000));
  auto fs = std::make_unique<OrthoFs>(std::move(cluster), cli.fnso, io_options, lock_options);
  fs->set_negative_timeout(cli.negative_timeout);
  fs->set_local_locks(cli.local_locks);
  return fs;
}

// The Prometheus endpoint of --metrics (null without it). It renders from `fs`: it must stop
// before `fs` goes.
Result<std::unique_ptr<MetricsServer>> ServeMetrics(const MountArgs& cli, OrthoFs* fs,
                                                    uint64_t cache_bytes,
                                                    const MountInputs& inputs) {
  if (cli.metrics.empty()) return std::unique_ptr<MetricsServer>();
  auto started = MetricsServer::Start(
      cli.metrics,
      [fs, fnso = cli.fnso, cache_bytes, not_after = inputs.tls ? inputs.tls->not_after : 0] {
        return fs->RenderMetrics(fnso, cache_bytes, not_after);
      });
  if (!started.ok()) return started.status();
  spdlog::info("metrics at {}", (*started)->url());
  return started;
}

// Mounts at cli.mountpoint and answers the kernel until unmounted; the exit code.
int RunSession(OrthoFs* fs, fuse_args* args, const MountArgs& cli, int* report_fd) {
  fuse_lowlevel_ops ops = MakeOps();
  fuse_session* se = fuse_session_new(args, &ops, sizeof ops, fs);
  int rc = 1;
  if (se != nullptr) {
    fs->set_session(se);
    if (fuse_set_signal_handlers(se) == 0) {
      if (fuse_session_mount(se, cli.mountpoint.c_str()) == 0) {
        // Sees the raw requests and replies (KillPrivV2); libfuse keeps doing the rest. Without
        // splice functions here libfuse splices nothing (it did not before either: it splices
        // only when asked to, or for a write_buf handler).
        if (int rc = fuse_session_custom_io(se, RawTrafficIo(), fuse_session_fd(se)); rc != 0) {
          spdlog::warn(
              "cannot see the raw FUSE traffic ({}): Linux keeps asking for "
              "security.capability before every write",
              std::strerror(-rc));
        }
        spdlog::debug("mounted namespace {} of {} at {}", cli.fnso, cli.map_path, cli.mountpoint);
        ReportMount(report_fd, true);
        fuse_loop_config* config = fuse_loop_cfg_create();
        fuse_loop_cfg_set_max_threads(config, 32);
        rc = fuse_session_loop_mt(se, config) == 0 ? 0 : 1;
        fuse_loop_cfg_destroy(config);
        fuse_session_unmount(se);
      }
      fuse_remove_signal_handlers(se);
    }
    fuse_session_destroy(se);
  }
  return rc;
}

}  // namespace
}  // namespace orthofs

int main(int argc, char** argv) {
  using namespace orthofs;
  Result<MountArgs> parsed = ParseMountArgs(std::vector<std::string>(argv + 1, argv + argc));
  if (!parsed.ok()) {
    std::cerr << "orthofs-mount: " << parsed.status().message() << " (see --help)\n";
    return 2;
  }
  const MountArgs& cli = *parsed;
  if (cli.help) {
    Usage(argv[0]);
    return 0;
  }
  if (spdlog::level::from_str(cli.log_level) == spdlog::level::off && cli.log_level != "off") {
    std::cerr << "orthofs-mount: unknown log level '" << cli.log_level << "'\n";
    return 2;
  }
  if (Status st = PrepareMountPoint(cli.mountpoint); !st.ok()) {
    std::cerr << "orthofs-mount: " << st.message() << "\n";
    return 1;
  }
  std::optional<MountInputs> inputs = LoadMountInputs(cli);
  if (!inputs) return 1;
  std::vector<std::string> fuse_argv = FuseArgv(argv[0], cli);
  std::vector<char*> fuse_argv_ptrs;
  for (auto& a : fuse_argv) fuse_argv_ptrs.push_back(a.data());
  fuse_args args = FUSE_ARGS_INIT(static_cast<int>(fuse_argv_ptrs.size()), fuse_argv_ptrs.data());
  int report_fd = cli.foreground ? -1 : DetachBeforeMount();

  StartLogging(cli.log_level);
  TuneProcessForDataPath();
  const uint64_t cache_bytes = CacheBytes(cli);
  std::unique_ptr<OrthoFs> fs = MakeFs(cli, *inputs, cache_bytes);
  if (Status st = fs->ns().CheckExists(); !st.ok()) {
    std::cerr << "orthofs-mount: " << st.message() << "\n";
    ReportMount(&report_fd, false);
    return 1;
  }
  Result<std::unique_ptr<MetricsServer>> metrics =
      ServeMetrics(cli, fs.get(), cache_bytes, *inputs);
  if (!metrics.ok()) {
    std::cerr << "orthofs-mount: --metrics: " << metrics.status().message() << "\n";
    ReportMount(&report_fd, false);
    return 1;
  }
  const int rc = RunSession(fs.get(), &args, cli, &report_fd);
  if (rc != 0) ReportMount(&report_fd, false);  // no-op once reported
  metrics->reset();                             // it renders from fs
  fuse_opt_free_args(&args);
  return rc;
}
