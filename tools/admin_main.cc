// orthofs: the admin CLI (cluster status, one-object debugging, placement inspection).
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "client/cluster_client.h"
#include "client/namespace.h"
#include "common/peer_role.h"
#include "common/placement_report.h"
#include "common/rebalance_plan.h"
#include "common/thrashing_control.h"
#include "rpc/grpc_logging.h"
#include "rpc/map_file.h"
#include "rpc/tcp_congestion.h"
#include "rpc/tls_flags_cli.h"
#include "rpc/wire.h"
#include "tools/fsck.h"
#include "tools/rebalance.h"
#include "tools/scrub.h"

namespace orthofs {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitError = 1;
constexpr int kExitUsage = 2;
constexpr int kExitDegraded = 3;  // status: some OSD is down

std::string DefaultMapPath() {
  const char* env = std::getenv("ORTHOFS_MAP");
  return env ? env : "/etc/orthofs/cluster.yaml";
}

int Error(const std::string& message) {
  std::cerr << "orthofs: " << message << "\n";
  return kExitError;
}

std::string HumanBytes(uint64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int unit = 0;
  while (v >= 1024 && unit < 5) {
    v /= 1024;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, unit == 0 ? "%.0f %s" : "%.1f %s", v, kUnits[unit]);
  return buf;
}

struct CommonFlags {
  std::string map_path = DefaultMapPath();
  int timeout_ms = 5000;
  TlsFlags tls;
};

void AddCommonFlags(CLI::App* cmd, CommonFlags* flags) {
  cmd->add_option("--map", flags->map_path,
                  "cluster map file (default $ORTHOFS_MAP or " + DefaultMapPath() + ")");
  cmd->add_option("--timeout-ms", flags->timeout_ms, "deadline of each RPC")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600000));
  AddTlsFlags(cmd, &flags->tls, std::string(kAdminCertificateName));
}

Result<std::unique_ptr<ClusterClient>> Connect(const CommonFlags& flags) {
  Result<ClusterMap> map = LoadClusterMapFile(flags.map_path);
  if (!map.ok()) return map.status();
  UseClusterTcpCongestion(*map);
  RpcOptions options;
  options.deadline = std::chrono::milliseconds(flags.timeout_ms);
  Result<std::shared_ptr<const TlsIdentity>> tls =
      LoadTlsIdentity(flags.tls, std::string(kAdminCertificateName));
  if (!tls.ok()) return tls.status();
  options.tls = std::move(*tls);
  return std::make_unique<ClusterClient>(*map, options);
}

// ---- status ----

int RunStatus(const CommonFlags& common, bool json) {
  auto cluster = Connect(common);
  if (!cluster.ok()) return Error(cluster.status().message());
  nlohmann::json out = nlohmann::json::array();
  int down = 0;
  if (!json) {
    std::printf("%-4s %-22s %-5s %6s %10s %11s %11s %11s\n", "ID", "ADDRESS", "STATE", "EPOCH",
                "OBJECTS", "BYTES", "CAPACITY", "AVAILABLE");
  }
  for (const auto& osd : (*cluster)->osds()) {
    wire::StatsRequest request;
    request.set_epoch((*cluster)->map().epoch);
    Result<wire::StatsResponse> stats = osd->Stats(request);
    nlohmann::json row = {{"id", osd->osd_id()}, {"address", osd->address()}};
    if (!stats.ok()) {
      ++down;
      row["state"] = "down";
      row["error"] = stats.status().message();
      if (!json) {
        std::printf("%-4u %-22s %-5s %s\n", osd->osd_id(), osd->address().c_str(), "down",
                    stats.status().ToString().c_str());
      }
    } else {
      const bool epoch_ok = stats->epoch() == (*cluster)->map().epoch;
      row["state"] = "up";
      row["epoch"] = stats->epoch();
      row["epoch_matches_map"] = epoch_ok;
      row["objects"] = stats->objects();
      row["bytes"] = stats->bytes();
      row["capacity_bytes"] = stats->capacity_bytes();
      row["available_bytes"] = stats->available_bytes();
      if (!json) {
        std::printf("%-4u %-22s %-5s %6llu%s %10llu %11s %11s %11s\n", osd->osd_id(),
                    osd->address().c_str(), "up", static_cast<unsigned long long>(stats->epoch()),
                    epoch_ok ? "" : "!", static_cast<unsigned long long>(stats->objects()),
                    HumanBytes(stats->bytes()).c_str(), HumanBytes(stats->capacity_bytes()).c_str(),
                    HumanBytes(stats->available_bytes()).c_str());
      }
    }
    out.push_back(row);
  }
  if (json) {
    std::cout << nlohmann::json{{"epoch", (*cluster)->map().epoch}, {"osds", out}}.dump() << "\n";
  } else {
    std::printf("map epoch %llu, %zu OSDs, %d down\n",
                static_cast<unsigned long long>((*cluster)->map().epoch), (*cluster)->osds().size(),
                down);
  }
  return down == 0 ? kExitOk : kExitDegraded;
}

