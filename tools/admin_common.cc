#include "tools/admin_common.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "common/peer_role.h"
#include "rpc/map_file.h"
#include "rpc/tcp_congestion.h"

namespace orthofs::admin {

std::string DefaultMapPath() {
  const char* env = std::getenv("ORTHOFS_MAP");
  return env ? env : "/etc/orthofs/cluster.yaml";
}

int Error(const std::string& message) {
  std::cerr << "orthofs: " << message << "\n";
  return kExitError;
}

std::string HumanBytes(uint64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int unit = 0;
  while (v >= 1024 && unit < 5) {
    v /= 1024;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, unit == 0 ? "%.0f %s" : "%.1f %s", v, kUnits[unit]);
  return buf;
}

void AddCommonFlags(CLI::App* cmd, CommonFlags* flags) {
  cmd->add_option("--map", flags->map_path,
                  "cluster map file (default $ORTHOFS_MAP or " + DefaultMapPath() + ")");
  cmd->add_option("--timeout-ms", flags->timeout_ms, "deadline of each RPC")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600000));
  AddTlsFlags(cmd, &flags->tls, std::string(kAdminCertificateName));
}

Result<std::unique_ptr<ClusterClient>> Connect(const CommonFlags& flags) {
  Result<ClusterMap> map = LoadClusterMapFile(flags.map_path);
  if (!map.ok()) return map.status();
  UseClusterTcpCongestion(*map);
  RpcOptions options;
  options.deadline = std::chrono::milliseconds(flags.timeout_ms);
  Result<std::shared_ptr<const TlsIdentity>> tls =
      LoadTlsIdentity(flags.tls, std::string(kAdminCertificateName));
  if (!tls.ok()) return tls.status();
  options.tls = std::move(*tls);
  return std::make_unique<ClusterClient>(*map, options);
}

}  // namespace orthofs::admin
