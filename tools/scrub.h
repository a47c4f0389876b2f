// orthofs scrub: walks every object of a namespace on every OSD, compares its two copies
// (version, checksum, length, and whether the stored record still passes its checksum) and
// rewrites the stale, missing or corrupt copy from the intact one (common/scrub_plan.h).
//
// Safe beside live clients: a rewrite carries the intact copy's version (proto
// WriteRequest.set_version), and an OSD ignores a rewrite that is not newer than what it holds,
// so a copy changed since the listing is never rolled back. Repair records are replayed first:
// a copy that a record is about to delete must not be resurrected from its other half.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "client/cluster_client.h"

namespace orthofs {

struct ScrubOptions {
  bool dry_run = false;  // report only
  // Called as objects are judged (done of total), for a progress bar.
  std::function<void(uint64_t done, uint64_t total)> progress;
};

struct ScrubReport {
  uint64_t copies_listed = 0;
  uint64_t objects = 0;        // objects checked (one per pair of copies)
  uint64_t matched = 0;        // both copies present and equal
  uint64_t corrupt = 0;        // copies failing their checksum, rewritten
  uint64_t missing = 0;        // copies absent, rewritten
  uint64_t stale = 0;          // copies at an older version, rewritten
  uint64_t diverged = 0;       // same version, different bytes: replica rewritten
  uint64_t repaired = 0;       // copies rewritten (or, dry run, that would be)
  uint64_t changed = 0;        // changed by a client while scrubbing: left to it
  uint64_t misplaced = 0;      // copies on an OSD placement does not name (rebalance's job)
  uint64_t unrecoverable = 0;  // no intact copy
  std::vector<std::string> unrecoverable_oids;  // the first kMaxListed of them
  // The first kMaxListed copies rewritten, each as "<oid> <reason>" (ScrubReasonName).
  std::vector<std::string> repaired_copies;
  static constexpr size_t kMaxListed = 100;
};

Result<ScrubReport> RunScrub(ClusterClient* cluster, uint32_t fnso, const ScrubOptions& options);

}  // namespace orthofs
