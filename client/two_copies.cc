// The two-copy protocol, in one place: which copy serves a read and when the other is asked,
// how both copies of a data object are written, how a metadata change commits on the original
// and the replica follows, and how both are deleted; each with its fallbacks when one copy's
// OSD is down (a repair record stands in for the copy that could not follow).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <deque>
#include <future>
#include <latch>
#include <map>
#include <optional>
#include <system_error>
#include <thread>

#include "client/cluster_client.h"
#include "common/await_all.h"
#include "common/checksum.h"
#include "common/limits.h"
#include "common/object_version.h"
#include "common/peer_role.h"
#include "rpc/wire.h"

namespace orthofs {

Result<wire::ReadResponse> ClusterClient::ReadEitherCopy(const Oid& original, uint64_t offset,
                                                         uint64_t length) {
  Result<wire::ReadResponse> read = ReadEitherCopyOnce(original, offset, length);
  // Both copies' OSDs restarting (waiting for their repair records to be replayed): briefly.
  for (int attempt = 0; attempt < 50 && !read.ok() && IsRecovering(read.status()); ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    read = ReadEitherCopyOnce(original, offset, length);
  }
  return read;
}

Result<wire::ReadResponse> ClusterClient::EitherCopysAnswer(const Oid& first_copy,
                                                            Result<wire::ReadResponse> first,
                                                            Result<wire::ReadResponse> other) {
  // Absent from both is absent; otherwise the other copy's answer counts.
  if (!other.ok() && first.status().Is(StatusCode::kNotFound) && IsOsdFailure(other.status())) {
    return first;
  }
  if (other.ok() && first.status().Is(StatusCode::kNotFound) &&
      first_copy.flag == CopyFlag::kOriginal && first_copy.type != ObjectType::kData) {
    Result<bool> finished = FinishDeletionCutShort(first_copy, other->meta().version(),
                                                   finish_deletions_on_read_.load());
    if (finished.ok() && *finished) return first;
  }
  return other;
}

Result<bool> ClusterClient::FinishDeletionCutShort(const Oid& original, uint64_t replica_version,
                                                   bool finish) {
  const Oid original_copy = original.WithFlag(CopyFlag::kOriginal);
  // A delete expecting version 0 changes nothing on an absent copy and answers its tombstone's
  // version; one that exists refuses it, so a live original stays (written again meanwhile).
  Result<wire::DeleteResponse> probe = DeleteCopy(original_copy, 0, std::nullopt);
  if (probe.status().Is(StatusCode::kVersionMismatch)) return false;
  if (!probe.ok()) return probe.status();
  if (probe->existed() || !probe->tombstone() || probe->version() <= replica_version) return false;
  if (!finish) return true;
  // At the tombstone's version: a replica written since at a newer one (a create following its
  // original) keeps that write.
  Result<wire::DeleteResponse> finished =
      DeleteCopy(original_copy.OtherCopy(), std::nullopt, probe->version());
  // Its client died between the copies, or is about to delete the replica itself.
  spdlog::info(
      "{}: finished a deletion cut short (replica at version {}, original deleted at {}): {}",
      original_copy.ToString(), replica_version, probe->version(),
      finished.ok() ? "OK" : finished.status().ToString());
  return true;  // deleted either way: a replica still there is finished by the next read
}

std::vector<Result<wire::ReadResponse>> ClusterClient::ReadEitherCopyMany(
    const std::vector<Oid>& originals) {
  std::vector<Oid> first;
  std::vector<Oid> second;
  for (const Oid& original : originals) {
    Oid copy = original.WithFlag(CopyFlag::kOriginal);
    Oid other = original.WithFlag(CopyFlag::kReplica);
    if (CopyIsDown(copy)) std::swap(copy, other);
    first.push_back(copy);
    second.push_back(other);
  }
  std::vector<Result<wire::ReadResponse>> reads = ReadManyAndWait(first);
  // The other copy of each that needs it, together as well.
  std::vector<size_t> again;
  std::vector<Oid> others;
  for (size_t i = 0; i < reads.size(); ++i) {
    if (!reads[i].ok() && AskOtherCopy(reads[i].status(), second[i])) {
      again.push_back(i);
      others.push_back(second[i]);
    }
  }
  std::vector<Result<wire::ReadResponse>> other_reads = ReadManyAndWait(others);
  for (size_t k = 0; k < again.size(); ++k) {
    reads[again[k]] =
        EitherCopysAnswer(first[again[k]], std::move(reads[again[k]]), std::move(other_reads[k]));
  }
  // Both copies' OSDs recovering: asked again for a while, as ReadEitherCopy does.
  for (size_t i = 0; i < reads.size(); ++i) {
    if (!reads[i].ok() && IsRecovering(reads[i].status())) reads[i] = ReadEitherCopy(originals[i]);
  }
  return reads;
}

namespace {

// One hedged read's state: whether its answer went out, and what the two reads have said.
struct HedgedRead {
  std::mutex mu;
  bool handed = false;
  bool first_done = false;
  bool other_sent = false;
  bool other_done = false;
  std::optional<Result<wire::ReadResponse>> first_failure;  // kept while the other may answer
};

}  // namespace

void ClusterClient::ReadManyHedgedAsync(const std::vector<Oid>& copies,
                                        const std::vector<Oid>& others, HedgedDone done,
                                        bool windowed) {
  const size_t n = copies.size();
  auto reads = std::make_shared<std::vector<HedgedRead>>(n);
  auto shared_done = std::make_shared<const HedgedDone>(std::move(done));
  // `answer` of read i came from the first copy, or from the other (`other`).
  auto on_answer = [reads, shared_done](size_t i, Result<wire::ReadResponse> answer, bool other) {
    HedgedRead& read = (*reads)[i];
    std::optional<Result<wire::ReadResponse>> hand;
    bool from_other = other;
    {
      std::lock_guard lock(read.mu);
      if (read.handed) return;
      (other ? read.other_done : read.first_done) = true;
      if (answer.ok()) {
        hand = std::move(answer);
      } else if (!other && read.other_sent && !read.other_done) {
        read.first_failure = std::move(answer);  // the other copy may still answer
      } else if (!other) {
        hand = std::move(answer);
      } else if (read.first_done) {
        hand = std::move(*read.first_failure);  // both failed: the first copy's failure
        from_other = false;
      }  // else the other failed first: the first copy's answer decides
      if (!hand) return;
      read.handed = true;
    }
    (*shared_done)(i, std::move(*hand), from_other);
  };
  ReadManyAsync(
      copies,
      [on_answer](size_t i, Result<wire::ReadResponse> r) { on_answer(i, std::move(r), false); },
      windowed);
  // One timer per OSD asked: its reads still unanswered then go to their other copies.
  const MapState* s = state();
  std::map<uint32_t, std::vector<size_t>> by_osd;
  for (size_t i = 0; i < n; ++i) by_osd[s->placement.OsdFor(copies[i])].push_back(i);
  for (auto& [osd_id, indexes] : by_osd) {
    const OsdClient* osd = s->Osd(osd_id);
    hedges_.After(osd->HedgeDelay(),
                  [this, reads, indexes = std::move(indexes), others, on_answer, windowed] {
                    std::vector<Oid> second;
                    std::vector<size_t> which;
                    for (size_t i : indexes) {
                      HedgedRead& read = (*reads)[i];
                      std::lock_guard lock(read.mu);
                      if (read.handed || read.first_done || CopyIsDown(others[i])) continue;
                      read.other_sent = true;
                      second.push_back(others[i]);
                      which.push_back(i);
                    }
                    if (second.empty()) return;
                    hedged_reads_ += second.size();
                    ReadManyAsync(
                        second,
                        [on_answer, which](size_t k, Result<wire::ReadResponse> r) {
                          on_answer(which[k], std::move(r), true);
                        },
                        windowed);
                  });
  }
}

Result<wire::ReadResponse> ClusterClient::ReadEitherCopyOnce(const Oid& original, uint64_t offset,
                                                             uint64_t length) {
  Oid first = original.WithFlag(CopyFlag::kOriginal);
  Oid second = original.WithFlag(CopyFlag::kReplica);
  if (CopyIsDown(first)) std::swap(first, second);
  Result<wire::ReadResponse> read = Read(first, offset, length);
  if (read.ok() || !AskOtherCopy(read.status(), second)) return read;
  return EitherCopysAnswer(first, std::move(read), Read(second, offset, length));
}

void ClusterClient::WriteBothCopiesAsync(const Oid& original, std::string_view data,
                                         const ObjectWrite& how, PendingCalls* pending) {
  pending->Add();
  WriteBothCopiesAsync(original, data, how, [pending](Status st) { pending->Done(st); });
}

void ClusterClient::WriteBothCopiesAsync(const Oid& original, std::string_view data,
                                         const ObjectWrite& how, std::function<void(Status)> done,
                                         CopyWriteBatch* batch,
                                         std::shared_ptr<const void> data_owner) {
  if (test_hooks_.before_writing_both_copies) test_hooks_.before_writing_both_copies(original);
  const Oid copies[2] = {original.WithFlag(CopyFlag::kOriginal),
                         original.WithFlag(CopyFlag::kReplica)};
  const bool down[2] = {CopyIsDown(copies[0]), CopyIsDown(copies[1])};
  if (down[0] != down[1]) {
    // One copy's OSD is known down: the other copy, with a repair record, in one round trip.
    ObjectWrite degraded = how;
    degraded.record_repair = true;
    const Oid live = down[0] ? copies[1] : copies[0];
    const Oid believed_down = live.OtherCopy();
    // The belief is a hint that may outlive the outage: if the live copy's OSD fails now, the
    // other one may well be back, and takes the write (with the record) instead.
    auto live_request = std::make_shared<wire::WriteRequest>(MakeWrite(live, data, degraded));
    auto down_request = std::make_shared<wire::WriteRequest>(*live_request);  // hashed once
    *down_request->mutable_oid() = ToWire(believed_down);
    SendForCopyAsync<wire::WriteRequest, wire::WriteResponse>(
        live, std::move(live_request), &OsdClient::WriteAsync,
        [this, done, believed_down,
         request = std::move(down_request)](Result<wire::WriteResponse> r) {
          if (r.ok() || !IsOsdFailure(r.status())) return done(r.status());
          SendForCopyAsync<wire::WriteRequest, wire::WriteResponse>(
              believed_down, request, &OsdClient::WriteAsync,
              [done](Result<wire::WriteResponse> second) { done(second.status()); });
        });
    return;
  }
  // Both at once; when exactly one fails at the transport, the other (already written) gets a
  // repair record before the write counts as done.
  struct Outcome {
    std::mutex mu;
    int done = 0;
    Status status[2];
    uint64_t version[2] = {0, 0};
  };
  auto outcome = std::make_shared<Outcome>();
  // Batched, both copies' requests refer to the caller's bytes (kept by `data_owner`);
  // otherwise each carries a copy.
  const bool shared = batch != nullptr && data_owner != nullptr;
  wire::WriteRequest first = MakeWrite(copies[0], data, how, /*with_data=*/!shared);
  for (int i = 0; i < 2; ++i) {
    // The second copy's request takes the first one's over (its bytes are not copied again).
    auto request = std::make_shared<wire::WriteRequest>(i == 0 ? first : std::move(first));
    *request->mutable_oid() = ToWire(copies[i]);
    auto on_written = [this, outcome, i, copies, sync = how.sync,
                       done](Result<wire::WriteResponse> r) {
      {
        std::lock_guard lock(outcome->mu);
        outcome->status[i] = r.status();
        if (r.ok()) outcome->version[i] = r->meta().version();
        if (++outcome->done < 2) return;
      }
      const Status& a = outcome->status[0];
      const Status& b = outcome->status[1];
      if (a.ok() && b.ok()) {
        const uint64_t* version = outcome->version;
        if (version[0] == version[1]) return done(Status::Ok());
        // The copies took the write at different versions, so they were out of step (a
        // repair's push crossed it, and its record may be gone already): the newer copy holds
        // every change, and a record there brings the other along.
        const int newer = version[0] > version[1] ? 0 : 1;
        SendForCopyAsync<wire::WriteRequest, wire::WriteResponse>(
            copies[newer],
            std::make_shared<wire::WriteRequest>(
                RecordRepairRequest(copies[newer], version[newer], sync)),
            &OsdClient::WriteAsync, [done](Result<wire::WriteResponse> r) { done(r.status()); });
        return;
      }
      const int failed = a.ok() ? 1 : 0;
      // A damaged copy refuses ranged writes; like a down one, the repair record brings
      // it back from the live copy (an OSD replaces a damaged record whole).
      const Status lost = outcome->status[failed];
      const bool full = lost.Is(StatusCode::kNoSpace);
      if (a.ok() == b.ok() || !(IsOsdFailure(lost) || lost.Is(StatusCode::kCorruption) || full)) {
        return done(a.ok() ? b : a);
      }
      // A full OSD fails the write (the application hears ENOSPC), but the copy that took
      // it gets a repair record too, so the two copies agree once space is back.
      const int live = 1 - failed;
      SendForCopyAsync<wire::WriteRequest, wire::WriteResponse>(
          copies[live],
          std::make_shared<wire::WriteRequest>(
              RecordRepairRequest(copies[live], outcome->version[live], sync)),
          &OsdClient::WriteAsync,
          [done, full, lost](Result<wire::WriteResponse> r) { done(full ? lost : r.status()); });
    };
    if (shared) {
      batch->Add(copies[i], SharedWrite{std::move(request), data, data_owner},
                 std::move(on_written));
    } else if (batch != nullptr) {
      batch->Add(copies[i], SharedWrite::FromRequest(std::move(request)), std::move(on_written));
    } else {
      SendForCopyAsync<wire::WriteRequest, wire::WriteResponse>(
          copies[i], std::move(request), &OsdClient::WriteAsync, std::move(on_written));
    }
  }
}

Status ClusterClient::WriteBothCopies(const Oid& original, std::string_view data,
                                      const ObjectWrite& how) {
  PendingCalls pending;
  WriteBothCopiesAsync(original, data, how, &pending);
  return pending.Wait();
}

Result<wire::ObjectMeta> ClusterClient::WriteOriginalThenReplica(
    const Oid& original, std::string_view data, std::optional<uint64_t> expected_version,
    PendingCalls* replica_pending) {
  return HookedCommit(
      original, data,
      CommitHow{.expected_version = expected_version, .replica_pending = replica_pending});
}

Result<wire::ObjectMeta> ClusterClient::WriteOriginalThenReplicaDurably(const Oid& original,
                                                                        std::string_view data,
                                                                        uint64_t expected_version,
                                                                        bool* on_both_copies) {
  *on_both_copies = false;
  return HookedCommit(
      original, data,
      CommitHow{
          .expected_version = expected_version, .sync = true, .on_both_copies = on_both_copies});
}

Result<wire::ObjectMeta> ClusterClient::HookedCommit(const Oid& original, std::string_view data,
                                                     const CommitHow& how) {
  if (test_hooks_.before_writing_original_then_replica) {
    test_hooks_.before_writing_original_then_replica(original);
  }
  if (test_hooks_.instead_of_committing) {
    if (Status unsent = test_hooks_.instead_of_committing(original); !unsent.ok()) return unsent;
  }
  Result<wire::ObjectMeta> written = CommitOriginalThenReplica(original, data, how);
  if (test_hooks_.before_answering_original_then_replica) {
    Status answer = written.status();
    test_hooks_.before_answering_original_then_replica(original, &answer);
    if (!answer.ok()) return answer;
  }
  return written;
}

Result<wire::ObjectMeta> ClusterClient::CommitOriginalThenReplica(const Oid& original,
                                                                  std::string_view data,
                                                                  const CommitHow& how) {
  const Oid original_copy = original.WithFlag(CopyFlag::kOriginal);
  const Oid replica_copy = original.WithFlag(CopyFlag::kReplica);
  ObjectWrite write;
  write.replace = true;
  write.expected_version = how.expected_version;
  write.sync = how.sync;
  const bool skip_original = OriginalBelievedDown(original_copy);
  for (int attempt = 0;; ++attempt) {
    Result<wire::ObjectMeta> meta = skip_original && attempt == 0
                                        ? Result<wire::ObjectMeta>(BelievedDown(original_copy))
                                        : Write(original_copy, data, write);
    if (meta.ok()) {
      PendingCalls own;
      bool replica_followed = false;
      MakeReplicaFollow(original_copy, data, meta->version(),
                        how.replica_pending != nullptr ? how.replica_pending : &own, how.sync,
                        how.replica_pending == nullptr ? &replica_followed : nullptr);
      if (how.replica_pending == nullptr) ORTHOFS_RETURN_IF_ERROR(own.Wait());
      if (how.on_both_copies != nullptr) *how.on_both_copies = replica_followed;
      return meta;
    }
    if (!IsOsdFailure(meta.status()) && !meta.status().Is(StatusCode::kCorruption)) return meta;
    if (WaitedForUnsentCall(meta.status(), attempt)) continue;
    // The original's OSD is down (or its record damaged). Both copies carry the same version,
    // so the replica can be the commit point (the same condition), with a repair record for
    // the original.
    ObjectWrite alone = write;
    alone.record_repair = true;
    alone.other_recovering = IsRecovering(meta.status());
    Result<wire::ObjectMeta> replica = Write(replica_copy, data, alone);
    if (WaitedForOriginalToAnswer(original_copy, replica.status(), attempt)) continue;
    if (!BothRefusedAsRecovering(meta.status(), replica.status(), attempt)) return replica;
  }
}

bool ClusterClient::OriginalBelievedDown(const Oid& original_copy) {
  // Its OSD failed at the transport or went silent, and no probe has found it back. Not one
  // that refused as recovering: asking it again says so at once, and the replica's OSD must
  // hear of it (other_recovering).
  const MapState* s = state();
  const uint32_t osd = s->placement.OsdFor(original_copy);
  return s->Osd(osd)->down() && !health_.IsRecovering(osd);
}

Status ClusterClient::BelievedDown(const Oid& copy) {
  return Status::Unavailable(copy.ToString() + ": its OSD is believed down: not asked");
}

bool ClusterClient::WaitedForOriginalToAnswer(const Oid& original_copy, const Status& replica,
                                              int attempt) {
  // The replica's OSD reached the original's, which this client could not: our connection to
  // it is likely still backing off from an outage. Reconnect now and commit there.
  if (!OriginalAnswers(replica)) return false;
  const MapState* s = state();
  if (OsdClient* original = s->Osd(s->placement.OsdFor(original_copy))) original->ReconnectNow();
  return WaitedToRetry(true, attempt);
}

bool ClusterClient::WaitedForUnsentCall(const Status& original, int attempt) {
  // This client did not send the commit to the original: queued while its OSD was believed
  // down (OsdClient::CallFinished). The belief may be stale, and committing on the replica
  // while the original takes other clients' changes would fork the object (a chaos run: a
  // rename's pin committed on the replica alone, its unpin on the original that lacked it,
  // and the file was freed under its new name). So the original is tried again; only an
  // answer from it, or its failure, lets the replica commit.
  return WaitedToRetry(original.Is(StatusReason::kNotSent), attempt);
}

bool ClusterClient::BothRefusedAsRecovering(const Status& original, const Status& replica,
                                            int attempt) {
  // Neither copy took the change: the original's OSD recovers, and the replica's refuses to
  // take it alone while that OSD catches up (RepairRequest.fence), or recovers as well. It
  // takes changes again in a moment.
  return WaitedToRetry(IsRecovering(original) && IsRecovering(replica), attempt);
}

bool ClusterClient::WaitedToRetry(bool worth_retrying, int attempt) {
  if (!worth_retrying || attempt >= kRecoveringRetries) return false;
  std::this_thread::sleep_for(kRecoveringRetryDelay);
  return true;
}

void ClusterClient::MakeReplicaFollow(const Oid& original_copy, std::string_view data,
                                      uint64_t version, PendingCalls* pending, bool sync,
                                      bool* followed) {
  const Oid replica_copy = original_copy.OtherCopy();
  ObjectWrite whole;
  whole.replace = true;
  whole.sync = sync;
  wire::WriteRequest r = MakeWrite(replica_copy, data, whole);
  r.set_set_version(version);
  // The original committed: whatever keeps the replica from following (its OSD down, full, a
  // damaged record), the change stands and a repair record brings the replica along.
  pending->Add();
  auto record_repair = [this, original_copy, version, sync, pending] {
    SendForCopyAsync<wire::WriteRequest, wire::WriteResponse>(
        original_copy,
        std::make_shared<wire::WriteRequest>(RecordRepairRequest(original_copy, version, sync)),
        &OsdClient::WriteAsync,
        [pending](Result<wire::WriteResponse> recorded) { pending->Done(recorded.status()); });
  };
  // A replica believed down is not waited for (one that hangs would hold the change until it
  // is found silent): following is only catching up, and the record does that.
  if (CopyIsDown(replica_copy)) return record_repair();
  SendForCopyAsync<wire::WriteRequest, wire::WriteResponse>(
      replica_copy, std::make_shared<wire::WriteRequest>(std::move(r)), &OsdClient::WriteAsync,
      [replica_copy, pending, followed, record_repair](Result<wire::WriteResponse> written) {
        if (written.ok()) {
          if (followed != nullptr) *followed = true;
          return pending->Done(Status::Ok());
        }
        if (!IsOsdFailure(written.status())) {
          spdlog::warn("{}: replica not updated ({}); recording a repair", replica_copy.ToString(),
                       written.status().ToString());
        }
        record_repair();
      });
}

Result<wire::ObjectMeta> ClusterClient::CreateBothCopies(const Oid& original,
                                                         std::string_view data) {
  const Oid original_copy = original.WithFlag(CopyFlag::kOriginal);
  const Oid replica_copy = original.WithFlag(CopyFlag::kReplica);
  // An OSD known down: the careful order, which commits on the live copy with a repair record.
  if (CopyIsDown(original_copy) || CopyIsDown(replica_copy)) {
    return WriteOriginalThenReplica(original, data, 0);
  }
  ObjectWrite how;
  how.replace = true;
  how.expected_version = 0;
  auto answer = std::make_shared<std::promise<Result<wire::WriteResponse>>>();
  std::future<Result<wire::WriteResponse>> replica_written = answer->get_future();
  SendForCopyAsync<wire::WriteRequest, wire::WriteResponse>(
      replica_copy, std::make_shared<wire::WriteRequest>(MakeWrite(replica_copy, data, how)),
      &OsdClient::WriteAsync,
      [answer](Result<wire::WriteResponse> r) { answer->set_value(std::move(r)); });
  Result<wire::ObjectMeta> original_written = Write(original_copy, data, how);
  Result<wire::WriteResponse> replica = replica_written.get();
  if (original_written.ok()) {
    if (replica.ok() && replica->meta().version() == original_written->version()) {
      return original_written;
    }
    if (!replica.ok() && IsOsdFailure(replica.status())) {
      // Its OSD failed just now: not asked again; the original records the repair.
      Result<wire::WriteResponse> recorded = SendForCopy(
          original_copy, RecordRepairRequest(original_copy, original_written->version(), false),
          &OsdClient::Write);
      if (!recorded.ok()) return recorded.status();
      return original_written;
    }
    // The replica refused (full, damaged) or holds a lower version (a copy left over): it
    // follows the original. (A leftover at a higher version, which only a reused file number
    // could leave, would stay as it is.)
    PendingCalls follow;
    MakeReplicaFollow(original_copy, data, original_written->version(), &follow);
    ORTHOFS_RETURN_IF_ERROR(follow.Wait());
    return original_written;
  }
  const Status failed = original_written.status();
  if (!replica.ok()) return failed;
  if (IsOsdFailure(failed) || failed.Is(StatusCode::kCorruption)) {
    // The original's OSD is down (or its record damaged): the replica is the commit point, and
    // a repair record there brings the original along (WriteOriginalThenReplica's fallback).
    const uint64_t version = replica->meta().version();
    Result<wire::WriteResponse> recorded = SendForCopy(
        replica_copy, RecordRepairRequest(replica_copy, version, false), &OsdClient::Write);
    if (!recorded.ok()) return recorded.status();
    return replica->meta();
  }
  // The original refused the object (no space, say): the replica alone must not stay.
  Result<wire::DeleteResponse> removed =
      DeleteCopy(replica_copy, replica->meta().version(), std::nullopt);
  if (!removed.ok()) {
    spdlog::warn("{}: written, but its original was refused ({}), and removing it failed: {}",
                 replica_copy.ToString(), failed.ToString(), removed.status().ToString());
  }
  return failed;
}

Status ClusterClient::DeleteBothCopies(const Oid& original,
                                       std::optional<uint64_t> expected_version,
                                       PendingCalls* replica_pending) {
  if (test_hooks_.before_deleting_both_copies) test_hooks_.before_deleting_both_copies(original);
  if (test_hooks_.instead_of_committing) {
    if (Status unsent = test_hooks_.instead_of_committing(original); !unsent.ok()) return unsent;
  }
  const Oid original_copy = original.WithFlag(CopyFlag::kOriginal);
  const Oid replica_copy = original.WithFlag(CopyFlag::kReplica);
  const uint64_t floor =
      VersionFloorAt(std::chrono::system_clock::now());  // one deletion, one floor for both copies
  // A data object's original believed down is not waited for, as in WriteBothCopiesAsync (one
  // that hangs would hold every delete of a truncate for the deadline): the replica with a
  // repair record. Metadata keeps the careful order below (a belief can outlive the outage).
  if (original.type == ObjectType::kData && !expected_version && CopyIsDown(original_copy) &&
      !CopyIsDown(replica_copy)) {
    Status replica = DeleteCopy(replica_copy, std::nullopt, std::nullopt, true, floor).status();
    if (replica.ok() || !IsOsdFailure(replica)) return replica;
  }
  const bool skip_original = OriginalBelievedDown(original_copy);
  for (int attempt = 0;; ++attempt) {  // the original first, as in WriteOriginalThenReplica
    Result<wire::DeleteResponse> gone =
        skip_original && attempt == 0
            ? Result<wire::DeleteResponse>(BelievedDown(original_copy))
            : DeleteCopy(original_copy, expected_version, std::nullopt, false, floor);
    if (gone.ok()) {
      // A metadata replica gets the original's tombstone version, so a late replica write from
      // another client (older by version) cannot bring the deleted object back. A data replica
      // is simply removed (no tombstone for every object ever deleted), unless one copy kept a
      // tombstone anyway (MatchDataTombstones).
      const std::optional<uint64_t> deleted_at = DeletedAt(*gone);
      const bool data = original.type == ObjectType::kData;
      if (!data && replica_pending != nullptr) {
        MakeReplicaDeleteFollow(original_copy, deleted_at, floor, replica_pending);
        return Status::Ok();
      }
      // A replica believed down is not waited for (one that hangs would hold every delete of
      // a file's data, whose replicas all sit on it): the record FinishDeletion leaves stands in.
      return FinishDeletion(original_copy, *gone,
                            CopyIsDown(replica_copy)
                                ? Result<wire::DeleteResponse>(BelievedDown(replica_copy))
                                : DeleteCopy(replica_copy, std::nullopt,
                                             data ? std::nullopt : deleted_at, false, floor));
    }
    if (!IsOsdFailure(gone.status())) return gone.status();
    if (WaitedForUnsentCall(gone.status(), attempt)) continue;
    // The original's OSD is down: the replica (same version) is the commit point.
    Status alone = DeleteCopy(replica_copy, expected_version, std::nullopt, true, floor,
                              IsRecovering(gone.status()))
                       .status();
    if (WaitedForOriginalToAnswer(original_copy, alone, attempt)) continue;
    if (!BothRefusedAsRecovering(gone.status(), alone, attempt)) return alone;
  }
}

std::optional<uint64_t> ClusterClient::DeletedAt(const wire::DeleteResponse& gone) {
  if (gone.version() == 0) return std::nullopt;
  return gone.version();
}

Status ClusterClient::FinishDeletion(const Oid& original_copy, const wire::DeleteResponse& gone,
                                     const Result<wire::DeleteResponse>& replica) {
  if (replica.ok()) {
    if (original_copy.type != ObjectType::kData) return Status::Ok();
    return MatchDataTombstones(original_copy, gone, original_copy.OtherCopy(), *replica);
  }
  if (!ReplicaDeleteFollowsByRecord(replica.status())) return replica.status();
  // The replica's OSD is down (or full): the original (deleted already) records the repair and
  // keeps a tombstone at the deletion's version, so that a rewrite there goes on above the
  // replica's version and the replay deletes the replica rather than find it newer. Only the
  // original's own answer carries that version: deleting it again would find nothing and answer 0.
  return DeleteCopy(original_copy, std::nullopt, DeletedAt(gone), true).status();
}

void ClusterClient::MakeReplicaDeleteFollow(const Oid& original_copy,
                                            std::optional<uint64_t> deleted_at,
                                            uint64_t version_floor, PendingCalls* pending) {
  const Oid replica_copy = original_copy.OtherCopy();
  pending->Add();
  // As in DeleteBothCopies: the original (deleted already) records the repair and keeps a
  // tombstone at the deletion's version.
  auto record_repair = [this, original_copy, deleted_at, pending] {
    SendForCopyAsync<wire::DeleteRequest, wire::DeleteResponse>(
        original_copy,
        std::make_shared<wire::DeleteRequest>(
            DeleteRequestFor(original_copy, std::nullopt, deleted_at, true, std::nullopt, false)),
        &OsdClient::DeleteAsync,
        [pending](Result<wire::DeleteResponse> recorded) { pending->Done(recorded.status()); });
  };
  if (CopyIsDown(replica_copy)) return record_repair();
  SendForCopyAsync<wire::DeleteRequest, wire::DeleteResponse>(
      replica_copy,
      std::make_shared<wire::DeleteRequest>(
          DeleteRequestFor(replica_copy, std::nullopt, deleted_at, false, version_floor, false)),
      &OsdClient::DeleteAsync, [pending, record_repair](Result<wire::DeleteResponse> gone) {
        if (gone.ok() || !ReplicaDeleteFollowsByRecord(gone.status())) {
          return pending->Done(gone.status());
        }
        record_repair();
      });
}

Status ClusterClient::MatchDataTombstones(const Oid& one, const wire::DeleteResponse& one_deleted,
                                          const Oid& other,
                                          const wire::DeleteResponse& other_deleted) {
  auto kept = [](const wire::DeleteResponse& r) { return r.tombstone() ? r.version() : 0; };
  const uint64_t one_kept = kept(one_deleted);
  const uint64_t other_kept = kept(other_deleted);
  if (one_kept == other_kept) return Status::Ok();
  const bool one_behind = one_kept < other_kept;
  const Oid& behind = one_behind ? one : other;
  const Oid& ahead = one_behind ? other : one;
  const uint64_t version = std::max(one_kept, other_kept);
  if (test_hooks_.before_matching_tombstone) test_hooks_.before_matching_tombstone(behind);
  // Only while the copy behind is still deleted: a write that landed there since must stay.
  Status matched = DeleteCopy(behind, 0, version).status();
  if (matched.ok() || (!IsOsdFailure(matched) && !matched.Is(StatusCode::kVersionMismatch))) {
    return matched;
  }
  // The copy behind is down now, or written again: a repair record on the one ahead makes it
  // equal to that copy (its deletion, or the write that reached it too) when it runs.
  return DeleteCopy(ahead, std::nullopt, version, true).status();
}

std::vector<Status> ClusterClient::DeleteDataObjects(const std::vector<Oid>& originals) {
  std::vector<Status> results(originals.size());
  std::vector<size_t> alone;    // by DeleteBothCopies
  std::vector<size_t> batched;  // both copies' OSDs believed up
  const bool hooked = test_hooks_.before_deleting_both_copies || test_hooks_.instead_of_committing;
  for (size_t i = 0; i < originals.size(); ++i) {
    const Oid& o = originals[i];
    const bool irregular = hooked || o.type != ObjectType::kData ||
                           CopyIsDown(o.WithFlag(CopyFlag::kOriginal)) ||
                           CopyIsDown(o.WithFlag(CopyFlag::kReplica));
    (irregular ? alone : batched).push_back(i);
  }
  // As in DeleteBothCopies: the originals first, one floor for both copies of each.
  const uint64_t floor = VersionFloorAt(std::chrono::system_clock::now());
  std::vector<Oid> first_copies;
  for (size_t i : batched) first_copies.push_back(originals[i].WithFlag(CopyFlag::kOriginal));
  std::vector<Result<wire::DeleteResponse>> first = DeleteManyAndWait(first_copies, floor);
  std::vector<size_t> followed;  // into `batched`: originals deleted, replicas next
  std::vector<Oid> replicas;
  for (size_t k = 0; k < batched.size(); ++k) {
    if (!first[k].ok()) {
      alone.push_back(batched[k]);
      continue;
    }
    followed.push_back(k);
    replicas.push_back(originals[batched[k]].WithFlag(CopyFlag::kReplica));
  }
  std::vector<Result<wire::DeleteResponse>> second = DeleteManyAndWait(replicas, floor);
  for (size_t j = 0; j < followed.size(); ++j) {
    const size_t k = followed[j];
    results[batched[k]] = FinishDeletion(first_copies[k], *first[k], second[j]);
  }
  for (size_t i : alone) results[i] = DeleteBothCopies(originals[i]);
  return results;
}

Status ClusterClient::DeleteBothCopiesOfEach(const std::vector<Oid>& originals, size_t in_flight) {
  std::vector<Status> results(originals.size());
  std::atomic<size_t> next{0};
  auto delete_some = [&] {
    for (size_t i = next++; i < originals.size(); i = next++) {
      results[i] = DeleteBothCopies(originals[i]);
    }
  };
  {
    std::vector<std::jthread> helpers;  // joined when the block ends
    const size_t workers = std::min(in_flight, originals.size());
    for (size_t w = 1; w < workers; ++w) {
      try {
        helpers.emplace_back(delete_some);
      } catch (const std::system_error& e) {
        spdlog::debug("deleting with {} helper threads: {}", helpers.size(), e.what());
        break;  // the threads there are, this one included, delete everything
      }
    }
    delete_some();
  }
  for (const Status& st : results) ORTHOFS_RETURN_IF_ERROR(st);
  return Status::Ok();
}

}  // namespace orthofs
