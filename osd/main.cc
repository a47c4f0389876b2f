// orthofs-osd: one Object-based Storage Device daemon.
#include <grpcpp/grpcpp.h>
#include <grpcpp/resource_quota.h>
#include <signal.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "common/peer_role.h"
#include "osd/object_store.h"
#include "osd/osd_service.h"
#include "rpc/grpc_logging.h"
#include "rpc/map_file.h"
#include "rpc/metrics_server.h"
#include "rpc/osd_client.h"
#include "rpc/process_tuning.h"
#include "rpc/tcp_congestion.h"
#include "rpc/tls.h"
#include "rpc/tls_flags_cli.h"

namespace {

struct Flags {
  uint32_t id = 0;
  std::string map_path;
  std::string data_dir;
  std::string listen;
  std::string metrics;
  uint64_t cache_mb = 256;
  uint64_t reserve_mb = 256;
  int threads = 16;
  std::string log_level = "info";
  bool sync_writes = false;
  bool direct_reads = false;
  bool keep_written_pages = false;
  std::string expected_prefetch;  // empty: whatever the map says
  bool serial = false;
  // Two: a window's scan waits on the disk for each record, and a second thread overlaps the
  // next window's (cold 16 KiB sequential reads: 407 -> 449 MB/s; four: 450).
  int prefetch_threads = 2;
  std::string disk_model = "none";
  int peer_timeout_ms = 5000;
  int recovery_limit_s = 300;
  std::string hold_recovery_while;
  int stall_recovery_ms = 400;
  orthofs::TlsFlags tls;
};

// One plain line on stderr (the log is stderr too; no second, timestamped copy).
int Fail(const std::string& message) {
  std::cerr << "orthofs-osd: " << message << "\n";
  return 1;
}

// Waits for SIGTERM or SIGINT and returns it; or, once the store stopped writing after a disk
// error (osd/store_write_stop.h), for `room` bytes free on its disk for 5 s in a row, and
// returns 0: the OSD then restarts in place, which reopens the store. (The 5 s keep a device
// that fails again at once from restarting the OSD every second.)
int WaitForSignalOrRoom(const sigset_t& signals, const orthofs::ObjectStore& store,
                        const std::string& data_dir, uint64_t room) {
  int seconds_with_room = 0;
  while (true) {
    const timespec second{1, 0};
    if (const int sig = sigtimedwait(&signals, nullptr, &second); sig > 0) return sig;
    if (!store.writes_stopped()) continue;
    struct statvfs fs {};
    const bool has_room = statvfs(data_dir.c_str(), &fs) == 0 &&
                          static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize >= room;
    seconds_with_room = has_room ? seconds_with_room + 1 : 0;
    if (seconds_with_room == 5) return 0;
  }
}

// Writable, creating it if missing; a clear message otherwise.
orthofs::Status PrepareDataDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return orthofs::Status::IoError("cannot create data dir " + dir + ": " + ec.message());
  if (access(dir.c_str(), W_OK | X_OK) != 0) {
    return orthofs::Status::IoError("data dir " + dir +
                                    " is not writable: " + std::strerror(errno));
  }
  return orthofs::Status::Ok();
}

// An existing data dir belongs to one OSD id forever: starting it as another OSD would
// serve objects placement never put there.
orthofs::Status CheckIdentity(orthofs::ObjectStore* store, uint32_t id, const std::string& dir) {
  orthofs::Result<std::string> stored = store->GetMeta("osd_id");
  if (stored.ok()) {
    if (*stored != std::to_string(id)) {
      return orthofs::Status::InvalidArgument("data dir " + dir + " belongs to OSD " + *stored +
                                              ", not OSD " + std::to_string(id));
    }
    return orthofs::Status::Ok();
  }
  if (!stored.status().Is(orthofs::StatusCode::kNotFound)) return stored.status();
  return store->PutMeta("osd_id", std::to_string(id));
}