// ---- log-level, drop-caches ----

// Calls `ask` on every OSD of the map, or on those in `only`; `ask` prints one line and returns
// whether the OSD answered. Exit 3 if one did not.
int ForEachChosenOsd(const CommonFlags& common, const std::vector<uint32_t>& only,
                     const std::function<bool(OsdClient*)>& ask) {
  auto cluster = Connect(common);
  if (!cluster.ok()) return Error(cluster.status().message());
  for (uint32_t id : only) {
    if ((*cluster)->Osd(id) == nullptr) {
      return Error("OSD " + std::to_string(id) + " is not in the map");
    }
  }
  int failed = 0;
  for (const auto& osd : (*cluster)->osds()) {
    if (!only.empty() && std::find(only.begin(), only.end(), osd->osd_id()) == only.end()) {
      continue;
    }
    if (!ask(osd)) ++failed;
  }
  return failed == 0 ? kExitOk : kExitDegraded;
}

int RunLogLevel(const CommonFlags& common, const std::string& level,
                const std::vector<uint32_t>& only) {
  return ForEachChosenOsd(common, only, [&level](OsdClient* osd) {
    wire::LogLevelRequest request;
    request.set_level(level);
    Result<wire::LogLevelResponse> r = osd->SetLogLevel(request);
    if (!r.ok()) {
      std::printf("osd %-3u %s\n", osd->osd_id(), r.status().ToString().c_str());
      return false;
    }
    std::printf("osd %-3u %s -> %s\n", osd->osd_id(), r->previous().c_str(), level.c_str());
    return true;
  });
}

// Every OSD (or those named) empties its caches of object bytes.
int RunDropCaches(const CommonFlags& common, const std::vector<uint32_t>& only) {
  return ForEachChosenOsd(common, only, [](OsdClient* osd) {
    Result<wire::DropCachesResponse> r = osd->DropCaches({});
    if (!r.ok()) {
      std::printf("osd %-3u %s\n", osd->osd_id(), r.status().ToString().c_str());
      return false;
    }
    std::printf("osd %-3u dropped %s\n", osd->osd_id(), HumanBytes(r->dropped_bytes()).c_str());
    return true;
  });
}

// ---- repair ----

// Every OSD replays its repair records now (each also does so in the background). Exit 3 when
// records are left (their other copy's OSD is still down) or an OSD did not answer.
int RunRepair(const CommonFlags& common, bool json) {
  auto cluster = Connect(common);
  if (!cluster.ok()) return Error(cluster.status().message());
  (void)(*cluster)->CatchUpWithCluster();  // none answering: each Repair below says so
  nlohmann::json out = nlohmann::json::array();
  uint64_t repaired = 0, left = 0;
  int unanswered = 0;
  // A copy: following a later map below replaces the client's list.
  const std::vector<OsdClient*> osds = (*cluster)->osds();
  for (OsdClient* osd : osds) {
    wire::RepairRequest request;
    request.set_epoch((*cluster)->map().epoch);
    Result<wire::RepairResponse> r = osd->Repair(request);
    // An OSD still on the older map (a rebalance cut short after some OSDs took the new one)
    // catches up when asked with the later epoch, and one on a later map hands it over.
    for (int attempt = 0; !r.ok() && r.status().Is(StatusCode::kStaleEpoch) &&
                          attempt < ClusterClient::kMaxMapRetries;
         ++attempt) {
      (*cluster)->FollowMapChange(osd, request.epoch());
      request.set_epoch((*cluster)->map().epoch);
      r = osd->Repair(request);
    }
    nlohmann::json row = {{"id", osd->osd_id()}};
    if (!r.ok()) {
      ++unanswered;
      row["error"] = r.status().ToString();
      if (!json) std::printf("osd %-3u %s\n", osd->osd_id(), r.status().ToString().c_str());
    } else {
      repaired += r->repaired();
      left += r->remaining();
      row["records"] = r->records();
      row["repaired"] = r->repaired();
      row["unreachable"] = r->unreachable();
      row["remaining"] = r->remaining();
      if (!json) {
        std::printf("osd %-3u %llu records, %llu copies repaired, %llu left\n", osd->osd_id(),
                    static_cast<unsigned long long>(r->records()),
                    static_cast<unsigned long long>(r->repaired()),
                    static_cast<unsigned long long>(r->remaining()));
      }
    }
    out.push_back(row);
  }
  if (json) {
    std::cout << nlohmann::json{{"repaired", repaired}, {"remaining", left}, {"osds", out}}.dump()
              << "\n";
  } else {
    std::printf("%llu copies repaired, %llu records left, %d OSDs did not answer\n",
                static_cast<unsigned long long>(repaired), static_cast<unsigned long long>(left),
                unanswered);
  }
  return left == 0 && unanswered == 0 ? kExitOk : kExitDegraded;
}

