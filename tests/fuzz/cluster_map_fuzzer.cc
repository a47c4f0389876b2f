// libFuzzer target over the cluster-map parser: any text either parses into a valid map or
// is refused with a message, never a crash, UB, leak or hang. A map that parses must also
// survive a round trip through FormatClusterMap (every OSD and client re-reads the same
// file, so formatting must not change the map) and must be usable by placement.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "common/cluster_map.h"
#include "common/oid.h"
#include "common/placement.h"

namespace orthofs {
namespace {

[[noreturn]] void Fail(const std::string& what, std::string_view input) {
  std::fprintf(stderr, "cluster_map_fuzzer: %s\n--- input ---\n%.*s\n", what.c_str(),
               static_cast<int>(input.size()), input.data());
  std::abort();
}

bool SameMap(const ClusterMap& a, const ClusterMap& b) {
  if (a.epoch != b.epoch || a.object_size != b.object_size || a.strategy != b.strategy ||
      !(a.prefetch == b.prefetch) || a.tcp_congestion != b.tcp_congestion ||
      a.osds.size() != b.osds.size()) {
    return false;
  }
  for (size_t i = 0; i < a.osds.size(); ++i) {
    const OsdInfo& x = a.osds[i];
    const OsdInfo& y = b.osds[i];
    // Weights compare bit-exactly: a rounded weight would move objects.
    if (x.id != y.id || x.address != y.address || x.weight != y.weight) return false;
  }
  return true;
}

// Placement is a pure function of a valid map: every copy lands on an OSD of the map, and a
// file's replicas never share an OSD with its originals.
void CheckPlacement(const ClusterMap& map, std::string_view input) {
  const Placement placement(map);
  std::set<uint32_t> ids;
  for (const OsdInfo& osd : map.osds) ids.insert(osd.id);
  for (uint64_t i = 0; i < 8; ++i) {
    const Oid oid{static_cast<uint32_t>(i * 0x9e3779b9u), i * 0x9e3779b97f4a7c15ull, i * 7,
                  i % 2 ? ObjectType::kData : ObjectType::kInode, CopyFlag::kOriginal};
    const uint32_t original = placement.OsdFor(oid);
    const uint32_t replica = placement.OsdFor(oid.WithFlag(CopyFlag::kReplica));
    if (!ids.count(original) || !ids.count(replica)) Fail("placement chose an unknown OSD", input);
    if (original == replica) Fail("an original and its replica share an OSD", input);
  }
}

}  // namespace
}  // namespace orthofs

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace orthofs;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  Result<ClusterMap> map = ParseClusterMap(input);
  if (!map.ok()) {
    // Refusals name the offending field; an empty message helps nobody fix the file.
    if (map.status().message().empty()) Fail("refused without a message", input);
    return 0;
  }
  if (Status st = ValidateClusterMap(*map); !st.ok()) {
    Fail("parsed map is invalid: " + st.ToString(), input);
  }
  const std::string text = FormatClusterMap(*map);
  Result<ClusterMap> again = ParseClusterMap(text);
  if (!again.ok()) Fail("formatted map does not parse: " + again.status().ToString(), text);
  if (!SameMap(*map, *again)) Fail("round trip changed the map", text);
  if (FormatClusterMap(*again) != text) Fail("formatting is not a fixed point", text);
  CheckPlacement(*map, input);
  return 0;
}
