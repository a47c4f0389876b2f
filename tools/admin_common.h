// What every subcommand of the admin CLI `orthofs` shares: the exit codes, the flags that
// name the cluster (--map, --timeout-ms, TLS), connecting, and printing.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "client/cluster_client.h"
#include "rpc/tls_flags_cli.h"

namespace orthofs::admin {

constexpr int kExitOk = 0;
constexpr int kExitError = 1;
constexpr int kExitUsage = 2;
constexpr int kExitDegraded = 3;  // status: some OSD is down

// $ORTHOFS_MAP, or /etc/orthofs/cluster.yaml.
std::string DefaultMapPath();

// Prints "orthofs: <message>" on stderr; returns kExitError.
int Error(const std::string& message);

// "12.3 MiB".
std::string HumanBytes(uint64_t bytes);

struct CommonFlags {
  std::string map_path = DefaultMapPath();
  int timeout_ms = 5000;
  TlsFlags tls;
};

void AddCommonFlags(CLI::App* cmd, CommonFlags* flags);

// A client of the cluster `flags` name, with the admin certificate.
Result<std::unique_ptr<ClusterClient>> Connect(const CommonFlags& flags);

}  // namespace orthofs::admin
