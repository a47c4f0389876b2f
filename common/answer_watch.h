// Whether an OSD has stopped answering, judged from its answers rather than from failed calls:
// a hung OSD (stopped, a paused VM, a stalled disk under its only thread) fails no call until
// each one's deadline, seconds later, while a slow one under load still answers something all
// the time. So an OSD is silent when a call to it has waited longer than a threshold AND no
// call to it has been answered for that long. The threshold adapts to the OSD's own latency:
// `latency_multiple` times the 99th percentile of its recent answers, within
// [min_silence, max_silence]. A silent OSD is then pinged before it is suspected (OsdClient).
//
// Also the hedge delay: after how long a read is sent to the other copy as well.
//
// Pure logic, not thread-safe: the caller serializes access and passes the time.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <optional>

namespace orthofs {

class AnswerWatch {
 public:
  using Clock = std::chrono::steady_clock;
  struct Options {
    // Never silent sooner: below this, a busy 2-core host's scheduling alone leaves gaps.
    Clock::duration min_silence = std::chrono::milliseconds(500);
    // Always silent after this, however slow the OSD has been.
    Clock::duration max_silence = std::chrono::milliseconds(1500);
    double latency_multiple = 8;
    // Hedge delay: this multiple of the 95th percentile, within [min_hedge, max_hedge].
    double hedge_multiple = 3;
    Clock::duration min_hedge = std::chrono::milliseconds(20);
    Clock::duration max_hedge = std::chrono::milliseconds(400);
  };
  static constexpr size_t kSamples = 256;  // the recent answers the percentiles come from

  AnswerWatch() : AnswerWatch(Options{}) {}
  explicit AnswerWatch(const Options& options) : options_(options) {}

  // A call sent at `sent` was answered at `now` (any answer from the OSD itself, a refusal
  // included; not a transport failure).
  void RecordAnswer(Clock::time_point sent, Clock::time_point now);
  // The silence after which an OSD with a call outstanding counts as silent.
  Clock::duration SilenceThreshold() const;
  // True when the oldest call still waiting (sent at `oldest_waiting`; none: nullopt) and the
  // time since the last answer both exceed SilenceThreshold() at `now`. Before any answer, the
  // silence counts from the oldest waiting call.
  bool Silent(Clock::time_point now, std::optional<Clock::time_point> oldest_waiting) const;
  // How long a read waits for one copy before the other is asked too.
  Clock::duration HedgeDelay() const;
  // The q-quantile (0..1) of the recent answer latencies; zero before any.
  Clock::duration Quantile(double q) const;
  std::optional<Clock::time_point> last_answer() const { return last_answer_; }

 private:
  Clock::duration Scaled(double q, double multiple, Clock::duration low,
                         Clock::duration high) const;

  Options options_;
  std::array<Clock::duration, kSamples> samples_{};
  size_t recorded_ = 0;  // answers recorded ever; the ring holds the last kSamples
  std::optional<Clock::time_point> last_answer_;
};

}  // namespace orthofs
