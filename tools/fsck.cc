#include "tools/fsck.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "client/namespace.h"
#include "common/file_locks.h"
#include "rpc/wire.h"
#include "tools/rebalance.h"

namespace orthofs {
namespace {

struct Census {
  std::map<uint64_t, uint64_t> inodes;             // fno -> version
  std::set<uint64_t> dirent_files;                 // directories with DIRENT objects
  std::map<uint64_t, std::vector<uint64_t>> data;  // fno -> object indexes
  std::set<uint64_t> symlinks;
  std::set<uint64_t> lock_files;     // files with a LOCK object (their fcntl/flock locks)
  std::set<uint64_t> lock_sessions;  // clients' lock sessions, by lock id
  uint64_t data_objects = 0;
  // Replicas whose original was not listed (with their versions): what a deletion cut short
  // between the copies left, an original lost and not repaired yet, or a change made while the
  // census ran.
  std::vector<std::pair<Oid, uint64_t>> replicas_alone;
};

using ObjectKey = std::tuple<uint64_t, uint64_t, ObjectType>;  // fno, offset, type

// Every object the OSDs list as copy `flag` of the namespace, page by page (metadata only).
Status ListCopies(ClusterClient* cluster, uint32_t fnso, wire::CopyFlag flag,
                  const std::function<void(const Oid&, uint64_t version)>& take,
                  const std::function<void(uint32_t osd_id)>& after_osd) {
  for (const auto& osd : cluster->osds()) {
    wire::ListRequest request;
    request.set_epoch(cluster->map().epoch);
    request.set_flag(flag);
    request.set_fnso(fnso);
    request.set_summaries_only(true);  // versions are all it needs; no object's bytes read
    ORTHOFS_RETURN_IF_ERROR(osd->ListEveryPage(request, [&](const wire::ListResponse& page) {
      for (const auto& meta : page.objects()) {
        Result<Oid> oid = FromWire(meta.oid());
        if (oid.ok()) take(*oid, meta.version());
      }
    }));
    if (after_osd) after_osd(osd->osd_id());
  }
  return Status::Ok();
}

// Every ORIGINAL object of the namespace, from every OSD (metadata only), then the replicas
// whose original is not among them.
Status TakeCensus(ClusterClient* cluster, uint32_t fnso, const FsckOptions& options,
                  Census* census) {
  std::set<ObjectKey> metadata;  // the originals besides DATA (those are in census->data)
  ORTHOFS_RETURN_IF_ERROR(ListCopies(
      cluster, fnso, wire::ORIGINAL,
      [&](const Oid& oid, uint64_t version) {
        if (oid.type != ObjectType::kData) metadata.emplace(oid.fno, oid.offset, oid.type);
        switch (oid.type) {
          case ObjectType::kInode:
            census->inodes[oid.fno] = version;
            break;
          case ObjectType::kDirent:
            census->dirent_files.insert(oid.fno);
            break;
          case ObjectType::kData:
            census->data[oid.fno].push_back(oid.offset);
            ++census->data_objects;
            break;
          case ObjectType::kSymlink:
            census->symlinks.insert(oid.fno);
            break;
          case ObjectType::kSuper:
            break;
          case ObjectType::kLock:
            if (IsLockSession(oid)) {
              census->lock_sessions.insert(oid.offset);
            } else {
              census->lock_files.insert(oid.fno);
            }
            break;
        }
      },
      options.after_listing_osd));
  for (auto& [fno, indexes] : census->data) std::sort(indexes.begin(), indexes.end());
  auto has_original = [&](const Oid& oid) {
    if (oid.type != ObjectType::kData) return metadata.count({oid.fno, oid.offset, oid.type}) > 0;
    auto file = census->data.find(oid.fno);
    return file != census->data.end() &&
           std::binary_search(file->second.begin(), file->second.end(), oid.offset);
  };
  return ListCopies(
      cluster, fnso, wire::REPLICA,
      [&](const Oid& oid, uint64_t version) {
        if (!has_original(oid)) {
          census->replicas_alone.emplace_back(oid.WithFlag(CopyFlag::kOriginal), version);
        }
      },
      nullptr);
}

using DirNames = std::map<uint64_t, std::vector<std::pair<uint64_t, std::string>>>;

// The root's lost+found directory, made if there is none.
Result<uint64_t> LostAndFound(Namespace* ns) {
  constexpr std::string_view kName = "lost+found";
  Result<InodeRef> found = ns->Lookup(kRootFno, kName);
  if (found.status().Is(StatusCode::kNotFound)) {
    found = ns->Create(kRootFno, kName, S_IFDIR | 0700, 0, Credentials{});
    if (found.status().Is(StatusCode::kAlreadyExists)) found = ns->Lookup(kRootFno, kName);
  }
  if (!found.ok()) return found.status();
  if (!found->inode.IsDirectory()) {
    return Status::NotADirectory("/lost+found is not a directory: cut-off directories stay");
  }
  return found->fno;
}

// Directories that a name names but the root does not reach (a cycle, or under one), and
// directories with more than one name; each confirmed by fresh lookups, since entries read one
// directory after another may be out of date. Only directories still as `settled` read them
// (fno -> version) are judged: a walk that meets one that changed since (a move under way, or
// done) cannot tell, and reports nothing.
// Unless `dry_run`, the directories a cycle's members or nothing cut off names are moved (a
// rename, under the move lease like any move) to /lost+found as "#<fno>": one per cycle,
// which reconnects the rest of the cycle and everything under them.
class CutOffSearch {
 public:
  CutOffSearch(Namespace* ns, const std::map<uint64_t, uint64_t>& settled, DirNames dir_names,
               const std::map<uint64_t, std::vector<uint64_t>>& child_dirs, bool dry_run,
               FsckReport* report)
      : ns_(ns),
        settled_(settled),
        dir_names_(std::move(dir_names)),
        child_dirs_(child_dirs),
        dry_run_(dry_run),
        report_(report) {}

