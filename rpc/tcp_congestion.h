// The TCP congestion control of this process's OrthoFS connections (the cluster map's
// tcp_congestion): the OSDs' listening sockets, the connections they accept, and every
// channel a client, tool or OSD opens to an OSD. Empty: the host's default
// (net.ipv4.tcp_congestion_control). Set once at start; later maps do not change it.
//
// Why a cluster may want one: on links with no queue to manage (loopback, a quiet LAN), BBR's
// packet pacing costs CPU per write and brings nothing; see docs/BENCHMARKS.md, "Defaults chosen by
// measurement".
#pragma once

#include <grpcpp/support/channel_arguments.h>

#include <memory>
#include <string>
#include <string_view>

#include "common/cluster_map.h"
#include "common/status.h"

namespace grpc {
class ServerBuilderOption;
}  // namespace grpc

namespace orthofs {

// Checks that this host lets this process use `name` (setsockopt on a probe socket): errors
// say whether the kernel lacks it (with the list it offers) or does not allow it to this user.
Status CheckTcpCongestion(std::string_view name);

// Sets this process's congestion control for the connections opened (and accepted) after it,
// once CheckTcpCongestion passes; on an error nothing changes. Empty: the host's default.
Status UseTcpCongestion(std::string_view name);

// UseTcpCongestion(map.tcp_congestion), logged: a host that lacks it keeps its default with a
// warning instead of failing (the map is the whole cluster's, the hosts may differ).
void UseClusterTcpCongestion(const ClusterMap& map);

// The one UseTcpCongestion set ("" when none).
std::string TcpCongestionInUse();

// Adds to `args` a socket mutator that sets the congestion control in use on every socket the
// channel creates; no-op when none is in use.
void ApplyTcpCongestion(grpc::ChannelArguments* args);

// The same for a server: its listeners, and the connections it accepts.
std::unique_ptr<grpc::ServerBuilderOption> TcpCongestionServerOption();

}  // namespace orthofs