// ---- put / get / stat / rm ----

enum class Copies { kBoth, kOriginal, kReplica };

std::vector<Oid> SelectedCopies(Oid oid, Copies copies) {
  switch (copies) {
    case Copies::kOriginal:
      return {oid.WithFlag(CopyFlag::kOriginal)};
    case Copies::kReplica:
      return {oid.WithFlag(CopyFlag::kReplica)};
    case Copies::kBoth:
      break;
  }
  return {oid.WithFlag(CopyFlag::kOriginal), oid.WithFlag(CopyFlag::kReplica)};
}

void AddCopiesFlag(CLI::App* cmd, Copies* copies) {
  static const std::map<std::string, Copies> kNames = {
      {"both", Copies::kBoth}, {"original", Copies::kOriginal}, {"replica", Copies::kReplica}};
  cmd->add_option("--copies", *copies, "both | original | replica (default both)")
      ->transform(CLI::CheckedTransformer(kNames, CLI::ignore_case));
}

std::string OidHelp() {
  return "object id fnso/fno/offset[/TYPE[/FLAG]], TYPE in DATA|INODE|DIRENT|SYMLINK|SUPER";
}

int RunPut(const CommonFlags& common, const std::string& oid_text, const std::string& file,
           uint64_t offset, Copies copies, bool sync) {
  Result<Oid> oid = ParseOid(oid_text);
  if (!oid.ok()) return Error(oid.status().message());
  std::string data;
  if (file.empty() || file == "-") {
    data.assign(std::istreambuf_iterator<char>(std::cin), {});
  } else {
    std::ifstream in(file, std::ios::binary);
    if (!in) return Error("cannot read " + file);
    data.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto cluster = Connect(common);
  if (!cluster.ok()) return Error(cluster.status().message());
  ObjectWrite how;
  how.offset = offset;
  how.replace = offset == 0;
  how.sync = sync;
  for (const Oid& copy : SelectedCopies(*oid, copies)) {
    Result<wire::ObjectMeta> meta = (*cluster)->Write(copy, data, how);
    if (!meta.ok()) return Error(copy.ToString() + ": " + meta.status().ToString());
    std::printf("%s on OSD %u: version %llu, %llu bytes\n", copy.ToString().c_str(),
                (*cluster)->placement().OsdFor(copy),
                static_cast<unsigned long long>(meta->version()),
                static_cast<unsigned long long>(meta->length()));
  }
  return kExitOk;
}

int RunGet(const CommonFlags& common, const std::string& oid_text, const std::string& out_path,
           uint64_t offset, uint64_t length) {
  Result<Oid> oid = ParseOid(oid_text);
  if (!oid.ok()) return Error(oid.status().message());
  auto cluster = Connect(common);
  if (!cluster.ok()) return Error(cluster.status().message());
  Result<wire::ReadResponse> read = (*cluster)->Read(*oid, offset, length);
  if (!read.ok()) return Error(oid->ToString() + ": " + read.status().ToString());
  if (out_path.empty() || out_path == "-") {
    std::fwrite(read->data().data(), 1, read->data().size(), stdout);
    std::fflush(stdout);
  } else {
    std::ofstream out(out_path, std::ios::binary);
    out.write(read->data().data(), static_cast<std::streamsize>(read->data().size()));
    if (!out) return Error("cannot write " + out_path);
  }
  return kExitOk;
}

int RunStat(const CommonFlags& common, const std::string& oid_text, Copies copies, bool json) {
  Result<Oid> oid = ParseOid(oid_text);
  if (!oid.ok()) return Error(oid.status().message());
  auto cluster = Connect(common);
  if (!cluster.ok()) return Error(cluster.status().message());
  int rc = kExitOk;
  for (const Oid& copy : SelectedCopies(*oid, copies)) {
    const uint32_t osd = (*cluster)->placement().OsdFor(copy);
    Result<wire::ObjectMeta> meta = (*cluster)->Stat(copy);
    if (json) {
      nlohmann::json row = {{"oid", copy.ToString()}, {"osd", osd}};
      if (meta.ok()) {
        row["version"] = meta->version();
        row["length"] = meta->length();
        row["checksum"] = meta->checksum();
      } else {
        row["error"] = meta.status().ToString();
      }
      std::cout << row.dump() << "\n";
    } else if (meta.ok()) {
      std::printf("%s on OSD %u: version %llu, %llu bytes, checksum %016llx\n",
                  copy.ToString().c_str(), osd, static_cast<unsigned long long>(meta->version()),
                  static_cast<unsigned long long>(meta->length()),
                  static_cast<unsigned long long>(meta->checksum()));
    } else {
      std::printf("%s on OSD %u: %s\n", copy.ToString().c_str(), osd,
                  meta.status().ToString().c_str());
    }
    if (!meta.ok()) rc = kExitError;
  }
  return rc;
}

int RunRm(const CommonFlags& common, const std::string& oid_text, Copies copies) {
  Result<Oid> oid = ParseOid(oid_text);
  if (!oid.ok()) return Error(oid.status().message());
  auto cluster = Connect(common);
  if (!cluster.ok()) return Error(cluster.status().message());
  for (const Oid& copy : SelectedCopies(*oid, copies)) {
    Result<bool> existed = (*cluster)->Delete(copy);
    if (!existed.ok()) return Error(copy.ToString() + ": " + existed.status().ToString());
    std::printf("%s on OSD %u: %s\n", copy.ToString().c_str(), (*cluster)->placement().OsdFor(copy),
                *existed ? "deleted" : "was absent");
  }
  return kExitOk;
}

// ---- mkfs ----

int RunMkfs(const CommonFlags& common, uint32_t fnso) {
  auto cluster = Connect(common);
  if (!cluster.ok()) return Error(cluster.status().message());
  Status st = Namespace::Mkfs(cluster->get(), fnso, Credentials{getuid(), getgid()});
  if (!st.ok()) return Error("mkfs: " + st.ToString());
  std::printf("created namespace %u (root = fno %llu, object size %u)\n", fnso,
              static_cast<unsigned long long>(kRootFno), (*cluster)->map().object_size);
  return kExitOk;
}

// ---- fsck ----

int RunFsckCommand(const CommonFlags& common, uint32_t fnso, const FsckOptions& options,
                   bool json) {
  auto cluster = Connect(common);
  if (!cluster.ok()) return Error(cluster.status().message());
  Result<FsckReport> r = RunFsck(cluster->get(), fnso, options);
  if (!r.ok()) return Error("fsck: " + r.status().ToString());
  if (json) {
    std::cout << nlohmann::json{{"fnso", fnso},
                                {"inodes", r->inodes},
                                {"directories", r->directories},
                                {"entries", r->entries},
                                {"data_objects", r->data_objects},
                                {"dangling_entries", r->dangling.size()},
                                {"directories_cut_off", r->cut_off.size()},
                                {"directories_reconnected", r->reconnected.size()},
                                {"directories_named_twice", r->named_twice.size()},
                                {"orphan_inodes", r->orphan_inodes},
                                {"orphan_objects", r->orphan_objects},
                                {"collected", r->collected},
                                {"spared_in_grace", r->spared_in_grace},
                                {"link_count_fixes", r->link_count_fixes},
                                {"link_counts_held", r->link_counts_held},
                                {"renames_finished", r->renames_finished},
                                {"removal_marks_cleared", r->removal_marks_cleared},
                                {"parents_recorded", r->parents_recorded},
                                {"lock_sessions", r->lock_sessions},
                                {"deletions_finished", r->deletions_finished},
                                {"dry_run", options.dry_run}}
                     .dump()
              << "\n";
  } else {
    for (const auto& d : r->dangling) std::printf("dangling: %s\n", d.c_str());
    for (const auto& d : r->cut_off) std::printf("cut off: %s\n", d.c_str());
    for (const auto& d : r->reconnected) std::printf("reconnected: %s\n", d.c_str());
    for (const auto& d : r->named_twice) std::printf("named twice: %s\n", d.c_str());
    std::printf("namespace %u: %llu inodes (%llu directories), %llu entries, %llu data objects\n",
                fnso, static_cast<unsigned long long>(r->inodes),
                static_cast<unsigned long long>(r->directories),
                static_cast<unsigned long long>(r->entries),
                static_cast<unsigned long long>(r->data_objects));
    std::printf("clients' lock sessions: %llu\n",
                static_cast<unsigned long long>(r->lock_sessions));
    std::printf("dangling entries: %zu\n", r->dangling.size());
    std::printf("deletions cut short between an object's copies %s: %llu\n",
                options.dry_run ? "found" : "finished",
                static_cast<unsigned long long>(r->deletions_finished));
    std::printf(
        "directories cut off from the root: %zu (reconnected under /lost+found: %zu), "
        "with two names: %zu\n",
        r->cut_off.size(), r->reconnected.size(), r->named_twice.size());
    std::printf("orphans: %llu inodes, %llu objects; %s %llu, spared (younger than %llds) %llu\n",
                static_cast<unsigned long long>(r->orphan_inodes),
                static_cast<unsigned long long>(r->orphan_objects),
                options.dry_run ? "would collect" : "collected",
                static_cast<unsigned long long>(
                    options.dry_run ? r->orphan_inodes + r->orphan_objects - r->spared_in_grace
                                    : r->collected),
                static_cast<long long>(options.grace_seconds),
                static_cast<unsigned long long>(r->spared_in_grace));
    std::printf("link counts %s: %llu; too high, held until they stay so for %llds: %llu\n",
                options.dry_run ? "wrong" : "fixed",
                static_cast<unsigned long long>(r->link_count_fixes),
                static_cast<long long>(options.grace_seconds),
                static_cast<unsigned long long>(r->link_counts_held));
    std::printf("directory renames cut short %s: %llu\n", options.dry_run ? "found" : "finished",
                static_cast<unsigned long long>(r->renames_finished));
    std::printf("rmdir marks left by a crash %s: %llu\n", options.dry_run ? "found" : "cleared",
                static_cast<unsigned long long>(r->removal_marks_cleared));
    std::printf("directories' parents %s: %llu\n", options.dry_run ? "to record" : "recorded",
                static_cast<unsigned long long>(r->parents_recorded));
  }
  return r->dangling.empty() && r->cut_off.empty() && r->named_twice.empty() ? kExitOk
                                                                             : kExitDegraded;
}

// ---- scrub ----

// "\rscrub: [#####.....]  48% 1200/2500 objects" on stderr, when it is a terminal.
void PrintScrubProgress(uint64_t done, uint64_t total) {
  constexpr int kWidth = 30;
  const int filled = total == 0 ? kWidth : static_cast<int>(kWidth * done / total);
  std::fprintf(stderr, "\rscrub: [%s%s] %3d%% %llu/%llu objects", std::string(filled, '#').c_str(),
               std::string(kWidth - filled, '.').c_str(),
               total == 0 ? 100 : static_cast<int>(100 * done / total),
               static_cast<unsigned long long>(done), static_cast<unsigned long long>(total));
  if (done == total) std::fputc('\n', stderr);
  std::fflush(stderr);
}

int RunScrubCommand(const CommonFlags& common, uint32_t fnso, ScrubOptions options, bool json) {
  auto cluster = Connect(common);
  if (!cluster.ok()) return Error(cluster.status().message());
  if (isatty(STDERR_FILENO)) options.progress = PrintScrubProgress;
  Result<ScrubReport> r = RunScrub(cluster->get(), fnso, options);
  if (!r.ok()) return Error("scrub: " + r.status().ToString());
  if (json) {
    std::cout << nlohmann::json{{"fnso", fnso},
                                {"copies_listed", r->copies_listed},
                                {"objects", r->objects},
                                {"matched", r->matched},
                                {"repaired", r->repaired},
                                {"corrupt", r->corrupt},
                                {"missing", r->missing},
                                {"stale", r->stale},
                                {"diverged", r->diverged},
                                {"changed", r->changed},
                                {"misplaced", r->misplaced},
                                {"unrecoverable", r->unrecoverable},
                                {"unrecoverable_oids", r->unrecoverable_oids},
                                {"dry_run", options.dry_run}}
                     .dump()
              << "\n";
  } else {
    for (const auto& oid : r->unrecoverable_oids) std::printf("no intact copy: %s\n", oid.c_str());
    std::printf("namespace %u: %llu objects checked (%llu copies), %llu with two matching copies\n",
                fnso, static_cast<unsigned long long>(r->objects),
                static_cast<unsigned long long>(r->copies_listed),
                static_cast<unsigned long long>(r->matched));
    std::printf(
        "%s %llu copies: %llu corrupt, %llu missing, %llu stale, %llu diverged\n",
        options.dry_run ? "would repair" : "repaired", static_cast<unsigned long long>(r->repaired),
        static_cast<unsigned long long>(r->corrupt), static_cast<unsigned long long>(r->missing),
        static_cast<unsigned long long>(r->stale), static_cast<unsigned long long>(r->diverged));
    std::printf("changed by clients meanwhile: %llu; misplaced: %llu; unrecoverable: %llu\n",
                static_cast<unsigned long long>(r->changed),
                static_cast<unsigned long long>(r->misplaced),
                static_cast<unsigned long long>(r->unrecoverable));
  }
  return r->unrecoverable == 0 ? kExitOk : kExitDegraded;
}

// ---- plan-rebalance ----

// Lists every copy on every OSD and counts what a move to `new_map_path` would move: the
// moved fraction against the least any placement could move, originals and replicas, and the
// flows between OSDs. Changes nothing. Exit 3 when an OSD could not be listed (incomplete).
int RunPlanRebalance(const CommonFlags& common, const std::string& new_map_path, bool json) {
  auto cluster = Connect(common);
  if (!cluster.ok()) return Error(cluster.status().message());
  Result<ClusterMap> new_map = LoadClusterMapFile(new_map_path);
  if (!new_map.ok()) return Error(new_map.status().message());
  const ClusterMap& old_map = (*cluster)->map();
  if (Status st = CheckMapChange(old_map, *new_map); !st.ok()) {
    return Error(new_map_path + ": " + st.message());
  }
  RebalancePlan plan(old_map, *new_map);
  int unlisted = 0;
  for (const auto& osd : (*cluster)->osds()) {
    Status listed = Status::Ok();
    for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
      wire::ListRequest request;
      request.set_epoch(old_map.epoch);
      request.set_flag(static_cast<wire::CopyFlag>(flag));
      listed = osd->ListEveryPage(request, [&](const wire::ListResponse& page) {
        for (const wire::ObjectMeta& meta : page.objects()) {
          if (Result<Oid> oid = FromWire(meta.oid()); oid.ok()) plan.Count(*oid, osd->osd_id());
        }
      });
      if (!listed.ok()) break;
    }
    if (!listed.ok()) {
      ++unlisted;
      std::cerr << "orthofs: " << listed.ToString() << "\n";
    }
  }
  const RebalanceSummary& s = plan.summary();
  const double ideal = IdealMovedFraction(old_map, *new_map);
  if (json) {
    nlohmann::json flows = nlohmann::json::array();
    for (const auto& [edge, n] : s.flows) {
      flows.push_back({{"from", edge.first}, {"to", edge.second}, {"copies", n}});
    }
    std::cout << nlohmann::json{{"old_epoch", old_map.epoch},
                                {"new_epoch", new_map->epoch},
                                {"old_osds", old_map.osds.size()},
                                {"new_osds", new_map->osds.size()},
                                {"copies", s.copies},
                                {"moved", s.moved},
                                {"originals_moved", s.originals_moved},
                                {"replicas_moved", s.replicas_moved},
                                {"moved_fraction", s.moved_fraction()},
                                {"ideal_fraction", ideal},
                                {"misplaced", s.misplaced},
                                {"unlisted_osds", unlisted},
                                {"flows", flows}}
                     .dump()
              << "\n";
  } else {
    std::printf(
        "epoch %llu -> %llu, %zu -> %zu OSDs: %llu of %llu copies move (%.1f%%; the least "
        "any placement could move: %.1f%%)\n",
        static_cast<unsigned long long>(old_map.epoch),
        static_cast<unsigned long long>(new_map->epoch), old_map.osds.size(), new_map->osds.size(),
        static_cast<unsigned long long>(s.moved), static_cast<unsigned long long>(s.copies),
        100 * s.moved_fraction(), 100 * ideal);
    std::printf("originals moved %llu, replicas moved %llu, misplaced now %llu\n",
                static_cast<unsigned long long>(s.originals_moved),
                static_cast<unsigned long long>(s.replicas_moved),
                static_cast<unsigned long long>(s.misplaced));
    for (const auto& [edge, n] : s.flows) {
      std::printf("  osd %u -> osd %u: %llu copies\n", edge.first, edge.second,
                  static_cast<unsigned long long>(n));
    }
    if (unlisted > 0)
      std::printf("%d OSDs could not be listed: the plan is incomplete\n", unlisted);
  }
  return unlisted == 0 ? kExitOk : kExitDegraded;
}

