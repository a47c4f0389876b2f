// ClusterClient: whole-object operations routed by placement to the OSD holding each copy,
// stamped with the map's epoch and following map changes; and the two-copy protocol (which copy
// serves a read, how both are written, how a metadata change commits) in one place.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "client/delayed_calls.h"
#include "common/cluster_map.h"
#include "common/osd_health.h"
#include "common/placement.h"
#include "common/status.h"
#include "rpc/osd_client.h"
#include "rpc/pending_calls.h"
#include "rpc/write_many_encoding.h"

namespace orthofs {

// Writes of single copies collected to go out together: ClusterClient::SendWrites sends one
// WriteMany call per OSD (a client's write-back of many objects), so the per-call cost is paid
// once per OSD instead of once per copy.
class CopyWriteBatch {
 public:
  // The write's bytes go out as they are (no copy), held by their owner until sent.
  void Add(const Oid& oid, SharedWrite write,
           std::function<void(Result<wire::WriteResponse>)> done) {
    items_.push_back(Item{oid, std::move(write), std::move(done)});
  }
  bool empty() const { return items_.empty(); }

 private:
  friend class ClusterClient;
  struct Item {
    Oid oid;
    SharedWrite write;
    std::function<void(Result<wire::WriteResponse>)> done;
  };
  std::vector<Item> items_;
};

struct ObjectWrite {
  uint64_t offset = 0;  // within the object
  bool replace = false;
  std::optional<uint64_t> expected_version;
  bool sync = false;
  bool record_repair = false;     // the other copy's OSD is down (proto WriteRequest)
  bool other_recovering = false;  // ... it refused this change as recovering (proto)
};

// The map can change while a client runs (orthofs rebalance): an OSD that runs a later epoch
// refuses a request with STALE_EPOCH, and the client fetches that map from it, switches to it
// and sends the request again to the OSD the new map names, so callers see no failure.
class ClusterClient {
 public:
  explicit ClusterClient(const ClusterMap& map, const RpcOptions& options = {});
  // Waits for resends after a map change that are still under way (they use this client).
  ~ClusterClient();

