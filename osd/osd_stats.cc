#include "osd/osd_stats.h"

#include <spdlog/spdlog.h>
#include <sys/statvfs.h>

#include "common/prometheus_text.h"

namespace orthofs {
namespace {

// Stats counters that are levels (bytes held, records left, windows open, ...) rather than
// totals: a reset leaves them alone, and Prometheus sees them as gauges.
bool IsLevelCounter(const std::string& name) {
  return name.ends_with("_bytes") || name.ends_with("_left") ||
         name.starts_with("windows_active") || name == "subscribers" ||
         name == "prefetch_quantity" || name == "prefetch_work_pending" ||
         name.starts_with("prefetch_mode_") || name == "rebalancing";
}

}  // namespace

void OsdStats::Answered(Method method, const Status& status, std::chrono::nanoseconds latency) {
  methods_[method].latency.Observe(latency);
  Count(method, status);
}

void OsdStats::Count(Method method, const Status& status) {
  ++methods_[method].calls;
  if (!status.ok()) {
    ++methods_[method].errors;
    // A full disk refuses every write: SpaceGuard logs that once per episode instead.
    bool serious = status.Is(StatusCode::kIoError) || status.Is(StatusCode::kCorruption) ||
                   status.Is(StatusCode::kInternal);
    spdlog::log(serious ? spdlog::level::warn : spdlog::level::debug, "{} refused: {}",
                kMethodNames[method], status.ToString());
  }
}

void OsdStats::Report(bool reset, wire::StatsResponse* response) {
  Fill(response);
  MutexLock lock(&baseline_mu_);
  for (auto& [name, value] : *response->mutable_counters()) {
    if (IsLevelCounter(name)) continue;
    auto base = baseline_.find(name);
    const uint64_t raw = value;
    if (base != baseline_.end()) value = raw >= base->second ? raw - base->second : 0;
    if (reset) baseline_[name] = raw;
  }
  if (reset) spdlog::info("stats reset");
}

void OsdStats::Fill(wire::StatsResponse* response) const {
  const ObjectStore* const store = sources_.store;
  response->set_osd_id(sources_.osd_id);
  response->set_epoch(sources_.maps->Current()->epoch());
  response->set_objects(store->object_count());
  response->set_bytes(store->byte_count());
  struct statvfs fs {};
  if (statvfs(sources_.data_dir.c_str(), &fs) == 0) {
    response->set_capacity_bytes(static_cast<uint64_t>(fs.f_blocks) * fs.f_frsize);
    response->set_available_bytes(static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize);
    response->set_filesystem_id(static_cast<uint64_t>(fs.f_fsid));
  }
  response->set_reserve_bytes(sources_.reserve_bytes);
  if (Status writes = store->WritesAllowed(); !writes.ok()) {
    response->set_writes_stopped(writes.message());
  }
  auto& counters = *response->mutable_counters();
  for (int m = 0; m < kMethodCount; ++m) {
    counters[std::string(kMethodNames[m]) + "_calls"] = methods_[m].calls.load();
    counters[std::string(kMethodNames[m]) + "_errors"] = methods_[m].errors.load();
  }
  counters["bytes_in"] = counters_.bytes_in.load();
  counters["writes_refused_full"] = counters_.writes_refused_full.load();
  counters["store_compactions"] = store->compactions();
  counters["store_wal_syncs"] = store->wal_syncs();
  counters["store_log_bytes"] = store->data_log_bytes();
  counters["store_log_garbage_bytes"] = store->data_log_garbage_bytes();
  counters["store_log_segments_collected"] = store->segments_collected();
  counters["bytes_out"] = counters_.bytes_out.load();
  counters["objects_listed"] = counters_.objects_listed.load();
  counters["batched_reads"] = counters_.batched_reads.load();
  counters["batched_writes"] = counters_.batched_writes.load();
  counters["batched_deletes"] = counters_.batched_deletes.load();
  const ObjectCacheStats cache = sources_.cache->stats();
  counters["cache_hits"] = cache.hits;
  counters["cache_misses"] = cache.misses;
  counters["cache_evictions"] = cache.evictions;
  counters["cache_bytes"] = cache.bytes;
  counters["cache_capacity_bytes"] = sources_.cache->capacity_bytes();
  counters["cache_prefetch_inserts"] = cache.prefetch_inserts;
  counters["cache_prefetch_hits"] = cache.prefetch_hits;
  counters["cache_prefetch_evicted_unused"] = cache.prefetch_evicted_unused;
  counters["cache_prefetch_bytes"] = cache.prefetch_bytes;
  counters["osd_messages_in"] = methods_[kPrefetchNotify].calls + methods_[kPrefetch].calls;
  counters["osd_bytes_in"] = counters_.osd_bytes_in.load();
  counters["disk_model_reads"] = store->disk_reads();
  counters["disk_model_seeks"] = store->disk_seeks();
  counters["repair_records_written"] = counters_.repair_records_written.load();
  counters["changes_alone_refused"] = counters_.changes_alone_refused.load();
  counters["stalls"] = counters_.stalls.load();
  const RepairWorker& repair = *sources_.repair;
  counters["repair_copies_repaired"] = repair.repaired_total();
  counters["repair_records_left"] = repair.records_left();
  counters["recovery_asks_repeated"] = repair.recovery_asks_repeated();
  counters["recovery_limits_reached"] = repair.recovery_limits_reached();
  counters["map_changes"] = counters_.map_changes.load();
  counters["rebalance_copies_taken_over"] = counters_.copies_taken_over.load();
  counters["rebalance_copies_discarded"] = counters_.copies_discarded.load();
  counters["rebalance_damaged_copies_replaced"] = counters_.damaged_copies_replaced.load();
  counters["rebalancing"] = sources_.maps->Current()->rebalancing() ? 1 : 0;
  std::map<std::string, uint64_t> prefetch;
  sources_.prefetch->AddCounters(&prefetch);
  for (const auto& [name, value] : prefetch) counters[name] = value;
}

std::string OsdStats::RenderMetrics(bool recovering) const {
  wire::StatsResponse stats;
  Fill(&stats);
  const std::string id = std::to_string(sources_.osd_id);
  const MetricLabels osd = {{"osd", id}};
  PrometheusText out;
  out.Gauge("orthofs_osd_objects", "Object copies stored", stats.objects(), osd);
  out.Gauge("orthofs_osd_store_bytes", "Bytes of object copies stored", stats.bytes(), osd);
  out.Gauge("orthofs_osd_capacity_bytes", "Size of the data dir's file system",
            stats.capacity_bytes(), osd);
  out.Gauge("orthofs_osd_available_bytes", "Free space on the data dir's file system",
            stats.available_bytes(), osd);
  out.Gauge("orthofs_osd_map_epoch", "Cluster map epoch", stats.epoch(), osd);
  out.Gauge("orthofs_osd_recovering", "1 while waiting for the others to replay missed writes",
            recovering ? 1 : 0, osd);
  out.Gauge("orthofs_osd_store_writes_stopped",
            "1 once a disk error stopped the store's writes (until the OSD restarts)",
            stats.writes_stopped().empty() ? 0 : 1, osd);
  if (sources_.tls_not_after > 0) {
    out.Gauge("orthofs_osd_tls_certificate_expiry_timestamp_seconds",
              "When this OSD's TLS certificate expires (alert well before)",
              static_cast<double>(sources_.tls_not_after), osd);
  }
  for (int m = 0; m < kMethodCount; ++m) {
    out.Counter("orthofs_osd_requests_total", "RPCs answered", methods_[m].calls.load(),
                {{"osd", id}, {"method", kMethodNames[m]}});
  }
  for (int m = 0; m < kMethodCount; ++m) {
    out.Counter("orthofs_osd_request_errors_total", "RPCs refused or failed",
                methods_[m].errors.load(), {{"osd", id}, {"method", kMethodNames[m]}});
  }
  for (int m = 0; m < kMethodCount; ++m) {
    out.Histogram("orthofs_osd_request_duration_seconds", "Time from admission to answer",
                  methods_[m].latency.Snapshot(), {{"osd", id}, {"method", kMethodNames[m]}});
  }
  // The remaining Stats counters, one family each. Levels (bytes held, records left, windows
  // open, ...) are gauges; the rest only grow.
  const std::map<std::string, uint64_t> sorted(stats.counters().begin(), stats.counters().end());
  for (const auto& [name, value] : sorted) {
    if (name.ends_with("_calls") || name.ends_with("_errors")) continue;  // per method above
    if (IsLevelCounter(name)) {
      out.Gauge("orthofs_osd_" + name, "orthofs stats counter " + name, value, osd);
    } else {
      out.Counter("orthofs_osd_" + name + "_total", "orthofs stats counter " + name, value, osd);
    }
  }
  return out.text();
}

}  // namespace orthofs