struct RunningMaps {
  orthofs::ClusterMap map;
  std::optional<orthofs::ClusterMap> previous;  // while a rebalance runs
};

// The maps to start with. The store keeps the maps this OSD runs (SetMap persists them), and a
// map file with a later epoch does not override them: a cluster moves to a new map through
// orthofs rebalance, which also tells each OSD the map before (an OSD that jumped ahead alone
// would not know where the copies it gained are). A fresh store starts with the file's map (an
// OSD being added); the same epoch takes the file's settings.
orthofs::Result<RunningMaps> ChooseMaps(orthofs::ObjectStore* store,
                                        const orthofs::ClusterMap& file_map) {
  using orthofs::OsdService;
  orthofs::Result<std::string> stored = store->GetMeta(OsdService::kMapsMetaName);
  if (!stored.ok() && !stored.status().Is(orthofs::StatusCode::kNotFound)) return stored.status();
  if (stored.ok()) {
    auto maps = orthofs::DecodeRunningMaps(*stored);
    if (!maps.ok()) return maps.status();
    const auto& [map, previous] = *maps;
    if (map.epoch > file_map.epoch || previous) {
      if (map.epoch != file_map.epoch) {
        spdlog::info("starting with the stored map epoch {} (the map file has epoch {})", map.epoch,
                     file_map.epoch);
      }
      return RunningMaps{map, previous};
    }
    if (map.epoch < file_map.epoch) {
      spdlog::warn(
          "the map file has epoch {}, this OSD runs epoch {}: starting with {}. A new map takes "
          "effect through 'orthofs rebalance --new-map FILE', which moves the copies",
          file_map.epoch, map.epoch, map.epoch);
      return RunningMaps{map, {}};
    }
  }
  ORTHOFS_RETURN_IF_ERROR(store->PutMeta(OsdService::kMapsMetaName,
                                         orthofs::EncodeRunningMaps(file_map, std::nullopt)));
  return RunningMaps{file_map, {}};
}

// The options of `orthofs-osd --help`; --id and --map are required, but checked after parsing
// so that an unknown flag is reported as such rather than as a missing --id.
void AddFlags(CLI::App* app, Flags* flags, CLI::Option** id_option, CLI::Option** map_option) {
  *id_option = app->add_option("--id", flags->id, "this OSD's id in the cluster map (required)");
  *map_option = app->add_option("--map", flags->map_path, "cluster map file, YAML (required)");
  app->add_option("--data-dir", flags->data_dir,
                  "store directory (default /var/lib/orthofs/osd-ID)");
  app->add_option("--metrics", flags->metrics,
                  "serve Prometheus metrics at http://HOST:PORT/metrics (default: off)");
  app->add_option("--listen", flags->listen,
                  "listen address host:port (default: this OSD's address in the map)");
  app->add_option("--cache-mb", flags->cache_mb, "object cache size in MiB")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 20));
  app->add_option("--reserve-mb", flags->reserve_mb,
                  "refuse writes (NO_SPACE) that would leave less free space on the data dir's "
                  "file system; the store needs room for its log, flushes and compactions (0: off)")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 30));
  app->add_option("--threads", flags->threads, "request polling threads (busy calls get more)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  app->add_option("--log-level", flags->log_level, "trace|debug|info|warn|error|critical|off")
      ->capture_default_str()
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  app->add_flag("--sync-writes", flags->sync_writes,
                "fsync the WAL on every write (default: only writes that ask for it)");
  app->add_flag("--direct-reads", flags->direct_reads, "O_DIRECT store reads (cold-read tests)");
  app->add_flag("--keep-written-pages", flags->keep_written_pages,
                "keep written object bytes in the page cache once on disk (default: dropped, so "
                "that streams of writes do not push out what reads use)");
  app->add_option("--disk-model", flags->disk_model,
                  "experiments: none, or hdd (reads also take a 7200 rpm disk's seek, rotation "
                  "and transfer time; see common/disk_model.h)")
      ->capture_default_str()
      ->check(CLI::IsMember({"none", "hdd"}));
  app->add_option("--peer-timeout-ms", flags->peer_timeout_ms,
                  "deadline of one call to another OSD (a repair's push, a recovery's ask)")
      ->capture_default_str()
      ->check(CLI::Range(50, 600000));
  app->add_option("--recovery-limit-s", flags->recovery_limit_s,
                  "at start, refuse reads at most this long while peers replay the writes this "
                  "OSD missed (past it, copies a peer has not replayed yet are served stale)")
      ->capture_default_str()
      ->check(CLI::Range(0, 86400));
  app->add_option("--stall-recovery-ms", flags->stall_recovery_ms,
                  "after not running for longer than this (stopped, a paused VM, starved of CPU), "
                  "recover as after a restart: peers may have taken changes of its copies alone "
                  "meanwhile (0: off; keep it below the 500 ms after which a client or a peer "
                  "gives up on a silent OSD)")
      ->capture_default_str()
      ->check(CLI::Range(0, 600000));
  // Hidden (an empty group): tests hold an OSD in its recovering state with it.
  app->add_option("--hold-recovery-while", flags->hold_recovery_while,
                  "for tests: recovery waits to ask the peers while this file exists")
      ->group("");
  app->add_flag("--serial", flags->serial,
                "do prefetch work inline on the request path (default: its own executor)");
  app->add_option("--prefetch-threads", flags->prefetch_threads, "threads of the prefetch executor")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  app->add_option("--prefetch", flags->expected_prefetch,
                  "none|spa|cor: refuse to start unless the cluster map prefetches this way");
  orthofs::AddTlsFlags(app, &flags->tls, "osd.ID");
}

