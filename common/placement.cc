#include "common/placement.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "common/md5.h"

namespace orthofs {
namespace {

using u128 = unsigned __int128;
constexpr u128 kSpace = u128{1} << 32;

// Weights become integers (1/1000 resolution) so segment bounds are exact: equal weights
// reproduce floor(v * N / 2^32) to the bit, whatever the weight's value.
uint64_t FixedPointWeight(double w) { return std::max<uint64_t>(1, std::llround(w * 1000.0)); }

}  // namespace

NamespaceSplit::NamespaceSplit(const std::vector<double>& weights) {
  assert(!weights.empty());
  u128 total = 0;
  for (double w : weights) total += FixedPointWeight(w);
  u128 cumulative = 0;
  starts_.reserve(weights.size());
  for (double w : weights) {
    // Segment i starts at ceil(cum_i * 2^32 / total): v belongs to i iff
    // cum_i <= v * total / 2^32 < cum_{i+1}.
    starts_.push_back(static_cast<uint64_t>((cumulative * kSpace + total - 1) / total));
    cumulative += FixedPointWeight(w);
  }
}

uint32_t NamespaceSplit::Owner(uint32_t v) const {
  auto it = std::upper_bound(starts_.begin(), starts_.end(), uint64_t{v});
  // Zero-width segments (tiny weights) share a start; upper_bound picks the last of them,
  // which is the one whose segment is non-empty.
  return static_cast<uint32_t>(it - starts_.begin() - 1);
}

Placement::Placement(const ClusterMap& map)
    : map_(map), all_([&] {
        std::vector<double> w;
        for (const auto& osd : map.osds) w.push_back(osd.weight);
        return w;
      }()) {
  assert(map_.osds.size() >= 2);
  for (size_t r = 0; r < map_.osds.size(); ++r) {
    std::vector<double> w;
    for (size_t i = 0; i < map_.osds.size(); ++i) {
      if (i != r) w.push_back(map_.osds[i].weight);
    }
    without_.emplace_back(w);
  }
}

std::string Placement::FileHashInput(uint32_t fnso, uint64_t fno) {
  std::string s;
  AppendBigEndian32(&s, fnso);
  AppendBigEndian64(&s, fno);
  return s;
}

std::string Placement::ObjectHashInput(const Oid& oid) {
  std::string s = FileHashInput(oid.fnso, oid.fno);
  s.push_back(static_cast<char>(oid.type));
  AppendBigEndian64(&s, oid.offset);
  return s;
}

uint32_t Placement::ReplicaIndexFor(uint32_t fnso, uint64_t fno) const {
  return all_.Owner(PlacementHashesOf(FileHashInput(fnso, fno)).h);
}

uint32_t Placement::ReplicaOsdFor(uint32_t fnso, uint64_t fno) const {
  return map_.osds[ReplicaIndexFor(fnso, fno)].id;
}

uint32_t Placement::FirstChoiceOsdFor(const Oid& oid) const {
  return map_.osds[all_.Owner(PlacementHashesOf(ObjectHashInput(oid)).h)].id;
}

FilePlacement Placement::ForFile(uint32_t fnso, uint64_t fno) const {
  return FilePlacement(this, fnso, fno, ReplicaIndexFor(fnso, fno));
}

uint32_t Placement::OriginalOsdFor(const Oid& oid) const {
  return ForFile(oid.fnso, oid.fno).OriginalOsdFor(oid.type, oid.offset);
}

uint32_t FilePlacement::replica_osd() const { return placement_->map_.osds[replica_index_].id; }

FilePlacement::Original FilePlacement::OriginalFor(ObjectType type, uint64_t offset) const {
  const Placement& p = *placement_;
  const uint32_t r = replica_index_;
  const PlacementHashes hashes = PlacementHashesOf(
      Placement::ObjectHashInput(Oid{fnso_, fno_, offset, type, CopyFlag::kOriginal}));
  if (p.map_.strategy == PlacementStrategy::kRepartition) {
    return {p.map_.osds[Placement::SkipExcluded(p.without_[r].Owner(hashes.h), r)].id, false};
  }
  uint32_t index = p.all_.Owner(hashes.h);
  if (index != r) return {p.map_.osds[index].id, false};
  // Only objects whose first choice is the replica OSD move, by the second hash.
  index = Placement::SkipExcluded(p.without_[r].Owner(hashes.h2), r);
  return {p.map_.osds[index].id, true};
}

uint32_t Placement::OsdFor(const Oid& oid) const {
  return oid.flag == CopyFlag::kReplica ? ReplicaOsdFor(oid.fnso, oid.fno) : OriginalOsdFor(oid);
}

}  // namespace orthofs