// ---- rebalance ----

// Moves the cluster to `new_map_path` while it serves (tools/rebalance.h), with a progress
// line on stderr. A rerun resumes an interrupted one.
int RunRebalance(const CommonFlags& common, const std::string& new_map_path, bool json) {
  auto cluster = Connect(common);
  if (!cluster.ok()) return Error(cluster.status().message());
  Result<ClusterMap> new_map = LoadClusterMapFile(new_map_path);
  if (!new_map.ok()) return Error(new_map.status().message());
  RebalanceOptions options;
  int last_percent = -1;
  options.progress = [&](uint64_t done, uint64_t total) {
    const int percent = total == 0 ? 100 : static_cast<int>(100 * done / total);
    if (percent / 10 == last_percent / 10 && done != total) return;
    last_percent = percent;
    std::fprintf(stderr, "rebalance: %llu of %llu copies moved (%d%%)\n",
                 static_cast<unsigned long long>(done), static_cast<unsigned long long>(total),
                 percent);
  };
  Result<RebalanceReport> r = Rebalance(cluster->get(), *new_map, options);
  if (!r.ok()) {
    return Error(r.status().message() +
                 "\nThe cluster keeps serving; rerun orthofs rebalance to resume.");
  }
  if (json) {
    nlohmann::json flows = nlohmann::json::array();
    for (const auto& [edge, n] : r->flows) {
      flows.push_back({{"from", edge.first}, {"to", edge.second}, {"copies", n}});
    }
    std::cout << nlohmann::json{{"from_epoch", r->from_epoch},
                                {"to_epoch", r->to_epoch},
                                {"resumed", r->resumed},
                                {"moved", r->moved},
                                {"originals_moved", r->originals_moved},
                                {"replicas_moved", r->replicas_moved},
                                {"already_moved", r->already_moved},
                                {"gone", r->gone},
                                {"left_damaged", r->left_damaged},
                                {"bytes", r->bytes_listed},
                                {"seconds", r->seconds},
                                {"removed_osds", r->removed_osds},
                                {"flows", flows}}
                     .dump()
              << "\n";
    return kExitOk;
  }
  std::printf(
      "epoch %llu -> %llu%s: %llu copies to move (%llu originals, %llu replicas, %s): %llu moved "
      "now, %llu on first use by clients, %llu deleted meanwhile; %.1f s\n",
      static_cast<unsigned long long>(r->from_epoch), static_cast<unsigned long long>(r->to_epoch),
      r->resumed ? " (resumed)" : "",
      static_cast<unsigned long long>(r->originals_moved + r->replicas_moved),
      static_cast<unsigned long long>(r->originals_moved),
      static_cast<unsigned long long>(r->replicas_moved), HumanBytes(r->bytes_listed).c_str(),
      static_cast<unsigned long long>(r->moved), static_cast<unsigned long long>(r->already_moved),
      static_cast<unsigned long long>(r->gone), r->seconds);
  for (const auto& [edge, n] : r->flows) {
    std::printf("  osd %u -> osd %u: %llu copies\n", edge.first, edge.second,
                static_cast<unsigned long long>(n));
  }
  for (uint32_t id : r->removed_osds) {
    std::printf("OSD %u holds nothing any more and may be stopped\n", id);
  }
  if (!r->left_damaged.empty()) {
    // The rebalance is over all the same: nothing intact of these is left to move.
    std::printf(
        "%zu damaged copies had no intact other copy to stand in for them and stay where they "
        "were (orthofs scrub lists them too):\n",
        r->left_damaged.size());
    for (const std::string& copy : r->left_damaged) std::printf("  %s\n", copy.c_str());
    std::printf(
        "every other copy is where map epoch %llu puts it; give every node and client "
        "that map file\n",
        static_cast<unsigned long long>(r->to_epoch));
    return kExitOk;
  }
  std::printf(
      "every copy is where map epoch %llu puts it; give every node and client that map "
      "file\n",
      static_cast<unsigned long long>(r->to_epoch));
  return kExitOk;
}