  Status Run() {
    ORTHOFS_RETURN_IF_ERROR(FindCutOff());
    Result<std::vector<uint64_t>> to_move = ChooseToMove();
    if (!to_move.ok()) return to_move.status();
    for (uint64_t dir : *to_move) ORTHOFS_RETURN_IF_ERROR(MoveToLostAndFound(dir));
    ORTHOFS_RETURN_IF_ERROR(ReportStillCutOff());
    return ReportNamedTwice();
  }

 private:
  using Names = std::vector<std::pair<uint64_t, std::string>>;

  // The directories the entries as read lead to from the root.
  std::set<uint64_t> ReachedByEntries() const {
    std::set<uint64_t> reached = {kRootFno};
    for (std::vector<uint64_t> to_visit = {kRootFno}; !to_visit.empty();) {
      const uint64_t dir = to_visit.back();
      to_visit.pop_back();
      auto children = child_dirs_.find(dir);
      if (children == child_dirs_.end()) continue;
      for (uint64_t child : children->second) {
        if (reached.insert(child).second) to_visit.push_back(child);
      }
    }
    return reached;
  }

  // The names of `dir` that still name it.
  Result<Names> CurrentNames(uint64_t dir) {
    Names names;
    auto counted = dir_names_.find(dir);
    if (counted == dir_names_.end()) return names;
    for (const auto& [parent, name] : counted->second) {
      Result<InodeRef> named = ns_->Lookup(parent, name);
      if (!named.ok() && !named.status().Is(StatusCode::kNotFound)) return named.status();
      if (named.ok() && named->fno == dir) names.emplace_back(parent, name);
    }
    return names;
  }

  // Whether `dir` is as fsck read it after the census (a rename stamps the directory it moves).
  Result<bool> Unchanged(uint64_t dir) {
    auto read = settled_.find(dir);
    if (read == settled_.end()) return false;
    Result<InodeRef> now = ns_->GetInode(dir);
    if (now.status().Is(StatusCode::kNotFound)) return false;
    if (!now.ok()) return now.status();
    return now->version == read->second;
  }

  // Whether some chain of names leads from the root to `start` (or cannot be judged).
  Result<bool> ReachesRoot(uint64_t start) {
    std::set<uint64_t> seen;
    for (std::vector<uint64_t> to_visit = {start}; !to_visit.empty();) {
      const uint64_t dir = to_visit.back();
      to_visit.pop_back();
      if (dir == kRootFno) return true;
      if (!seen.insert(dir).second) continue;
      Result<Names> names = CurrentNames(dir);
      if (!names.ok()) return names.status();
      // After the lookups: a rename stamps the directory before it drops the old name, so a
      // name that went while they ran shows as a changed version here.
      Result<bool> judged = Unchanged(dir);
      if (!judged.ok()) return judged.status();
      if (!*judged) return true;
      for (const auto& [parent, name] : *names) to_visit.push_back(parent);
    }
    return false;
  }

