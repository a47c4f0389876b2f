// libFuzzer target over the OSD's request handling. The first byte picks an RPC, and which of
// three OSD services (one per prefetch mode) serves it; the rest is decoded as that RPC's
// request protobuf, as gRPC would, and handed to the OsdService handler. Whatever the bytes,
// the handler must answer with a status, and a refusal must be the request's fault (never
// INTERNAL, DATA_LOSS, ...): no crash, UB, leak or hang.
//
// Seed corpus: ORTHOFS_FUZZ_WRITE_SEEDS=DIR osd_request_fuzzer  writes valid requests for the
// map below to DIR (tests/fuzz/corpus/osd_request) and exits.
#include <google/protobuf/message.h>
#include <google/protobuf/stubs/logging.h>
#include <grpc/support/log.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_set>

#include "common/checksum.h"
#include "common/cluster_map.h"
#include "common/limits.h"
#include "common/placement.h"
#include "osd/object_store.h"
#include "osd/osd_service.h"
#include "osd/write_many_request.h"
#include "rpc/osd_client.h"
#include "rpc/wire.h"

namespace orthofs {
namespace {

constexpr uint32_t kSelf = 1;  // the OSD under test, of 0..2
constexpr uint64_t kEpoch = 7;
// The smallest object size: size limits are easy to reach, and the store stays small.
constexpr uint32_t kObjectSize = kMinObjectSize;
// The store of the mode-none OSD is wiped after this many requests, or once it holds more
// than this, so long runs do not fill the disk.
constexpr uint64_t kResetEvery = 20000;
constexpr uint64_t kMaxStoreBytes = 16 << 20;
constexpr uint64_t kMaxStoreObjects = 20000;
// Request bytes of writes, deletes and transactions the cor and spa OSDs take in a run.
constexpr uint64_t kMutationBudget = 64 << 20;

enum Rpc : uint8_t {
  kRead,
  kWrite,
  kDelete,
  kStat,
  kTransact,
  kList,
  kSync,
  kStats,
  kHealth,
  kPrefetchNotify,
  kPrefetch,
  kRepair,
  kWriteMany,
  kReadMany,
  kRpcCount
};

// One OSD per prefetch mode. Cor and spa call their peers (notifies, SPA prefetches, to closed
// loopback ports) and such calls may still be in flight, so they are never torn down: they
// take writes only up to a byte budget, and mode none, wiped now and then, takes the rest.
enum Mode : uint8_t { kModeNone, kModeCor, kModeSpa, kModeCount };

bool Mutates(Rpc rpc) {
  return rpc == kWrite || rpc == kDelete || rpc == kTransact || rpc == kWriteMany;
}

ClusterMap FuzzMap(PrefetchMode mode) {
  ClusterMap map;
  map.epoch = kEpoch;
  map.object_size = kObjectSize;
  map.prefetch.mode = mode;
  map.prefetch.max_window = 8;
  // Nothing listens on these ports: a peer call fails at once.
  map.osds = {{0, "127.0.0.1:1", 1.0}, {1, "127.0.0.1:2", 1.0}, {2, "127.0.0.1:3", 1.0}};
  return map;
}

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "osd_request_fuzzer: %s\n", what.c_str());
  std::abort();
}

struct FuzzOsd {
  ClusterMap map;
  std::string dir;
  std::unique_ptr<ObjectStore> store;
  std::unique_ptr<OsdService> service;
  uint64_t requests = 0;
  uint64_t mutation_budget = kMutationBudget;  // cor and spa
  // Objects a replacing write sent with a checksum its bytes fail, as if damaged on the way.
  // The OSD stores the client's checksum (end to end), so a later read of such an object from
  // the store is rightly Corruption, and so is a ranged write that must merge into it.
  std::unordered_set<std::string> sent_damaged;

