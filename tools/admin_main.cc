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

// Where CLI11 puts what the subcommands were given: a parse fills those of the one named.
// Subcommands share the flags they have in common (--json, --fnso, --offset, the oid).
struct Args {
  CommonFlags common;
  bool json = false;
  bool reset = false;  // stats
  std::string level;   // log-level
  std::vector<uint32_t> level_osds;
  std::vector<uint32_t> drop_osds;  // drop-caches
  std::string oid_text, file, out_path;
  uint64_t offset = 0, length = 0;
  Copies copies = Copies::kBoth;
  bool sync = false;
  uint32_t fnso = 1;
  FsckOptions fsck_options;
  ScrubOptions scrub_options;
  uint64_t fno = 0, count = 1;  // locate
  std::string type_name = "DATA";
  std::string new_map_path;        // plan-rebalance
  std::string rebalance_map_path;  // rebalance
  std::string report_map;          // placement-report
  int report_osds = 6;
  uint64_t files = 10000, objects = 800;
  std::string strategy;
};

// The subcommands as wired; the one given is parsed().
struct Commands {
  CLI::App* status;
  CLI::App* stats;
  CLI::App* log_level;
  CLI::App* drop_caches;
  CLI::App* repair;
  CLI::App* put;
  CLI::App* get;
  CLI::App* stat;
  CLI::App* rm;
  CLI::App* mkfs;
  CLI::App* fsck;
  CLI::App* scrub;
  CLI::App* locate;
  CLI::App* plan_rebalance;
  CLI::App* rebalance;
  CLI::App* report;
};

// status, stats, log-level, drop-caches, repair.
void AddClusterCommands(CLI::App* app, Args* a, Commands* c) {
  c->status = app->add_subcommand("status",
                                  "each OSD: up/down, epoch, objects, bytes, "
                                  "capacity (exit 3 if any OSD is down)");
  AddCommonFlags(c->status, &a->common);
  c->status->add_flag("--json", a->json, "one JSON object");

  c->stats = app->add_subcommand(
      "stats", "every OSD's counters (requests, cache, prefetching) and the cluster's totals");
  AddCommonFlags(c->stats, &a->common);
  c->stats->add_flag("--json", a->json, "one JSON object");
  c->stats->add_flag("--reset", a->reset,
                     "then count from zero (admin certificate; the metrics endpoints never reset)");

  c->log_level =
      app->add_subcommand("log-level", "change OSDs' log level while they run (admin certificate)");
  AddCommonFlags(c->log_level, &a->common);
  c->log_level->add_option("level", a->level, "trace|debug|info|warn|error|critical|off")
      ->required()
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  c->log_level->add_option("--osd", a->level_osds, "only these OSDs (default: all)");

  c->drop_caches = app->add_subcommand(
      "drop-caches",
      "OSDs empty their caches of object bytes, so a benchmark reads cold (admin certificate; "
      "the kernel's page cache: echo 3 > /proc/sys/vm/drop_caches)");
  AddCommonFlags(c->drop_caches, &a->common);
  c->drop_caches->add_option("--osd", a->drop_osds, "only these OSDs (default: all)");

  c->repair = app->add_subcommand(
      "repair",
      "every OSD brings the copies it holds repair records for up to date now (exit 3 if "
      "records are left)");
  AddCommonFlags(c->repair, &a->common);
  c->repair->add_flag("--json", a->json, "one JSON object");
}

// put, get, stat, rm.
void AddObjectCommands(CLI::App* app, Args* a, Commands* c) {
  c->put = app->add_subcommand("put", "write one object from a file or stdin");
  AddCommonFlags(c->put, &a->common);
  c->put->add_option("oid", a->oid_text, OidHelp())->required();
  c->put->add_option("--file", a->file, "input file (default stdin)");
  c->put->add_option("--offset", a->offset, "byte offset inside the object (ranged write)");
  AddCopiesFlag(c->put, &a->copies);
  c->put->add_flag("--sync", a->sync, "wait until durable on the OSD's disk");

  c->get = app->add_subcommand("get", "read one object copy to a file or stdout");
  AddCommonFlags(c->get, &a->common);
  c->get->add_option("oid", a->oid_text, OidHelp())->required();
  c->get->add_option("--out", a->out_path, "output file (default stdout)");
  c->get->add_option("--offset", a->offset, "byte offset inside the object");
  c->get->add_option("--length", a->length, "bytes to read (default: to the end)");

  c->stat = app->add_subcommand("stat", "version, length and checksum of an object");
  AddCommonFlags(c->stat, &a->common);
  c->stat->add_option("oid", a->oid_text, OidHelp())->required();
  AddCopiesFlag(c->stat, &a->copies);
  c->stat->add_flag("--json", a->json, "JSON lines");

  c->rm = app->add_subcommand("rm", "delete an object");
  AddCommonFlags(c->rm, &a->common);
  c->rm->add_option("oid", a->oid_text, OidHelp())->required();
  AddCopiesFlag(c->rm, &a->copies);
}

