// The OSD's prefetch engine (docs/DESIGN.md §8.3; [Sui 2010] §3.2-3.3), selected by
// the cluster map's prefetch mode:
//   none  nothing.
//   cor   original OSD: after serving a client's demand read, notify the file's replica OSD.
//         replica OSD: one MovingWindow per (client, file); a client read of a replica moves
//         the pivot, a notify doubles the window; the new objects are loaded with ONE range
//         scan of the store into the cache's prefetch chain; window changes are pushed to the
//         client's Subscribe stream.
//   spa   the OSD serving a demand read runs Linux-style read-ahead (SpaOnDemandRead) and asks
//         the OSDs owning the next originals to load them (one Prefetch request per owner).
// Prefetch work runs on its own executor, apart from the demand requests on the gRPC threads
// ("double-threaded", [Sui 2010] Fig. 8); serial mode does it inline on the request path.
// Thrashing control ([Wu 1993]) caps the objects one prefetch may load.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/object_cache.h"
#include "common/placement.h"
#include "common/prefetch_window.h"
#include "common/thrashing_control.h"
#include "common/window_table.h"
#include "orthofs.grpc.pb.h"
#include "osd/map_holder.h"
#include "osd/object_locks.h"
#include "osd/object_store.h"
#include "rpc/call_canceller.h"
#include "rpc/osd_client.h"
#include "rpc/pending_calls.h"

namespace orthofs {

struct PrefetchEngineOptions {
  uint32_t osd_id = 0;
  bool serial = false;  // prefetch work inline on the request path ([Sui 2010] Fig. 8)
  int threads = 2;      // the prefetch executor (orthofs-osd --prefetch-threads)
  size_t max_queued = 1024;
  std::chrono::milliseconds window_expiry{60000};
  std::shared_ptr<const TlsIdentity> tls;    // for the calls to other OSDs; null: plaintext
  std::shared_ptr<CallCanceller> canceller;  // cancels those calls at shutdown (may be null)
};

class PrefetchEngine {
 public:
  // Places by `maps`' current view at each use; `map` gives the prefetch configuration and
  // object size, which a map change keeps.
  PrefetchEngine(const ClusterMap& map, const MapHolder* maps, ObjectStore* store,
                 ObjectCache* cache, ObjectLocks* locks, const PrefetchEngineOptions& options);
  ~PrefetchEngine();

  PrefetchEngine(const PrefetchEngine&) = delete;
  PrefetchEngine& operator=(const PrefetchEngine&) = delete;

  PrefetchMode mode() const { return config_.mode; }

  // A client's demand read of a DATA object was served (from the cache if was_cached).
  void AfterDemandRead(const Oid& oid, const std::string& client_id, bool was_cached);
  // COR, at the replica OSD: an original OSD served `original` to the client.
  Status OnNotify(const std::string& client_id, const Oid& original);
  // SPA, at the owner: load these originals (the request was checked: this OSD holds them).
  void OnPrefetch(std::vector<Oid> originals, std::optional<ReadaheadMarker> marker);
  // COR: streams the client's window changes until it goes away or the OSD stops.
  void Subscribe(const std::string& client_id, grpc::ServerContext* context,
                 grpc::ServerWriter<wire::WindowUpdate>* writer);

  // Ends subscriptions and stops the executor (queued prefetches are dropped).
  void Shutdown();
  void AddCounters(std::map<std::string, uint64_t>* counters) const;

 private:
  struct Subscriber {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<wire::WindowUpdate> updates;
    bool closed = false;
  };

  // Runs prefetch work on the executor, or at once in serial mode. False if the queue is full.
  bool Submit(std::function<void()> work);
  void ExecutorThread();
  // COR: one range scan of the file's replicas into the prefetch chain.
  void LoadReplicaRanges(uint32_t fnso, uint64_t fno, const std::vector<IndexRange>& ranges);
  // SPA: point reads of originals into the prefetch chain; the marker object remembers it.
  void LoadOriginals(const std::vector<Oid>& originals,
                     const std::optional<ReadaheadMarker>& marker);
  void SendNotify(const Oid& original, const std::string& client_id);
  void StartReadahead(const Oid& oid, const Readahead& readahead);
  // Counts a window change, tells the client (push) and loads its objects.
  void ApplyWindowChange(const WindowKey& key, const WindowChange& change, bool push);
  void Push(const std::string& client_id, const WindowKey& key, const WindowChange& change);
  OsdClient* Peer(uint32_t osd_id);
  // Objects one prefetch may load now (thrashing control).
  uint64_t PrefetchQuantity();
  void ObservePressure();

  const PrefetchConfig config_;
  const MapHolder* const maps_;
  const uint64_t object_size_;
  ObjectStore* const store_;
  ObjectCache* const cache_;
  ObjectLocks* const locks_;
  const PrefetchEngineOptions options_;

  mutable std::mutex mu_;  // windows_, markers_, subscribers_, thrashing_
  WindowTable windows_;
  WindowClock::time_point last_expiry_;
  std::unordered_map<std::string, ReadaheadMarker> markers_;  // SPA, by store key
  std::map<std::string, std::shared_ptr<Subscriber>> subscribers_;
  ThrashingController thrashing_;

  std::mutex peers_mu_;
  std::map<uint32_t, std::unique_ptr<OsdClient>> peers_;
  PendingCalls peer_calls_;  // asynchronous calls to peers not yet finished

  mutable std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::deque<std::function<void()>> queue_;
  size_t running_ = 0;  // work taken from queue_ and not yet finished
  bool stopping_ = false;
  std::atomic<bool> shut_down_{false};
  std::vector<std::thread> threads_;

  struct Counters {
    std::atomic<uint64_t> notifies_sent{0};
    std::atomic<uint64_t> notifies_received{0};
    std::atomic<uint64_t> notifies_failed{0};  // sent, but the replica OSD did not answer
    std::atomic<uint64_t> prefetch_requests_sent{0};
    std::atomic<uint64_t> prefetch_requests_received{0};
    std::atomic<uint64_t> prefetch_objects_requested{0};
    std::atomic<uint64_t> objects_prefetched{0};
    std::atomic<uint64_t> prefetch_already_cached{0};
    std::atomic<uint64_t> prefetch_overtaken_by_write{0};
    std::atomic<uint64_t> prefetch_dropped{0};
    std::atomic<uint64_t> prefetch_capped{0};
    std::atomic<uint64_t> store_range_scans{0};
    std::atomic<uint64_t> store_point_reads{0};
    std::atomic<uint64_t> replica_reads{0};
    std::atomic<uint64_t> window_moves{0};
    std::atomic<uint64_t> window_doublings{0};
    std::atomic<uint64_t> window_max_reached{0};
    std::atomic<uint64_t> window_objects_throttled{0};
    std::atomic<uint64_t> windows_expired{0};
    std::atomic<uint64_t> window_updates_pushed{0};
    std::atomic<uint64_t> readahead_marker_hits{0};
    std::atomic<uint64_t> osd_messages_out{0};
    std::atomic<uint64_t> osd_bytes_out{0};
    std::atomic<uint64_t> in_flight_objects{0};
  };
  mutable Counters counters_;
};

}  // namespace orthofs