// ---- locate ----

int RunLocate(const CommonFlags& common, uint32_t fnso, uint64_t fno, uint64_t first,
              uint64_t count, const std::string& type_name, bool json) {
  Result<ClusterMap> map = LoadClusterMapFile(common.map_path);
  if (!map.ok()) return Error(map.status().message());
  Result<Oid> typed = ParseOid("0/0/0/" + type_name);
  if (!typed.ok()) return Error(typed.status().message());
  Placement placement(*map);
  const uint32_t replica = placement.ReplicaOsdFor(fnso, fno);
  if (!json) {
    std::printf("file %u/%llu: replica OSD %u (%s)\n", fnso, static_cast<unsigned long long>(fno),
                replica, map->FindOsd(replica)->address.c_str());
    std::printf("%-12s %-9s %-8s\n", "OFFSET", "ORIGINAL", "REPLICA");
  }
  for (uint64_t offset = first; offset < first + count; ++offset) {
    Oid oid{fnso, fno, offset, typed->type, CopyFlag::kOriginal};
    const uint32_t original = placement.OriginalOsdFor(oid);
    if (json) {
      std::cout << nlohmann::json{{"oid", oid.ToString()},
                                  {"original_osd", original},
                                  {"replica_osd", replica}}
                       .dump()
                << "\n";
    } else {
      std::printf("%-12llu %-9u %-8u\n", static_cast<unsigned long long>(offset), original,
                  replica);
    }
  }
  return kExitOk;
}

