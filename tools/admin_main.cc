// orthofs: the admin CLI (cluster status, one-object debugging, placement inspection). This
// file wires the subcommands to the command line; they are tools/admin_commands.h.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "rpc/grpc_logging.h"
#include "tools/admin_commands.h"

namespace orthofs::admin {
namespace {

void AddCopiesFlag(CLI::App* cmd, Copies* copies) {
  static const std::map<std::string, Copies> kNames = {
      {"both", Copies::kBoth}, {"original", Copies::kOriginal}, {"replica", Copies::kReplica}};
  cmd->add_option("--copies", *copies, "both | original | replica (default both)")
      ->transform(CLI::CheckedTransformer(kNames, CLI::ignore_case));
}

std::string OidHelp() {
  return "object id fnso/fno/offset[/TYPE[/FLAG]], TYPE in DATA|INODE|DIRENT|SYMLINK|SUPER";
}

}  // namespace
}  // namespace orthofs::admin

int main(int argc, char** argv) {
  using namespace orthofs;
  using namespace orthofs::admin;
  // Diagnostics on stderr: stdout carries the command's output (JSON with --json).
  spdlog::set_default_logger(spdlog::stderr_color_mt("orthofs"));
  spdlog::set_level(spdlog::level::warn);
  RouteGrpcLogsToSpdlog();

  CLI::App app{"orthofs: administer an OrthoFS cluster."};
  app.require_subcommand(1);

  CommonFlags common;
  bool json = false;

  CLI::App* status = app.add_subcommand("status",
                                        "each OSD: up/down, epoch, objects, bytes, "
                                        "capacity (exit 3 if any OSD is down)");
  AddCommonFlags(status, &common);
  status->add_flag("--json", json, "one JSON object");

  CLI::App* stats = app.add_subcommand(
      "stats", "every OSD's counters (requests, cache, prefetching) and the cluster's totals");
  AddCommonFlags(stats, &common);
  stats->add_flag("--json", json, "one JSON object");
  bool reset = false;
  stats->add_flag("--reset", reset,
                  "then count from zero (admin certificate; the metrics endpoints never reset)");

  std::string level;
  std::vector<uint32_t> level_osds;
  CLI::App* log_level =
      app.add_subcommand("log-level", "change OSDs' log level while they run (admin certificate)");
  AddCommonFlags(log_level, &common);
  log_level->add_option("level", level, "trace|debug|info|warn|error|critical|off")
      ->required()
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  log_level->add_option("--osd", level_osds, "only these OSDs (default: all)");

  std::vector<uint32_t> drop_osds;
  CLI::App* drop_caches = app.add_subcommand(
      "drop-caches",
      "OSDs empty their caches of object bytes, so a benchmark reads cold (admin certificate; "
      "the kernel's page cache: echo 3 > /proc/sys/vm/drop_caches)");
  AddCommonFlags(drop_caches, &common);
  drop_caches->add_option("--osd", drop_osds, "only these OSDs (default: all)");

  CLI::App* repair = app.add_subcommand(
      "repair",
      "every OSD brings the copies it holds repair records for up to date now (exit 3 if "
      "records are left)");
  AddCommonFlags(repair, &common);
  repair->add_flag("--json", json, "one JSON object");

  std::string oid_text, file, out_path;
  uint64_t offset = 0, length = 0;
  Copies copies = Copies::kBoth;
  bool sync = false;

  CLI::App* put = app.add_subcommand("put", "write one object from a file or stdin");
  AddCommonFlags(put, &common);
  put->add_option("oid", oid_text, OidHelp())->required();
  put->add_option("--file", file, "input file (default stdin)");
  put->add_option("--offset", offset, "byte offset inside the object (ranged write)");
  AddCopiesFlag(put, &copies);
  put->add_flag("--sync", sync, "wait until durable on the OSD's disk");

  CLI::App* get = app.add_subcommand("get", "read one object copy to a file or stdout");
  AddCommonFlags(get, &common);
  get->add_option("oid", oid_text, OidHelp())->required();
  get->add_option("--out", out_path, "output file (default stdout)");
  get->add_option("--offset", offset, "byte offset inside the object");
  get->add_option("--length", length, "bytes to read (default: to the end)");

  CLI::App* stat = app.add_subcommand("stat", "version, length and checksum of an object");
  AddCommonFlags(stat, &common);
  stat->add_option("oid", oid_text, OidHelp())->required();
  AddCopiesFlag(stat, &copies);
  stat->add_flag("--json", json, "JSON lines");

  CLI::App* rm = app.add_subcommand("rm", "delete an object");
  AddCommonFlags(rm, &common);
  rm->add_option("oid", oid_text, OidHelp())->required();
  AddCopiesFlag(rm, &copies);

  uint32_t fnso = 1;
  CLI::App* mkfs = app.add_subcommand("mkfs", "create a file system namespace (root = fno 1)");
  AddCommonFlags(mkfs, &common);
  mkfs->add_option("--fnso", fnso, "namespace number")->capture_default_str();

  FsckOptions fsck_options;
  CLI::App* fsck = app.add_subcommand(
      "fsck",
      "check a namespace: dangling entries or directories cut off from the root (exit 3 if "
      "any), collect orphans");
  AddCommonFlags(fsck, &common);
  fsck->add_option("--fnso", fnso, "namespace number")->capture_default_str();
  fsck->add_flag("--dry-run", fsck_options.dry_run, "report only, change nothing");
  fsck->add_option("--grace", fsck_options.grace_seconds,
                   "spare orphans changed within this many seconds (live creates, open files)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  fsck->add_flag("--json", json, "one JSON object");

  ScrubOptions scrub_options;
  CLI::App* scrub = app.add_subcommand(
      "scrub",
      "compare both copies of every object of a namespace (version, checksum) and rewrite the "
      "stale, missing or corrupt one (exit 3 if an object has no intact copy)");
  AddCommonFlags(scrub, &common);
  scrub->add_option("--fnso", fnso, "namespace number")->capture_default_str();
  scrub->add_flag("--dry-run", scrub_options.dry_run, "report only, change nothing");
  scrub->add_flag("--json", json, "one JSON object");

  uint64_t fno = 0, count = 1;
  std::string type_name = "DATA";
  CLI::App* locate = app.add_subcommand(
      "locate", "which OSD holds each original and the replica of a file's objects");
  AddCommonFlags(locate, &common);
  locate->add_option("--fnso", fnso, "namespace")->capture_default_str();
  locate->add_option("--fno", fno, "file number")->required();
  locate->add_option("--offset", offset, "first object index")->capture_default_str();
  locate->add_option("--count", count, "number of objects")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 32));
  locate->add_option("--type", type_name, "object type")->capture_default_str();
  locate->add_flag("--json", json, "JSON lines");

  std::string new_map_path;
  CLI::App* plan_rebalance = app.add_subcommand(
      "plan-rebalance",
      "count which stored copies a new map would move (originals and replicas, OSD to OSD) "
      "against the least any placement could move; changes nothing");
  AddCommonFlags(plan_rebalance, &common);
  plan_rebalance->add_option("--new-map", new_map_path, "the proposed cluster map")->required();
  plan_rebalance->add_flag("--json", json, "one JSON object");

  std::string rebalance_map_path;
  CLI::App* rebalance = app.add_subcommand(
      "rebalance",
      "move the running cluster to a new map (OSDs added or removed): every copy whose placement "
      "changes moves, clients keep working; rerun to resume (admin certificate)");
  AddCommonFlags(rebalance, &common);
  rebalance->add_option("--new-map", rebalance_map_path, "the new cluster map (epoch + 1)")
      ->required();
  rebalance->add_flag("--json", json, "one JSON object");

  std::string report_map;
  int report_osds = 6;
  uint64_t files = 10000, objects = 800;
  std::string strategy;
  CLI::App* report = app.add_subcommand(
      "placement-report", "simulate placement of F files x K objects and report the balance");
  report->add_option("--files", files, "files")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, uint64_t{100000000}));
  report->add_option("--objects", objects, "objects per file")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, uint64_t{100000000}));
  report->add_option("--strategy", strategy, "migration | repartition (default: the map's)");
  report->add_option("--map", report_map, "use this map's OSDs and weights");
  report->add_option("--osds", report_osds, "equal-weight OSDs when no --map is given")
      ->capture_default_str()
      ->check(CLI::Range(2, 100000));
  report->add_option("--fnso", fnso, "namespace")->capture_default_str();
  report->add_flag("--json", json, "one JSON object");

  auto is_command = [&](const std::string& name) {
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (sub->get_name() == name) return true;
    }
    return false;
  };
  if (argc > 1 && argv[1][0] != '-' && !is_command(argv[1])) {
    std::cerr << "orthofs: unknown command '" << argv[1] << "' (see --help)\n";
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << "orthofs: " << e.what() << " (see --help)\n";
    return kExitUsage;
  }

  if (status->parsed()) return RunStatus(common, json);
  if (stats->parsed()) return RunStats(common, json, reset);
  if (log_level->parsed()) return RunLogLevel(common, level, level_osds);
  if (drop_caches->parsed()) return RunDropCaches(common, drop_osds);
  if (repair->parsed()) return RunRepair(common, json);
  if (put->parsed()) return RunPut(common, oid_text, file, offset, copies, sync);
  if (get->parsed()) return RunGet(common, oid_text, out_path, offset, length);
  if (stat->parsed()) return RunStat(common, oid_text, copies, json);
  if (rm->parsed()) return RunRm(common, oid_text, copies);
  if (mkfs->parsed()) return RunMkfs(common, fnso);
  if (fsck->parsed()) return RunFsckCommand(common, fnso, fsck_options, json);
  if (scrub->parsed()) return RunScrubCommand(common, fnso, scrub_options, json);
  if (plan_rebalance->parsed()) return RunPlanRebalance(common, new_map_path, json);
  if (rebalance->parsed()) return RunRebalance(common, rebalance_map_path, json);
  if (locate->parsed()) return RunLocate(common, fnso, fno, offset, count, type_name, json);
  if (report->parsed()) {
    return RunPlacementReport(report_map, report_osds, files, objects, strategy, fnso, json);
  }
  return kExitUsage;
}