  // The current map. References stay valid for the client's life (every map it ran is kept;
  // a client sees a handful), but a later call may return a newer one.
  const ClusterMap& map() const { return state()->placement.map(); }
  const Placement& placement() const { return state()->placement; }
  // Stamped into every read: the OSDs keep prefetch windows per reader (COR).
  void set_client_id(std::string id) { client_id_ = std::move(id); }
  const std::string& client_id() const { return client_id_; }
  // nullptr when the current map has no OSD with this id.
  OsdClient* Osd(uint32_t osd_id) { return state()->Osd(osd_id); }
  // The OSD holding this copy is inside its backoff after a transport failure.
  bool CopyIsDown(const Oid& oid) {
    const MapState* s = state();
    return s->Osd(s->placement.OsdFor(oid))->down();
  }
  // After `from` refused a request placed with `seen_epoch` as stale: switch to its map if it
  // is later, or wait a moment for it to catch up if it is behind. Safe to call concurrently.
  void FollowMapChange(OsdClient* from, uint64_t seen_epoch);
  // How often a request refused as stale is sent again (FollowMapChange in between): 10 s for
  // an OSD to catch up.
  static constexpr int kMaxMapRetries = 200;
  // Faults between the calls of one operation, for tests: each hook, when set, runs on the
  // calling thread at its point. Set before the client is used.
  struct TestHooks {
    // MatchDataTombstones is about to give the copy `behind` the other copy's tombstone.
    std::function<void(const Oid& behind)> before_matching_tombstone;
    // WriteBothCopiesAsync is about to send a write of `original`'s copies.
    std::function<void(const Oid& original)> before_writing_both_copies;
    // WriteOriginalThenReplica is about to write `original` (a metadata change's commit).
    std::function<void(const Oid& original)> before_writing_original_then_replica;
    // WriteOriginalThenReplica is about to answer `answer` for `original`; the hook may replace
    // it (the answer of a commit that landed, lost on its way back).
    std::function<void(const Oid& original, Status* answer)> before_answering_original_then_replica;
    // Read, ReadAsync or ReadManyAsync has `copy`'s answer and is about to hand it over.
    std::function<void(const Oid& copy)> after_reading;
    // DeleteBothCopies is about to delete `original`'s copies.
    std::function<void(const Oid& original)> before_deleting_both_copies;
    // A metadata change's commit (WriteOriginalThenReplica, DeleteBothCopies) of `original` is
    // about to be sent: an error answers it unsent, as a client that died there leaves it.
    std::function<Status(const Oid& original)> instead_of_committing;
  };
  void SetTestHooks(TestHooks hooks) { test_hooks_ = std::move(hooks); }
  // Switches to the latest map the OSDs run, when it is later than ours: for tools that call
  // every OSD with their map's epoch, started from a map file written before a change. Returns
  // the answer naming that map (Unavailable when no OSD answers).
  Result<wire::MapResponse> CatchUpWithCluster();
  const RpcOptions& rpc_options() const { return options_; }
  // Called (holding the client's map lock: it must not call back into map changes) after
  // every switch to a new map; nullptr clears it.
  void set_map_change_callback(std::function<void()> callback) {
    std::lock_guard lock(map_mu_);
    on_map_change_ = std::move(callback);
  }
  // Maps switched to since start.
  uint64_t map_changes() const { return map_changes_.load(); }
  // A transport failure (unreachable, deadline, shutting down) rather than a refusal.
  static bool IsOsdFailure(const Status& status) {
    return status.Is(StatusCode::kUnavailable) || status.Is(StatusCode::kDeadlineExceeded);
  }
  // A replica's delete, after its original's, that a repair record on the original must bring
  // along: its OSD failed, or its store refuses writes for now (a disk full to the last byte
  // stops an OSD's store until it restarts, osd/store_write_stop.h). Deleting frees space, so
  // the deletion stands rather than fail with the replica left behind alone.
  static bool ReplicaDeleteFollowsByRecord(const Status& status) {
    return IsOsdFailure(status) || status.Is(StatusCode::kNoSpace);
  }
  // A read of one copy that the other copy should answer instead: its OSD failed, its bytes
  // are corrupt, or it is missing (a copy not yet repaired after a degraded write).
  static bool NeedsOtherCopy(const Status& status) {
    return IsOsdFailure(status) || status.Is(StatusCode::kCorruption) ||
           status.Is(StatusCode::kNotFound);
  }
  // Whether a read whose first copy answered `first` asks the `other` copy: it NeedsOtherCopy,
  // unless the first found the object absent and the other's OSD is believed down. Then absent
  // is the answer: a live copy misses no write of a copy alone, since an OSD that comes back
  // serves nothing before the records of what it missed are replayed (a hung OSD would
  // otherwise cost every negative lookup and every hole until it is found silent).
  bool AskOtherCopy(const Status& first, const Oid& other) {
    return NeedsOtherCopy(first) && !(first.Is(StatusCode::kNotFound) && CopyIsDown(other));
  }
  // A copy's OSD restarted and waits for the others to replay its repair records (brief): the
  // answering OSD itself, or the other copy's, for whose return the answering one holds off.
  static bool IsRecovering(const Status& status) {
    return status.Is(StatusReason::kRecovering) || status.Is(StatusReason::kPeerRecovering);
  }
  // A replica's refusal (BUSY) of a namespace change the client would commit on it alone while
  // the original's OSD answers the replica's OSD: only the client's connection failed (still
  // reconnecting after an outage, say), and committing on the replica would fork the object.
  static bool OriginalAnswers(const Status& status) {
    return status.Is(StatusReason::kOriginalAnswers);
  }
  // A metadata change both copies refused as recovering is sent again, this often (5 s).
  static constexpr int kRecoveringRetries = 100;
  static constexpr std::chrono::milliseconds kRecoveringRetryDelay{50};
  std::vector<uint32_t> DownOsds() const { return health_.DownOsds(); }
  // Writes that reached one copy only and left a repair record for the other.
  uint64_t degraded_writes() const { return degraded_writes_.load(); }
  // The current map's OSDs, in map order.
  const std::vector<OsdClient*>& osds() const { return state()->osds; }

