// A minimal HTTP/1.0 responder for Prometheus scrapes: GET /metrics answers with whatever the
// render callback returns (common/prometheus_text.h), from one thread of its own. One request
// per connection, small requests only (8 KiB, 2 s to send them): it serves a scraper, not a
// browser. Used by orthofs-osd --metrics (and, later, the mount).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "common/status.h"

namespace orthofs {

class MetricsServer {
 public:
  using Render = std::function<std::string()>;

  // Listens on "host:port" (port 0: any free one, see port()).
  static Result<std::unique_ptr<MetricsServer>> Start(const std::string& address, Render render);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  int port() const { return port_; }
  // Where it serves, with the port it bound ("http://127.0.0.1:41234/metrics" for
  // "127.0.0.1:0"): what a log line should tell.
  std::string url() const { return "http://" + host_ + ":" + std::to_string(port_) + "/metrics"; }

 private:
  MetricsServer(int listen_fd, std::string host, int port, Render render);
  void Serve();
  void Answer(int fd);

  int listen_fd_;
  std::string host_;  // as given, brackets of an IPv6 address included
  int port_;
  int wake_fds_[2] = {-1, -1};  // a byte written here ends Serve
  Render render_;
  std::thread thread_;
};

}  // namespace orthofs