  // The parents of `dir` (by its current names) that are cut off too.
  Result<std::vector<uint64_t>> ParentsCutOff(uint64_t dir) {
    Result<Names> names = CurrentNames(dir);
    if (!names.ok()) return names.status();
    std::vector<uint64_t> parents;
    for (const auto& [parent, name] : *names) {
      if (cut_off_.count(parent)) parents.push_back(parent);
    }
    return parents;
  }

  // Whether `ancestor` is `dir` or above it by cut-off parents.
  Result<bool> Under(uint64_t dir, uint64_t ancestor) {
    std::set<uint64_t> seen;
    for (std::vector<uint64_t> to_visit = {dir}; !to_visit.empty();) {
      const uint64_t next = to_visit.back();
      to_visit.pop_back();
      if (next == ancestor) return true;
      if (!seen.insert(next).second) continue;
      Result<std::vector<uint64_t>> parents = ParentsCutOff(next);
      if (!parents.ok()) return parents.status();
      to_visit.insert(to_visit.end(), parents->begin(), parents->end());
    }
    return false;
  }

  Result<bool> OnCycle(uint64_t start) {
    Result<std::vector<uint64_t>> parents = ParentsCutOff(start);
    if (!parents.ok()) return parents.status();
    for (uint64_t parent : *parents) {
      Result<bool> looped = Under(parent, start);
      if (!looped.ok() || *looped) return looped;
    }
    return false;
  }

  // The settled directories with a name that no chain of names from the root reaches.
  Status FindCutOff() {
    const std::set<uint64_t> reached = ReachedByEntries();
    for (const auto& [dir, version] : settled_) {
      if (dir == kRootFno || !dir_names_.count(dir) || reached.count(dir)) continue;
      Result<bool> reaches = ReachesRoot(dir);
      if (!reaches.ok()) return reaches.status();
      if (!*reaches) cut_off_.insert(dir);
    }
    return Status::Ok();
  }

  // Which to move: a member of each cycle, and each directory no cut-off one names (under a
  // name that went meanwhile, say). The rest hang below those. None in a dry run.
  Result<std::vector<uint64_t>> ChooseToMove() {
    std::vector<uint64_t> to_move;
    if (dry_run_) return to_move;
    std::vector<uint64_t> tops;
    for (uint64_t dir : cut_off_) {
      Result<bool> cycle = OnCycle(dir);
      if (!cycle.ok()) return cycle.status();
      Result<std::vector<uint64_t>> parents = ParentsCutOff(dir);
      if (!parents.ok()) return parents.status();
      if (*cycle) to_move.push_back(dir);
      if (!*cycle && parents->empty()) tops.push_back(dir);
    }
    to_move.insert(to_move.end(), tops.begin(), tops.end());
    return to_move;
  }

  // The name of `dir` that closes its cycle (its parent is below it), not another one: moving
  // that would leave the cycle whole, reachable from lost+found.
  Result<std::pair<uint64_t, std::string>> NameClosingCycle(uint64_t dir, const Names& names) {
    for (const auto& named : names) {
      Result<bool> closes = Under(named.first, dir);
      if (!closes.ok()) return closes.status();
      if (*closes) return named;
    }
    return names.front();
  }