  // Each operates on the copy oid.flag names, at the OSD placement says holds it.
  Result<wire::ReadResponse> Read(const Oid& oid, uint64_t offset = 0, uint64_t length = 0);
  // Reads whichever copy of `original` answers: the original, unless its OSD is down, then
  // the other copy when the first fails at the transport, its bytes fail their checksum, or
  // it is missing (NotFound only when both are, or when a metadata object's original holds a
  // deletion newer than its replica: see FinishDeletionCutShort).
  Result<wire::ReadResponse> ReadEitherCopy(const Oid& original, uint64_t offset = 0,
                                            uint64_t length = 0);
  // A metadata deletion commits on the original, then the replica follows; a client that dies
  // in between leaves the replica behind. A read of such an object would answer from the
  // replica (a deleted name found again) and every change of it would fail (its conditional
  // write meets the original's newer tombstone). When the original of metadata object
  // `original` is absent with a tombstone newer than `replica_version`, answers true (the
  // object is deleted) and deletes the replica at the tombstone's version; false when the
  // original holds no such deletion (the replica is a copy the original lacks: not repaired
  // yet). With !finish, only answers.
  Result<bool> FinishDeletionCutShort(const Oid& original, uint64_t replica_version,
                                      bool finish = true);
  // Whether reads finish the deletions cut short they meet (default); off, they only answer
  // NotFound for them, so that a dry run (fsck --dry-run) changes nothing.
  void set_finish_deletions_on_read(bool on) { finish_deletions_on_read_.store(on); }
  // ReadEitherCopy of each of `originals`, whole objects: their first copies all at once
  // (ReadManyAsync: a call per OSD, not a round trip per object), then the other copies of
  // those that need it, together too. Results in the order of `originals`.
  std::vector<Result<wire::ReadResponse>> ReadEitherCopyMany(const std::vector<Oid>& originals);
  Result<wire::ObjectMeta> Write(const Oid& oid, std::string_view data,
                                 const ObjectWrite& how = {});
  Result<bool> Delete(const Oid& oid, std::optional<uint64_t> expected_version = std::nullopt);
  // `version_floor`: the change's floor where it needs one (common/object_version.h); one
  // deletion of both copies passes one. Default: this client's clock now.
  wire::DeleteRequest DeleteRequestFor(const Oid& oid, std::optional<uint64_t> expected_version,
                                       std::optional<uint64_t> set_version, bool record_repair,
                                       std::optional<uint64_t> version_floor,
                                       bool other_recovering) const;
  Result<wire::DeleteResponse> DeleteCopy(const Oid& oid, std::optional<uint64_t> expected_version,
                                          std::optional<uint64_t> set_version,
                                          bool record_repair = false,
                                          std::optional<uint64_t> version_floor = std::nullopt,
                                          bool other_recovering = false);
  Result<wire::ObjectMeta> Stat(const Oid& oid);

