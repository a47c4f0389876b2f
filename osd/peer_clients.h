// This OSD's clients to the other OSDs of either map (rebalance traffic, map catch-up, pings),
// one per peer, made on first use and kept.
#pragma once

#include <cstdint>
#include <map>
#include <memory>

#include "common/map_view.h"
#include "common/thread_annotations.h"
#include "rpc/call_canceller.h"
#include "rpc/osd_client.h"
#include "rpc/tls.h"

namespace orthofs {

// Thread-safe; the clients it hands out live as long as it does.
class PeerClients {
 public:
  // `tls`: for the calls (null: plaintext). `canceller`: cancels them when the OSD shuts down.
  PeerClients(std::shared_ptr<const TlsIdentity> tls, std::shared_ptr<CallCanceller> canceller)
      : tls_(std::move(tls)), canceller_(std::move(canceller)) {}

  // The client to `osd_id`, found in `view` the first time; null if neither map has it.
  OsdClient* For(const MapView& view, uint32_t osd_id) ORTHOFS_EXCLUDES(mu_);

 private:
  const std::shared_ptr<const TlsIdentity> tls_;
  const std::shared_ptr<CallCanceller> canceller_;
  Mutex mu_;
  std::map<uint32_t, std::unique_ptr<OsdClient>> clients_ ORTHOFS_GUARDED_BY(mu_);
};

}  // namespace orthofs