  // Renames `dir` to /lost+found/#<fno>, unless an earlier move brought it back or a client
  // changed it meanwhile.
  Status MoveToLostAndFound(uint64_t dir) {
    Result<bool> reaches = ReachesRoot(dir);  // an earlier move may have brought it back
    if (!reaches.ok()) return reaches.status();
    if (*reaches) return Status::Ok();
    Result<Names> names = CurrentNames(dir);
    if (!names.ok()) return names.status();
    if (names->empty()) return Status::Ok();
    Result<uint64_t> lost_and_found = LostAndFound(ns_);
    if (!lost_and_found.ok()) return lost_and_found.status();
    Result<std::pair<uint64_t, std::string>> chosen = NameClosingCycle(dir, *names);
    if (!chosen.ok()) return chosen.status();
    const auto& [parent, name] = *chosen;
    const std::string new_name = "#" + std::to_string(dir);
    Status renamed = ns_->Rename(parent, name, *lost_and_found, new_name, RenameMode::kNoReplace,
                                 nullptr, /*expected_source=*/dir)
                         .status();
    // Renamed or removed since the lookup above: a client changed it, so it cannot be judged.
    if (renamed.Is(StatusCode::kStale) || renamed.Is(StatusCode::kNotFound)) return Status::Ok();
    if (!renamed.ok()) {
      report_->cut_off.push_back("directory " + std::to_string(dir) + " ('" + name + "' in " +
                                 std::to_string(parent) + ") is not reached from the root; " +
                                 "moving it to /lost+found failed: " + renamed.ToString());
      moved_.insert(dir);
      return Status::Ok();
    }
    report_->reconnected.push_back("directory " + std::to_string(dir) + " ('" + name + "' in " +
                                   std::to_string(parent) + "): now /lost+found/" + new_name);
    moved_.insert(dir);
    std::erase(dir_names_[dir], std::pair<uint64_t, std::string>(parent, name));
    dir_names_[dir].emplace_back(*lost_and_found, new_name);
    return Status::Ok();
  }

  // What is still cut off (everything, in a dry run).
  Status ReportStillCutOff() {
    for (uint64_t dir : cut_off_) {
      if (moved_.count(dir)) continue;
      Result<bool> reaches = dry_run_ ? Result<bool>(false) : ReachesRoot(dir);
      if (!reaches.ok()) return reaches.status();
      if (*reaches) continue;
      const auto& [parent, name] = dir_names_.at(dir).front();
      report_->cut_off.push_back("directory " + std::to_string(dir) + " ('" + name + "' in " +
                                 std::to_string(parent) + ") is not reached from the root");
    }
    return Status::Ok();
  }

  Status ReportNamedTwice() {
    for (const auto& [dir, version] : settled_) {
      if (dir == kRootFno || !dir_names_.count(dir) || dir_names_.at(dir).size() < 2) continue;
      Result<Names> names = CurrentNames(dir);
      if (!names.ok()) return names.status();
      if (names->size() > 1) {
        std::string all;
        for (const auto& [parent, name] : *names) {
          all += (all.empty() ? "'" : ", '") + name + "' in " + std::to_string(parent);
        }
        report_->named_twice.push_back("directory " + std::to_string(dir) + " has " +
                                       std::to_string(names->size()) + " names: " + all);
      }
    }
    return Status::Ok();
  }

  Namespace* const ns_;
  const std::map<uint64_t, uint64_t>& settled_;
  DirNames dir_names_;  // updated as directories move to /lost+found
  const std::map<uint64_t, std::vector<uint64_t>>& child_dirs_;
  const bool dry_run_;
  FsckReport* const report_;
  std::set<uint64_t> cut_off_;
  std::set<uint64_t> moved_;  // moved, or reported as failing to move
};

Status FindDirectoriesCutOff(Namespace* ns, const std::map<uint64_t, uint64_t>& settled,
                             DirNames dir_names,
                             const std::map<uint64_t, std::vector<uint64_t>>& child_dirs,
                             bool dry_run, FsckReport* report) {
  return CutOffSearch(ns, settled, std::move(dir_names), child_dirs, dry_run, report).Run();
}

// One fsck run over a census, step by step (Run): its steps share what the earlier ones found.
class FsckRun {
 public:
  FsckRun(ClusterClient* cluster, uint32_t fnso, const FsckOptions& options, const Census& census)
      : cluster_(cluster), fnso_(fnso), options_(options), census_(census), ns_(cluster, fnso) {
    report_.inodes = census.inodes.size();
    report_.data_objects = census.data_objects;
  }

  Result<FsckReport> Run() {
    ORTHOFS_RETURN_IF_ERROR(ReadNames());
    now_ = Now();
    for (const auto& [fno, version] : census_.inodes) {
      ORTHOFS_RETURN_IF_ERROR(CheckInode(fno, version));
    }
    ORTHOFS_RETURN_IF_ERROR(ReconnectNamelessDirs());
    ORTHOFS_RETURN_IF_ERROR(FindDirectoriesCutOff(&ns_, settled_dirs_, dir_names_, child_dirs_,
                                                  options_.dry_run, &report_));
    ORTHOFS_RETURN_IF_ERROR(CollectObjectsWithoutInode());
    ORTHOFS_RETURN_IF_ERROR(CollectObjectsPastEnd());
    ORTHOFS_RETURN_IF_ERROR(CollectDeadLockSessions());
    ORTHOFS_RETURN_IF_ERROR(SettleReplicasAlone());
    ORTHOFS_RETURN_IF_ERROR(CollectEntriesWithoutInode());
    return std::move(report_);
  }

