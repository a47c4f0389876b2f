// Reading the cluster map from its file.
#pragma once

#include <string>

#include "common/cluster_map.h"

namespace orthofs {

// Errors start with the path: "cluster map /etc/orthofs/map.yaml: osds[1].id: duplicate id 0".
Result<ClusterMap> LoadClusterMapFile(const std::string& path);

}  // namespace orthofs
