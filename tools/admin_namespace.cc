// orthofs subcommands on a file system namespace: mkfs, fsck, scrub.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "client/namespace.h"
#include "tools/admin_commands.h"

namespace orthofs::admin {
namespace {

// An fsck or scrub of a namespace nobody made would report nothing wrong with nothing.
Status NamespaceExists(ClusterClient* cluster, uint32_t fnso) {
  Namespace ns(cluster, fnso);
  return ns.CheckExists();
}

}  // namespace
namespace {

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

}  // namespace

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
  if (Status exists = NamespaceExists(cluster->get(), fnso); !exists.ok()) {
    return Error(exists.message());
  }
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
                                {"objects_past_end", r->objects_past_end},
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
    std::printf("data objects past their file's end (a crashed writer's): %llu%s\n",
                static_cast<unsigned long long>(r->objects_past_end),
                r->objects_past_end == 0 || (!options.dry_run && options.grace_seconds <= 0)
                    ? ""
                    : " (collected only with --grace 0: a live writer's look the same)");
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

int RunScrubCommand(const CommonFlags& common, uint32_t fnso, ScrubOptions options, bool json) {
  auto cluster = Connect(common);
  if (!cluster.ok()) return Error(cluster.status().message());
  if (isatty(STDERR_FILENO)) options.progress = PrintScrubProgress;
  if (Status exists = NamespaceExists(cluster->get(), fnso); !exists.ok()) {
    return Error(exists.message());
  }
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
                                {"repaired_copies", r->repaired_copies},
                                {"dry_run", options.dry_run}}
                     .dump()
              << "\n";
  } else {
    for (const auto& oid : r->unrecoverable_oids) std::printf("no intact copy: %s\n", oid.c_str());
    for (const auto& copy : r->repaired_copies) {
      std::printf("%s: %s\n", options.dry_run ? "would rewrite" : "rewrote", copy.c_str());
    }
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

}  // namespace orthofs::admin