 private:
  // The census lists one OSD after another, so a file made while it ran may have its INODE on
  // an OSD listed before the INODE existed, and its entry, DIRENT, DATA or SYMLINK objects on
  // one listed after. A file's INODE is written before anything else of it, so one asked for
  // now that exists is live: none of it is missing, orphaned or collected.
  Result<bool> HasInode(uint64_t fno) {
    if (census_.inodes.count(fno)) return true;
    auto known = made_meanwhile_.find(fno);
    if (known != made_meanwhile_.end()) return known->second;
    Result<InodeRef> inode = ns_.GetInode(fno);
    if (!inode.ok() && !inode.status().Is(StatusCode::kNotFound)) return inode.status();
    return made_meanwhile_[fno] = inode.ok();
  }

  // Names: every entry of every directory that has any.
  Status ReadNames() {
    for (uint64_t dir : census_.dirent_files) {
      Result<bool> dir_exists = HasInode(dir);
      if (!dir_exists.ok()) return dir_exists.status();
      if (!*dir_exists) continue;  // entries of a vanished directory: orphans
      Result<std::vector<DirEntry>> entries = ns_.ReadDir(dir);
      if (!entries.ok()) return entries.status();
      for (const DirEntry& e : *entries) {
        ++report_.entries;
        Result<bool> target_exists = HasInode(e.fno);
        if (!target_exists.ok()) return target_exists.status();
        if (!*target_exists) {
          report_.dangling.push_back("dir " + std::to_string(dir) + ": '" + e.name +
                                     "' -> missing inode " + std::to_string(e.fno));
          continue;
        }
        ++links_[e.fno];
        if (S_ISDIR(e.type)) {
          ++subdirs_[dir];
          dir_names_[e.fno].emplace_back(dir, e.name);
          child_dirs_[dir].push_back(e.fno);
        }
      }
      if (options_.after_reading_entries) options_.after_reading_entries(dir);
    }
    return Status::Ok();
  }

  // One inode of the census (`version` as listed), against the names that reach it.
  Status CheckInode(uint64_t fno, uint64_t version) {
    Result<InodeRef> inode = ns_.GetInode(fno);
    if (inode.status().Is(StatusCode::kNotFound)) return Status::Ok();  // removed meanwhile
    if (!inode.ok()) return inode.status();
    if (inode->inode.IsDirectory()) ++report_.directories;
    if (inode->inode.IsDirectory() && inode->version == version && inode->inode.renames.empty() &&
        (options_.grace_seconds <= 0 ||
         now_.sec - inode->inode.ctime.sec >= options_.grace_seconds)) {
      settled_dirs_[fno] = inode->version;
    }
    if (!inode->inode.renames.empty()) {
      Result<bool> finished = FinishRenames(fno);
      if (!finished.ok()) return finished.status();
      if (*finished) return Status::Ok();  // its names changed since they were counted
    }
    if (fno == kRootFno || links_.count(fno)) return CheckNamedInode(fno, version, *inode);
    return CheckNamelessInode(fno, version, *inode);
  }

  // A directory's rename cut short may have left it two names: its old name goes. Not a
  // rename that may still run (younger than the expiry clients use too, or than the grace).
  // Whether any was finished.
  Result<bool> FinishRenames(uint64_t fno) {
    const int64_t started_before =
        options_.grace_seconds > 0
            ? now_.sec -
                  std::max<int64_t>(options_.grace_seconds, Namespace::kRenameNoteExpiry.count())
            : std::numeric_limits<int64_t>::max();
    Result<uint32_t> finished = ns_.FinishRenamesCutShort(fno, started_before, options_.dry_run);
    if (!finished.ok() && !finished.status().Is(StatusCode::kNotFound)) {
      return finished.status();
    }
    if (finished.ok() && *finished > 0) {
      report_.renames_finished += *finished;
      return true;
    }
    return false;
  }

