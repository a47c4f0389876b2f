// What the cluster can still hold of file data, for df (statfs), fallocate's check and
// `orthofs status`: every OSD's Stats, combined by common/usable_space.h (two copies, each
// OSD's share by weight, reserves, OSDs sharing a file system counted once).
#pragma once

#include <cstdint>

#include "client/cluster_client.h"
#include "common/usable_space.h"

namespace orthofs {

struct ClusterSpace {
  UsableSpace usable;
  uint64_t objects = 0;  // object copies stored, halved: about the objects of files
  int answered = 0;      // OSDs that answered; 0: nothing is known
  int asked = 0;
};

// OSDs believed down are asked only when no other answers: one that hangs would hold df for
// the call's deadline. The others all at once. An OSD that did not answer is left out.
ClusterSpace SpaceOf(ClusterClient* cluster);

}  // namespace orthofs
