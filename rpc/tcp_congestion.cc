#include "rpc/tcp_congestion.h"

#include <grpc/support/sync.h>
#include <grpcpp/impl/server_builder_option.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <mutex>
#include <type_traits>
#include <vector>

namespace orthofs {
namespace {

// gRPC's socket mutator (GRPC_ARG_SOCKET_MUTATOR, ChannelArguments::SetSocketMutator) is public
// API, but its struct is defined only in an internal header that is not installed
// (src/core/lib/iomgr/socket_mutator.h): a vtable pointer, then the reference count, with the
// vtable {mutate_fd, compare, destroy, mutate_fd_2}, unchanged since mutate_fd_2 came in 2021
// (about gRPC 1.39). This object has that layout; gRPC sees it as a grpc_socket_mutator*.
struct MutateSocketInfo {  // grpc_mutate_socket_info
  int fd;
  int usage;  // grpc_fd_usage: client connection, server listener, accepted connection
};

struct MutatorVtable {
  bool (*mutate_fd)(int fd, grpc_socket_mutator* mutator);
  int (*compare)(grpc_socket_mutator* a, grpc_socket_mutator* b);
  void (*destroy)(grpc_socket_mutator* mutator);
  bool (*mutate_fd_2)(const MutateSocketInfo* info, grpc_socket_mutator* mutator);
};

// TCP_CA_NAME_MAX: 15 characters and the terminating NUL.
constexpr size_t kNameSize = 16;

struct CongestionMutator {
  const MutatorVtable* vtable;
  gpr_refcount refcount;
  char name[kNameSize];  // NUL-terminated
};
static_assert(std::is_standard_layout_v<CongestionMutator>);
static_assert(offsetof(CongestionMutator, vtable) == 0);
static_assert(offsetof(CongestionMutator, refcount) == sizeof(void*));

bool SetOnSocket(int fd, const char* name) {
  if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, static_cast<socklen_t>(strlen(name))) !=
      0) {
    // Not TCP (a Unix socket) or refused: the connection works on the default all the same.
    spdlog::debug("TCP congestion control {} not set on a socket: {}", name, strerror(errno));
  }
  return true;  // never fail a connection over it
}

CongestionMutator* Mutator(grpc_socket_mutator* mutator) {
  return reinterpret_cast<CongestionMutator*>(mutator);
}

bool MutateFd(int fd, grpc_socket_mutator* mutator) {
  return SetOnSocket(fd, Mutator(mutator)->name);
}

// Every use: client connections, listeners (accepted sockets inherit from them too) and
// accepted connections; without mutate_fd_2 gRPC would skip the last.
bool MutateFdWithUsage(const MutateSocketInfo* info, grpc_socket_mutator* mutator) {
  return SetOnSocket(info->fd, Mutator(mutator)->name);
}

// Channels with equal mutators may share connections: equal names set equal options.
int CompareMutators(grpc_socket_mutator* a, grpc_socket_mutator* b) {
  return strncmp(Mutator(a)->name, Mutator(b)->name, kNameSize);
}

void DestroyMutator(grpc_socket_mutator* mutator) { delete Mutator(mutator); }

constexpr MutatorVtable kCongestionVtable = {MutateFd, CompareMutators, DestroyMutator,
                                             MutateFdWithUsage};

struct InUse {
  std::mutex mu;
  std::string name;  // guarded by mu
};

InUse& CongestionInUse() {
  static auto* in_use = new InUse;  // never destroyed: channels may outlive main's locals
  return *in_use;
}

std::string KernelList(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line.empty() ? "unknown" : line;
}

class TcpCongestionOption : public grpc::ServerBuilderOption {
 public:
  void UpdateArguments(grpc::ChannelArguments* args) override { ApplyTcpCongestion(args); }
  void UpdatePlugins(std::vector<std::unique_ptr<grpc::ServerBuilderPlugin>>*) override {}
};

}  // namespace

Status CheckTcpCongestion(std::string_view name) {
  const std::string wanted(name);
  if (Status st = ValidateTcpCongestionName(wanted); !st.ok()) {
    return Status::InvalidArgument("TCP congestion control " + st.message());
  }
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IoError(std::string("cannot open a TCP socket: ") + strerror(errno));
  const int rc = setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, wanted.data(),
                            static_cast<socklen_t>(wanted.size()));
  const int error = errno;
  close(fd);
  if (rc == 0) return Status::Ok();
  if (error == ENOENT) {
    return Status::InvalidArgument(
        "TCP congestion control '" + wanted + "' is not available on this host (it offers: " +
        KernelList("/proc/sys/net/ipv4/tcp_available_congestion_control") + ")");
  }
  if (error == EPERM) {
    return Status::InvalidArgument(
        "TCP congestion control '" + wanted +
        "' is not allowed for this user (net.ipv4.tcp_allowed_congestion_control: " +
        KernelList("/proc/sys/net/ipv4/tcp_allowed_congestion_control") + ")");
  }
  return Status::InvalidArgument("TCP congestion control '" + wanted + "': " + strerror(error));
}

Status UseTcpCongestion(std::string_view name) {
  if (!name.empty()) ORTHOFS_RETURN_IF_ERROR(CheckTcpCongestion(name));
  InUse& in_use = CongestionInUse();
  std::lock_guard lock(in_use.mu);
  in_use.name = std::string(name);
  return Status::Ok();
}

void UseClusterTcpCongestion(const ClusterMap& map) {
  if (map.tcp_congestion.empty()) return;
  if (Status st = UseTcpCongestion(map.tcp_congestion); !st.ok()) {
    spdlog::warn("cluster map: {}; this process's connections use the host's default",
                 st.message());
    return;
  }
  // Debug: mounts and commands print info lines to the user's terminal (the OSD logs it).
  spdlog::debug("TCP congestion control {} (cluster map)", map.tcp_congestion);
}

std::string TcpCongestionInUse() {
  InUse& in_use = CongestionInUse();
  std::lock_guard lock(in_use.mu);
  return in_use.name;
}

void ApplyTcpCongestion(grpc::ChannelArguments* args) {
  const std::string name = TcpCongestionInUse();
  if (name.empty()) return;  // UseTcpCongestion checked it: at most 15 characters
  auto* mutator = new CongestionMutator{&kCongestionVtable, {}, {}};
  gpr_ref_init(&mutator->refcount, 1);
  name.copy(mutator->name, kNameSize - 1);
  // SetSocketMutator takes over the reference; gRPC calls destroy when the last one goes.
  args->SetSocketMutator(reinterpret_cast<grpc_socket_mutator*>(mutator));
}

std::unique_ptr<grpc::ServerBuilderOption> TcpCongestionServerOption() {
  return std::make_unique<TcpCongestionOption>();
}

}  // namespace orthofs
