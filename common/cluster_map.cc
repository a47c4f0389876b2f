#include "common/cluster_map.h"

#include <arpa/inet.h>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <iomanip>
#include <limits>
#include <map>
#include <set>
#include <sstream>

namespace orthofs {

std::string_view PlacementStrategyName(PlacementStrategy s) {
  return s == PlacementStrategy::kMigration ? "migration" : "repartition";
}

Result<PlacementStrategy> ParsePlacementStrategy(std::string_view name) {
  if (name == "migration") return PlacementStrategy::kMigration;
  if (name == "repartition") return PlacementStrategy::kRepartition;
  return Status::InvalidArgument("unknown placement strategy '" + std::string(name) +
                                 "' (want migration or repartition)");
}

const OsdInfo* ClusterMap::FindOsd(uint32_t id) const {
  for (const auto& osd : osds) {
    if (osd.id == id) return &osd;
  }
  return nullptr;
}

Status ValidateAddress(std::string_view address) {
  // A NUL would end the C string inet_pton and gRPC see, hiding whatever follows it (even a
  // quote or a newline, which FormatClusterMap would then write into the map).
  if (address.find('\0') != std::string_view::npos) {
    return Status::InvalidArgument("address contains a NUL byte");
  }
  size_t colon = address.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    return Status::InvalidArgument("address '" + std::string(address) + "' is not host:port");
  }
  std::string_view host = address.substr(0, colon);
  std::string_view port = address.substr(colon + 1);
  if (host.front() == '[') {
    in6_addr parsed{};
    if (host.size() < 3 || host.back() != ']' ||
        inet_pton(AF_INET6, std::string(host.substr(1, host.size() - 2)).c_str(), &parsed) != 1) {
      return Status::InvalidArgument("address '" + std::string(address) +
                                     "': a bracketed host must be an IPv6 address, [addr]");
    }
  } else {
    if (host.find(':') != std::string_view::npos) {
      return Status::InvalidArgument("address '" + std::string(address) +
                                     "': write an IPv6 host as [addr]:port");
    }
    for (char c : host) {
      bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
      if (!ok) {
        return Status::InvalidArgument("address '" + std::string(address) +
                                       "': bad character in host");
      }
    }
  }
  unsigned value = 0;
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || ptr != port.data() + port.size() || value == 0 ||
      value > 65535) {
    return Status::InvalidArgument("address '" + std::string(address) +
                                   "': port must be a number in 1..65535");
  }
  return Status::Ok();
}

Status ValidateTcpCongestionName(std::string_view name) {
  // TCP_CA_NAME_MAX is 16 bytes with the terminating NUL.
  if (name.empty() || name.size() > 15) {
    return Status::InvalidArgument("'" + std::string(name) + "' must be 1 to 15 characters");
  }
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') {
      return Status::InvalidArgument("'" + std::string(name) +
                                     "': only letters, digits, '_' and '-'");
    }
  }
  // FormatClusterMap writes the name bare: YAML must read it back as this very string.
  if (!std::isalnum(static_cast<unsigned char>(name.front())) || name == "null" || name == "Null" ||
      name == "NULL") {
    return Status::InvalidArgument("'" + std::string(name) +
                                   "' must start with a letter or digit and not be null");
  }
  return Status::Ok();
}

Status ValidateClusterMap(const ClusterMap& map) {
  if (map.epoch == 0) return Status::InvalidArgument("epoch: must be at least 1");
  if (map.object_size < kMinObjectSize || map.object_size > kMaxObjectSize ||
      (map.object_size & (map.object_size - 1)) != 0) {
    return Status::InvalidArgument("object_size: " + std::to_string(map.object_size) +
                                   " is not a power of two in " + std::to_string(kMinObjectSize) +
                                   ".." + std::to_string(kMaxObjectSize));
  }
  if (Status st = ValidatePrefetchConfig(map.prefetch); !st.ok()) {
    return Status::InvalidArgument("prefetch: " + st.message());
  }
  if (!map.tcp_congestion.empty()) {
    if (Status st = ValidateTcpCongestionName(map.tcp_congestion); !st.ok()) {
      return Status::InvalidArgument("tcp_congestion: " + st.message());
    }
  }
  if (map.osds.size() < 2) {
    return Status::InvalidArgument("osds: " + std::to_string(map.osds.size()) +
                                   " OSD(s); orthogonal replicas need at least 2");
  }
  std::map<uint32_t, size_t> ids;
  std::map<std::string, size_t> addresses;
  for (size_t i = 0; i < map.osds.size(); ++i) {
    const OsdInfo& osd = map.osds[i];
    std::string where = "osds[" + std::to_string(i) + "]";
    if (auto [it, fresh] = ids.emplace(osd.id, i); !fresh) {
      return Status::InvalidArgument(where + ".id: duplicate id " + std::to_string(osd.id) +
                                     " (also osds[" + std::to_string(it->second) + "])");
    }
    if (Status st = ValidateAddress(osd.address); !st.ok()) {
      return Status::InvalidArgument(where + ".address: " + st.message());
    }
    if (auto [it, fresh] = addresses.emplace(osd.address, i); !fresh) {
      return Status::InvalidArgument(where + ".address: duplicate address " + osd.address +
                                     " (also osds[" + std::to_string(it->second) + "])");
    }
    if (!std::isfinite(osd.weight) || osd.weight <= 0 || osd.weight > 1e6) {
      return Status::InvalidArgument(where + ".weight: must be a number in (0, 1e6]");
    }
  }
  return Status::Ok();
}

