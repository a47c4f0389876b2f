#include "client/window_subscriptions.h"

#include <spdlog/spdlog.h>

namespace orthofs {

namespace {

constexpr std::chrono::seconds kReconnectPause{1};

}  // namespace

WindowSubscriptions::WindowSubscriptions(ClusterClient* cluster, OnUpdate on_update)
    : cluster_(cluster), on_update_(std::move(on_update)) {
  for (const auto& osd : cluster_->osds()) {
    threads_.emplace_back([this, o = osd.get()] { Follow(o); });
  }
}

WindowSubscriptions::~WindowSubscriptions() {
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
  request.set_epoch(cluster_->map().epoch);
  request.set_client_id(cluster_->client_id());
  while (true) {
    grpc::ClientContext context;  // no deadline: the stream lives as long as the mount
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
    spdlog::debug("window stream from {} ended ({}); reconnecting", osd->name(),
                  status.error_message());
    cv_.wait_for(lock, kReconnectPause, [this] { return stopping_; });
  }
}

}  // namespace orthofs
