// Listings of this OSD's copies (proto List): by copy flag, namespace, file or file and type, a
// page at a time, with summaries only or the objects' bytes. During a rebalance a file's
// listing is whole (what moved here is taken over first), and the OSDs a copy moves from list
// what they hold but no longer own (unowned).
#pragma once

#include <cstdint>
#include <string>

#include "common/map_view.h"
#include "common/placement.h"
#include "common/status.h"
#include "orthofs.pb.h"
#include "osd/hand_over.h"
#include "osd/map_catch_up.h"
#include "osd/object_store.h"
#include "osd/osd_stats.h"
#include "osd/recovery.h"

namespace orthofs {

// Thread-safe: no state of its own; a page is a scan of the store without object locks.
class Listing {
 public:
  // The pointers outlive the Listing.
  Listing(uint32_t osd_id, ObjectStore* store, MapCatchUp* catch_up, const Recovery* recovery,
          HandOver* hand_over, OsdCounters* counters)
      : osd_id_(osd_id),
        store_(store),
        catch_up_(catch_up),
        recovery_(recovery),
        hand_over_(hand_over),
        counters_(counters) {}

  // One page of `request`'s listing; an unowned one after the caller's certificate was checked.
  Status List(const MapView& view, const wire::ListRequest& request, wire::ListResponse* response);

 private:
  // The store key prefix `request` lists, or why it is no listing.
  static Result<std::string> PrefixOf(const wire::ListRequest& request, CopyFlag flag);
  // The page of `prefix`'s keys after the request's page token.
  Status ListPage(const MapView& view, const wire::ListRequest& request, CopyFlag flag,
                  const std::string& prefix, wire::ListResponse* response);

  const uint32_t osd_id_;
  ObjectStore* const store_;
  MapCatchUp* const catch_up_;
  const Recovery* const recovery_;
  HandOver* const hand_over_;
  OsdCounters* const counters_;
};

}  // namespace orthofs