  void Open() {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    StoreOptions store_options;
    store_options.block_cache_mb = 8;
    Result<std::unique_ptr<ObjectStore>> opened = ObjectStore::Open(dir, store_options);
    if (!opened.ok()) Fail("cannot open the store: " + opened.status().ToString());
    store = std::move(*opened);
    OsdServiceOptions options;
    options.recovering_at_start = false;  // no peers to ask
    options.osd_id = kSelf;
    options.cache_bytes = 8 << 20;
    options.data_dir = dir;
    options.prefetch.osd_id = kSelf;
    options.prefetch.serial = true;  // no executor threads: each request's work is done on return
    options.prefetch.window_expiry = std::chrono::milliseconds(1000);
    // Repair pushes go to closed ports: fail at once instead of waiting for the peer.
    options.repair.rpc = RpcOptions{std::chrono::milliseconds(100), /*wait_for_ready=*/false};
    options.catch_up_from_peers = false;
    service = std::make_unique<OsdService>(map, std::nullopt, store.get(), options);
    requests = 0;
    sent_damaged.clear();
  }

  void Close() {
    service.reset();
    store.reset();
  }
};

// Leaked on purpose (reachable, so not reported): cor and spa must outlive their peer calls.
FuzzOsd* osds[kModeCount];
std::string* root_dir;

// A `type` object of file (fnso 1, fno >= from) whose `flag` copy this OSD holds.
Oid Owned(const Placement& placement, ObjectType type, CopyFlag flag, uint64_t offset,
          uint64_t from) {
  for (uint64_t fno = from;; ++fno) {
    const Oid oid{1, fno, offset, type, flag};
    if (placement.OsdFor(oid) == kSelf) return oid;
  }
}

// Objects for the cor and spa OSDs to read and prefetch: files 1..8, 16 DATA objects each,
// whichever copies this OSD holds.
void Preload(FuzzOsd* osd) {
  const Placement placement(osd->map);
  for (uint64_t fno = 1; fno <= 8; ++fno) {
    for (uint64_t offset = 0; offset < 16; ++offset) {
      for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
        const Oid oid{1, fno, offset, ObjectType::kData, flag};
        if (placement.OsdFor(oid) != kSelf) continue;
        wire::WriteRequest request;
        request.set_epoch(kEpoch);
        *request.mutable_oid() = ToWire(oid);
        request.set_data(std::string(64 + offset, static_cast<char>('a' + fno)));
        wire::WriteResponse response;
        grpc::Status st = osd->service->Write(nullptr, &request, &response);
        if (!st.ok()) Fail("preload: " + st.error_message());
      }
    }
  }
}

void Cleanup() {
  for (FuzzOsd* osd : osds) {
    if (osd == nullptr) continue;
    if (osd->map.prefetch.mode == PrefetchMode::kNone) {
      osd->Close();
    } else {
      // The service stays (peer calls may still report to it); the store closes once its
      // background repair has stopped (orthofs-osd's shutdown order: Drain, StopBackgroundWork).
      osd->service->Drain(std::chrono::milliseconds(0));
      osd->service->StopBackgroundWork();
      osd->store.reset();
    }
  }
  if (root_dir != nullptr) {
    std::error_code ec;
    std::filesystem::remove_all(*root_dir, ec);
  }
}

void NoteDamagedWrite(FuzzOsd* osd, const wire::WriteRequest& write) {
  if (!write.replace() || !write.has_checksum() ||
      ObjectChecksum(write.data()) == write.checksum()) {
    return;
  }
  if (Result<Oid> oid = FromWire(write.oid()); oid.ok()) osd->sent_damaged.insert(oid->ToString());
}

