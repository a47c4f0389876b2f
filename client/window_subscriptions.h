// COR, client side: one Subscribe stream per OSD, each read by its own thread, reconnecting
// with a pause when the OSD goes away. Every window change an OSD pushes goes to on_update.
// A map change (rebalance) adds streams for new OSDs; a removed OSD's stream ends with it.
#pragma once

#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "client/cluster_client.h"

namespace orthofs {

class WindowSubscriptions {
 public:
  using OnUpdate = std::function<void(const wire::WindowUpdate&)>;
  WindowSubscriptions(ClusterClient* cluster, OnUpdate on_update);
  // Cancels the streams and waits for the threads.
  ~WindowSubscriptions();

  WindowSubscriptions(const WindowSubscriptions&) = delete;
  WindowSubscriptions& operator=(const WindowSubscriptions&) = delete;

 private:
  void Follow(OsdClient* osd);
  // Starts a stream for every OSD of the current map that has none. Caller holds mu_.
  void FollowNewOsds();

  ClusterClient* cluster_;
  OnUpdate on_update_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::set<grpc::ClientContext*> active_;
  std::set<OsdClient*> followed_;
  std::vector<std::thread> threads_;
};

}  // namespace orthofs