namespace {

// yaml-cpp reports errors by exception; they stop at this file's boundary.
template <typename T>
Status ReadScalar(const YAML::Node& node, const std::string& where, T* out) {
  if (!node.IsScalar()) return Status::InvalidArgument(where + ": must be a scalar");
  try {
    *out = node.as<T>();
  } catch (const YAML::Exception&) {
    return Status::InvalidArgument(where + ": '" + node.Scalar() + "' has the wrong type");
  }
  return Status::Ok();
}

// yaml-cpp would wrap "-1" around to a huge unsigned value; refuse signs outright.
Status ReadUnsigned(const YAML::Node& node, const std::string& where, uint64_t* out) {
  if (node.IsScalar() && !node.Scalar().empty() &&
      (node.Scalar()[0] == '-' || node.Scalar()[0] == '+')) {
    return Status::InvalidArgument(where + ": '" + node.Scalar() + "' must be unsigned");
  }
  return ReadScalar(node, where, out);
}

Status RejectUnknownKeys(const YAML::Node& node, const std::string& where,
                         const std::set<std::string>& known) {
  for (const auto& kv : node) {
    std::string key = kv.first.as<std::string>();
    if (!known.count(key)) {
      return Status::InvalidArgument(where + (where.empty() ? "" : ".") + key + ": unknown key");
    }
  }
  return Status::Ok();
}

Status ParseOsd(const YAML::Node& node, const std::string& where, OsdInfo* osd) {
  if (!node.IsMap()) return Status::InvalidArgument(where + ": must be a mapping");
  ORTHOFS_RETURN_IF_ERROR(RejectUnknownKeys(node, where, {"id", "address", "weight"}));
  if (!node["id"]) return Status::InvalidArgument(where + ".id: missing");
  if (!node["address"]) return Status::InvalidArgument(where + ".address: missing");
  int64_t id = -1;
  ORTHOFS_RETURN_IF_ERROR(ReadScalar(node["id"], where + ".id", &id));
  if (id < 0 || id > UINT32_MAX) {
    return Status::InvalidArgument(where + ".id: must be in 0..4294967295");
  }
  osd->id = static_cast<uint32_t>(id);
  ORTHOFS_RETURN_IF_ERROR(ReadScalar(node["address"], where + ".address", &osd->address));
  if (node["weight"]) {
    ORTHOFS_RETURN_IF_ERROR(ReadScalar(node["weight"], where + ".weight", &osd->weight));
  }
  return Status::Ok();
}

Status ReadWindowSize(const YAML::Node& node, const std::string& where, uint32_t* out) {
  uint64_t value = 0;
  ORTHOFS_RETURN_IF_ERROR(ReadUnsigned(node, where, &value));
  if (value > UINT32_MAX) return Status::InvalidArgument(where + ": out of range");
  *out = static_cast<uint32_t>(value);
  return Status::Ok();
}

Status ParsePrefetch(const YAML::Node& node, PrefetchConfig* config) {
  if (!node.IsMap()) return Status::InvalidArgument("prefetch: must be a mapping");
  ORTHOFS_RETURN_IF_ERROR(RejectUnknownKeys(
      node, "prefetch", {"mode", "window", "initial_window", "max_window", "fixed_window"}));
  if (node["mode"]) {
    std::string text;
    ORTHOFS_RETURN_IF_ERROR(ReadScalar(node["mode"], "prefetch.mode", &text));
    Result<PrefetchMode> mode = ParsePrefetchMode(text);
    if (!mode.ok()) return Status::InvalidArgument("prefetch.mode: " + mode.status().message());
    config->mode = *mode;
  }
  if (node["window"]) {
    std::string text;
    ORTHOFS_RETURN_IF_ERROR(ReadScalar(node["window"], "prefetch.window", &text));
    Result<WindowPolicy> policy = ParseWindowPolicy(text);
    if (!policy.ok()) {
      return Status::InvalidArgument("prefetch.window: " + policy.status().message());
    }
    config->policy = *policy;
  }
  if (node["initial_window"]) {
    ORTHOFS_RETURN_IF_ERROR(
        ReadWindowSize(node["initial_window"], "prefetch.initial_window", &config->initial_window));
  }
  if (node["max_window"]) {
    ORTHOFS_RETURN_IF_ERROR(
        ReadWindowSize(node["max_window"], "prefetch.max_window", &config->max_window));
  }
  if (node["fixed_window"]) {
    ORTHOFS_RETURN_IF_ERROR(
        ReadScalar(node["fixed_window"], "prefetch.fixed_window", &config->fixed_window));
  }
  return Status::Ok();
}

Status ParseInto(const YAML::Node& root, ClusterMap* map) {
  if (!root.IsMap()) return Status::InvalidArgument("the map must be a YAML mapping");
  ORTHOFS_RETURN_IF_ERROR(RejectUnknownKeys(
      root, "", {"epoch", "object_size", "placement", "prefetch", "tcp_congestion", "osds"}));
  if (!root["epoch"]) return Status::InvalidArgument("epoch: missing");
  ORTHOFS_RETURN_IF_ERROR(ReadUnsigned(root["epoch"], "epoch", &map->epoch));
  if (map->epoch < 1) return Status::InvalidArgument("epoch: must be at least 1");
  if (root["object_size"]) {
    int64_t size = 0;
    ORTHOFS_RETURN_IF_ERROR(ReadScalar(root["object_size"], "object_size", &size));
    if (size < 0 || size > UINT32_MAX) {
      return Status::InvalidArgument("object_size: out of range");
    }
    map->object_size = static_cast<uint32_t>(size);
  }
  if (root["placement"]) {
    std::string name;
    ORTHOFS_RETURN_IF_ERROR(ReadScalar(root["placement"], "placement", &name));
    Result<PlacementStrategy> s = ParsePlacementStrategy(name);
    if (!s.ok()) return Status::InvalidArgument("placement: " + s.status().message());
    map->strategy = *s;
  }
  if (root["prefetch"]) ORTHOFS_RETURN_IF_ERROR(ParsePrefetch(root["prefetch"], &map->prefetch));
  if (root["tcp_congestion"]) {
    ORTHOFS_RETURN_IF_ERROR(
        ReadScalar(root["tcp_congestion"], "tcp_congestion", &map->tcp_congestion));
    if (map->tcp_congestion.empty()) return Status::InvalidArgument("tcp_congestion: empty");
  }
  const YAML::Node osds = root["osds"];
  if (!osds) return Status::InvalidArgument("osds: missing");
  if (!osds.IsSequence()) return Status::InvalidArgument("osds: must be a list");
  for (size_t i = 0; i < osds.size(); ++i) {
    OsdInfo osd;
    ORTHOFS_RETURN_IF_ERROR(ParseOsd(osds[i], "osds[" + std::to_string(i) + "]", &osd));
    map->osds.push_back(std::move(osd));
  }
  return ValidateClusterMap(*map);
}

}  // namespace

