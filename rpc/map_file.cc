#include "rpc/map_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace orthofs {

Result<ClusterMap> LoadClusterMapFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return Status::InvalidArgument("cluster map " + path +
                                   ": cannot read: " + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  Result<ClusterMap> map = ParseClusterMap(text.str());
  if (!map.ok()) {
    return map.status().WithContext("cluster map " + path + ": ");
  }
  return map;
}

}  // namespace orthofs
