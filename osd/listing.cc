#include "osd/listing.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>

#include "common/limits.h"
#include "common/object_record.h"
#include "osd/object_records.h"
#include "rpc/wire.h"

namespace orthofs {

Status Listing::List(const MapView& view, const wire::ListRequest& request,
                     wire::ListResponse* response) {
  if (!request.unowned()) {
    // A listing is a read: until our records are replayed it would miss what was created
    // meanwhile (an rmdir would find a directory with a new entry empty). The client lists
    // the other copies.
    ORTHOFS_RETURN_IF_ERROR(recovery_->RefuseWhileRecovering("list"));
  }
  ORTHOFS_RETURN_IF_ERROR(catch_up_->CheckEpoch(view, request.epoch()));
  if (request.flag() != wire::ORIGINAL && request.flag() != wire::REPLICA) {
    return Status::InvalidArgument("invalid copy flag");
  }
  const CopyFlag flag = static_cast<CopyFlag>(request.flag());
  Result<std::string> prefix = PrefixOf(request, flag);
  if (!prefix.ok()) return prefix.status();
  const std::string& token = request.page_token();
  if (!token.empty() &&
      (token.size() != kStoreKeySize || token.compare(0, prefix->size(), *prefix) != 0)) {
    return Status::InvalidArgument("page token does not belong to this listing");
  }
  // A file's listing during a rebalance is whole: what moved to us is taken over first.
  if (view.rebalancing() && !request.unowned() && request.has_fno() && token.empty()) {
    std::optional<ObjectType> type;
    if (request.has_type()) type = static_cast<ObjectType>(request.type());
    ORTHOFS_RETURN_IF_ERROR(
        hand_over_->TakeOverFile(view, flag, request.fnso(), request.fno(), type));
  }
  return ListPage(view, request, flag, *prefix, response);
}

Result<std::string> Listing::PrefixOf(const wire::ListRequest& request, CopyFlag flag) {
  if (request.has_type()) {
    if (!request.has_fno() || !request.has_fnso()) {
      return Status::InvalidArgument("listing by type needs fnso and fno");
    }
    if (!IsValidObjectType(static_cast<uint32_t>(request.type()))) {
      return Status::InvalidArgument("invalid object type");
    }
    return FileTypeKeyPrefix(flag, request.fnso(), request.fno(),
                             static_cast<ObjectType>(request.type()));
  } else if (request.has_from_offset()) {
    return Status::InvalidArgument("listing from an offset needs a type");
  } else if (request.has_fno()) {
    if (!request.has_fnso()) {
      return Status::InvalidArgument("listing by fno needs fnso");
    }
    return FileKeyPrefix(flag, request.fnso(), request.fno());
  } else if (request.has_fnso()) {
    return NamespaceKeyPrefix(flag, request.fnso());
  } else {
    return FlagKeyPrefix(flag);
  }
}

Status Listing::ListPage(const MapView& view, const wire::ListRequest& request, CopyFlag flag,
                         const std::string& prefix, wire::ListResponse* response) {
  const std::string& token = request.page_token();
  const uint32_t limit =
      request.limit() == 0 ? kDefaultListLimit : std::min(request.limit(), kMaxListLimit);
  std::string last_key;
  bool more = false;
  uint64_t page_bytes = 0;
  uint64_t corrupt = 0;
  auto page_full = [&] {
    return static_cast<uint32_t>(response->objects_size() + response->corrupt_size()) >= limit;
  };
  // One object for the page (`data` with with_data); false when the page is full.
  auto add = [&](const std::string& key, const ObjectRecordSummary& object,
                 const std::string* data) {
    if (page_full() ||
        (request.with_data() && page_bytes > 0 && page_bytes + object.length > kMaxListPageBytes)) {
      more = true;
      return false;
    }
    Result<Oid> oid = DecodeStoreKey(key);
    if (!oid.ok()) return true;
    // Copies this OSD holds but no longer owns belong to the listing of their new owner.
    const bool owned = view.current().OsdFor(*oid) == osd_id_;
    if (request.unowned() ? owned : (!owned && view.rebalancing())) {
      last_key = key;
      return true;
    }
    if (object.tombstone && !request.unowned()) {
      last_key = key;
      return true;
    }
    FillMeta(*oid, object, response->add_objects());
    if (data != nullptr) {
      response->add_data(*data);
      page_bytes += data->size();
    }
    last_key = key;
    return true;
  };
  // The first key listed: the prefix's first, or the object at from_offset (the key ends with
  // the offset, big-endian).
  const std::string begin =
      request.has_from_offset()
          ? EncodeStoreKey(Oid{request.fnso(), request.fno(), request.from_offset(),
                               static_cast<ObjectType>(request.type()), flag})
          : prefix;
  Status st;
  if (request.summaries_only() && !request.with_data()) {
    st = store_->ScanSummaries(begin, PrefixSuccessor(prefix), token,
                               [&](const std::string& key, const ObjectRecordSummary& object) {
                                 return add(key, object, nullptr);
                               });
  } else {
    st = store_->Scan(
        begin, PrefixSuccessor(prefix), token,
        [&](const std::string& key, const StoredObject& object) {
          return add(key, object.summary(), request.with_data() ? &object.data : nullptr);
        },
        [&](const std::string& key) {
          if (page_full()) {
            more = true;
            return false;
          }
          Result<Oid> oid = DecodeStoreKey(key);
          if (!oid.ok()) return true;
          // A listing of unowned copies names the damaged ones among them (they move from
          // their other copies); others name every damaged copy (scrub judges them).
          if (request.unowned() && view.current().OsdFor(*oid) == osd_id_) {
            last_key = key;
            return true;
          }
          *response->add_corrupt() = ToWire(*oid);
          ++corrupt;
          last_key = key;
          return true;
        },
        /*with_tombstones=*/request.unowned());
  }
  if (corrupt > 0) spdlog::warn("list found {} corrupt object record(s)", corrupt);
  ORTHOFS_RETURN_IF_ERROR(st);
  if (more) response->set_next_page_token(last_key);
  counters_->objects_listed += static_cast<uint64_t>(response->objects_size());
  return Status::Ok();
}

}  // namespace orthofs
