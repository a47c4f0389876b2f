#include "mount/mount_metrics.h"

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "common/prometheus_text.h"

namespace orthofs {
namespace {

// One single-sample family: gauge or counter, name, help, value.
struct Family {
  bool gauge;
  const char* name;
  const char* help;
  uint64_t value;
};

// A family with one sample per OSD, labelled osd="ID".
struct PerOsdFamily {
  bool gauge;
  const char* name;
  const char* help;
  std::function<uint64_t(const OsdClient&)> value;
};

void Emit(PrometheusText* out, bool gauge, const char* name, const char* help, double value,
          const MetricLabels& labels) {
  if (gauge) {
    out->Gauge(name, help, value, labels);
  } else {
    out->Counter(name, help, value, labels);
  }
}

// The object cache and its write-back.
std::vector<Family> CacheFamilies(uint64_t cache_capacity_bytes, bool drops_set_id_bits,
                                  const WriteBackStats& c) {
  return {
      {true, "orthofs_client_cache_capacity_bytes", "Size of the client object cache (--cache-mb)",
       cache_capacity_bytes},
      {true, "orthofs_client_drops_set_id_bits",
       "1 when Linux leaves clearing set-ID bits to the mount (FUSE_HANDLE_KILLPRIV_V2); 0 means "
       "it asks for security.capability before every write",
       drops_set_id_bits ? 1u : 0u},
      {true, "orthofs_client_cache_bytes", "Bytes of objects in the client cache", c.bytes},
      {true, "orthofs_client_cache_dirty_bytes", "Bytes written here and not yet written back",
       c.dirty_bytes},
      {true, "orthofs_client_cache_pinned_bytes",
       "Bytes of objects dirty or being written back (not evictable)", c.pinned_bytes},
      {true, "orthofs_client_cache_objects", "Objects in the client cache", c.entries},
      {false, "orthofs_client_cache_hits_total", "Object reads served by the client cache",
       c.read_hits},
      {false, "orthofs_client_cache_misses_total", "Object reads that went to an OSD",
       c.read_misses},
      {false, "orthofs_client_cache_evictions_total", "Objects evicted from the client cache",
       c.evictions},
      {false, "orthofs_client_cache_handed_to_kernel_total",
       "Clean objects dropped from the client cache once the kernel's page cache had them whole",
       c.delivered_drops},
      {false, "orthofs_client_writes_total", "Writes into the client cache", c.writes},
      {false, "orthofs_client_flushes_total", "Object write-backs to both copies' OSDs", c.flushes},
      {false, "orthofs_client_flushed_bytes_total", "Bytes written back", c.flushed_bytes},
      {false, "orthofs_client_flush_failures_total", "Write-backs that failed (retried later)",
       c.flush_failures},
      {false, "orthofs_client_flushes_refused_total",
       "Write-backs refused for good (an OSD out of space): the writer got ENOSPC",
       c.refused_flushes},
      {false, "orthofs_client_pressure_episodes_total",
       "Times the cache filled with dirty data (writers then write back themselves)",
       c.pressure_episodes},
  };
}

// Writers under memory pressure, where reads were served from, and conflicts.
std::vector<Family> IoFamilies(const FileIoStats& io, const ClusterClient& cluster,
                               uint64_t metadata_conflicts) {
  return {
      {false, "orthofs_client_synchronous_write_backs_total",
       "Write-backs done by writers under memory pressure", io.synchronous_write_backs},
      {false, "orthofs_client_writer_waits_total", "Writers that waited for a full cache to drain",
       io.writer_waits},
      {false, "orthofs_client_replica_read_failures_total",
       "Reads inside a prefetch window whose replica OSD failed (the original served)",
       io.replica_read_failures},
      {false, "orthofs_client_failover_reads_total",
       "Reads served by the other copy after one copy's OSD failed", io.failover_reads},
      {false, "orthofs_client_read_ahead_objects_total",
       "Objects fetched ahead of a sequential reader", io.read_ahead_objects},
      {false, "orthofs_client_filled_objects_total",
       "Objects fetched to fill a small file read at random", io.filled_objects},
      {false, "orthofs_client_fetch_waits_total",
       "Reads that waited for a fetch already under way (read-ahead or another reader's)",
       io.fetch_waits},
      {false, "orthofs_client_hedged_reads_total",
       "Reads sent to an object's other copy as well because the first was slow to answer",
       cluster.hedged_reads()},
      {false, "orthofs_client_hedged_answers_total",
       "File reads answered by the other copy of a hedged read (the first copy was slow)",
       io.hedged_answers},
      {false, "orthofs_client_degraded_writes_total",
       "Writes that reached one copy only and left a repair record for the other",
       cluster.degraded_writes()},
      {false, "orthofs_client_metadata_conflicts_total",
       "Metadata changes retried because a conditional write found the object changed (mostly "
       "by another client; optimistic concurrency control)",
       metadata_conflicts},
  };
}

// File locks and the cluster map.
std::vector<Family> LockAndMapFamilies(const LockStats& locks, const ClusterClient& cluster) {
  return {
      {false, "orthofs_client_locks_granted_total",
       "fcntl and flock locks taken through this mount (held across every client)", locks.granted},
      {false, "orthofs_client_locks_refused_total",
       "Lock requests answered EAGAIN: another owner holds a conflicting lock", locks.refused},
      {false, "orthofs_client_locks_taken_from_dead_total",
       "Files whose locks of a client silent for the lock lease this mount took away",
       locks.taken_from_dead},
      {true, "orthofs_client_locked_files", "Files where this mount holds locks now",
       locks.files_held},
      {true, "orthofs_client_map_epoch", "Cluster map epoch this mount places by",
       cluster.map().epoch},
      {false, "orthofs_client_map_changes_total",
       "Cluster maps switched to while mounted (an OSD answered with a later epoch)",
       cluster.map_changes()},
  };
}

// Unlinked files freed after their unlink answered (client/deferred_releases.h).
std::vector<Family> ReleaseFamilies(const DeferredReleases::Counts& r) {
  return {
      {false, "orthofs_client_deferred_releases_total",
       "Unlinked files whose objects were deleted in the background after the unlink answered",
       r.deferred},
      {false, "orthofs_client_deferred_releases_refused_total",
       "Unlinked files freed during their unlink because too many releases waited", r.refused},
      {false, "orthofs_client_deferred_release_failures_total",
       "Background releases that failed (their objects are orphans fsck collects)", r.failed},
      {true, "orthofs_client_deferred_releases_waiting", "Releases queued or running now",
       r.waiting},
  };
}

// One sample per OSD of each family, labelled osd="ID".
void EmitPerOsdFamilies(PrometheusText* out, const std::string& fnso_text,
                        const ClusterClient& cluster) {
  const std::vector<uint32_t> down = cluster.DownOsds();
  const PerOsdFamily per_osd[] = {
      {true, "orthofs_client_osd_down", "1 while this client believes the OSD down",
       [&down](const OsdClient& osd) -> uint64_t {
         return std::find(down.begin(), down.end(), osd.osd_id()) != down.end() ? 1 : 0;
       }},
      {false, "orthofs_client_osd_marked_down_total", "Times the OSD was marked down",
       [](const OsdClient& osd) { return osd.marked_down(); }},
      {false, "orthofs_client_osd_transport_failures_total",
       "Calls to the OSD that failed at the transport (unreachable, deadline)",
       [](const OsdClient& osd) { return osd.transport_failures(); }},
      {false, "orthofs_client_osd_silences_total",
       "Times the OSD was marked down for answering nothing, calls or a ping, past its silence "
       "threshold",
       [](const OsdClient& osd) { return osd.silences(); }},
      {false, "orthofs_client_osd_calls_failed_silent_total",
       "Calls to the OSD given up because it went silent (the other copy served them)",
       [](const OsdClient& osd) { return osd.calls_failed_silent(); }},
      {false, "orthofs_client_osd_failed_probes_total",
       "Health probes of the OSD, while down, that found it still unreachable or recovering",
       [](const OsdClient& osd) { return osd.failed_probes(); }},
  };
  for (const PerOsdFamily& f : per_osd) {
    for (const auto& osd : cluster.osds()) {
      Emit(out, f.gauge, f.name, f.help, static_cast<double>(f.value(*osd)),
           {{"fnso", fnso_text}, {"osd", std::to_string(osd->osd_id())}});
    }
  }
}

void EmitFuseRequests(PrometheusText* out, const std::string& fnso_text,
                      const FuseRequestCounts& requests) {
  for (size_t i = 0; i < kFuseOpCount; ++i) {
    const auto op = static_cast<FuseOp>(i);
    out->Counter(
        "orthofs_client_fuse_requests_total", "FUSE requests from the kernel, by operation",
        static_cast<double>(requests.count(op)), {{"fnso", fnso_text}, {"op", FuseOpName(op)}});
  }
}

}  // namespace

std::string RenderMountMetrics(uint32_t fnso, uint64_t cache_capacity_bytes, int64_t tls_not_after,
                               bool drops_set_id_bits, const FileIoStats& io,
                               const ClusterClient& cluster, const FuseRequestCounts& requests,
                               uint64_t metadata_conflicts, const LockStats& locks,
                               const DeferredReleases::Counts& releases) {
  const std::string fnso_text = std::to_string(fnso);
  const MetricLabels ns = {{"fnso", fnso_text}};
  PrometheusText out;
  for (const std::vector<Family>& families :
       {CacheFamilies(cache_capacity_bytes, drops_set_id_bits, io.cache),
        IoFamilies(io, cluster, metadata_conflicts), LockAndMapFamilies(locks, cluster),
        ReleaseFamilies(releases)}) {
    for (const Family& f : families) {
      Emit(&out, f.gauge, f.name, f.help, static_cast<double>(f.value), ns);
    }
  }
  if (tls_not_after > 0) {
    out.Gauge("orthofs_client_tls_certificate_expiry_timestamp_seconds",
              "When this mount's TLS certificate expires (alert well before)",
              static_cast<double>(tls_not_after), ns);
  }
  const char* kReadsHelp = "Objects fetched from OSDs, by copy";
  out.Counter("orthofs_client_object_reads_total", kReadsHelp,
              static_cast<double>(io.original_reads), {{"fnso", fnso_text}, {"copy", "original"}});
  out.Counter("orthofs_client_object_reads_total", kReadsHelp,
              static_cast<double>(io.replica_reads), {{"fnso", fnso_text}, {"copy", "replica"}});
  EmitPerOsdFamilies(&out, fnso_text, cluster);
  EmitFuseRequests(&out, fnso_text, requests);
  return out.text();
}

}  // namespace orthofs
