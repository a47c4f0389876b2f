// Replays an OSD's repair records (proto WriteRequest.record_repair). A client that could
// reach only one copy of an object wrote that copy together with a record naming the other;
// once the other copy's OSD answers again, this worker makes that copy equal to ours (written
// whole with our version, or deleted as ours was) and removes the record, unless our copy
// changed meanwhile: then the record stays and the next pass sends the newer state.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "common/placement.h"
#include "orthofs.pb.h"
#include "osd/map_holder.h"
#include "osd/object_locks.h"
#include "osd/object_store.h"
#include "rpc/osd_client.h"

namespace orthofs {

struct RepairWorkerOptions {
  std::chrono::milliseconds interval{2000};  // between background passes while records exist
  // An OSD that just came back may still be in its channel's reconnect backoff: wait for it.
  RpcOptions rpc{std::chrono::milliseconds(5000), /*wait_for_ready=*/true};
  // A restarted OSD refuses reads at most this long while its peers replay what it missed.
  std::chrono::seconds recovery_limit{300};
};

class RepairWorker {
 public:
  // Places by `maps`' current view at each use (the map may change while it runs).
  RepairWorker(uint32_t osd_id, const MapHolder* maps, ObjectStore* store, ObjectLocks* locks,
               const RepairWorkerOptions& options = {});
  ~RepairWorker();  // Stop()
  // Ends the background passes (waits for one in progress). Idempotent.
  void Stop();
  RepairWorker(const RepairWorker&) = delete;
  RepairWorker& operator=(const RepairWorker&) = delete;

  // A record was written: pass now (within kMinPassGap of the last). Its other copy's OSD
  // may be up already (a restart the writing client has not noticed yet, or one still
  // recovering, which takes copy updates): every moment it is not pushed, that copy is stale.
  void RecordsAdded() {
    {
      std::lock_guard lock(stop_mu_);  // not between the loop's check and its wait
      pending_.store(true);
    }
    stop_cv_.notify_all();
  }
  // One pass over every record now, or only those whose other copy is on `only_osd`
  // (serialized with the background passes).
  wire::RepairResponse RunPass(std::optional<uint32_t> only_osd = std::nullopt);
  // Asks every other OSD to replay the records naming this OSD's copies (their Repair RPC), in
  // parallel; returns when each has answered, failed or hung (a peer still replaying is asked
  // again, and with `until_none_left` so is one that holds records for us made during its
  // replay). With `fence`, the peers first stop taking clients' changes that would leave records
  // for us (RepairRequest.fence). Run after this OSD listens.
  void AskPeersToReplay(bool until_none_left, bool fence);
  // A restarted OSD asks for its records: pushes to it reconnect at once.
  void PeerRestarted(uint32_t osd_id);
  uint64_t repaired_total() const { return repaired_total_.load(); }
  uint64_t records_left() const { return records_left_.load(); }
  // Asks of AskPeersToReplay sent again because a peer was still replaying.
  uint64_t recovery_asks_repeated() const { return recovery_asks_repeated_.load(); }
  // Peers whose replay to this OSD was still unfinished at its recovery limit: reads were
  // served from then on, and the copies they still held records for were stale until replayed.
  uint64_t recovery_limits_reached() const { return recovery_limits_reached_.load(); }

 private:
  // What our copy is: absent, a tombstone or an object, with its version.
  struct CopyState {
    bool exists = false;
    bool tombstone = false;
    uint64_t version = 0;
    std::string data;
    bool SameAs(const CopyState& o) const {
      return exists == o.exists && tombstone == o.tombstone && version == o.version;
    }
  };
  // Without `with_data`, from the record's summary alone: enough to tell whether it changed.
  Result<CopyState> ReadOurCopy(const std::string& key, bool with_data = true);
  // Makes the other copy equal to `ours` on its OSD; a deletion only where the other copy is
  // older than it (`recorded_version`: the record's, for a copy absent with no tombstone).
  // Not durable there until a SyncPeer of that OSD succeeds.
  Status Push(const Oid& other, const CopyState& ours, uint64_t recorded_version);
  // Makes every change pushed to the OSD so far durable there.
  Status SyncPeer(uint32_t osd_id);
  // A pushed copy whose record goes once its OSD has synced.
  struct Pushed {
    std::string other_key;
    std::string our_key;
    uint32_t other_osd = 0;
    CopyState ours;  // without its data
  };
  // Syncs the OSDs of `pushed`, then removes the records of the copies now durable there whose
  // copy here has not changed since; an OSD whose sync failed joins `unreachable`.
  void SettlePushed(std::vector<Pushed>* pushed, std::set<uint32_t>* unreachable,
                    wire::RepairResponse* result);
  OsdClient* Peer(uint32_t osd_id);
  void Loop();

  const uint32_t osd_id_;
  const MapHolder* const maps_;
  ObjectStore* const store_;
  ObjectLocks* const locks_;
  const RepairWorkerOptions options_;
  std::mutex peers_mu_;
  std::map<uint32_t, std::unique_ptr<OsdClient>> peers_;  // made on first use, by OSD id
  std::mutex pass_mu_;
  // OSDs refusing pushes as full (NO_SPACE) since their last accepted push: logged once per
  // episode, not once per record and pass. Guarded by pass_mu_.
  std::set<uint32_t> refusing_full_;
  std::atomic<bool> pending_{true};  // records may exist from before a restart
  std::atomic<uint64_t> repaired_total_{0};
  std::atomic<uint64_t> recovery_asks_repeated_{0};
  std::atomic<uint64_t> recovery_limits_reached_{0};
  std::atomic<uint64_t> records_left_{0};
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace orthofs