  // Writes the original and the replica of `original` in parallel (the data path). When one
  // copy's OSD is down (known, or failing now) the other is written with a repair record
  // (proto WriteRequest.record_repair); fails only when neither copy could be written.
  Status WriteBothCopies(const Oid& original, std::string_view data, const ObjectWrite& how = {});
  // The same without waiting: `pending` counts both writes and collects the first failure.
  void WriteBothCopiesAsync(const Oid& original, std::string_view data, const ObjectWrite& how,
                            PendingCalls* pending);
  // The same reporting to `done` (on a gRPC thread). With a `batch`, the two copy writes wait
  // there for SendWrites (follow-ups such as repair records go out at once); with a
  // `data_owner` too, they refer to `data` instead of copying it, and keep the owner until
  // sent.
  void WriteBothCopiesAsync(const Oid& original, std::string_view data, const ObjectWrite& how,
                            std::function<void(Status)> done, CopyWriteBatch* batch = nullptr,
                            std::shared_ptr<const void> data_owner = nullptr);
  // Sends the batch's writes: one WriteMany call per OSD of the current map (at most
  // kMaxWriteManyBytes of data and kMaxWriteManyWrites writes each, well inside an OSD's
  // message limit of twice the object size plus 1 MiB), a lone write as a plain Write. A write
  // refused for a stale epoch goes again alone and follows the map change.
  void SendWrites(CopyWriteBatch batch);
  static constexpr uint64_t kMaxWriteManyBytes = 1 << 20;
  static constexpr size_t kMaxWriteManyWrites = 64;
  // `windowed`: the read names this client (its prefetch window for the file moves or widens,
  // proto ReadRequest.client_id); a read of a file of one object has no neighbour to prefetch
  // and goes without, so its OSD tells no replica OSD about it.
  void ReadAsync(const Oid& oid, uint64_t offset, uint64_t length,
                 std::function<void(Result<wire::ReadResponse>)> done, bool windowed = true);
  // Whole-object reads of many copies: one ReadMany call per OSD of the current map for up to
  // kReadManyBytes of data objects (a file's read-ahead: its replica OSD holds all of them) or
  // as many metadata objects as an OSD takes in one call (kMaxReadManyBytes), a lone
  // read as a plain Read. `done(i, result)` reports oids[i] as ReadAsync would, on a gRPC
  // thread, once per oid; a read refused for a stale epoch goes again alone and follows the
  // map change, and an OSD from before ReadMany gets plain Reads.
  void ReadManyAsync(const std::vector<Oid>& oids,
                     std::function<void(size_t, Result<wire::ReadResponse>)> done,
                     bool windowed = true);
  static constexpr uint64_t kReadManyBytes = 1 << 20;
  // ReadManyAsync of `copies`, hedged: a read its OSD has not answered within that OSD's hedge
  // delay (OsdClient::HedgeDelay: 3 x its p95 latency, 20-400 ms) is sent to `others[i]` as
  // well, unless that copy's OSD is believed down, and the first successful answer of the two
  // is handed over, once (`from_other`: the other copy's). A failure waits for the other read
  // when one is in flight; both failing hand over the first copy's failure. So a hung or slow
  // OSD costs a read its hedge delay, not its silence (OsdClient::WatchSilence).
  using HedgedDone = std::function<void(size_t, Result<wire::ReadResponse>, bool from_other)>;
  void ReadManyHedgedAsync(const std::vector<Oid>& copies, const std::vector<Oid>& others,
                           HedgedDone done, bool windowed = true);
  // Reads sent to the other copy because the first was slow to answer.
  uint64_t hedged_reads() const { return hedged_reads_.load(); }
  void WriteAsync(const Oid& oid, std::string_view data, const ObjectWrite& how,
                  std::function<void(Status)> done);
  // Metadata objects: a conditional write of the original (the commit point), then the
  // replica made equal to it, version included. With the original's OSD down the replica
  // (same version) is the commit point, with a repair record; when the replica cannot follow
  // (its OSD down or full, its record damaged) the original keeps a repair record. With
  // `replica_pending`, the replica's write (and a repair record it may need) goes on after this
  // returns and reports there (Add/Done): the caller overlaps it with its next step and waits
  // before it answers.
  Result<wire::ObjectMeta> WriteOriginalThenReplica(const Oid& original, std::string_view data,
                                                    std::optional<uint64_t> expected_version,
                                                    PendingCalls* replica_pending = nullptr);
  // WriteOriginalThenReplica for a change no two clients may both take from one state, even
  // across a double outage (the SUPER object's increments, common/fno_batch.h): durable on
  // each copy's disk before it returns (sync), and `on_both_copies` says whether it committed
  // on the original and the replica followed (false: it committed on the replica alone, or
  // the replica could not follow and a repair record stands in).
  Result<wire::ObjectMeta> WriteOriginalThenReplicaDurably(const Oid& original,
                                                           std::string_view data,
                                                           uint64_t expected_version,
                                                           bool* on_both_copies);
  // A metadata object that cannot exist yet (a newly reserved file number's INODE or SYMLINK:
  // no other client can race its creation): both copies are written at once, each only if
  // absent, in one round trip. Whenever that does not end in two equal copies (an OSD failing
  // now, one known down, a copy already there), it ends as WriteOriginalThenReplica would: the
  // original's write is the commit point and the replica follows it, or a repair record stands
  // in for a copy that could not be written.
  Result<wire::ObjectMeta> CreateBothCopies(const Oid& original, std::string_view data);
  // Makes every acknowledged write durable on every OSD (WAL fsync), all OSDs at once.
  // OSDs known down are skipped: their copies' other halves carry repair records.
  Status SyncAll();
  // Deletes both copies (missing copies are fine): the original, conditionally if asked (the
  // commit point), then the replica, which keeps the original's tombstone version (metadata;
  // data copies keep tombstones only as MatchDataTombstones says).
  // `replica_pending` (metadata only): the replica's deletion is added there instead of waited
  // for, as for WriteOriginalThenReplica, so it overlaps the change's next step.
  Status DeleteBothCopies(const Oid& original,
                          std::optional<uint64_t> expected_version = std::nullopt,
                          PendingCalls* replica_pending = nullptr);
  // DeleteBothCopies for each object, unconditionally, `in_flight` objects at a time (a file's
  // data objects: each delete is two round trips, and one after the other they left the
  // machine idle). Every object is tried; the first failure in `originals` order is returned.
  Status DeleteBothCopiesOfEach(const std::vector<Oid>& originals, size_t in_flight = 8);
  // DeleteBothCopies of many data objects, unconditionally and batched (the files `rm -rf`
  // freed): their originals first, a DeleteMany call per OSD, then the replicas of those
  // deleted, the same way. An object with a copy's OSD believed down, or whose batched delete
  // failed, is deleted alone by DeleteBothCopies (repair records, retries). One status per
  // object, in the order of `originals`.
  std::vector<Status> DeleteDataObjects(const std::vector<Oid>& originals);
  // Deletes of the copies `copies` (no expected version, `version_floor`): a DeleteMany call
  // per OSD of the current map (kMaxDeleteManyDeletes each), a lone delete as a plain Delete; a
  // delete refused for a stale epoch, or by an OSD from before DeleteMany, goes again alone.
  // Waits; the answers in the order of `copies`.
  std::vector<Result<wire::DeleteResponse>> DeleteManyAndWait(const std::vector<Oid>& copies,
                                                              uint64_t version_floor);
  // Every object of one file with one copy flag and type, in offset order, with its data
  // unless with_data is false (then from the records' summaries: no object bytes are read,
  // and a damaged copy is listed like an intact one). limit > 0 stops after that many.
  Result<std::vector<std::pair<wire::ObjectMeta, std::string>>> ListFileObjects(
      CopyFlag flag, uint32_t fnso, uint64_t fno, ObjectType type, uint32_t limit = 0,
      bool with_data = true);
  // The offsets of one file's stored objects of `type` at `from` or after, from the listings
  // of `flags` merged in ascending order (an object both copies hold comes twice), until
  // `visit` returns false. Each OSD's first page holds `first_page` objects and later ones
  // 8 times more: small when the visit may stop at the first objects. After a map change the
  // listing goes on from the last offset visited, which may come again.
  Status VisitStoredObjects(std::span<const CopyFlag> flags, uint32_t fnso, uint64_t fno,
                            ObjectType type, uint64_t from, uint32_t first_page,
                            const std::function<bool(uint64_t offset)>& visit);
  // True when ListFileObjects(flag, ...) would ask an OSD this client believes down.
  bool ListingReachesDownOsd(CopyFlag flag, uint32_t fnso, uint64_t fno);
  // The same for the originals, or for the replicas when an OSD holding originals is down
  // (they are all on the replica OSD, which the orthogonal layout keeps apart).
  Result<std::vector<std::pair<wire::ObjectMeta, std::string>>> ListFileObjectsEitherCopy(
      uint32_t fnso, uint64_t fno, ObjectType type, uint32_t limit = 0, bool with_data = true);

