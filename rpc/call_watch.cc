#include "rpc/call_watch.h"

namespace orthofs {

uint64_t CallWatch::Begin(grpc::ClientContext* context) {
  MutexLock lock(&mu_);
  const uint64_t ticket = next_ticket_++;
  in_flight_.emplace(ticket, InFlight{context, Clock::now()});
  return ticket;
}

bool CallWatch::End(uint64_t ticket, bool answered) {
  const Clock::time_point now = Clock::now();
  MutexLock lock(&mu_);
  auto it = in_flight_.find(ticket);
  if (it == in_flight_.end()) return false;
  const bool cancelled = it->second.cancelled;
  if (answered) answers_.RecordAnswer(it->second.sent, now);
  in_flight_.erase(it);
  return cancelled;
}

void CallWatch::RecordAnswer(Clock::time_point sent, Clock::time_point now) {
  MutexLock lock(&mu_);
  answers_.RecordAnswer(sent, now);
}

std::optional<CallWatch::Clock::time_point> CallWatch::Oldest() const {
  if (in_flight_.empty()) return std::nullopt;
  return in_flight_.begin()->second.sent;
}

bool CallWatch::Silent(Clock::time_point now) const {
  MutexLock lock(&mu_);
  return answers_.Silent(now, Oldest());
}

int CallWatch::CancelWaiting() {
  MutexLock lock(&mu_);
  int cancelled = 0;
  for (auto& [ticket, call] : in_flight_) {
    if (call.cancelled) continue;
    call.cancelled = true;
    call.context->TryCancel();  // under the lock: End, before the context goes, waits for it
    ++cancelled;
  }
  return cancelled;
}

CallWatch::Clock::duration CallWatch::SilenceThreshold() const {
  MutexLock lock(&mu_);
  return answers_.SilenceThreshold();
}

CallWatch::Clock::duration CallWatch::HedgeDelay() const {
  MutexLock lock(&mu_);
  return answers_.HedgeDelay();
}

CallWatch::Clock::duration CallWatch::OldestWait(Clock::time_point now) const {
  MutexLock lock(&mu_);
  const std::optional<Clock::time_point> oldest = Oldest();
  return oldest ? now - *oldest : Clock::duration::zero();
}

}  // namespace orthofs
