// CallWatch: the calls in flight to one OSD and the answers they got, to tell when the OSD has
// gone silent (common/answer_watch.h) and to cancel what still waits on it then, so that
// callers fail over to the other copy at once instead of each waiting out its deadline.
//
// Thread-safe: every call's thread begins and ends it here, and OsdClient's silence watch
// reads it from its own thread.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>

#include "common/answer_watch.h"
#include "common/thread_annotations.h"

namespace orthofs {

class CallWatch {
 public:
  using Clock = AnswerWatch::Clock;
  explicit CallWatch(const AnswerWatch::Options& options = {}) : answers_(options) {}

  // A call is about to be sent with `context`, which must outlive its End. Returns its ticket.
  uint64_t Begin(grpc::ClientContext* context) ORTHOFS_EXCLUDES(mu_);
  // The call ended; `answered`: the OSD itself answered (a refusal too), not the transport.
  // Returns true when CancelWaiting cancelled it (it failed because the OSD went silent).
  bool End(uint64_t ticket, bool answered) ORTHOFS_EXCLUDES(mu_);
  // An answer to a call not begun here (a ping).
  void RecordAnswer(Clock::time_point sent, Clock::time_point now) ORTHOFS_EXCLUDES(mu_);
  // True when a call has waited past the silence threshold with no answer for as long.
  bool Silent(Clock::time_point now) const ORTHOFS_EXCLUDES(mu_);
  // Cancels every call in flight (each then ends with CANCELLED and End says why). Returns how
  // many.
  int CancelWaiting() ORTHOFS_EXCLUDES(mu_);
  Clock::duration SilenceThreshold() const ORTHOFS_EXCLUDES(mu_);
  Clock::duration HedgeDelay() const ORTHOFS_EXCLUDES(mu_);
  // How long the oldest call in flight has waited at `now` (zero: none).
  Clock::duration OldestWait(Clock::time_point now) const ORTHOFS_EXCLUDES(mu_);

 private:
  struct InFlight {
    grpc::ClientContext* context;
    Clock::time_point sent;
    bool cancelled = false;
  };
  std::optional<Clock::time_point> Oldest() const ORTHOFS_REQUIRES(mu_);

  mutable Mutex mu_;
  AnswerWatch answers_ ORTHOFS_GUARDED_BY(mu_);
  uint64_t next_ticket_ ORTHOFS_GUARDED_BY(mu_) = 1;
  // By ticket, which grows with time: the first entry is the oldest call.
  std::map<uint64_t, InFlight> in_flight_ ORTHOFS_GUARDED_BY(mu_);
};

}  // namespace orthofs