// The gRPC server of `service`, listening (`bound_port` 0 when it could not).
std::unique_ptr<grpc::Server> StartServer(const Flags& flags, const orthofs::TlsIdentity* tls,
                                          uint32_t object_size, orthofs::OsdService* service,
                                          int* bound_port) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort(flags.listen, orthofs::ServerCredentialsFor(tls), bound_port);
  builder.RegisterService(service);
  // gRPC would otherwise let a second OSD bind the same port (SO_REUSEPORT).
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  for (const auto& [name, value] : orthofs::SocketReadArguments()) {
    builder.AddChannelArgument(name, value);
  }
  builder.SetOption(orthofs::TcpCongestionServerOption());
  builder.SetMaxReceiveMessageSize(static_cast<int>(object_size) * 2 + (1 << 20));
  builder.SetMaxSendMessageSize(static_cast<int>(orthofs::kMaxObjectSize) + (4 << 20));
  // The sync server runs each call on its own thread and answers RESOURCE_EXHAUSTED beyond
  // the quota: a client writing many objects at once needs far more than --threads pollers.
  grpc::ResourceQuota quota("orthofs-osd");
  quota.SetMaxThreads(std::max(flags.threads * 16, 256));
  builder.SetResourceQuota(quota);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, flags.threads);
  return builder.BuildAndStart();
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  CLI::App app{"orthofs-osd: an OrthoFS object storage daemon (RocksDB store, gRPC service)."};
  CLI::Option* id_option = nullptr;
  CLI::Option* map_option = nullptr;
  AddFlags(&app, &flags, &id_option, &map_option);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::cerr << "orthofs-osd: " << e.what() << " (see --help)\n";
    return 2;
  }
  for (const CLI::Option* required : {id_option, map_option}) {
    if (required->count() == 0) {
      std::cerr << "orthofs-osd: " << required->get_name() << " is required (see --help)\n";
      return 2;
    }
  }

  auto logger = spdlog::stderr_color_mt("osd");
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ osd." + std::to_string(flags.id) + " %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(flags.log_level));
  orthofs::RouteGrpcLogsToSpdlog();
  orthofs::TuneProcessForDataPath();
  // Every data log segment stays open; the limit bounds the store at 64 MiB per descriptor.
  if (const uint64_t files = orthofs::RaiseOpenFileLimit(); files < 4096) {
    spdlog::warn(
        "only {} open files allowed (ulimit -n): the store's data log keeps one per "
        "64 MiB segment open, so it cannot grow past about {} GiB",
        files, files / 16);
  }

  orthofs::Result<orthofs::ClusterMap> map = orthofs::LoadClusterMapFile(flags.map_path);
  if (!map.ok()) return Fail(map.status().message());
  if (orthofs::Status st =
          orthofs::CheckExpectedPrefetchMode(map->prefetch, flags.expected_prefetch);
      !st.ok()) {
    return Fail(st.message());
  }
  if (flags.data_dir.empty()) flags.data_dir = "/var/lib/orthofs/osd-" + std::to_string(flags.id);
  // An OSD missing from the map file may still be in a later map its store holds.
  if (map->FindOsd(flags.id) == nullptr && !std::filesystem::exists(flags.data_dir + "/CURRENT")) {
    return Fail("OSD id " + std::to_string(flags.id) + " is not in cluster map " + flags.map_path);
  }
  // Mutual TLS unless --insecure: this OSD's certificate must carry its id, the name clients
  // and other OSDs expect of it.
  orthofs::Result<std::shared_ptr<const orthofs::TlsIdentity>> tls =
      orthofs::LoadTlsIdentity(flags.tls, orthofs::OsdCertificateName(flags.id));
  if (!tls.ok()) return Fail(tls.status().message());
  if (*tls != nullptr && (*tls)->name != orthofs::OsdCertificateName(flags.id)) {
    return Fail("TLS certificate names '" + (*tls)->name + "', but this is OSD " +
                std::to_string(flags.id) + " (its certificate must name " +
                orthofs::OsdCertificateName(flags.id) + ")");
  }
  if (!flags.listen.empty()) {
    if (orthofs::Status st = orthofs::ValidateAddress(flags.listen); !st.ok()) {
      return Fail("--listen: " + st.message());
    }
  }
  if (orthofs::Status st = PrepareDataDir(flags.data_dir); !st.ok()) return Fail(st.message());

  orthofs::StoreOptions store_options;
  store_options.sync_writes = flags.sync_writes;
  if (flags.reserve_mb > 0 && flags.reserve_mb < 128) {
    spdlog::warn(
        "--reserve-mb {} is under twice the store's 64 MiB write buffer: a memtable flush on a "
        "nearly full disk may still run out of space",
        flags.reserve_mb);
  }
  store_options.direct_reads = flags.direct_reads;
  store_options.keep_written_pages = flags.keep_written_pages;
  store_options.disk_model = *orthofs::ParseDiskModel(flags.disk_model);  // checked by CLI11
  auto store = orthofs::ObjectStore::Open(flags.data_dir, store_options);
  if (!store.ok()) return Fail(store.status().message());
  if (orthofs::Status st = CheckIdentity(store->get(), flags.id, flags.data_dir); !st.ok()) {
    return Fail(st.message());
  }
  orthofs::Result<RunningMaps> maps = ChooseMaps(store->get(), *map);
  if (!maps.ok()) return Fail(maps.status().message());
  *map = maps->map;
  orthofs::UseClusterTcpCongestion(*map);  // before any channel or listener exists
  if (const std::string cc = orthofs::TcpCongestionInUse(); !cc.empty()) {
    spdlog::info("TCP congestion control {} (cluster map)", cc);
  }
  const orthofs::MapView view(maps->map, maps->previous);
  const orthofs::OsdInfo* self = view.FindOsd(flags.id);
  if (self == nullptr) {
    return Fail("OSD id " + std::to_string(flags.id) + " is not in cluster map epoch " +
                std::to_string(map->epoch) + " (removed from the cluster?)");
  }
  if (flags.listen.empty()) flags.listen = self->address;

  // Signals go to sigwait below, not to whichever gRPC thread happens to run.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  orthofs::OsdServiceOptions service_options;
  service_options.osd_id = flags.id;
  service_options.cache_bytes = flags.cache_mb << 20;
  service_options.data_dir = flags.data_dir;
  service_options.reserve_bytes = flags.reserve_mb << 20;
  service_options.prefetch.osd_id = flags.id;
  service_options.prefetch.serial = flags.serial;
  service_options.prefetch.threads = flags.prefetch_threads;
  service_options.prefetch.tls = *tls;
  service_options.repair.rpc.tls = *tls;
  service_options.repair.rpc.deadline = std::chrono::milliseconds(flags.peer_timeout_ms);
  service_options.repair.recovery_limit = std::chrono::seconds(flags.recovery_limit_s);
  service_options.hold_recovery_while = flags.hold_recovery_while;
  service_options.stall_recovery = std::chrono::milliseconds(flags.stall_recovery_ms);
  service_options.authorize_callers = *tls != nullptr;
  if (*tls) service_options.tls_not_after = (*tls)->not_after;
  orthofs::OsdService service(maps->map, maps->previous, store->get(), service_options);
  std::unique_ptr<orthofs::MetricsServer> metrics;
  if (!flags.metrics.empty()) {
    auto started = orthofs::MetricsServer::Start(flags.metrics,
                                                 [&service] { return service.RenderMetrics(); });
    if (!started.ok()) return Fail(started.status().message());
    metrics = std::move(*started);
    spdlog::info("metrics at {}", metrics->url());
  }

  int bound_port = 0;
  std::unique_ptr<grpc::Server> server =
      StartServer(flags, tls->get(), map->object_size, &service, &bound_port);
  if (!server || bound_port == 0) {
    return Fail("cannot listen on " + flags.listen + " (address in use or not local?)");
  }
  spdlog::info(
      "OSD {} serving {} objects ({} bytes) from {} on {} ({}), map epoch {}, {} OSDs, prefetch {}",
      flags.id, (*store)->object_count(), (*store)->byte_count(), flags.data_dir, flags.listen,
      *tls ? "mutual TLS" : "plaintext", map->epoch, map->osds.size(),
      orthofs::PrefetchModeName(map->prefetch.mode));
  if (*tls == nullptr) spdlog::warn("--insecure: plaintext gRPC, any peer may call anything");
  service.StartRecovery();

  // Room for the store to go on: the reserve, and a memtable's flush above it.
  const uint64_t room = (flags.reserve_mb << 20) + (64 << 20);
  const int sig = WaitForSignalOrRoom(signals, **store, flags.data_dir, room);
  if (sig == 0) {
    spdlog::warn(
        "OSD {}: {} MiB free again on {} after the disk error that stopped its store's "
        "writes: restarting in place to reopen the store",
        flags.id, room >> 20, flags.data_dir);
  } else {
    spdlog::info("signal {} ({}): shutting down", sig, strsignal(sig));
  }
  if (!service.Drain(std::chrono::seconds(5))) {
    spdlog::warn("requests still in flight after 5 s; cancelling them");
  }
  server->Shutdown(std::chrono::system_clock::now());
  server->Wait();
  server.reset();  // its listening port, free for the restarted OSD
  metrics.reset();
  service.StopBackgroundWork();
  store->reset();
  if (sig == 0) {
    spdlog::default_logger()->flush();
    // The same pid (pid files and supervisors see no change); SIGTERM and SIGINT stay blocked,
    // so one sent meanwhile waits for the new sigwait.
    execv("/proc/self/exe", argv);
    return Fail(std::string("cannot restart (exec /proc/self/exe): ") + strerror(errno));
  }
  spdlog::info("OSD {} stopped cleanly", flags.id);
  return 0;
}