// mkfs, fsck, scrub.
void AddNamespaceCommands(CLI::App* app, Args* a, Commands* c) {
  c->mkfs = app->add_subcommand("mkfs", "create a file system namespace (root = fno 1)");
  AddCommonFlags(c->mkfs, &a->common);
  c->mkfs->add_option("--fnso", a->fnso, "namespace number")->capture_default_str();

  c->fsck = app->add_subcommand(
      "fsck",
      "check a namespace: dangling entries or directories cut off from the root (exit 3 if "
      "any), collect orphans");
  AddCommonFlags(c->fsck, &a->common);
  c->fsck->add_option("--fnso", a->fnso, "namespace number")->capture_default_str();
  c->fsck->add_flag("--dry-run", a->fsck_options.dry_run, "report only, change nothing");
  c->fsck
      ->add_option("--grace", a->fsck_options.grace_seconds,
                   "spare orphans changed within this many seconds (live creates, open files)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  c->fsck->add_flag("--json", a->json, "one JSON object");

  c->scrub = app->add_subcommand(
      "scrub",
      "compare both copies of every object of a namespace (version, checksum) and rewrite the "
      "stale, missing or corrupt one (exit 3 if an object has no intact copy)");
  AddCommonFlags(c->scrub, &a->common);
  c->scrub->add_option("--fnso", a->fnso, "namespace number")->capture_default_str();
  c->scrub->add_flag("--dry-run", a->scrub_options.dry_run, "report only, change nothing");
  c->scrub->add_flag("--json", a->json, "one JSON object");
}

// locate, plan-rebalance, rebalance, placement-report.
void AddPlacementCommands(CLI::App* app, Args* a, Commands* c) {
  c->locate = app->add_subcommand(
      "locate", "which OSD holds each original and the replica of a file's objects");
  AddCommonFlags(c->locate, &a->common);
  c->locate->add_option("--fnso", a->fnso, "namespace")->capture_default_str();
  c->locate->add_option("--fno", a->fno, "file number")->required()->check(CLI::NonNegativeNumber);
  c->locate->add_option("--offset", a->offset, "first object index")->capture_default_str();
  c->locate->add_option("--count", a->count, "number of objects")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 32));
  c->locate->add_option("--type", a->type_name, "object type")->capture_default_str();
  c->locate->add_flag("--json", a->json, "JSON lines");

  c->plan_rebalance = app->add_subcommand(
      "plan-rebalance",
      "count which stored copies a new map would move (originals and replicas, OSD to OSD) "
      "against the least any placement could move; changes nothing");
  AddCommonFlags(c->plan_rebalance, &a->common);
  c->plan_rebalance->add_option("--new-map", a->new_map_path, "the proposed cluster map")
      ->required();
  c->plan_rebalance->add_flag("--json", a->json, "one JSON object");

  c->rebalance = app->add_subcommand(
      "rebalance",
      "move the running cluster to a new map (OSDs added or removed): every copy whose placement "
      "changes moves, clients keep working; rerun to resume (admin certificate)");
  AddCommonFlags(c->rebalance, &a->common);
  c->rebalance->add_option("--new-map", a->rebalance_map_path, "the new cluster map (epoch + 1)")
      ->required();
  c->rebalance->add_flag("--json", a->json, "one JSON object");

  c->report = app->add_subcommand(
      "placement-report", "simulate placement of F files x K objects and report the balance");
  c->report->add_option("--files", a->files, "files")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, uint64_t{100000000}));
  c->report->add_option("--objects", a->objects, "objects per file")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, uint64_t{100000000}));
  c->report->add_option("--strategy", a->strategy, "migration | repartition (default: the map's)");
  c->report->add_option("--map", a->report_map, "use this map's OSDs and weights");
  c->report->add_option("--osds", a->report_osds, "equal-weight OSDs when no --map is given")
      ->capture_default_str()
      ->check(CLI::Range(2, 100000));
  c->report->add_option("--fnso", a->fnso, "namespace")->capture_default_str();
  c->report->add_flag("--json", a->json, "one JSON object");
}

bool IsCommand(const CLI::App& app, const std::string& name) {
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->get_name() == name) return true;
  }
  return false;
}

// Runs the subcommand given; its exit code.
int RunGiven(const Commands& c, const Args& a) {
  if (c.status->parsed()) return RunStatus(a.common, a.json);
  if (c.stats->parsed()) return RunStats(a.common, a.json, a.reset);
  if (c.log_level->parsed()) return RunLogLevel(a.common, a.level, a.level_osds);
  if (c.drop_caches->parsed()) return RunDropCaches(a.common, a.drop_osds);
  if (c.repair->parsed()) return RunRepair(a.common, a.json);
  if (c.put->parsed()) return RunPut(a.common, a.oid_text, a.file, a.offset, a.copies, a.sync);
  if (c.get->parsed()) return RunGet(a.common, a.oid_text, a.out_path, a.offset, a.length);
  if (c.stat->parsed()) return RunStat(a.common, a.oid_text, a.copies, a.json);
  if (c.rm->parsed()) return RunRm(a.common, a.oid_text, a.copies);
  if (c.mkfs->parsed()) return RunMkfs(a.common, a.fnso);
  if (c.fsck->parsed()) return RunFsckCommand(a.common, a.fnso, a.fsck_options, a.json);
  if (c.scrub->parsed()) return RunScrubCommand(a.common, a.fnso, a.scrub_options, a.json);
  if (c.plan_rebalance->parsed()) return RunPlanRebalance(a.common, a.new_map_path, a.json);
  if (c.rebalance->parsed()) return RunRebalance(a.common, a.rebalance_map_path, a.json);
  if (c.locate->parsed()) {
    return RunLocate(a.common, a.fnso, a.fno, a.offset, a.count, a.type_name, a.json);
  }
  if (c.report->parsed()) {
    return RunPlacementReport(a.report_map, a.report_osds, a.files, a.objects, a.strategy, a.fnso,
                              a.json);
  }
  return kExitUsage;
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
  Args args;
  Commands commands;
  // In this order in --help.
  AddClusterCommands(&app, &args, &commands);
  AddObjectCommands(&app, &args, &commands);
  AddNamespaceCommands(&app, &args, &commands);
  AddPlacementCommands(&app, &args, &commands);

  if (argc > 1 && argv[1][0] != '-' && !IsCommand(app, argv[1])) {
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
  return RunGiven(commands, args);
}
