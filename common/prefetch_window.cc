#include "common/prefetch_window.h"

#include <algorithm>
#include <limits>

namespace orthofs {

namespace {

// Window sizes above this make no sense for objects of at least 4 KiB (a 4 GiB window).
constexpr uint32_t kMaxWindowLimit = 1 << 20;

}  // namespace

std::string_view PrefetchModeName(PrefetchMode mode) {
  switch (mode) {
    case PrefetchMode::kNone:
      return "none";
    case PrefetchMode::kSpa:
      return "spa";
    case PrefetchMode::kCor:
      return "cor";
  }
  return "?";
}

std::string_view WindowPolicyName(WindowPolicy policy) {
  return policy == WindowPolicy::kWing ? "wing" : "forward";
}

Result<PrefetchMode> ParsePrefetchMode(std::string_view text) {
  for (PrefetchMode m : {PrefetchMode::kNone, PrefetchMode::kSpa, PrefetchMode::kCor}) {
    if (text == PrefetchModeName(m)) return m;
  }
  return Status::InvalidArgument("prefetch mode '" + std::string(text) +
                                 "' is not one of none, spa, cor");
}

Result<WindowPolicy> ParseWindowPolicy(std::string_view text) {
  for (WindowPolicy p : {WindowPolicy::kWing, WindowPolicy::kForward}) {
    if (text == WindowPolicyName(p)) return p;
  }
  return Status::InvalidArgument("window policy '" + std::string(text) +
                                 "' is not one of wing, forward");
}

Status ValidatePrefetchConfig(const PrefetchConfig& config) {
  if (config.initial_window < 1) {
    return Status::InvalidArgument("prefetch initial_window must be at least 1 object");
  }
  if (config.max_window < config.initial_window) {
    return Status::InvalidArgument("prefetch max_window (" + std::to_string(config.max_window) +
                                   ") is smaller than initial_window (" +
                                   std::to_string(config.initial_window) + ")");
  }
  if (config.max_window > kMaxWindowLimit) {
    return Status::InvalidArgument("prefetch max_window must be at most " +
                                   std::to_string(kMaxWindowLimit) + " objects");
  }
  return Status::Ok();
}

Status CheckExpectedPrefetchMode(const PrefetchConfig& map_config, std::string_view expected) {
  if (expected.empty()) return Status::Ok();
  Result<PrefetchMode> mode = ParsePrefetchMode(expected);
  if (!mode.ok()) return Status::InvalidArgument("--prefetch: " + mode.status().message());
  if (*mode != map_config.mode) {
    return Status::InvalidArgument(
        "--prefetch " + std::string(expected) + " does not match the cluster map (prefetch mode " +
        std::string(PrefetchModeName(map_config.mode)) +
        "): the whole cluster prefetches one way; change prefetch.mode in the map");
  }
  return Status::Ok();
}

std::vector<IndexRange> RangeDifference(const IndexRange& next, const IndexRange& previous) {
  if (next.empty()) return {};
  if (previous.empty()) return {next};
  std::vector<IndexRange> out;
  IndexRange before{next.begin, std::min(next.end, previous.begin)};
  IndexRange after{std::max(next.begin, previous.end), next.end};
  if (!before.empty()) out.push_back(before);
  if (!after.empty()) out.push_back(after);
  return out;
}

MovingWindow::MovingWindow(const PrefetchConfig& config)
    : config_(config), size_(config.initial_window) {}

MovingWindow::MovingWindow(const PrefetchConfig& config, uint64_t pivot, uint32_t size)
    : config_(config),
      has_pivot_(true),
      pivot_(pivot),
      size_(std::clamp(size, config.initial_window, config.max_window)) {}

IndexRange MovingWindow::Extent() const {
  if (!has_pivot_) return {};
  constexpr uint64_t kLast = std::numeric_limits<uint64_t>::max();
  if (config_.policy == WindowPolicy::kWing) {
    const uint64_t wing = wing_length();
    const uint64_t begin = pivot_ >= wing ? pivot_ - wing : 0;
    const uint64_t end = pivot_ <= kLast - wing - 1 ? pivot_ + wing + 1 : kLast;
    return {begin, end};
  }
  // forward: the size objects after the pivot
  const uint64_t begin = pivot_ < kLast ? pivot_ + 1 : kLast;
  const uint64_t end = pivot_ <= kLast - size_ - 1 ? pivot_ + size_ + 1 : kLast;
  return {begin, end};
}

std::vector<IndexRange> MovingWindow::Reposition(uint64_t index, uint32_t size) {
  const IndexRange old_extent = Extent();
  has_pivot_ = true;
  pivot_ = index;
  size_ = size;
  return RangeDifference(Extent(), old_extent);
}

std::vector<IndexRange> MovingWindow::MoveTo(uint64_t index) { return Reposition(index, size_); }

std::vector<IndexRange> MovingWindow::Widen(uint64_t index) {
  uint32_t size = size_;
  if (!config_.fixed_window) {
    size = static_cast<uint32_t>(std::min<uint64_t>(uint64_t{size_} * 2, config_.max_window));
  }
  return Reposition(index, size);
}

std::optional<Readahead> SpaOnDemandRead(const PrefetchConfig& config, uint64_t index,
                                         bool was_cached,
                                         const std::optional<ReadaheadMarker>& hit_marker) {
  constexpr uint64_t kLast = std::numeric_limits<uint64_t>::max();
  uint64_t start;
  uint32_t size;
  if (hit_marker) {
    // The reader reached the marked window: the next one, larger, before it is needed.
    start = hit_marker->window_start + hit_marker->window_size;
    size = hit_marker->window_size;
    if (!config.fixed_window) {
      size = static_cast<uint32_t>(std::min<uint64_t>(uint64_t{size} * 2, config.max_window));
    }
  } else if (!was_cached) {
    start = index < kLast ? index + 1 : kLast;
    size = config.initial_window;
  } else {
    return std::nullopt;
  }
  if (start < index + 1) start = index + 1;  // never behind the reader
  const uint64_t end = start <= kLast - size ? start + size : kLast;
  if (start >= end) return std::nullopt;
  return Readahead{{start, end}, {start, static_cast<uint32_t>(end - start)}};
}

}  // namespace orthofs
