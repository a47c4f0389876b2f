// Placement: which OSD holds each copy of an object. A pure function of the cluster map and
// the OID; the one implementation every client, OSD and tool calls (docs/DESIGN.md §2).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/cluster_map.h"
#include "common/oid.h"

namespace orthofs {

// Namespace splitting: contiguous segments of [0, 2^32), one per member, sized by weight.
// With equal weights, Owner(v) == floor(v * N / 2^32) exactly.
class NamespaceSplit {
 public:
  // weights.size() >= 1, every weight > 0.
  explicit NamespaceSplit(const std::vector<double>& weights);

  // Index of the member whose segment holds v.
  uint32_t Owner(uint32_t v) const;
  size_t size() const { return starts_.size(); }
  // First hash value of member i's segment.
  uint64_t SegmentStart(size_t i) const { return starts_[i]; }

 private:
  std::vector<uint64_t> starts_;  // starts_[0] == 0, ascending
};

class Placement;

// One file's placement with the file's hash computed once: the data path and reports place
// many objects of the same file.
class FilePlacement {
 public:
  uint32_t replica_osd() const;
  struct Original {
    uint32_t osd;
    bool migrated;  // migration moved it off its first choice (the replica OSD)
  };
  Original OriginalFor(ObjectType type, uint64_t offset) const;
  uint32_t OriginalOsdFor(ObjectType type, uint64_t offset) const {
    return OriginalFor(type, offset).osd;
  }

 private:
  friend class Placement;
  FilePlacement(const Placement* placement, uint32_t fnso, uint64_t fno, uint32_t replica_index)
      : placement_(placement), fnso_(fnso), fno_(fno), replica_index_(replica_index) {}

  const Placement* placement_;
  uint32_t fnso_;
  uint64_t fno_;
  uint32_t replica_index_;
};

class Placement {
 public:
  // map must be valid (ValidateClusterMap).
  explicit Placement(const ClusterMap& map);

  FilePlacement ForFile(uint32_t fnso, uint64_t fno) const;

  // The OSD holding every replica object of the file: owner_N(h(fnso‖fno)).
  uint32_t ReplicaOsdFor(uint32_t fnso, uint64_t fno) const;
  // The OSD holding the original of oid (its flag is ignored); never ReplicaOsdFor(file).
  uint32_t OriginalOsdFor(const Oid& oid) const;
  // The OSD holding this copy: the original's OSD or the replica OSD, by oid.flag.
  uint32_t OsdFor(const Oid& oid) const;
  // Migration's first choice owner_N(h(oid)) before moving off the replica OSD.
  uint32_t FirstChoiceOsdFor(const Oid& oid) const;
  bool Holds(uint32_t osd_id, const Oid& oid) const { return OsdFor(oid) == osd_id; }

  const ClusterMap& map() const { return map_; }

  // The exact bytes hashed for a file and for an object (big-endian fields).
  static std::string FileHashInput(uint32_t fnso, uint64_t fno);
  static std::string ObjectHashInput(const Oid& oid);

 private:
  friend class FilePlacement;
  uint32_t ReplicaIndexFor(uint32_t fnso, uint64_t fno) const;
  // Index into map_.osds of the index'th member of the split that leaves out `excluded`.
  static uint32_t SkipExcluded(uint32_t index, uint32_t excluded) {
    return index >= excluded ? index + 1 : index;
  }

  ClusterMap map_;
  NamespaceSplit all_;
  std::vector<NamespaceSplit> without_;  // without_[r]: the N-1 OSDs other than osds[r]
};

}  // namespace orthofs
