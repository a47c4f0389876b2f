#include "osd/prefetch_engine.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "rpc/wire.h"

namespace orthofs {

namespace {

constexpr std::chrono::seconds kExpiryInterval{5};  // how often idle windows are looked for
constexpr size_t kMaxQueuedUpdates = 1024;          // per subscriber; older ones are dropped
constexpr size_t kMaxMarkers = 1 << 16;             // SPA markers remembered

ThrashingConfig ThrashingFor(const PrefetchConfig& config) {
  ThrashingConfig t;
  t.p_max = config.max_window;
  t.p_min = std::min<uint32_t>(4, config.max_window);
  return t;
}

Oid DataOid(uint32_t fnso, uint64_t fno, uint64_t index, CopyFlag flag) {
  return Oid{fnso, fno, index, ObjectType::kData, flag};
}

}  // namespace

PrefetchEngine::PrefetchEngine(const ClusterMap& map, const MapHolder* maps, ObjectStore* store,
                               ObjectCache* cache, ObjectLocks* locks,
                               const PrefetchEngineOptions& options)
    : config_(map.prefetch),
      maps_(maps),
      object_size_(map.object_size),
      store_(store),
      cache_(cache),
      locks_(locks),
      options_(options),
      windows_(map.prefetch, options.window_expiry,
               WindowTableOptions{.batch_prefetches = true, .throttle_unused_windows = true}),
      last_expiry_(WindowClock::now()),
      thrashing_(ThrashingFor(map.prefetch)) {
  if (config_.mode == PrefetchMode::kNone || options_.serial) return;
  for (int i = 0; i < std::max(1, options_.threads); ++i) {
    threads_.emplace_back([this] { ExecutorThread(); });
  }
}

PrefetchEngine::~PrefetchEngine() {
  Shutdown();
  // The peer clients go with this object: their calls must have finished (at most their
  // deadline; at once when the OSD cancelled its peer calls).
  (void)peer_calls_.Wait();
}

void PrefetchEngine::Shutdown() {
  if (shut_down_.exchange(true)) return;
  {
    std::lock_guard lock(mu_);
    for (auto& [client, sub] : subscribers_) {
      std::lock_guard sub_lock(sub->mu);
      sub->closed = true;
      sub->cv.notify_all();
    }
  }
  {
    std::lock_guard lock(queue_mu_);
    stopping_ = true;
    queue_.clear();
  }
  queue_cv_.notify_all();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

bool PrefetchEngine::Submit(std::function<void()> work) {
  if (options_.serial) {
    work();
    return true;
  }
  {
    std::lock_guard lock(queue_mu_);
    if (stopping_) return false;
    if (queue_.size() >= options_.max_queued) {
      ++counters_.prefetch_dropped;  // prefetching is a hint: never block demand work on it
      return false;
    }
    queue_.push_back(std::move(work));
  }
  queue_cv_.notify_one();
  return true;
}

void PrefetchEngine::ExecutorThread() {
  std::unique_lock lock(queue_mu_);
  while (true) {
    queue_cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    std::function<void()> work = std::move(queue_.front());
    queue_.pop_front();
    ++running_;
    lock.unlock();
    work();
    lock.lock();
    --running_;
  }
}

OsdClient* PrefetchEngine::Peer(uint32_t osd_id) {
  std::lock_guard lock(peers_mu_);
  auto it = peers_.find(osd_id);
  if (it != peers_.end()) return it->second.get();
  const OsdInfo* info = maps_->Current()->FindOsd(osd_id);
  if (info == nullptr) return nullptr;
  RpcOptions rpc;
  rpc.deadline = std::chrono::milliseconds(5000);
  rpc.tls = options_.tls;
  rpc.canceller = options_.canceller;
  return peers_.emplace(osd_id, std::make_unique<OsdClient>(*info, rpc)).first->second.get();
}

uint64_t PrefetchEngine::PrefetchQuantity() {
  std::lock_guard lock(mu_);
  return thrashing_.prefetch_quantity();
}

void PrefetchEngine::ObservePressure() {
  const uint64_t loading = counters_.in_flight_objects.load() * object_size_;
  std::lock_guard lock(mu_);
  thrashing_.Observe(loading, cache_->capacity_bytes());
}

void PrefetchEngine::AfterDemandRead(const Oid& oid, const std::string& client_id,
                                     bool was_cached) {
  if (oid.type != ObjectType::kData || shut_down_) return;
  const auto now = WindowClock::now();
  if (config_.mode == PrefetchMode::kCor) {
    if (client_id.empty()) return;  // no window without a reader to keep it for
    if (oid.flag == CopyFlag::kOriginal) {
      // The read missed the reader's window: the replica OSD widens it. Off the reply path.
      Submit([this, oid, client_id] { SendNotify(oid, client_id); });
      return;
    }
    ++counters_.replica_reads;
    const WindowKey key{client_id, oid.fnso, oid.fno};
    WindowChange change;
    {
      std::lock_guard lock(mu_);
      // A read inside the window that found nothing loaded: the window is too narrow to stay
      // ahead of this reader; it widens as after a notify.
      change = was_cached ? windows_.OnClientRead(key, oid.offset, now)
                          : windows_.OnClientReadMiss(key, oid.offset, now);
      if (now - last_expiry_ > kExpiryInterval) {
        counters_.windows_expired += windows_.Expire(now);
        last_expiry_ = now;
      }
    }
    ++counters_.window_moves;
    // A move is the client's own doing (it moves its copy too); growth it learns by a push.
    ApplyWindowChange(key, change, /*push=*/change.doubled);
  } else if (config_.mode == PrefetchMode::kSpa) {
    if (oid.flag != CopyFlag::kOriginal) return;
    std::optional<ReadaheadMarker> marker;
    {
      std::lock_guard lock(mu_);
      auto it = markers_.find(EncodeStoreKey(oid));
      if (it != markers_.end()) {
        marker = it->second;
        markers_.erase(it);
      }
    }
    if (marker) ++counters_.readahead_marker_hits;
    if (std::optional<Readahead> ra = SpaOnDemandRead(config_, oid.offset, was_cached, marker)) {
      StartReadahead(oid, *ra);
    }
  }
}

void PrefetchEngine::SendNotify(const Oid& original, const std::string& client_id) {
  const std::shared_ptr<const MapView> view = maps_->Current();
  const uint32_t replica_osd = view->current().ReplicaOsdFor(original.fnso, original.fno);
  OsdClient* peer = Peer(replica_osd);
  if (peer == nullptr) return;
  wire::PrefetchNotifyRequest request;
  request.set_epoch(view->epoch());
  request.set_client_id(client_id);
  *request.mutable_oid() = ToWire(original);
  ++counters_.notifies_sent;
  ++counters_.osd_messages_out;
  counters_.osd_bytes_out += request.ByteSizeLong();
  peer_calls_.Add();
  peer->PrefetchNotifyAsync(std::move(request), [this](Result<wire::PrefetchNotifyResponse> r) {
    if (!r.ok()) {
      ++counters_.notifies_failed;
      spdlog::debug("prefetch notify: {}", r.status().ToString());
    }
    peer_calls_.Done(Status::Ok());
  });
}

Status PrefetchEngine::OnNotify(const std::string& client_id, const Oid& original) {
  if (config_.mode != PrefetchMode::kCor) {
    return Status::InvalidArgument("this cluster's prefetch mode is " +
                                   std::string(PrefetchModeName(config_.mode)) + ", not cor");
  }
  const WindowKey key{client_id, original.fnso, original.fno};
  WindowChange change;
  {
    std::lock_guard lock(mu_);
    change = windows_.OnNotify(key, original.offset, WindowClock::now());
  }
  ApplyWindowChange(key, change, /*push=*/true);
  // Counted once its effects are (window counters, the load queued): a reader of the counters
  // that sees it also sees them.
  ++counters_.notifies_received;
  return Status::Ok();
}

void PrefetchEngine::ApplyWindowChange(const WindowKey& key, const WindowChange& change,
                                       bool push) {
  counters_.window_objects_throttled += change.throttled;
  if (change.doubled) {
    ++counters_.window_doublings;
    if (change.size == config_.max_window) ++counters_.window_max_reached;
  }
  if (push) Push(key.client_id, key, change);
  if (!change.prefetch.empty()) {
    Submit([this, key, ranges = change.prefetch] { LoadReplicaRanges(key.fnso, key.fno, ranges); });
  }
}

void PrefetchEngine::Push(const std::string& client_id, const WindowKey& key,
                          const WindowChange& change) {
  std::shared_ptr<Subscriber> sub;
  {
    std::lock_guard lock(mu_);
    auto it = subscribers_.find(client_id);
    if (it == subscribers_.end()) return;
    sub = it->second;
  }
  wire::WindowUpdate update;
  update.set_fnso(key.fnso);
  update.set_fno(key.fno);
  update.set_pivot(change.pivot);
  update.set_window_size(change.size);
  std::lock_guard lock(sub->mu);
  if (sub->updates.size() >= kMaxQueuedUpdates) sub->updates.pop_front();
  sub->updates.push_back(std::move(update));
  sub->cv.notify_one();
}

void PrefetchEngine::Subscribe(const std::string& client_id, grpc::ServerContext* context,
                               grpc::ServerWriter<wire::WindowUpdate>* writer) {
  auto sub = std::make_shared<Subscriber>();
  {
    std::lock_guard lock(mu_);
    auto& slot = subscribers_[client_id];
    if (slot) {
      // A reconnecting client: its old stream ends.
      std::lock_guard old_lock(slot->mu);
      slot->closed = true;
      slot->cv.notify_all();
    }
    slot = sub;
  }
  std::unique_lock lock(sub->mu);
  while (!sub->closed && !shut_down_ && !context->IsCancelled()) {
    sub->cv.wait_for(lock, std::chrono::milliseconds(200),
                     [&] { return sub->closed || !sub->updates.empty(); });
    while (!sub->closed && !sub->updates.empty()) {
      wire::WindowUpdate update = std::move(sub->updates.front());
      sub->updates.pop_front();
      lock.unlock();
      const bool written = writer->Write(update);
      lock.lock();
      if (!written) {
        sub->closed = true;
        break;
      }
      ++counters_.window_updates_pushed;
    }
  }
  lock.unlock();
  std::lock_guard table_lock(mu_);
  auto it = subscribers_.find(client_id);
  if (it != subscribers_.end() && it->second == sub) subscribers_.erase(it);
}

void PrefetchEngine::StartReadahead(const Oid& oid, const Readahead& readahead) {
  IndexRange window = readahead.window;
  const uint64_t quantity = PrefetchQuantity();
  if (window.size() > quantity) {
    window.end = window.begin + quantity;
    ++counters_.prefetch_capped;
  }
  // One request per owner of the window's originals; the marker rides with its object.
  std::map<uint32_t, std::vector<Oid>> by_owner;
  const std::shared_ptr<const MapView> view = maps_->Current();
  for (uint64_t i = window.begin; i < window.end; ++i) {
    const Oid next = DataOid(oid.fnso, oid.fno, i, CopyFlag::kOriginal);
    by_owner[view->current().OsdFor(next)].push_back(next);
  }
  for (const auto& entry : by_owner) {
    // Named variables, not a structured binding: Clang 14 (the fuzz build) cannot capture one.
    const uint32_t owner = entry.first;
    const std::vector<Oid>& originals = entry.second;
    std::optional<ReadaheadMarker> marker;
    for (const Oid& o : originals) {
      if (o.offset == readahead.marker.window_start) marker = readahead.marker;
    }
    if (owner == options_.osd_id) {
      Submit([this, originals, marker] { LoadOriginals(originals, marker); });
      continue;
    }
    Submit([this, owner, originals, marker, epoch = view->epoch()] {
      OsdClient* peer = Peer(owner);
      if (peer == nullptr) return;
      wire::PrefetchRequest request;
      request.set_epoch(epoch);
      for (const Oid& o : originals) *request.add_oids() = ToWire(o);
      if (marker) {
        request.mutable_marker()->set_window_start(marker->window_start);
        request.mutable_marker()->set_window_size(marker->window_size);
      }
      ++counters_.prefetch_requests_sent;
      ++counters_.osd_messages_out;
      counters_.osd_bytes_out += request.ByteSizeLong();
      peer_calls_.Add();
      peer->PrefetchAsync(std::move(request), [this](Result<wire::PrefetchResponse> r) {
        if (!r.ok()) spdlog::debug("prefetch request: {}", r.status().ToString());
        peer_calls_.Done(Status::Ok());
      });
    });
  }
}

void PrefetchEngine::OnPrefetch(std::vector<Oid> originals, std::optional<ReadaheadMarker> marker) {
  Submit([this, originals = std::move(originals), marker] { LoadOriginals(originals, marker); });
  ++counters_.prefetch_requests_received;  // after its work is queued, as OnNotify counts
}

void PrefetchEngine::LoadOriginals(const std::vector<Oid>& originals,
                                   const std::optional<ReadaheadMarker>& marker) {
  counters_.in_flight_objects += originals.size();
  ObservePressure();
  for (const Oid& oid : originals) {
    ++counters_.prefetch_objects_requested;
    const std::string key = EncodeStoreKey(oid);
    if (marker && oid.offset == marker->window_start) {
      std::lock_guard lock(mu_);
      if (markers_.size() >= kMaxMarkers) markers_.clear();  // stale ones only cost a window
      markers_[key] = *marker;
    }
    if (cache_->Contains(key)) {
      ++counters_.prefetch_already_cached;
      continue;
    }
    // Under the object's lock, as a demand fill: no write can overtake the load.
    std::lock_guard lock(locks_->For(key));
    if (cache_->Contains(key)) continue;
    ++counters_.store_point_reads;
    Result<StoredObject> stored = store_->Get(key);
    if (!stored.ok() || stored->tombstone) continue;  // absent: nothing to prefetch
    cache_->Insert(key, ToCachedObject(std::move(*stored)), CacheChain::kPrefetch);
    ++counters_.objects_prefetched;
  }
  counters_.in_flight_objects -= originals.size();
  ObservePressure();
}

void PrefetchEngine::LoadReplicaRanges(uint32_t fnso, uint64_t fno,
                                       const std::vector<IndexRange>& wanted) {
  // Only the runs of objects not cached yet go to the store: a cached object costs nothing.
  std::vector<IndexRange> ranges;
  for (const IndexRange& r : wanted) {
    for (uint64_t i = r.begin; i < r.end; ++i) {
      if (cache_->Contains(EncodeStoreKey(DataOid(fnso, fno, i, CopyFlag::kReplica)))) {
        ++counters_.prefetch_already_cached;
      } else if (!ranges.empty() && ranges.back().end == i) {
        ++ranges.back().end;
      } else {
        ranges.push_back({i, i + 1});
      }
    }
  }
  uint64_t budget = PrefetchQuantity();
  for (IndexRange range : ranges) {
    if (budget == 0) break;
    if (range.size() > budget) {
      range.end = range.begin + budget;
      ++counters_.prefetch_capped;
    }
    budget -= range.size();
    counters_.prefetch_objects_requested += range.size();
    // Write sequences before the scan's snapshot: an object whose stripe saw a write since may
    // be older in the scan than in the store, and stays out of the cache.
    std::vector<uint64_t> sequences;
    sequences.reserve(range.size());
    for (uint64_t i = range.begin; i < range.end; ++i) {
      sequences.push_back(
          locks_->Sequence(EncodeStoreKey(DataOid(fnso, fno, i, CopyFlag::kReplica))));
    }
    counters_.in_flight_objects += range.size();
    ObservePressure();
    ++counters_.store_range_scans;
    // Each object goes into the cache as the scan reaches it: a demand read of the window's
    // first objects need not wait for (or repeat) the read of all of it (without a disk model,
    // which charges the range as one request first).
    auto take = [&](const std::string& key, StoredObject stored) {
      Result<Oid> oid = DecodeStoreKey(key);
      if (!oid.ok() || !range.Contains(oid->offset)) return;
      if (cache_->Contains(key)) {
        ++counters_.prefetch_already_cached;
        return;
      }
      std::lock_guard lock(locks_->For(key));
      if (locks_->Sequence(key) != sequences[oid->offset - range.begin]) {
        ++counters_.prefetch_overtaken_by_write;
        return;
      }
      if (cache_->Contains(key)) return;
      cache_->Insert(key, ToCachedObject(std::move(stored)), CacheChain::kPrefetch);
      ++counters_.objects_prefetched;
    };
    Status st =
        store_->ReadRange(EncodeStoreKey(DataOid(fnso, fno, range.begin, CopyFlag::kReplica)),
                          EncodeStoreKey(DataOid(fnso, fno, range.end, CopyFlag::kReplica)), take);
    counters_.in_flight_objects -= range.size();
    ObservePressure();
    if (!st.ok()) spdlog::warn("prefetch scan of file {}/{}: {}", fnso, fno, st.ToString());
  }
}

void PrefetchEngine::AddCounters(std::map<std::string, uint64_t>* out) const {
  auto& c = counters_;
  std::map<std::string, uint64_t>& m = *out;
  m["prefetch_mode_" + std::string(PrefetchModeName(config_.mode))] = 1;
  m["notifies_sent"] = c.notifies_sent;
  m["notifies_received"] = c.notifies_received;
  m["notifies_failed"] = c.notifies_failed;
  m["prefetch_requests_sent"] = c.prefetch_requests_sent;
  m["prefetch_requests_received"] = c.prefetch_requests_received;
  m["prefetch_objects_requested"] = c.prefetch_objects_requested;
  m["objects_prefetched"] = c.objects_prefetched;
  m["prefetch_already_cached"] = c.prefetch_already_cached;
  m["prefetch_overtaken_by_write"] = c.prefetch_overtaken_by_write;
  m["prefetch_dropped"] = c.prefetch_dropped;
  m["prefetch_capped"] = c.prefetch_capped;
  m["store_range_scans"] = c.store_range_scans;
  m["store_point_reads_prefetch"] = c.store_point_reads;
  m["replica_reads"] = c.replica_reads;
  m["window_moves"] = c.window_moves;
  m["window_doublings"] = c.window_doublings;
  m["window_max_reached"] = c.window_max_reached;
  m["window_objects_throttled"] = c.window_objects_throttled;
  m["windows_expired"] = c.windows_expired;
  m["window_updates_pushed"] = c.window_updates_pushed;
  m["readahead_marker_hits"] = c.readahead_marker_hits;
  m["osd_messages_out"] = c.osd_messages_out;
  m["osd_bytes_out"] = c.osd_bytes_out;
  {
    // Work queued or running (notifies to send, windows to apply): what a counter reader
    // waits out before trusting notifies_sent.
    std::lock_guard queue_lock(queue_mu_);
    m["prefetch_work_pending"] = queue_.size() + running_;
  }
  std::lock_guard lock(mu_);
  m["windows_active"] = windows_.size();
  m["subscribers"] = subscribers_.size();
  m["prefetch_quantity"] = thrashing_.prefetch_quantity();
  m["thrashing_pressure_episodes"] = thrashing_.stats().pressure_episodes;
}

}  // namespace orthofs