  // Reached by a name: check the link count (directories: 2 + subdirectories), removal marks
  // and the recorded parent.
  Status CheckNamedInode(uint64_t fno, uint64_t version, const InodeRef& inode) {
    const uint32_t want = inode.inode.IsDirectory() ? 2 + subdirs_[fno] : links_[fno];
    // A link, unlink or rename under way changes the count and the entries one after the
    // other, and the directories were read before this inode: a count changed since the
    // census, or lately (they stamp ctime), is left alone.
    const bool changing =
        inode.version != version ||
        (options_.grace_seconds > 0 && now_.sec - inode.inode.ctime.sec < options_.grace_seconds);
    // Removal marks that nothing is changing any more: their removals stopped (a crash).
    const bool stale_mark = inode.inode.removing() && !changing;
    const uint32_t have = inode.inode.nlink;
    const int64_t excess_since = inode.inode.excess_links_since;
    // A count too high may be an unlink's that has removed its name and not yet lowered the
    // count (lowering it now would count that unlink twice, and free the file under its
    // other names): it is noted, and lowered by a run once it has stayed so for the grace.
    // A note stands while no client changed the inode since (each stamps ctime).
    const bool too_high = have > want && !changing;
    const bool noted = excess_since != 0 && inode.inode.ctime.sec < excess_since;
    const bool lower = too_high && (options_.grace_seconds <= 0 ||
                                    (noted && now_.sec - excess_since >= options_.grace_seconds));
    const bool wrong_count = !changing && (have < want || lower);
    const bool held = too_high && !lower;
    const bool note_changes = held ? !noted : (!changing && excess_since != 0);
    if (held) ++report_.link_counts_held;
    const uint64_t parent = ParentByName(fno, inode, changing);
    const bool wrong_parent = parent != inode.inode.parent;
    if (!wrong_count && !stale_mark && !note_changes && !wrong_parent) return Status::Ok();
    report_.link_count_fixes += wrong_count;
    report_.removal_marks_cleared += stale_mark;
    report_.parents_recorded += wrong_parent;
    if (options_.dry_run) return Status::Ok();
    Inode fixed = inode.inode;
    if (wrong_count) fixed.nlink = want;
    fixed.excess_links_since = held ? (noted ? excess_since : now_.sec) : 0;
    fixed.removal_marks = 0;
    fixed.parent = parent;
    Result<wire::ObjectMeta> w = cluster_->WriteOriginalThenReplica(
        Oid{fnso_, fno, 0, ObjectType::kInode}, EncodeInode(fixed), inode.version);
    if (!w.ok() && !w.status().Is(StatusCode::kVersionMismatch)) return w.status();
    if (w.ok() && settled_dirs_.count(fno)) settled_dirs_[fno] = w->version();
    return Status::Ok();
  }

  // A directory records its parent (the move check walks them up to the root); one made
  // before directories did has none, and gets the directory its one name is in.
  uint64_t ParentByName(uint64_t fno, const InodeRef& inode, bool changing) const {
    if (inode.inode.IsDirectory() && fno != kRootFno && !changing && inode.inode.renames.empty()) {
      auto names = dir_names_.find(fno);
      if (names != dir_names_.end() && names->second.size() == 1) {
        return names->second.front().first;
      }
    }
    return inode.inode.parent;
  }

  // No name reaches it: an orphan, collected unless young, or a directory to reconnect.
  Status CheckNamelessInode(uint64_t fno, uint64_t version, const InodeRef& inode) {
    // A rename stamps the inode it moves (its ctime, so a new version) before its new entry,
    // and drops the old entry after: fsck may have missed both names of one in flight.
    const bool spared =
        inode.version != version || now_.sec - inode.inode.ctime.sec < options_.grace_seconds;
    if (!spared && inode.inode.IsDirectory() && census_.dirent_files.count(fno)) {
      // A directory with no name that holds entries (its own name lost to damage): what is
      // below it is the user's, and goes to /lost+found with it, never collected.
      nameless_dirs_.emplace_back(fno, inode.version);
      return Status::Ok();
    }
    ++report_.orphan_inodes;
    if (spared) {
      ++report_.spared_in_grace;
      return Status::Ok();
    }
    if (!options_.dry_run) {
      ORTHOFS_RETURN_IF_ERROR(ns_.ReleaseInode(fno));
      ++report_.collected;
    }
    return Status::Ok();
  }

