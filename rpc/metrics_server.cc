#include "rpc/metrics_server.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace orthofs {
namespace {

constexpr size_t kMaxRequestBytes = 8192;

void WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return;  // the scraper went away
    done += static_cast<size_t>(n);
  }
}

std::string Response(int code, const char* reason, const std::string& content_type,
                     const std::string& body) {
  return "HTTP/1.0 " + std::to_string(code) + " " + reason + "\r\nContent-Type: " + content_type +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" +
         body;
}

}  // namespace

Result<std::unique_ptr<MetricsServer>> MetricsServer::Start(const std::string& address,
                                                            Render render) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size()) {
    return Status::InvalidArgument("metrics address '" + address + "' is not host:port");
  }
  const std::string given_host = address.substr(0, colon);
  std::string host = given_host;
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const std::string port = address.substr(colon + 1);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return Status::InvalidArgument("metrics address '" + address + "': " + gai_strerror(rc));
  }
  std::string last_error = "no address";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 16) == 0) {
      sockaddr_storage bound{};
      socklen_t len = sizeof bound;
      getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
      char service[16] = {};
      getnameinfo(reinterpret_cast<sockaddr*>(&bound), len, nullptr, 0, service, sizeof service,
                  NI_NUMERICSERV);
      freeaddrinfo(found);
      return std::unique_ptr<MetricsServer>(
          new MetricsServer(fd, given_host, std::atoi(service), std::move(render)));
    }
    last_error = std::strerror(errno);
    close(fd);
  }
  freeaddrinfo(found);
  return Status::Unavailable("cannot listen on metrics address " + address + ": " + last_error);
}

MetricsServer::MetricsServer(int listen_fd, std::string host, int port, Render render)
    : listen_fd_(listen_fd), host_(std::move(host)), port_(port), render_(std::move(render)) {
  if (pipe2(wake_fds_, O_CLOEXEC) != 0) wake_fds_[0] = wake_fds_[1] = -1;
  thread_ = std::thread([this] { Serve(); });
}

MetricsServer::~MetricsServer() {
  if (wake_fds_[1] >= 0) {
    const char byte = 0;
    (void)!write(wake_fds_[1], &byte, 1);
  }
  if (thread_.joinable()) thread_.join();
  close(listen_fd_);
  for (int fd : wake_fds_) {
    if (fd >= 0) close(fd);
  }
}

void MetricsServer::Serve() {
  while (true) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fds_[0], POLLIN, 0}};
    if (poll(fds, wake_fds_[0] >= 0 ? 2 : 1, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    Answer(fd);
    close(fd);
  }
}

void MetricsServer::Answer(int fd) {
  timeval timeout{2, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  std::string request;
  char buf[1024];
  while (request.find("\r\n\r\n") == std::string::npos && request.size() < kMaxRequestBytes) {
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    request.append(buf, static_cast<size_t>(n));
  }
  const std::string line = request.substr(0, request.find("\r\n"));
  const bool get = line.rfind("GET ", 0) == 0;
  const std::string path = get ? line.substr(4, line.find(' ', 4) - 4) : "";
  if (!get) {
    WriteAll(fd, Response(405, "Method Not Allowed", "text/plain", "only GET /metrics\n"));
  } else if (path != "/metrics") {
    WriteAll(fd, Response(404, "Not Found", "text/plain", "see /metrics\n"));
  } else {
    WriteAll(fd, Response(200, "OK", "text/plain; version=0.0.4; charset=utf-8", render_()));
  }
}

}  // namespace orthofs
