#include "client/window_subscriptions.h"

#include <spdlog/spdlog.h>

namespace orthofs {

namespace {

constexpr std::chrono::seconds kReconnectPause{1};

}  // namespace

WindowSubscriptions::WindowSubscriptions(ClusterClient* cluster, OnUpdate on_update)
    : cluster_(cluster), on_update_(std::move(on_update)) {
  {
    std::lock_guard lock(mu_);
    FollowNewOsds();
  }
  cluster_->set_map_change_callback([this] {
    std::lock_guard lock(mu_);
    if (!stopping_) FollowNewOsds();
  });
}

void WindowSubscriptions::FollowNewOsds() {
  for (OsdClient* osd : cluster_->osds()) {
    if (followed_.insert(osd).second) threads_.emplace_back([this, osd] { Follow(osd); });
  }
}

WindowSubscriptions::~WindowSubscriptions() {
  cluster_->set_map_change_callback(nullptr);
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    for (grpc::ClientContext* context : active_) context->TryCancel();
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void WindowSubscriptions::Follow(OsdClient* osd) {
  wire::SubscribeRequest request;
  request.set_client_id(cluster_->client_id());
  while (true) {
    request.set_epoch(cluster_->map().epoch);  // the map may have changed since the last try
    grpc::ClientContext context;               // no deadline: the stream lives as long as the mount
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      active_.insert(&context);
    }
    std::unique_ptr<grpc::ClientReader<wire::WindowUpdate>> reader =
        osd->Subscribe(&context, request);
    wire::WindowUpdate update;
    while (reader->Read(&update)) on_update_(update);
    const grpc::Status status = reader->Finish();
    std::unique_lock lock(mu_);
    active_.erase(&context);
    if (stopping_) return;
    if (cluster_->Osd(osd->osd_id()) != osd) {  // removed from the map (or moved address)
      followed_.erase(osd);
      spdlog::debug("{} left the map: no more window stream from it", osd->name());
      return;
    }
    spdlog::debug("window stream from {} ended ({}); reconnecting", osd->name(),
                  status.error_message());
    cv_.wait_for(lock, kReconnectPause, [this] { return stopping_; });
  }
}

}  // namespace orthofs
