// Run-time thrashing control, the "lowering prefetch quantity" policy of [Wu 1993] §4: when
// the non-replaceable part of a cache (dirty, pinned, being written or loaded) reaches W1,
// synchronous write-back is forced and the prefetch quantity (PFQ) is halved, not below
// P_min. When the pressure has fallen to W2 (< W1, hysteresis) the PFQ doubles again on each
// observation, up to P_max. Also keeps the figures the paper judges by: the degree of
// thrashing (prefetched objects evicted before use / objects prefetched) and the synchronous
// read ratio (demand reads that had to wait for the store / all demand reads).
//
// Pure logic, no locking.
#pragma once

#include <cstdint>

namespace orthofs {

struct ThrashingConfig {
  double w1_share = 0.5;  // W1 as a share of the capacity
  double w2_share = 0.4;  // W2: pressure is over at or below this share
  uint32_t p_min = 4;     // objects
  uint32_t p_max = 40;    // objects
};

struct ThrashingStats {
  uint64_t pressure_episodes = 0;  // times W1 was reached from below
  uint64_t pfq_lowered = 0;
  uint64_t pfq_raised = 0;
};

class ThrashingController {
 public:
  explicit ThrashingController(const ThrashingConfig& config);

  // The non-replaceable amount (any unit, the same as capacity) changed.
  void Observe(uint64_t non_replaceable, uint64_t capacity);

  // Writers must write back synchronously (W1 reached, not yet back down to W2).
  bool under_pressure() const { return under_pressure_; }
  // How many objects a prefetch may fetch now.
  uint32_t prefetch_quantity() const { return pfq_; }
  const ThrashingStats& stats() const { return stats_; }

 private:
  ThrashingConfig config_;
  bool under_pressure_ = false;
  uint32_t pfq_;
  ThrashingStats stats_;
};

// prefetched-but-evicted-unused / prefetched, 0 when nothing was prefetched.
double DegreeOfThrashing(uint64_t evicted_unused, uint64_t prefetched);
// synchronous (store) reads / demand reads, 0 when there were none.
double SynchronousReadRatio(uint64_t synchronous_reads, uint64_t demand_reads);

}  // namespace orthofs