// Whether a request names, in any Oid field however deep, an object sent damaged.
bool NamesDamaged(const FuzzOsd& osd, const google::protobuf::Message& message) {
  if (osd.sent_damaged.empty()) return false;
  if (message.GetDescriptor() == wire::Oid::descriptor()) {
    Result<Oid> oid = FromWire(static_cast<const wire::Oid&>(message));
    return oid.ok() && osd.sent_damaged.contains(oid->ToString());
  }
  const google::protobuf::Reflection* reflection = message.GetReflection();
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const google::protobuf::FieldDescriptor* field : fields) {
    if (field->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (!field->is_repeated()) {
      if (NamesDamaged(osd, reflection->GetMessage(message, field))) return true;
      continue;
    }
    for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
      if (NamesDamaged(osd, reflection->GetRepeatedMessage(message, field, i))) return true;
    }
  }
  return false;
}

// A change of one copy alone sent after the other copy's OSD refused it as recovering: refused
// in turn ("is recovering") while a Repair request fenced that OSD, which the fuzzer may send.
template <typename Request>
bool MayBeFenced(const Request& request) {
  if constexpr (std::is_same_v<Request, wire::WriteRequest> ||
                std::is_same_v<Request, wire::DeleteRequest>) {
    return request.record_repair() && request.other_recovering();
  }
  return false;
}

bool FencedRefusal(const Status& refusal, bool may_be_fenced) {
  return may_be_fenced && refusal.Is(StatusCode::kUnavailable) &&
         refusal.Is(StatusReason::kPeerRecovering);
}

// A refusal carries its OrthoFS code in the details (proto/orthofs.proto), and no request,
// however malformed, may make the OSD report its own failure. The exceptions: Corruption for a
// request naming an object the fuzzer sent damaged (`names_damaged`), and a fenced refusal.
void CheckStatus(Rpc rpc, const grpc::Status& st, bool names_damaged, bool may_be_fenced) {
  if (st.ok()) return;
  const Status refusal = StatusFromWireCode(st.error_details(), st.error_message());
  const StatusCode code = refusal.code();
  if (st.error_details().empty() || code == StatusCode::kOk) {
    Fail("rpc " + std::to_string(rpc) + " refused without an OrthoFS code: " + st.error_message());
  }
  if (code == StatusCode::kCorruption && names_damaged) return;
  if (FencedRefusal(refusal, may_be_fenced)) return;
  if (code == StatusCode::kInternal || code == StatusCode::kCorruption ||
      code == StatusCode::kIoError || code == StatusCode::kUnavailable) {
    Fail("rpc " + std::to_string(rpc) + " failed inside the OSD: " + st.error_details() + ": " +
         st.error_message());
  }
}

void Require(bool condition, const std::string& what) {
  if (!condition) Fail(what);
}

// Decodes the request as gRPC would; undecodable bytes never reach the handler.
template <typename Request, typename Response, typename Check>
void Call(FuzzOsd* osd,
          grpc::Status (OsdService::*handler)(grpc::ServerContext*, const Request*, Response*),
          Rpc rpc, const uint8_t* data, size_t size, Check check) {
  Request request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return;
  if constexpr (std::is_same_v<Request, wire::WriteRequest>) NoteDamagedWrite(osd, request);
  Response response;
  // No handler but Subscribe (not fuzzed: it streams) touches the ServerContext.
  const grpc::Status st = (osd->service.get()->*handler)(nullptr, &request, &response);
  CheckStatus(rpc, st, NamesDamaged(*osd, request), MayBeFenced(request));
  if (st.ok()) check(*osd, request, response);
}

void CheckWriteMany(const FuzzOsd& osd, const wire::WriteManyRequest& q,
                    const wire::WriteManyResponse& r) {
  Require(r.results_size() == q.writes_size(), "write-many answered for other writes");
  for (int i = 0; i < r.results_size(); ++i) {
    const wire::WriteManyResult& result = r.results(i);
    if (!result.error_code().empty()) {
      const Status refusal = StatusFromWireCode(result.error_code(), result.error_message());
      const StatusCode code = refusal.code();
      Require(code != StatusCode::kOk, "write-many refused a write without an OrthoFS code");
      Require(FencedRefusal(refusal, MayBeFenced(q.writes(i))) ||
                  (code != StatusCode::kInternal &&
                   (code != StatusCode::kCorruption || NamesDamaged(osd, q.writes(i))) &&
                   code != StatusCode::kIoError && code != StatusCode::kUnavailable),
              "write-many failed a write inside the OSD: " + result.error_code() + ": " +
                  result.error_message());
    }
    Require(result.response().meta().length() <= kObjectSize,
            "write-many grew an object past the object size");
  }
}

