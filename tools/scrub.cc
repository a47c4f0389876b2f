#include "tools/scrub.h"

#include <spdlog/spdlog.h>

#include <map>
#include <tuple>

#include "common/scrub_plan.h"
#include "rpc/wire.h"
#include "tools/rebalance.h"

namespace orthofs {
namespace {

// (fno, type, offset): one object, both copies.
using ObjectKey = std::tuple<uint64_t, ObjectType, uint64_t>;

struct CopyPair {
  ScrubCopy copy[2];  // indexed by CopyFlag
};

// Every OSD replays its repair records; scrubbing needs all of them done and every OSD up.
Status ReplayRepairRecords(ClusterClient* cluster) {
  for (const auto& osd : cluster->osds()) {
    wire::RepairRequest request;
    request.set_epoch(cluster->map().epoch);
    Result<wire::RepairResponse> r = osd->Repair(request);
    if (!r.ok()) {
      return Status::Unavailable(osd->name() + " did not answer (" + r.status().ToString() +
                                 "): scrub compares both copies and needs every OSD up");
    }
    if (r->remaining() > 0) {
      return Status::Unavailable(osd->name() + " still holds " + std::to_string(r->remaining()) +
                                 " repair record(s) it could not replay: run orthofs repair "
                                 "once every OSD is up");
    }
  }
  return Status::Ok();
}

Status ListCopies(ClusterClient* cluster, uint32_t fnso, std::map<ObjectKey, CopyPair>* objects,
                  ScrubReport* report) {
  const Placement& placement = cluster->placement();
  for (const auto& osd : cluster->osds()) {
    for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
      wire::ListRequest request;
      request.set_epoch(cluster->map().epoch);
      request.set_flag(static_cast<wire::CopyFlag>(flag));
      request.set_fnso(fnso);
      Status listed = osd->ListEveryPage(request, [&](const wire::ListResponse& page) {
        auto place = [&](const wire::Oid& wire_oid) -> ScrubCopy* {
          Result<Oid> oid = FromWire(wire_oid);
          if (!oid.ok()) return nullptr;
          ++report->copies_listed;
          if (placement.OsdFor(*oid) != osd->osd_id()) {
            ++report->misplaced;
            spdlog::warn("scrub: {} is on {}, placement says OSD {}", oid->ToString(), osd->name(),
                         placement.OsdFor(*oid));
            return nullptr;
          }
          CopyPair& pair = (*objects)[{oid->fno, oid->type, oid->offset}];
          return &pair.copy[static_cast<int>(oid->flag)];
        };
        for (const wire::ObjectMeta& meta : page.objects()) {
          if (ScrubCopy* copy = place(meta.oid())) {
            *copy = {ScrubCopy::State::kPresent, meta.version(), meta.checksum(), meta.length()};
          }
        }
        for (const wire::Oid& corrupt : page.corrupt()) {
          if (ScrubCopy* copy = place(corrupt)) copy->state = ScrubCopy::State::kCorrupt;
        }
      });
      ORTHOFS_RETURN_IF_ERROR(listed);
    }
  }
  return Status::Ok();
}

enum class Rewrite { kDone, kChanged };

// Makes `target` equal to `source` (the intact copy, at `version`).
Result<Rewrite> RewriteCopy(ClusterClient* cluster, const Oid& source, const Oid& target,
                            uint64_t version) {
  Result<wire::ReadResponse> read = cluster->Read(source);
  if (!read.ok()) {
    // Deleted or rewritten since the listing: the client that did it owns both copies now.
    if (read.status().Is(StatusCode::kNotFound)) return Rewrite::kChanged;
    return read.status();
  }
  if (read->meta().version() != version) return Rewrite::kChanged;
  wire::WriteRequest write;
  write.set_epoch(cluster->map().epoch);
  *write.mutable_oid() = ToWire(target);
  write.set_data(read->data());
  write.set_replace(true);
  write.set_set_version(version);
  write.set_sync(true);
  OsdClient* osd = cluster->Osd(cluster->placement().OsdFor(target));
  Result<wire::WriteResponse> written = osd->Write(write);
  if (!written.ok()) return written.status();
  if (written->meta().version() == version) return Rewrite::kDone;
  // The target holds something newer. A newer deletion (a tombstone: no bytes, no checksum)
  // whose other half was lost means the source is the stale one: delete it too, keeping the
  // tombstone's version. Anything else is a client writing right now.
  if (written->meta().checksum() == 0 && written->meta().length() == 0 &&
      source.type != ObjectType::kData) {
    Result<wire::DeleteResponse> deleted =
        cluster->DeleteCopy(source, std::nullopt, written->meta().version());
    if (!deleted.ok()) return deleted.status();
    return Rewrite::kDone;
  }
  return Rewrite::kChanged;
}

}  // namespace

