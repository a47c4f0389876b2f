#include "osd/transactions.h"

#include <algorithm>
#include <mutex>

#include "common/limits.h"
#include "common/object_record.h"
#include "common/space_reserve.h"
#include "osd/object_records.h"

namespace orthofs {

Status Transactions::Transact(const MapView& view, const wire::TransactRequest& request,
                              wire::TransactResponse* response) {
  ORTHOFS_RETURN_IF_ERROR(parts_.catch_up->CheckEpoch(view, request.epoch()));
  ORTHOFS_RETURN_IF_ERROR(parts_.recovery->RefuseClientChangeWhileRecovering());
  const int n = request.ops_size();
  if (n == 0 || n > kMaxTxnOps) {
    return Status::InvalidArgument("a transaction has 1.." + std::to_string(kMaxTxnOps) +
                                   " ops, not " + std::to_string(n));
  }
  Result<Objects> objects = CheckOps(view, request);
  if (!objects.ok()) return objects.status();
  const std::vector<Oid>& oids = objects->oids;
  const std::vector<std::string>& keys = objects->keys;
  // Transactions carry namespace changes (creates, renames, unlinks).
  ORTHOFS_RETURN_IF_ERROR(
      parts_.space->CheckSpaceFor(objects->put_bytes, SpaceReserve::Use::kMetadata));
  // Stripes lock in ascending order, so concurrent transactions cannot deadlock.
  std::vector<std::unique_lock<std::mutex>> locks = parts_.locks->LockAll(keys);

  std::vector<uint64_t> tombstone_versions(n, 0);
  Result<std::vector<std::shared_ptr<const CachedObject>>> loaded =
      LoadAndCheckVersions(view, request, *objects, &tombstone_versions);
  if (!loaded.ok()) return loaded.status();
  const std::vector<std::shared_ptr<const CachedObject>>& current = *loaded;
  ObjectStore::Batch batch;
  std::vector<std::shared_ptr<const CachedObject>> updated(n);
  for (int i = 0; i < n; ++i) {
    const wire::TxnOp& op = request.ops(i);
    const uint64_t old_version = current[i] ? current[i]->version : 0;
    const uint64_t stored_version = current[i] ? old_version : tombstone_versions[i];
    const uint64_t old_length = current[i] ? current[i]->data.size() : 0;
    if (op.kind() != wire::TxnOp::CHECK) {
      TraceMetadataChange(oids[i], op.kind() == wire::TxnOp::PUT ? "txn put" : "txn delete",
                          stored_version, stored_version + 1, false, false, false);
    }
    if (op.kind() == wire::TxnOp::PUT) {
      updated[i] = MakeObject(stored_version + 1, op.data());
      batch.Put(keys[i], updated[i]->version, updated[i]->checksum, updated[i]->data,
                current[i] != nullptr, old_length);
      response->add_versions(stored_version + 1);
    } else if (op.kind() == wire::TxnOp::DELETE) {
      if (current[i] && (oids[i].type != ObjectType::kData ||
                         view.PreviousOwnerOf(oids[i], parts_.osd_id).has_value())) {
        batch.PutTombstone(keys[i], stored_version + 1, true, old_length);
      } else if (current[i]) {
        batch.Delete(keys[i], true, old_length);
      }
      response->add_versions(0);
    } else {
      response->add_versions(old_version);
    }
  }
  if (!batch.empty()) {
    if (Status st = parts_.store->Commit(&batch, request.sync()); !st.ok()) {
      response->clear_versions();
      return st;
    }
  }
  for (int i = 0; i < n; ++i) {
    const wire::TxnOp& op = request.ops(i);
    if (op.kind() == wire::TxnOp::DELETE) {
      parts_.cache->Erase(keys[i]);
    } else if (op.kind() == wire::TxnOp::PUT && parts_.cache->Contains(keys[i])) {
      parts_.cache->Insert(keys[i], updated[i], CacheChain::kDemand);
    }
    if (op.kind() != wire::TxnOp::CHECK) parts_.locks->Committed(keys[i]);
  }
  return Status::Ok();
}

Result<Transactions::Objects> Transactions::CheckOps(const MapView& view,
                                                     const wire::TransactRequest& request) {
  const uint64_t object_size = parts_.object_size;
  Objects objects;
  for (int i = 0; i < request.ops_size(); ++i) {
    const wire::TxnOp& op = request.ops(i);
    const std::string where = "op " + std::to_string(i) + ": ";
    Result<Oid> oid = parts_.catch_up->CheckObject(view, request.epoch(), op.oid());
    if (!oid.ok()) return oid.status().WithContext(where);
    if (op.kind() != wire::TxnOp::CHECK && op.kind() != wire::TxnOp::PUT &&
        op.kind() != wire::TxnOp::DELETE) {
      return Status::InvalidArgument(where + "unknown kind");
    }
    if (op.kind() != wire::TxnOp::PUT && !op.data().empty()) {
      return Status::InvalidArgument(where + "only PUT carries data");
    }
    if (op.kind() == wire::TxnOp::CHECK && !op.has_expected_version()) {
      return Status::InvalidArgument(where + "CHECK needs expected_version");
    }
    if (op.data().size() > object_size) {
      return Status::InvalidArgument(where + "data exceeds the object size");
    }
    std::string key = EncodeStoreKey(*oid);
    if (std::find(objects.keys.begin(), objects.keys.end(), key) != objects.keys.end()) {
      return Status::InvalidArgument(where + "object " + oid->ToString() + " appears twice");
    }
    objects.oids.push_back(*oid);
    objects.keys.push_back(std::move(key));
    if (op.kind() == wire::TxnOp::PUT) {
      objects.put_bytes += kObjectRecordHeaderSize + op.data().size();
    }
  }
  return objects;
}

Result<std::vector<std::shared_ptr<const CachedObject>>> Transactions::LoadAndCheckVersions(
    const MapView& view, const wire::TransactRequest& request, const Objects& objects,
    std::vector<uint64_t>* tombstone_versions) {
  const size_t n = objects.oids.size();
  std::vector<std::shared_ptr<const CachedObject>> current(n);
  for (size_t i = 0; i < n; ++i) {
    Result<std::shared_ptr<const CachedObject>> c = parts_.loader->LoadLocked(
        view, objects.oids[i], objects.keys[i], &(*tombstone_versions)[i]);
    if (c.ok()) {
      current[i] = *c;
    } else if (!c.status().Is(StatusCode::kNotFound)) {
      return c.status();
    }
    const wire::TxnOp& op = request.ops(static_cast<int>(i));
    const uint64_t version = current[i] ? current[i]->version : 0;
    if (op.has_expected_version() && op.expected_version() != version) {
      return Status::VersionMismatch(
          "op " + std::to_string(i) + ": object " + objects.oids[i].ToString() + " is at version " +
          std::to_string(version) + ", expected " + std::to_string(op.expected_version()));
    }
  }
  return current;
}

}  // namespace orthofs
