#include "common/placement_report.h"

#include <algorithm>
#include <unordered_map>

namespace orthofs {
namespace {

double MaxOverMean(const std::vector<OsdLoad>& osds, uint64_t (*get)(const OsdLoad&)) {
  uint64_t max = 0, sum = 0;
  for (const auto& o : osds) {
    max = std::max(max, get(o));
    sum += get(o);
  }
  return sum == 0 ? 0.0 : static_cast<double>(max) * osds.size() / static_cast<double>(sum);
}

}  // namespace

PlacementReport ComputePlacementReport(const Placement& placement, uint32_t fnso, uint64_t files,
                                       uint64_t objects_per_file) {
  PlacementReport report;
  std::unordered_map<uint32_t, size_t> index;
  for (const auto& osd : placement.map().osds) {
    index[osd.id] = report.osds.size();
    report.osds.push_back(OsdLoad{osd.id, 0, 0});
  }
  for (uint64_t fno = 1; fno <= files; ++fno) {
    const FilePlacement file = placement.ForFile(fnso, fno);
    const uint32_t replica = file.replica_osd();
    report.osds[index[replica]].replicas += objects_per_file;
    for (uint64_t offset = 0; offset < objects_per_file; ++offset) {
      const FilePlacement::Original original = file.OriginalFor(ObjectType::kData, offset);
      ++report.osds[index[original.osd]].originals;
      if (original.osd == replica) ++report.conflicts;
      if (original.migrated) ++report.migrated;
    }
  }
  report.objects = files * objects_per_file;
  report.originals_imbalance =
      MaxOverMean(report.osds, [](const OsdLoad& o) { return o.originals; });
  report.replicas_imbalance = MaxOverMean(report.osds, [](const OsdLoad& o) { return o.replicas; });
  report.total_imbalance = MaxOverMean(report.osds, [](const OsdLoad& o) { return o.total(); });
  return report;
}

}  // namespace orthofs
