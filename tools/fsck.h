// orthofs fsck: checks one namespace's objects against each other. Dangling entries (names
// whose inode is gone) must never exist by the write ordering of client/namespace.h; orphans
// (objects no name reaches: an inode whose create or unlink was cut short by a crash, data
// or entries of a vanished inode) are collected.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "client/cluster_client.h"

namespace orthofs {

struct FsckOptions {
  bool dry_run = false;  // report only
  // Orphans changed within this many seconds are left alone: they may be a create or an
  // unlinked-but-open file of a live client.
  int64_t grace_seconds = 300;
  // For tests: runs after the census has listed each OSD (its id), as a live client's change
  // may land between two listings.
  std::function<void(uint32_t osd_id)> after_listing_osd;
  // For tests: runs after the entries of directory `dir` have been read.
  std::function<void(uint64_t dir)> after_reading_entries;
};

// fsck collects a client's lock session only once it has been silent this long, by fsck's
// clock against the client's (a live one beats every second at most): also with a shorter grace.
inline constexpr std::chrono::seconds kLockSessionSilence{600};

struct FsckReport {
  uint64_t inodes = 0;
  uint64_t directories = 0;
  uint64_t entries = 0;
  uint64_t data_objects = 0;
  std::vector<std::string> dangling;  // "dir 12: 'name' -> missing inode 40"
  // Directories a name names that the root does not reach (a cycle), and directories with
  // more than one name: like dangling entries, there should never be any. A directory cut off
  // is moved to /lost+found as "#<fno>" (reconnected; unless a dry run, or the move failed:
  // cut_off); one with two names is reported only (an rmdir of either would dangle the other;
  // removing one of them is the user's choice).
  std::vector<std::string> cut_off;
  std::vector<std::string> reconnected;
  std::vector<std::string> named_twice;
  uint64_t orphan_inodes = 0;   // found
  uint64_t orphan_objects = 0;  // data/dirent/symlink/lock objects of missing inodes, and
                                // lock sessions silent for the grace period (dead clients')
  uint64_t lock_sessions = 0;   // clients' lock sessions found (live or not)
  // Metadata replicas left by a deletion cut short between the copies (the original deleted,
  // its client dead): finished (ClusterClient::FinishDeletionCutShort), counted as orphan
  // objects too. Replicas alone of files with no inode are orphan objects as well.
  uint64_t deletions_finished = 0;
  uint64_t collected = 0;         // objects deleted (both copies)
  uint64_t spared_in_grace = 0;   // orphans younger than the grace period
  uint64_t link_count_fixes = 0;  // inodes whose nlink disagreed with their entries
  // Counts too high, left until they have been so for the grace period (an unlink lowers the
  // count after removing its name): noted now, lowered by a run after that.
  uint64_t link_counts_held = 0;
  uint64_t renames_finished = 0;       // old names a directory's rename cut short left (removed)
  uint64_t removal_marks_cleared = 0;  // directories an rmdir cut short left marked (Inode)
  // Directories whose recorded parent (Inode::parent) was not the directory their one name is
  // in: made before directories recorded parents.
  uint64_t parents_recorded = 0;
  // Data objects wholly past their file's size: a client that died after writing them back
  // and before publishing their size left them (an extension clears them before it shows the
  // range, Namespace::ClearPastEnd). Collected only with --grace 0: a live client's writes
  // not yet published look the same (its size comes at close or fsync), and leaving them
  // costs only their space.
  uint64_t objects_past_end = 0;
};

Result<FsckReport> RunFsck(ClusterClient* cluster, uint32_t fnso, const FsckOptions& options);

}  // namespace orthofs