  Status ReconnectNamelessDirs() {
    for (const auto& [dir, version] : nameless_dirs_) {
      const std::string nameless = "directory " + std::to_string(dir) + " has no name";
      if (options_.dry_run) {
        report_.cut_off.push_back(nameless);
        continue;
      }
      Result<uint64_t> lost_and_found = LostAndFound(&ns_);
      const std::string new_name = "#" + std::to_string(dir);
      Status attached = lost_and_found.ok()
                            ? ns_.ReattachDirectory(dir, *lost_and_found, new_name, version)
                            : lost_and_found.status();
      if (attached.Is(StatusCode::kVersionMismatch)) continue;  // a client changed it meanwhile
      if (!attached.ok()) {
        report_.cut_off.push_back(nameless +
                                  "; moving it to /lost+found failed: " + attached.ToString());
        continue;
      }
      report_.reconnected.push_back(nameless + ": now /lost+found/" + new_name);
      dir_names_[dir].emplace_back(*lost_and_found, new_name);  // what the walks below meet
    }
    return Status::Ok();
  }

  // An orphan object: deleted (both copies) unless a dry run.
  Status Collect(const Oid& oid) {
    ++report_.orphan_objects;
    if (options_.dry_run) return Status::Ok();
    ORTHOFS_RETURN_IF_ERROR(cluster_->DeleteBothCopies(oid));
    ++report_.collected;
    return Status::Ok();
  }

  // Objects of files that have no inode at all.
  Status CollectObjectsWithoutInode() {
    for (const auto& [fno, indexes] : census_.data) {
      Result<bool> live = HasInode(fno);
      if (!live.ok()) return live.status();
      if (*live) continue;
      for (uint64_t index : indexes) {
        ORTHOFS_RETURN_IF_ERROR(Collect(Oid{fnso_, fno, index, ObjectType::kData}));
      }
    }
    for (uint64_t fno : census_.symlinks) {
      Result<bool> live = HasInode(fno);
      if (!live.ok()) return live.status();
      if (!*live) ORTHOFS_RETURN_IF_ERROR(Collect(Oid{fnso_, fno, 0, ObjectType::kSymlink}));
    }
    for (uint64_t fno : census_.lock_files) {
      Result<bool> live = HasInode(fno);
      if (!live.ok()) return live.status();
      if (!*live) ORTHOFS_RETURN_IF_ERROR(Collect(FileLocksOid(fnso_, fno)));
    }
    return Status::Ok();
  }

  // Objects past the end of a live regular file (FsckReport::objects_past_end). The census
  // listed them before this reads the INODE, so a size published since (a close) covers them.
  Status CollectObjectsPastEnd() {
    const uint64_t object_size = cluster_->map().object_size;
    for (const auto& [fno, indexes] : census_.data) {
      if (indexes.empty()) continue;
      const uint64_t last = indexes.back();  // sorted
      Result<InodeRef> inode = ns_.GetInode(fno);
      if (inode.status().Is(StatusCode::kNotFound)) continue;  // an orphan: collected above
      if (!inode.ok()) return inode.status();
      if (!inode->inode.IsRegular()) continue;
      const uint64_t first_past = (inode->inode.size + object_size - 1) / object_size;
      if (last < first_past) continue;
      for (uint64_t index : indexes) {
        if (index < first_past) continue;
        ++report_.objects_past_end;
        if (options_.dry_run || options_.grace_seconds > 0) continue;
        ORTHOFS_RETURN_IF_ERROR(
            cluster_->DeleteBothCopies(Oid{fnso_, fno, index, ObjectType::kData}));
        ++report_.collected;
      }
    }
    return Status::Ok();
  }

  // A live client's session beats every second; one silent for the grace period, and at least
  // for kLockSessionSilence whatever the grace (a live session collected would hand its
  // client's locks to the first waiter), is a dead client's. Its locks went to the first
  // waiter that found it so, or go with their files.
  Status CollectDeadLockSessions() {
    report_.lock_sessions = census_.lock_sessions.size();
    const int64_t silence = std::max<int64_t>(options_.grace_seconds, kLockSessionSilence.count());
    for (uint64_t client : census_.lock_sessions) {
      Result<wire::ReadResponse> read = cluster_->ReadEitherCopy(LockSessionOid(fnso_, client));
      if (read.status().Is(StatusCode::kNotFound)) continue;  // its client unmounted meanwhile
      if (!read.ok()) return read.status();
      Result<LockSession> session = DecodeLockSession(read->data());
      if (session.ok() && Now().sec - session->last_beat_unix_sec < silence) continue;
      // Only as read: a beat since means the client lives (its clock is far behind fsck's).
      ++report_.orphan_objects;
      if (options_.dry_run) continue;
      Status gone =
          cluster_->DeleteBothCopies(LockSessionOid(fnso_, client), read->meta().version());
      if (gone.Is(StatusCode::kVersionMismatch)) continue;
      ORTHOFS_RETURN_IF_ERROR(gone);
      ++report_.collected;
    }
    return Status::Ok();
  }