// gRPC hands WriteMany's request bytes to the OSD unparsed, and the OSD parses them itself
// (osd/write_many_request.h): whatever it accepts, protobuf must parse to the same writes.
void CallWriteManyFromWire(FuzzOsd* osd, Rpc rpc, const uint8_t* data, size_t size) {
  // As gRPC hands it over: in slices. Whole or in pieces of 1-61 bytes, by the input's size.
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const size_t piece = size % 3 == 0 ? std::max<size_t>(size, 1) : 1 + size % 61;
  BytePieces message;
  for (size_t at = 0; at < size; at += piece) message.Append(bytes.substr(at, piece));
  Result<std::vector<ReceivedWrite>> parsed = ParseWriteMany(message);
  wire::WriteManyRequest request;
  const bool protobuf_parsed = request.ParseFromArray(data, static_cast<int>(size));
  if (!parsed.ok()) {
    Require(parsed.status().Is(StatusCode::kInvalidArgument),
            "a parse failure that is not bad input");
    return;
  }
  Require(protobuf_parsed, "ParseWriteMany accepted what protobuf refuses");
  Require(parsed->size() == static_cast<size_t>(request.writes_size()),
          "ParseWriteMany found other writes than protobuf");
  for (size_t i = 0; i < parsed->size(); ++i) {
    wire::WriteRequest expected = request.writes(static_cast<int>(i));
    Require((*parsed)[i].data == expected.data(), "ParseWriteMany found other bytes");
    expected.clear_data();
    Require((*parsed)[i].fields.SerializeAsString() == expected.SerializeAsString(),
            "ParseWriteMany found other fields");
  }
  for (const wire::WriteRequest& write : request.writes()) NoteDamagedWrite(osd, write);
  wire::WriteManyResponse response;
  const grpc::Status st = osd->service->WriteManyFromWire(message, &response);
  CheckStatus(rpc, st, NamesDamaged(*osd, request), /*may_be_fenced=*/false);
  if (st.ok()) CheckWriteMany(*osd, request, response);
}