Result<ScrubReport> RunScrub(ClusterClient* cluster, uint32_t fnso, const ScrubOptions& options) {
  ORTHOFS_RETURN_IF_ERROR(RequireSettledCluster(cluster, "scrub"));
  ScrubReport report;
  if (!options.dry_run) ORTHOFS_RETURN_IF_ERROR(ReplayRepairRecords(cluster));
  std::map<ObjectKey, CopyPair> objects;
  ORTHOFS_RETURN_IF_ERROR(ListCopies(cluster, fnso, &objects, &report));
  const uint64_t total = objects.size();
  uint64_t done = 0;
  for (const auto& [key, pair] : objects) {
    if (options.progress && (done % 256 == 0)) options.progress(done, total);
    ++done;
    const auto& [fno, type, offset] = key;
    const Oid original{fnso, fno, offset, type, CopyFlag::kOriginal};
    const ScrubCopy& o = pair.copy[static_cast<int>(CopyFlag::kOriginal)];
    const ScrubCopy& r = pair.copy[static_cast<int>(CopyFlag::kReplica)];
    ++report.objects;
    const ScrubVerdict verdict = JudgeCopies(o, r);
    switch (verdict.action) {
      case ScrubAction::kNone:
        ++report.matched;
        continue;
      case ScrubAction::kUnrecoverable:
        ++report.unrecoverable;
        if (report.unrecoverable_oids.size() < ScrubReport::kMaxListed) {
          report.unrecoverable_oids.push_back(original.ToString());
        }
        spdlog::error("scrub: {} has no intact copy", original.ToString());
        continue;
      case ScrubAction::kRewriteOriginal:
      case ScrubAction::kRewriteReplica:
        break;
    }
    const bool to_replica = verdict.action == ScrubAction::kRewriteReplica;
    const Oid source = original.WithFlag(to_replica ? CopyFlag::kOriginal : CopyFlag::kReplica);
    const Oid target = source.OtherCopy();
    const uint64_t version = (to_replica ? o : r).version;
    spdlog::info("scrub: {} is {}: rewriting it from {}", target.ToString(),
                 ScrubReasonName(verdict.reason), source.ToString());
    if (!options.dry_run) {
      Result<Rewrite> rewritten = RewriteCopy(cluster, source, target, version);
      if (!rewritten.ok()) {
        return Status(rewritten.status().code(),
                      "rewriting " + target.ToString() + ": " + rewritten.status().message());
      }
      if (*rewritten == Rewrite::kChanged) {
        ++report.changed;
        continue;
      }
    }
    ++report.repaired;
    if (report.repaired_copies.size() < ScrubReport::kMaxListed) {
      report.repaired_copies.push_back(target.ToString() + " " +
                                       std::string(ScrubReasonName(verdict.reason)));
    }
    switch (verdict.reason) {
      case ScrubReason::kCorrupt:
        ++report.corrupt;
        break;
      case ScrubReason::kMissing:
        ++report.missing;
        break;
      case ScrubReason::kStale:
        ++report.stale;
        break;
      case ScrubReason::kDiverged:
        ++report.diverged;
        break;
      case ScrubReason::kMatch:
      case ScrubReason::kNoIntactCopy:
        break;
    }
  }
  if (options.progress) options.progress(total, total);
  return report;
}

}  // namespace orthofs
