#include "client/cluster_space.h"

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/await_all.h"

namespace orthofs {

namespace {

// The host part of "host:port" or "[v6]:port".
std::string HostOf(const std::string& address) {
  if (!address.empty() && address.front() == '[') return address.substr(0, address.find(']') + 1);
  return address.substr(0, address.rfind(':'));
}

}  // namespace

ClusterSpace SpaceOf(ClusterClient* cluster) {
  ClusterSpace space;
  const ClusterMap& map = cluster->map();
  std::vector<OsdSpace> osds;
  for (const OsdInfo& info : map.osds) {
    osds.push_back(
        OsdSpace{.osd_id = info.id, .weight = info.weight, .host = HostOf(info.address)});
  }
  std::set<uint32_t> asked;
  const auto request = std::make_shared<const wire::StatsRequest>();
  for (bool ask_down : {false, true}) {
    std::vector<OsdClient*> asking;
    for (OsdClient* osd : cluster->osds()) {
      if (osd->down() == ask_down && asked.insert(osd->osd_id()).second) asking.push_back(osd);
    }
    const std::vector<Result<wire::StatsResponse>> answers = AwaitAll<Result<wire::StatsResponse>>(
        asking.size(),
        [&](size_t i, auto done) { asking[i]->StatsAsync(request, std::move(done)); });
    for (const Result<wire::StatsResponse>& stats : answers) {
      if (!stats.ok()) continue;
      for (OsdSpace& osd : osds) {
        if (osd.osd_id != stats->osd_id()) continue;
        osd.capacity_bytes = stats->capacity_bytes();
        osd.available_bytes = stats->available_bytes();
        osd.reserve_bytes = stats->reserve_bytes();
        osd.filesystem_id = stats->filesystem_id();
      }
      space.objects += stats->objects() / 2;
      ++space.answered;
    }
    if (space.answered > 0) break;
  }
  space.asked = static_cast<int>(asked.size());
  if (space.answered == 0) return space;
  // An OSD that did not answer is left out: its copies go to their other copy's OSD (with a
  // repair record) until it is back, so the others' room is what writes can use now.
  std::erase_if(osds, [](const OsdSpace& osd) { return osd.capacity_bytes == 0; });
  space.usable = ComputeUsableSpace(osds);
  return space;
}

}  // namespace orthofs
