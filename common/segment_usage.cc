#include "common/segment_usage.h"

#include <algorithm>

namespace orthofs {

void SegmentUsage::Grew(uint64_t segment, uint64_t bytes) { segments_[segment].size += bytes; }

void SegmentUsage::AddLive(uint64_t segment, int64_t delta) { segments_[segment].live += delta; }

void SegmentUsage::Pin(uint64_t segment) { ++segments_[segment].pins; }

void SegmentUsage::Unpin(uint64_t segment) {
  auto it = segments_.find(segment);
  if (it != segments_.end() && it->second.pins > 0) --it->second.pins;
}

void SegmentUsage::Forget(uint64_t segment) { segments_.erase(segment); }

std::vector<uint64_t> SegmentUsage::Victims(uint64_t active, double min_garbage_fraction,
                                            uint64_t max_live_bytes) const {
  std::vector<std::pair<uint64_t, uint64_t>> candidates;  // (live, segment)
  for (const auto& [id, s] : segments_) {
    if (id == active || s.pins > 0) continue;
    const uint64_t live = s.live > 0 ? static_cast<uint64_t>(s.live) : 0;
    if (live >= s.size && s.size > 0) continue;  // nothing to gain
    const uint64_t garbage = s.size - std::min(live, s.size);
    if (s.size > 0 && static_cast<double>(garbage) < min_garbage_fraction * s.size) continue;
    candidates.emplace_back(live, id);
  }
  std::sort(candidates.begin(), candidates.end());
  std::vector<uint64_t> victims;
  uint64_t moving = 0;
  for (const auto& [live, id] : candidates) {
    if (moving + live > max_live_bytes) break;
    moving += live;
    victims.push_back(id);
  }
  return victims;
}

uint64_t SegmentUsage::size(uint64_t segment) const {
  auto it = segments_.find(segment);
  return it == segments_.end() ? 0 : it->second.size;
}

int64_t SegmentUsage::live(uint64_t segment) const {
  auto it = segments_.find(segment);
  return it == segments_.end() ? 0 : it->second.live;
}

bool SegmentUsage::pinned(uint64_t segment) const {
  auto it = segments_.find(segment);
  return it != segments_.end() && it->second.pins > 0;
}

uint64_t SegmentUsage::total_bytes() const {
  uint64_t total = 0;
  for (const auto& [id, s] : segments_) total += s.size;
  return total;
}

uint64_t SegmentUsage::garbage_bytes() const {
  uint64_t garbage = 0;
  for (const auto& [id, s] : segments_) {
    const uint64_t live = s.live > 0 ? static_cast<uint64_t>(s.live) : 0;
    garbage += s.size - std::min(live, s.size);
  }
  return garbage;
}

std::vector<uint64_t> SegmentUsage::segments() const {
  std::vector<uint64_t> ids;
  for (const auto& [id, s] : segments_) ids.push_back(id);
  return ids;
}

}  // namespace orthofs