 private:
  // How WriteOriginalThenReplica(Durably) commits.
  struct CommitHow {
    std::optional<uint64_t> expected_version;
    PendingCalls* replica_pending = nullptr;
    bool sync = false;
    bool* on_both_copies = nullptr;  // set only when replica_pending == nullptr
  };
  // WriteOriginalThenReplica(Durably) with its test hooks, and without.
  Result<wire::ObjectMeta> HookedCommit(const Oid& original, std::string_view data,
                                        const CommitHow& how);
  // A metadata change goes to its original first, the commit point, unless the original's OSD
  // is believed down: then straight to the replica, alone (with a repair record). A belief can
  // outlive the outage, but the replica's OSD refuses a change alone while it reaches the
  // original (OriginalAnswers: the next attempt asks the original), so a stale belief cannot
  // fork the object.
  bool OriginalBelievedDown(const Oid& original_copy);
  static Status BelievedDown(const Oid& copy);
  // After a commit's original failed: true (having waited) when this client never sent it
  // (queued while the OSD was believed down), and the commit should go again.
  static bool WaitedForUnsentCall(const Status& original, int attempt);
  // After a commit's refusals by both copies: true (having waited) when both refused as
  // recovering and the commit should go again.
  static bool BothRefusedAsRecovering(const Status& original, const Status& replica, int attempt);
  // After a commit's replica refused to take it alone because the original's OSD answers
  // (OriginalAnswers): true (having reconnected to it and waited) when the commit should go
  // again.
  bool WaitedForOriginalToAnswer(const Oid& original_copy, const Status& replica, int attempt);
  // Waits kRecoveringRetryDelay and says true when worth_retrying and attempts remain.
  static bool WaitedToRetry(bool worth_retrying, int attempt);
  Result<wire::ObjectMeta> CommitOriginalThenReplica(const Oid& original, std::string_view data,
                                                     const CommitHow& how);
  // Data copies count their versions apart, and a replay or scrub compares them: where the
  // delete of one copy kept a tombstone (DeleteResponse.tombstone: a rebalance moves it, say)
  // and the other's did not, or a lower one, the other gets the same, so that the next write
  // gives both one version. The copy behind being down, the one ahead records a repair for it.
  Status MatchDataTombstones(const Oid& one, const wire::DeleteResponse& one_deleted,
                             const Oid& other, const wire::DeleteResponse& other_deleted);
  // The version a deletion answered, to carry to the other copy (none when it was 0).
  static std::optional<uint64_t> DeletedAt(const wire::DeleteResponse& gone);
  // After the original was deleted (`gone`, its answer) and the replica's delete answered
  // `replica`: data tombstones matched, or a repair record on the original at the deletion's
  // version when the replica's OSD failed (DeleteBothCopies, DeleteDataObjects).
  Status FinishDeletion(const Oid& original_copy, const wire::DeleteResponse& gone,
                        const Result<wire::DeleteResponse>& replica);
  // A write of `data` (also its checksum, when it replaces the object); without the bytes
  // themselves when !with_data (they travel apart, SharedWrite).
  wire::WriteRequest MakeWrite(const Oid& oid, std::string_view data, const ObjectWrite& how,
                               bool with_data = true) const;