void Dispatch(FuzzOsd* s, Rpc rpc, const uint8_t* data, size_t size) {
  switch (rpc) {
    case kRead:
      return Call(s, &OsdService::Read, rpc, data, size,
                  [](const auto&, const auto&, const auto& r) {
                    Require(r.data().size() <= kObjectSize && r.meta().length() <= kObjectSize,
                            "read returned more than an object");
                  });
    case kWrite:
      return Call(
          s, &OsdService::Write, rpc, data, size, [](const auto&, const auto&, const auto& r) {
            Require(r.meta().length() <= kObjectSize, "write grew an object past the object size");
          });
    case kDelete:
      return Call(s, &OsdService::Delete, rpc, data, size,
                  [](const auto&, const auto&, const auto&) {});
    case kStat:
      return Call(
          s, &OsdService::Stat, rpc, data, size, [](const auto&, const auto&, const auto& r) {
            Require(r.meta().length() <= kObjectSize, "stat of an object past the object size");
          });
    case kTransact:
      return Call(
          s, &OsdService::Transact, rpc, data, size, [](const auto&, const auto& q, const auto& r) {
            Require(r.versions_size() == q.ops_size(), "transaction answered for other ops");
          });
    case kList:
      return Call(s, &OsdService::List, rpc, data, size,
                  [](const auto&, const auto& q, const auto& r) {
                    Require(r.objects_size() <= static_cast<int>(kMaxListLimit),
                            "list page over the limit");
                    Require(!q.with_data() || r.data_size() == r.objects_size(),
                            "list data does not match");
                  });
    case kSync:
      return Call(s, &OsdService::Sync, rpc, data, size,
                  [](const auto&, const auto&, const auto&) {});
    case kStats:
      return Call(s, &OsdService::Stats, rpc, data, size,
                  [](const auto&, const auto&, const auto& r) {
                    Require(r.osd_id() == kSelf && r.epoch() == kEpoch, "stats of another OSD");
                  });
    case kHealth:
      return Call(s, &OsdService::Health, rpc, data, size,
                  [](const auto&, const auto&, const auto& r) {
                    Require(r.osd_id() == kSelf && r.epoch() == kEpoch, "health of another OSD");
                  });
    case kPrefetchNotify:
      return Call(s, &OsdService::PrefetchNotify, rpc, data, size,
                  [](const auto&, const auto&, const auto&) {});
    case kPrefetch:
      return Call(
          s, &OsdService::Prefetch, rpc, data, size, [](const auto&, const auto& q, const auto& r) {
            Require(r.loaded() == static_cast<uint32_t>(q.oids_size()), "prefetch miscounted");
          });
    case kRepair:
      return Call(s, &OsdService::Repair, rpc, data, size,
                  [](const auto&, const auto&, const auto& r) {
                    Require(r.repaired() <= r.records() && r.remaining() <= r.records(),
                            "repair counted more copies than it had records");
                  });
    case kWriteMany:
      return CallWriteManyFromWire(s, rpc, data, size);
    case kReadMany:
      return Call(
          s, &OsdService::ReadMany, rpc, data, size,
          [](const auto& osd, const auto& q, const auto& r) {
            Require(r.results_size() == q.reads_size(), "read-many answered for other reads");
            for (int i = 0; i < r.results_size(); ++i) {
              const wire::ReadManyResult& result = r.results(i);
              Require(result.response().data().size() <= kObjectSize,
                      "read-many returned more than an object");
              if (result.error_code().empty()) continue;
              Require(!result.has_response(), "read-many refused a read and answered it");
              CheckStatus(kRead,
                          ToGrpc(StatusFromWireCode(result.error_code(), result.error_message())),
                          NamesDamaged(osd, q.reads(i)), /*may_be_fenced=*/false);
            }
          });
    case kRpcCount:
      break;
  }
}

void WriteSeed(const std::string& dir, const std::string& name, Rpc rpc, Mode mode,
               const google::protobuf::Message& request) {
  std::string bytes(1, static_cast<char>(int{rpc} + int{kRpcCount} * int{mode}));
  if (!request.AppendToString(&bytes)) Fail("cannot serialize seed " + name);
  std::ofstream out(dir + "/" + name, std::ios::binary | std::ios::trunc);
  out << bytes;
  if (!out) Fail("cannot write seed " + dir + "/" + name);
}

