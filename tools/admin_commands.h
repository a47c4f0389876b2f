// The subcommands of the admin CLI `orthofs`, one function each, returning the exit code
// (tools/admin_common.h). tools/admin_main.cc wires them to the command line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/admin_common.h"
#include "tools/fsck.h"
#include "tools/scrub.h"

namespace orthofs::admin {

// ---- The cluster's OSDs (tools/admin_cluster.cc) ----

// Each OSD up or down, its epoch, objects and space; exit 3 if any is down.
int RunStatus(const CommonFlags& common, bool json);
// Every OSD's counters and the cluster's totals (then zeroed, with `reset`).
int RunStats(const CommonFlags& common, bool json, bool reset);
// The OSDs in `only` (empty: all) log at `level` from now on.
int RunLogLevel(const CommonFlags& common, const std::string& level,
                const std::vector<uint32_t>& only);
int RunDropCaches(const CommonFlags& common, const std::vector<uint32_t>& only);
int RunRepair(const CommonFlags& common, bool json);

// ---- One object (tools/admin_objects.cc) ----

enum class Copies { kBoth, kOriginal, kReplica };

int RunPut(const CommonFlags& common, const std::string& oid_text, const std::string& file,
           uint64_t offset, Copies copies, bool sync);
int RunGet(const CommonFlags& common, const std::string& oid_text, const std::string& out_path,
           uint64_t offset, uint64_t length);
int RunStat(const CommonFlags& common, const std::string& oid_text, Copies copies, bool json);
int RunRm(const CommonFlags& common, const std::string& oid_text, Copies copies);

// ---- A file system namespace (tools/admin_namespace.cc) ----

int RunMkfs(const CommonFlags& common, uint32_t fnso);
int RunFsckCommand(const CommonFlags& common, uint32_t fnso, const FsckOptions& options, bool json);
int RunScrubCommand(const CommonFlags& common, uint32_t fnso, ScrubOptions options, bool json);

// ---- Placement: where copies are, and moving them (tools/admin_placement.cc) ----

int RunLocate(const CommonFlags& common, uint32_t fnso, uint64_t fno, uint64_t first,
              uint64_t count, const std::string& type_name, bool json);
int RunPlanRebalance(const CommonFlags& common, const std::string& new_map_path, bool json);
int RunRebalance(const CommonFlags& common, const std::string& new_map_path, bool json);
int RunPlacementReport(const std::string& map_path, int osd_count, uint64_t files, uint64_t objects,
                       const std::string& strategy_name, uint32_t fnso, bool json);

}  // namespace orthofs::admin