  // ReadManyAsync, waited for: the answers in the order of `oids`.
  std::vector<Result<wire::ReadResponse>> ReadManyAndWait(const std::vector<Oid>& oids);
  // A read of either copy, from the answer of `first_copy` and the other copy's (asked because
  // the first NeedsOtherCopy).
  Result<wire::ReadResponse> EitherCopysAnswer(const Oid& first_copy,
                                               Result<wire::ReadResponse> first,
                                               Result<wire::ReadResponse> other);
  Result<wire::ReadResponse> ReadEitherCopyOnce(const Oid& original, uint64_t offset,
                                                uint64_t length);
  // After the original's write committed at `version`: the replica made equal to it, or a
  // repair record on the original when it cannot follow (WriteOriginalThenReplica). Reports to
  // `pending` (Add/Done).
  // With `sync`, durably; `followed` (if given) is set when the replica answered the write
  // (stored, or kept a version it already held), before `pending` hears of it.
  void MakeReplicaFollow(const Oid& original_copy, std::string_view data, uint64_t version,
                         PendingCalls* pending, bool sync = false, bool* followed = nullptr);
  // After the original of a metadata object was deleted (tombstone at `deleted_at`, if any):
  // the replica deleted too, keeping that tombstone, or a repair record on the original when
  // it cannot follow (DeleteBothCopies). Reports to `pending` (Add/Done).
  void MakeReplicaDeleteFollow(const Oid& original_copy, std::optional<uint64_t> deleted_at,
                               uint64_t version_floor, PendingCalls* pending);
  // A write that changes nothing on `oid` (set_version = its version) but leaves a repair
  // record there for the other copy.
  wire::WriteRequest RecordRepairRequest(const Oid& oid, uint64_t version, bool sync) const;

