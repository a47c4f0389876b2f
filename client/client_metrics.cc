#include "client/client_metrics.h"

#include <algorithm>

#include "common/prometheus_text.h"

namespace orthofs {

std::string RenderMountMetrics(uint32_t fnso, uint64_t cache_capacity_bytes, const FileIoStats& io,
                               const ClusterClient& cluster) {
  const MetricLabels ns = {{"fnso", std::to_string(fnso)}};
  const WriteBackStats& c = io.cache;
  PrometheusText out;
  out.Gauge("orthofs_client_cache_capacity_bytes", "Size of the client object cache (--cache-mb)",
            static_cast<double>(cache_capacity_bytes), ns);
  out.Gauge("orthofs_client_cache_bytes", "Bytes of objects in the client cache",
            static_cast<double>(c.bytes), ns);
  out.Gauge("orthofs_client_cache_dirty_bytes", "Bytes written here and not yet written back",
            static_cast<double>(c.dirty_bytes), ns);
  out.Gauge("orthofs_client_cache_pinned_bytes",
            "Bytes of objects dirty or being written back (not evictable)",
            static_cast<double>(c.pinned_bytes), ns);
  out.Gauge("orthofs_client_cache_objects", "Objects in the client cache",
            static_cast<double>(c.entries), ns);
  out.Counter("orthofs_client_cache_hits_total", "Object reads served by the client cache",
              static_cast<double>(c.read_hits), ns);
  out.Counter("orthofs_client_cache_misses_total", "Object reads that went to an OSD",
              static_cast<double>(c.read_misses), ns);
  out.Counter("orthofs_client_cache_evictions_total", "Objects evicted from the client cache",
              static_cast<double>(c.evictions), ns);
  out.Counter("orthofs_client_writes_total", "Writes into the client cache",
              static_cast<double>(c.writes), ns);
  out.Counter("orthofs_client_flushes_total", "Object write-backs to both copies' OSDs",
              static_cast<double>(c.flushes), ns);
  out.Counter("orthofs_client_flushed_bytes_total", "Bytes written back",
              static_cast<double>(c.flushed_bytes), ns);
  out.Counter("orthofs_client_flush_failures_total", "Write-backs that failed (retried later)",
              static_cast<double>(c.flush_failures), ns);
  out.Counter("orthofs_client_flushes_refused_total",
              "Write-backs refused for good (an OSD out of space): the writer got ENOSPC",
              static_cast<double>(c.refused_flushes), ns);
  out.Counter("orthofs_client_pressure_episodes_total",
              "Times the cache filled with dirty data (writers then write back themselves)",
              static_cast<double>(c.pressure_episodes), ns);
  out.Counter("orthofs_client_synchronous_write_backs_total",
              "Write-backs done by writers under memory pressure",
              static_cast<double>(io.synchronous_write_backs), ns);
  out.Counter("orthofs_client_writer_waits_total", "Writers that waited for a full cache to drain",
              static_cast<double>(io.writer_waits), ns);
  const std::string fnso_text = std::to_string(fnso);
  out.Counter("orthofs_client_object_reads_total", "Objects fetched from OSDs, by copy",
              static_cast<double>(io.original_reads), {{"fnso", fnso_text}, {"copy", "original"}});
  out.Counter("orthofs_client_object_reads_total", "Objects fetched from OSDs, by copy",
              static_cast<double>(io.replica_reads), {{"fnso", fnso_text}, {"copy", "replica"}});
  out.Counter("orthofs_client_replica_read_failures_total",
              "Reads inside a prefetch window whose replica OSD failed (the original served)",
              static_cast<double>(io.replica_read_failures), ns);
  out.Counter("orthofs_client_failover_reads_total",
              "Reads served by the other copy after one copy's OSD failed",
              static_cast<double>(io.failover_reads), ns);
  out.Counter("orthofs_client_degraded_writes_total",
              "Writes that reached one copy only and left a repair record for the other",
              static_cast<double>(cluster.degraded_writes()), ns);
  const std::vector<uint32_t> down = cluster.DownOsds();
  for (const auto& osd : cluster.osds()) {
    const bool is_down = std::find(down.begin(), down.end(), osd->osd_id()) != down.end();
    out.Gauge("orthofs_client_osd_down", "1 while this client believes the OSD down",
              is_down ? 1 : 0, {{"fnso", fnso_text}, {"osd", std::to_string(osd->osd_id())}});
  }
  for (const auto& osd : cluster.osds()) {
    out.Counter("orthofs_client_osd_marked_down_total", "Times the OSD was marked down",
                static_cast<double>(osd->marked_down()),
                {{"fnso", fnso_text}, {"osd", std::to_string(osd->osd_id())}});
  }
  for (const auto& osd : cluster.osds()) {
    out.Counter("orthofs_client_osd_transport_failures_total",
                "Calls to the OSD that failed at the transport (unreachable, deadline)",
                static_cast<double>(osd->transport_failures()),
                {{"fnso", fnso_text}, {"osd", std::to_string(osd->osd_id())}});
  }
  return out.text();
}

}  // namespace orthofs