Result<ClusterMap> ParseClusterMap(std::string_view yaml_text) {
  ClusterMap map;
  try {
    YAML::Node root = YAML::Load(std::string(yaml_text));
    ORTHOFS_RETURN_IF_ERROR(ParseInto(root, &map));
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument("not valid YAML: " + std::string(e.what()));
  }
  return map;
}

std::string FormatClusterMap(const ClusterMap& map) {
  std::ostringstream out;
  out << "# OrthoFS cluster map: shared by every OSD and client.\n";
  out << "epoch: " << map.epoch << "\n";
  out << "object_size: " << map.object_size << "\n";
  out << "placement: " << PlacementStrategyName(map.strategy) << "\n";
  out << "prefetch:\n";
  out << "  mode: " << PrefetchModeName(map.prefetch.mode) << "\n";
  out << "  window: " << WindowPolicyName(map.prefetch.policy) << "\n";
  out << "  initial_window: " << map.prefetch.initial_window << "\n";
  out << "  max_window: " << map.prefetch.max_window << "\n";
  out << "  fixed_window: " << (map.prefetch.fixed_window ? "true" : "false") << "\n";
  // Written only when set, so a map without it stays readable by mounts that predate the key.
  if (!map.tcp_congestion.empty()) out << "tcp_congestion: " << map.tcp_congestion << "\n";
  out << "osds:\n";
  for (const auto& osd : map.osds) {
    out << "  - id: " << osd.id << "\n";
    out << "    address: \"" << osd.address << "\"\n";
    // Full precision: a rounded weight would move segment bounds, and with them objects.
    out << "    weight: " << std::setprecision(std::numeric_limits<double>::max_digits10)
        << osd.weight << "\n";
  }
  return out.str();
}

}  // namespace orthofs