// Valid requests (and a few classic refusals) for this map and OSD: the fuzzer mutates from
// requests that pass decoding, the epoch and placement checks.
void WriteSeeds(const std::string& dir) {
  std::filesystem::create_directories(dir);
  const Placement placement(FuzzMap(PrefetchMode::kNone));
  const Oid data = Owned(placement, ObjectType::kData, CopyFlag::kOriginal, 2, 100);
  const Oid inode = Owned(placement, ObjectType::kInode, CopyFlag::kOriginal, 0, 200);
  const Oid dirent = Owned(placement, ObjectType::kDirent, CopyFlag::kReplica, 0xbeef, 300);
  const Oid preloaded_original = Owned(placement, ObjectType::kData, CopyFlag::kOriginal, 3, 1);
  const Oid preloaded_replica = Owned(placement, ObjectType::kData, CopyFlag::kReplica, 4, 1);
  if (preloaded_original.fno > 8 || preloaded_replica.fno > 8) Fail("no preloaded object found");

  wire::WriteRequest write;
  write.set_epoch(kEpoch);
  *write.mutable_oid() = ToWire(data);
  write.set_offset(5);
  write.set_data("hello, object");
  WriteSeed(dir, "write-ranged", kWrite, kModeNone, write);
  write.set_offset(0);
  write.set_replace(true);
  write.set_expected_version(0);
  write.set_sync(true);
  WriteSeed(dir, "write-replace-conditional", kWrite, kModeNone, write);
  wire::WriteRequest copy;
  copy.set_epoch(kEpoch);
  *copy.mutable_oid() = ToWire(inode);
  copy.set_data("inode attributes");
  copy.set_replace(true);
  copy.set_set_version(9);
  WriteSeed(dir, "write-copy-update", kWrite, kModeNone, copy);
  wire::WriteRequest oversized = write;
  oversized.clear_expected_version();
  oversized.set_data(std::string(kObjectSize + 1, 'x'));
  WriteSeed(dir, "write-oversized", kWrite, kModeNone, oversized);
  wire::WriteRequest stale = write;
  stale.set_epoch(kEpoch - 1);
  WriteSeed(dir, "write-stale-epoch", kWrite, kModeNone, stale);
  // Bytes that fail the client's checksum (damaged on the way) are stored as sent; reading or
  // merging into them later is Corruption, which the fuzzer allows only for such objects.
  wire::WriteRequest damaged = write;
  damaged.clear_expected_version();
  damaged.set_checksum(ObjectChecksum(write.data()) + 1);
  WriteSeed(dir, "write-damaged-on-the-way", kWrite, kModeNone, damaged);

  wire::ReadRequest read;
  read.set_epoch(kEpoch);
  *read.mutable_oid() = ToWire(data);
  read.set_offset(3);
  read.set_length(7);
  WriteSeed(dir, "read-ranged", kRead, kModeNone, read);
  read.Clear();
  read.set_epoch(kEpoch);
  *read.mutable_oid() = ToWire(preloaded_original);
  read.set_client_id("client-a");
  WriteSeed(dir, "read-original-cor", kRead, kModeCor, read);
  WriteSeed(dir, "read-original-spa", kRead, kModeSpa, read);
  *read.mutable_oid() = ToWire(preloaded_replica);
  WriteSeed(dir, "read-replica-cor", kRead, kModeCor, read);
  // A read-ahead's batch: the replica, the original, an absent object and a stale epoch.
  wire::ReadManyRequest read_many;
  *read_many.add_reads() = read;
  *read_many.add_reads()->mutable_oid() = ToWire(preloaded_original);
  read_many.mutable_reads(1)->set_epoch(kEpoch);
  *read_many.add_reads() = read;
  read_many.mutable_reads(2)->mutable_oid()->set_offset(preloaded_replica.offset + 1000);
  *read_many.add_reads() = read;
  read_many.mutable_reads(3)->set_epoch(kEpoch + 1);
  WriteSeed(dir, "read-many-cor", kReadMany, kModeCor, read_many);

  // Objects at the far end of a file: window arithmetic must not wrap around.
  for (auto [mode, flag, name] : {std::tuple{kModeSpa, CopyFlag::kOriginal, "spa"},
                                  std::tuple{kModeCor, CopyFlag::kReplica, "cor"}}) {
    const Oid far = Owned(placement, ObjectType::kData, flag, ~uint64_t{0} - 1, 400);
    wire::WriteRequest far_write;
    far_write.set_epoch(kEpoch);
    *far_write.mutable_oid() = ToWire(far);
    far_write.set_data("the last object");
    WriteSeed(dir, std::string("write-far-") + name, kWrite, mode, far_write);
    wire::ReadRequest far_read;
    far_read.set_epoch(kEpoch);
    *far_read.mutable_oid() = ToWire(far);
    far_read.set_client_id("client-b");
    WriteSeed(dir, std::string("read-far-") + name, kRead, mode, far_read);
  }

  wire::StatRequest stat;
  stat.set_epoch(kEpoch);
  *stat.mutable_oid() = ToWire(preloaded_replica);
  WriteSeed(dir, "stat-cor", kStat, kModeCor, stat);
  *stat.mutable_oid() = ToWire(inode);
  WriteSeed(dir, "stat", kStat, kModeNone, stat);

  wire::DeleteRequest del;
  del.set_epoch(kEpoch);
  *del.mutable_oid() = ToWire(inode);
  del.set_expected_version(1);
  WriteSeed(dir, "delete-conditional", kDelete, kModeNone, del);
  del.clear_expected_version();
  del.set_set_version(12);
  WriteSeed(dir, "delete-copy", kDelete, kModeNone, del);

  wire::TransactRequest txn;
  txn.set_epoch(kEpoch);
  wire::TxnOp* check = txn.add_ops();
  check->set_kind(wire::TxnOp::CHECK);
  *check->mutable_oid() = ToWire(inode);
  check->set_expected_version(0);
  wire::TxnOp* put = txn.add_ops();
  put->set_kind(wire::TxnOp::PUT);
  *put->mutable_oid() = ToWire(dirent);
  put->set_data("name -> 42");
  wire::TxnOp* remove = txn.add_ops();
  remove->set_kind(wire::TxnOp::DELETE);
  *remove->mutable_oid() = ToWire(data);
  WriteSeed(dir, "transact", kTransact, kModeNone, txn);

  wire::ListRequest list;
  list.set_epoch(kEpoch);
  list.set_flag(wire::REPLICA);
  list.set_fnso(dirent.fnso);
  list.set_fno(dirent.fno);
  list.set_type(wire::DIRENT);
  list.set_with_data(true);
  list.set_limit(2);
  WriteSeed(dir, "list-dirents", kList, kModeNone, list);
  list.Clear();
  list.set_epoch(kEpoch);
  list.set_flag(wire::ORIGINAL);
  list.set_fnso(1);
  list.set_page_token(EncodeStoreKey(preloaded_original));
  WriteSeed(dir, "list-namespace-page", kList, kModeSpa, list);

  wire::SyncRequest sync;
  sync.set_epoch(kEpoch);
  WriteSeed(dir, "sync", kSync, kModeNone, sync);
  wire::StatsRequest stats;
  stats.set_epoch(kEpoch);
  WriteSeed(dir, "stats-cor", kStats, kModeCor, stats);
  wire::HealthRequest health;
  health.set_epoch(kEpoch);
  WriteSeed(dir, "health", kHealth, kModeNone, health);

  // COR: notifies go to the replica OSD of the file that was read.
  uint64_t fno = 1;
  while (placement.ReplicaOsdFor(1, fno) != kSelf) ++fno;
  wire::PrefetchNotifyRequest notify;
  notify.set_epoch(kEpoch);
  notify.set_client_id("client-a");
  *notify.mutable_oid() = ToWire(Oid{1, fno, 2, ObjectType::kData, CopyFlag::kOriginal});
  WriteSeed(dir, "prefetch-notify-cor", kPrefetchNotify, kModeCor, notify);

  // SPA: originals this OSD holds, the marker on one of them.
  wire::PrefetchRequest prefetch;
  prefetch.set_epoch(kEpoch);
  for (uint64_t offset = 0; prefetch.oids_size() < 3 && offset < 64; ++offset) {
    const Oid oid{1, preloaded_original.fno, offset, ObjectType::kData, CopyFlag::kOriginal};
    if (placement.OsdFor(oid) == kSelf) *prefetch.add_oids() = ToWire(oid);
  }
  prefetch.mutable_marker()->set_window_start(prefetch.oids(0).offset());
  prefetch.mutable_marker()->set_window_size(4);
  WriteSeed(dir, "prefetch-spa", kPrefetch, kModeSpa, prefetch);

  // A degraded write leaves a repair record; a repair pass then tries to push it.
  wire::WriteRequest degraded = write;
  degraded.clear_expected_version();
  degraded.set_record_repair(true);
  WriteSeed(dir, "write-record-repair", kWrite, kModeNone, degraded);
  // Several objects' writes in one call, each answered on its own: a good one, a version
  // mismatch, a stale epoch and one past the object.
  wire::WriteManyRequest many;
  *many.add_writes() = write;
  wire::WriteRequest mismatch = write;
  mismatch.set_expected_version(41);
  *many.add_writes() = mismatch;
  *many.add_writes() = stale;
  *many.add_writes() = oversized;
  WriteSeed(dir, "write-many", kWriteMany, kModeNone, many);
  many.Clear();
  *many.add_writes() = copy;
  *many.add_writes() = degraded;
  WriteSeed(dir, "write-many-copies", kWriteMany, kModeNone, many);

  wire::RepairRequest repair;
  repair.set_epoch(kEpoch);
  WriteSeed(dir, "repair", kRepair, kModeNone, repair);
  repair.set_for_osd(1);
  WriteSeed(dir, "repair-for-osd", kRepair, kModeNone, repair);
}

}  // namespace
}  // namespace orthofs

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  using namespace orthofs;
  // Peer-call callbacks log through spdlog's default logger on gRPC threads, even while the
  // process exits and spdlog's registry is gone: a logger that is never freed keeps that safe.
  spdlog::set_default_logger(std::shared_ptr<spdlog::logger>(
      new spdlog::logger("osd_request_fuzzer"), [](spdlog::logger*) {}));
  spdlog::set_level(spdlog::level::off);  // refusals are logged; millions of them here
  // gRPC's own log lines (its threads, until the very end) go nowhere, not to spdlog.
  gpr_set_log_verbosity(GPR_LOG_SEVERITY_ERROR);
  gpr_set_log_function([](gpr_log_func_args*) {});
  google::protobuf::SetLogHandler(nullptr);  // e.g. "String field contains invalid UTF-8"
  if (const char* seeds = std::getenv("ORTHOFS_FUZZ_WRITE_SEEDS")) {
    WriteSeeds(seeds);
    std::exit(0);
  }
  std::string tmpl = (std::filesystem::temp_directory_path() / "orthofs-osd-fuzz-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) Fail("cannot create a temporary directory");
  root_dir = new std::string(tmpl);
  const PrefetchMode modes[kModeCount] = {PrefetchMode::kNone, PrefetchMode::kCor,
                                          PrefetchMode::kSpa};
  for (int m = 0; m < kModeCount; ++m) {
    osds[m] = new FuzzOsd;
    osds[m]->map = FuzzMap(modes[m]);
    if (Status st = ValidateClusterMap(osds[m]->map); !st.ok()) Fail(st.ToString());
    osds[m]->dir = *root_dir + "/" + std::string(PrefetchModeName(modes[m]));
    osds[m]->Open();
    if (m != kModeNone) Preload(osds[m]);
  }
  std::atexit(Cleanup);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace orthofs;
  if (size == 0) return 0;
  const Rpc rpc = static_cast<Rpc>(data[0] % kRpcCount);
  Mode mode = static_cast<Mode>((data[0] / kRpcCount) % kModeCount);
  if (Mutates(rpc) && mode != kModeNone) {
    if (osds[mode]->mutation_budget >= size) {
      osds[mode]->mutation_budget -= size;
    } else {
      mode = kModeNone;
    }
  }
  FuzzOsd* osd = osds[mode];
  if (mode == kModeNone &&
      (osd->requests >= kResetEvery || osd->store->byte_count() > kMaxStoreBytes ||
       osd->store->object_count() > kMaxStoreObjects)) {
    osd->Close();
    osd->Open();
  }
  ++osd->requests;
  Dispatch(osd, rpc, data + 1, size - 1);
  return 0;
}