// ---- placement-report ----

int RunPlacementReport(const std::string& map_path, int osd_count, uint64_t files, uint64_t objects,
                       const std::string& strategy_name, uint32_t fnso, bool json) {
  ClusterMap map;
  if (!map_path.empty()) {
    Result<ClusterMap> loaded = LoadClusterMapFile(map_path);
    if (!loaded.ok()) return Error(loaded.status().message());
    map = *loaded;
  } else {
    for (int i = 0; i < osd_count; ++i) {
      map.osds.push_back(
          OsdInfo{static_cast<uint32_t>(i), "127.0.0.1:" + std::to_string(7000 + i), 1.0});
    }
  }
  if (!strategy_name.empty()) {
    Result<PlacementStrategy> strategy = ParsePlacementStrategy(strategy_name);
    if (!strategy.ok()) return Error(strategy.status().message());
    map.strategy = *strategy;
  }
  if (Status st = ValidateClusterMap(map); !st.ok()) return Error(st.message());
  Placement placement(map);
  PlacementReport report = ComputePlacementReport(placement, fnso, files, objects);
  if (json) {
    nlohmann::json osds = nlohmann::json::array();
    for (const auto& o : report.osds) {
      osds.push_back({{"id", o.osd_id},
                      {"originals", o.originals},
                      {"replicas", o.replicas},
                      {"total", o.total()}});
    }
    std::cout << nlohmann::json{{"strategy", PlacementStrategyName(map.strategy)},
                                {"files", files},
                                {"objects_per_file", objects},
                                {"osds", osds},
                                {"originals_imbalance", report.originals_imbalance},
                                {"replicas_imbalance", report.replicas_imbalance},
                                {"total_imbalance", report.total_imbalance},
                                {"migrated", report.migrated},
                                {"conflicts", report.conflicts}}
                     .dump()
              << "\n";
  } else {
    std::printf(
        "strategy %s, %zu OSDs, %llu files x %llu objects = %llu originals + %llu "
        "replicas\n",
        std::string(PlacementStrategyName(map.strategy)).c_str(), map.osds.size(),
        static_cast<unsigned long long>(files), static_cast<unsigned long long>(objects),
        static_cast<unsigned long long>(report.objects),
        static_cast<unsigned long long>(report.objects));
    std::printf("%-6s %12s %12s %12s\n", "OSD", "ORIGINALS", "REPLICAS", "TOTAL");
    for (const auto& o : report.osds) {
      std::printf(
          "%-6u %12llu %12llu %12llu\n", o.osd_id, static_cast<unsigned long long>(o.originals),
          static_cast<unsigned long long>(o.replicas), static_cast<unsigned long long>(o.total()));
    }
    std::printf("imbalance (max/mean): originals %.4f, replicas %.4f, total %.4f\n",
                report.originals_imbalance, report.replicas_imbalance, report.total_imbalance);
    if (map.strategy == PlacementStrategy::kMigration) {
      std::printf("migrated off the replica OSD: %llu (%.2f%%)\n",
                  static_cast<unsigned long long>(report.migrated),
                  report.objects ? 100.0 * report.migrated / report.objects : 0.0);
    }
    std::printf("original/replica conflicts: %llu\n",
                static_cast<unsigned long long>(report.conflicts));
  }
  return report.conflicts == 0 ? kExitOk : kExitError;
}

