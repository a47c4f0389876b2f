// Which OSDs a client currently believes down. A transport failure (unreachable, deadline)
// marks an OSD down, and it stays down until a call to it succeeds: requests go to the other
// copy meanwhile instead of waiting for it again. Requests are never the probe: an OSD that
// hangs (stopped, blackholed) would hold each one for its whole deadline. Once a backoff has
// passed, ClaimProbe lets exactly one caller send a cheap probe with a short deadline; its
// failure starts a backoff twice as long, up to a cap. Pure state, thread-safe; the caller
// passes the time.
//
// An OSD that refuses a request because it is recovering (its peers replay what it missed)
// is down too, but differently: it answers the copy updates it takes meanwhile, so a
// success no longer says it is back. Only a probe that finds it done recovering does; such
// probes go every recovering_probe_interval, as recovery takes about a second.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace orthofs {

class OsdHealth {
 public:
  using Clock = std::chrono::steady_clock;
  struct Options {
    Clock::duration initial_backoff = std::chrono::seconds(1);
    // Short: while the OSD is down, writes skip it (repair records cover them) even if it is
    // back, until a probe says so.
    Clock::duration max_backoff = std::chrono::seconds(5);
    Clock::duration recovering_probe_interval = std::chrono::milliseconds(100);
  };
  enum class Cause { kTransport, kRecovering };

  OsdHealth() : OsdHealth(Options{}) {}
  explicit OsdHealth(const Options& options) : options_(options) {}

  // True from a transport failure until a success.
  bool IsDown(uint32_t osd) const;
  // A request to `osd` failed at the transport. Returns true when this marked it down (it was
  // up), so the caller logs each transition once; failures while down (requests already in
  // flight) change nothing.
  // A refusal because it recovers (Cause::kRecovering) marks it down until a probe answers.
  bool RecordFailure(uint32_t osd, Clock::time_point now, Cause cause = Cause::kTransport);
  // A request to `osd` succeeded. Returns true when this brought it back: it was down, and
  // not because it recovers.
  bool RecordSuccess(uint32_t osd);
  // True for exactly one caller once `osd` is down and its backoff has passed: that caller
  // sends a probe and reports it with RecordProbeAnswered or RecordProbeFailure. Never two
  // probes of one OSD at once, even if it comes back and goes down again meanwhile.
  // Returns the outage the probe is about (0: no probe now).
  uint64_t ClaimProbe(uint32_t osd, Clock::time_point now);
  // The claimed probe of `outage` was answered: as RecordSuccess, unless the OSD went down
  // again since (an answer from before a newer failure proves nothing about it).
  bool RecordProbeAnswered(uint32_t osd, uint64_t outage);
  // The claimed probe failed: the next one waits twice as long as the last (up to the cap).
  // A probe that found the OSD still recovering (Cause::kRecovering) is followed by the next
  // after recovering_probe_interval.
  void RecordProbeFailure(uint32_t osd, Clock::time_point now, Cause cause = Cause::kTransport);
  // True while `osd` is down because it recovers.
  bool IsRecovering(uint32_t osd) const;
  // The OSDs that are down, in id order.
  std::vector<uint32_t> DownOsds() const;
  // Consecutive failures of `osd`: the one that marked it down plus its failed probes (0 when
  // up).
  int failures(uint32_t osd) const;

 private:
  struct State {
    int failures = 0;
    Clock::time_point probe_at{};  // no probe before
    bool probing = false;          // cleared only by the probe's own report
    uint64_t outage = 0;           // counts the times it was marked down
    bool recovering = false;       // down because it refused as recovering
  };
  Clock::duration BackoffAfter(int failures) const;

  Options options_;
  mutable std::mutex mu_;
  std::unordered_map<uint32_t, State> states_;
};

}  // namespace orthofs