  // One map and its OSDs' connections. Immutable once installed.
  struct MapState {
    explicit MapState(const ClusterMap& map) : placement(map) {}
    Placement placement;
    std::vector<OsdClient*> osds;
    OsdClient* Osd(uint32_t osd_id) const;
    // The OSDs a listing of one file's copies with `flag` asks.
    std::vector<OsdClient*> ListingTargets(CopyFlag flag, uint32_t fnso, uint64_t fno) const;
  };
  const MapState* state() const { return state_.load(std::memory_order_acquire); }
  // Caller holds map_mu_ (or is the constructor).
  void InstallMap(const ClusterMap& map);

  // Sends a request about one copy to the OSD the current map names, stamped with its epoch;
  // a stale epoch switches maps and sends it again (FollowMapChange).
  template <typename Request, typename Response>
  Result<Response> SendForCopy(const Oid& oid, Request request,
                               Result<Response> (OsdClient::*call)(const Request&));
  // The request is stamped here, then shared with the call (never copied: no call of it is in
  // flight when it is stamped again for a resend).
  template <typename Request, typename Response>
  void SendForCopyAsync(const Oid& oid, std::shared_ptr<Request> request,
                        void (OsdClient::*call)(std::shared_ptr<const Request>,
                                                std::function<void(Result<Response>)>),
                        std::function<void(Result<Response>)> done, int attempt = 0);

  const RpcOptions options_;
  OsdHealth health_;
  mutable std::atomic<uint64_t> degraded_writes_{0};
  std::atomic<bool> finish_deletions_on_read_{true};
  std::atomic<uint64_t> map_changes_{0};
  std::string client_id_;
  std::mutex map_mu_;
  // Every map this client ran and every connection it made, kept for its life so that the
  // references and pointers handed out stay valid.
  std::vector<std::unique_ptr<MapState>> states_;        // guarded by map_mu_
  std::vector<std::unique_ptr<OsdClient>> connections_;  // guarded by map_mu_
  std::atomic<const MapState*> state_{nullptr};
  std::function<void()> on_map_change_;    // guarded by map_mu_
  std::atomic<int> resends_in_flight_{0};  // SendForCopyAsync threads
  TestHooks test_hooks_;
  // Every OsdClient::kSilenceTick, each OSD's WatchSilence: a hung OSD is found, and the calls
  // waiting on it failed over, in well under a second instead of at their deadlines.
  void WatchForSilence();
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;  // guarded by stop_mu_
  std::thread silence_watch_;
  std::atomic<uint64_t> hedged_reads_{0};
  // Last: its thread sends hedged reads through this client until it is destroyed, first.
  DelayedCalls hedges_;
};

}  // namespace orthofs