// ---- stats ----

// Every OSD's counters side by side with the cluster total, and the figures the papers judge
// prefetching by.
int RunStats(const CommonFlags& common, bool json, bool reset) {
  auto cluster = Connect(common);
  if (!cluster.ok()) return Error(cluster.status().message());
  std::vector<std::pair<uint32_t, std::optional<std::map<std::string, uint64_t>>>> per_osd;
  std::map<std::string, uint64_t> total;
  int down = 0;
  for (const auto& osd : (*cluster)->osds()) {
    wire::StatsRequest request;
    request.set_epoch((*cluster)->map().epoch);
    request.set_reset(reset);
    Result<wire::StatsResponse> stats = osd->Stats(request);
    if (!stats.ok()) {
      ++down;
      std::cerr << "orthofs: " << stats.status().ToString() << "\n";
      per_osd.emplace_back(osd->osd_id(), std::nullopt);
      continue;
    }
    std::map<std::string, uint64_t> counters(stats->counters().begin(), stats->counters().end());
    for (const auto& [name, value] : counters) total[name] += value;
    per_osd.emplace_back(osd->osd_id(), std::move(counters));
  }
  const uint64_t demand = total["cache_hits"] + total["cache_misses"];
  const double thrashing =
      DegreeOfThrashing(total["cache_prefetch_evicted_unused"], total["cache_prefetch_inserts"]);
  const double synchronous = SynchronousReadRatio(total["cache_misses"], demand);
  if (json) {
    nlohmann::json osds = nlohmann::json::array();
    for (const auto& [id, counters] : per_osd) {
      nlohmann::json row = {{"id", id}, {"state", counters ? "up" : "down"}};
      if (counters) row["counters"] = *counters;
      osds.push_back(row);
    }
    std::cout << nlohmann::json{{"prefetch", PrefetchModeName((*cluster)->map().prefetch.mode)},
                                {"osds", osds},
                                {"cluster", total},
                                {"degree_of_thrashing", thrashing},
                                {"synchronous_read_ratio", synchronous}}
                     .dump()
              << "\n";
    return down == 0 ? kExitOk : kExitDegraded;
  }
  std::printf("%-32s", "COUNTER");
  for (const auto& [id, counters] : per_osd)
    std::printf(" %12s", ("osd." + std::to_string(id)).c_str());
  std::printf(" %14s\n", "CLUSTER");
  for (const auto& [name, sum] : total) {
    std::printf("%-32s", name.c_str());
    for (const auto& [id, counters] : per_osd) {
      if (!counters) {
        std::printf(" %12s", "down");
        continue;
      }
      auto it = counters->find(name);
      std::printf(" %12llu",
                  static_cast<unsigned long long>(it == counters->end() ? 0 : it->second));
    }
    std::printf(" %14llu\n", static_cast<unsigned long long>(sum));
  }
  std::printf(
      "prefetch %s: degree of thrashing %.4f (prefetched objects evicted unused / prefetched), "
      "synchronous read ratio %.4f (cache misses / demand reads)\n",
      std::string(PrefetchModeName((*cluster)->map().prefetch.mode)).c_str(), thrashing,
      synchronous);
  return down == 0 ? kExitOk : kExitDegraded;
}

}  // namespace
}  // namespace orthofs

int main(int argc, char** argv) {
  using namespace orthofs;
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
