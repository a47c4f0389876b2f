// How much a client can still write, from what each OSD says of its file system. Placement
// spreads every file over all OSDs, each holding a share of all copies by its weight, and every
// byte is stored twice: so the OSD (or file system) that fills first, relative to its share,
// bounds what can be written, not the sum of free space. OSDs that share one file system
// (several on one disk, as on a test host) are counted once, with their shares added. What an
// OSD keeps in reserve (--reserve-mb: it refuses writes there) is not usable.
//
//   usable = min over file systems g of (free_g - reserves_g) / (copies x share_g)
//
// Pure logic.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace orthofs {

struct OsdSpace {
  uint32_t osd_id = 0;
  double weight = 1;  // the map's weight: its share of all copies is weight / total
  uint64_t capacity_bytes = 0;
  uint64_t available_bytes = 0;
  uint64_t reserve_bytes = 0;
  // OSDs on one host with one nonzero id share a file system; 0: unknown (its own).
  uint64_t filesystem_id = 0;
  std::string host;
};

struct UsableSpace {
  uint64_t capacity_bytes = 0;   // what the cluster holds of file data when it is full
  uint64_t available_bytes = 0;  // what can still be written
  uint32_t bounding_osd = 0;     // an OSD of the file system that bounds it
};

UsableSpace ComputeUsableSpace(const std::vector<OsdSpace>& osds, int copies = 2);

}  // namespace orthofs