  // Replicas alone: a metadata deletion cut short is finished; the rest of a file with no inode
  // goes (an original lost from a live file's is the scrub's to restore).
  Status SettleReplicasAlone() {
    for (const auto& [original, version] : census_.replicas_alone) {
      if (original.type != ObjectType::kData) {
        Result<bool> cut_short =
            cluster_->FinishDeletionCutShort(original, version, /*finish=*/!options_.dry_run);
        if (!cut_short.ok() && ClusterClient::IsOsdFailure(cut_short.status())) {
          return cut_short.status();
        }
        if (!cut_short.ok()) {  // a damaged original, say: the scrub's to judge
          spdlog::warn("fsck: {} has a replica alone, and its original answers {}",
                       original.ToString(), cut_short.status().ToString());
          continue;
        }
        if (*cut_short) {
          ++report_.orphan_objects;
          ++report_.deletions_finished;
          if (!options_.dry_run) ++report_.collected;
          continue;
        }
      }
      if (original.fno == 0) continue;  // the SUPER objects and lock sessions: not a file's
      Result<bool> live = HasInode(original.fno);
      if (!live.ok()) return live.status();
      if (!*live) ORTHOFS_RETURN_IF_ERROR(Collect(original));
    }
    return Status::Ok();
  }

  // The entries of directories that have no inode.
  Status CollectEntriesWithoutInode() {
    for (uint64_t dir : census_.dirent_files) {
      Result<bool> live = HasInode(dir);
      if (!live.ok()) return live.status();
      if (*live) continue;
      auto objects =
          cluster_->ListFileObjects(CopyFlag::kOriginal, fnso_, dir, ObjectType::kDirent, 0, false);
      if (!objects.ok()) return objects.status();
      for (const auto& [meta, data] : *objects) {
        ORTHOFS_RETURN_IF_ERROR(Collect(Oid{fnso_, dir, meta.oid().offset(), ObjectType::kDirent}));
      }
    }
    return Status::Ok();
  }

  ClusterClient* const cluster_;
  const uint32_t fnso_;
  const FsckOptions& options_;
  const Census& census_;
  Namespace ns_;
  FsckReport report_;
  std::map<uint64_t, bool> made_meanwhile_;  // files not in the census: whether they exist
  std::map<uint64_t, uint32_t> links_;       // fno -> entries naming it
  std::map<uint64_t, uint32_t> subdirs_;     // dir fno -> subdirectories
  DirNames dir_names_;                       // dir fno -> its names (parent, name)
  std::map<uint64_t, std::vector<uint64_t>> child_dirs_;
  Timespec now_;  // once the names are read
  // Directories nothing changed since the census nor within the grace period, with no rename
  // under way: their names, as counted, can be judged (fno -> version, after fsck's own fixes).
  std::map<uint64_t, uint64_t> settled_dirs_;
  // Directories with no name that hold entries (fno, version): reconnected to /lost+found.
  std::vector<std::pair<uint64_t, uint64_t>> nameless_dirs_;
};

}  // namespace

Result<FsckReport> RunFsck(ClusterClient* cluster, uint32_t fnso, const FsckOptions& options) {
  ORTHOFS_RETURN_IF_ERROR(RequireSettledCluster(cluster, "fsck"));
  // A dry run's reads take a deletion cut short for done without finishing it.
  struct FinishOnRead {
    ClusterClient* cluster;
    ~FinishOnRead() { cluster->set_finish_deletions_on_read(true); }
  } restore{cluster};
  cluster->set_finish_deletions_on_read(!options.dry_run);
  Census census;
  ORTHOFS_RETURN_IF_ERROR(TakeCensus(cluster, fnso, options, &census));
  return FsckRun(cluster, fnso, options, census).Run();
}

}  // namespace orthofs
