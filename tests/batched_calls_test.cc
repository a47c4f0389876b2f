// The client's batched calls (ReadMany, WriteMany, DeleteMany) against an OSD that answers them
// badly or not at all: a proxy stands in front of one real OSD, forwards every call to it, and
// either plays an OSD from before the batched calls (UNIMPLEMENTED) or changes one item of a
// batched answer (left out, refused for a stale epoch; a read corrupted or refused while
// recovering). Each result must still reach its caller, right or with the right error.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "client/cluster_client.h"
#include "rpc/wire.h"
#include "tests/test_cluster.h"

namespace orthofs::testing {
namespace {

class OsdProxy final : public wire::Osd::Service {
 public:
  enum class Fault {
    kNone,
    kOldOsd,
    kShortAnswer,
    kStaleEpoch,
    kCorruptRead,
    kRecoveringRead,
    kAnothersRecoveryRead,  // refused as a fenced peer refuses: another OSD recovers
    kDeletesFail,           // every Delete and DeleteMany fails as an OSD that went down
  };
  // The item of every batched answer that a fault changes (the others pass as they are); a
  // short answer leaves out the last one.
  static constexpr int kFaultyItem = 1;

  OsdProxy(const OsdInfo& real, Fault fault) : real_(real, RpcOptions{}), fault_(fault) {
    grpc::ServerBuilder builder;
    // A port of its own, chosen when it binds (no other server can share it).
    builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.SetMaxReceiveMessageSize(kMaxObjectSize + (4 << 20));
    builder.SetMaxSendMessageSize(kMaxObjectSize + (4 << 20));
    builder.RegisterService(this);
    server_ = builder.BuildAndStart();
  }
  ~OsdProxy() override {
    if (server_ != nullptr) server_->Shutdown(std::chrono::system_clock::now());
  }
  bool started() const { return server_ != nullptr && port_ > 0; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

  std::atomic<int> reads{0}, read_many_calls{0}, writes{0}, write_many_calls{0};
  std::atomic<int> deletes{0}, delete_many_calls{0};

  grpc::Status Read(grpc::ServerContext*, const wire::ReadRequest* request,
                    wire::ReadResponse* response) override {
    ++reads;
    return Forward(real_.Read(*request), response);
  }
  grpc::Status Write(grpc::ServerContext*, const wire::WriteRequest* request,
                     wire::WriteResponse* response) override {
    ++writes;
    return Forward(real_.Write(*request), response);
  }
  grpc::Status Delete(grpc::ServerContext*, const wire::DeleteRequest* request,
                      wire::DeleteResponse* response) override {
    ++deletes;
    if (fault_ == Fault::kDeletesFail) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "");
    return Forward(real_.Delete(*request), response);
  }
  grpc::Status DeleteMany(grpc::ServerContext*, const wire::DeleteManyRequest* request,
                          wire::DeleteManyResponse* response) override {
    ++delete_many_calls;
    if (fault_ == Fault::kOldOsd) return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "");
    if (fault_ == Fault::kDeletesFail) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "");
    grpc::Status status =
        Forward(Await<wire::DeleteManyResponse>(&OsdClient::DeleteManyAsync, *request), response);
    if (status.ok()) ChangeAnswer(response);
    return status;
  }
  grpc::Status WriteMany(grpc::ServerContext*, const wire::WriteManyRequest* request,
                         wire::WriteManyResponse* response) override {
    ++write_many_calls;
    if (fault_ == Fault::kOldOsd) return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "");
    grpc::Status status =
        Forward(Await<wire::WriteManyResponse>(&OsdClient::WriteManyAsync, *request), response);
    if (status.ok()) ChangeAnswer(response);
    return status;
  }
  grpc::Status ReadMany(grpc::ServerContext*, const wire::ReadManyRequest* request,
                        wire::ReadManyResponse* response) override {
    ++read_many_calls;
    if (fault_ == Fault::kOldOsd) return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "");
    grpc::Status status =
        Forward(Await<wire::ReadManyResponse>(&OsdClient::ReadManyAsync, *request), response);
    if (!status.ok() || !ChangeAnswer(response)) return status;
    wire::ReadManyResult* faulty = response->mutable_results(kFaultyItem);
    if (fault_ == Fault::kCorruptRead) {
      (*faulty->mutable_response()->mutable_data())[0] ^= 0x40;
    } else if (fault_ == Fault::kRecoveringRead) {
      faulty->clear_response();
      SetRefusal(
          Status(StatusCode::kUnavailable,
                 "OSD " + std::to_string(real_.osd_id()) + " is recovering: read the other copy",
                 StatusReason::kRecovering),
          faulty);
    } else if (fault_ == Fault::kAnothersRecoveryRead) {
      faulty->clear_response();
      SetRefusal(Status(StatusCode::kUnavailable,
                        "OSD " + std::to_string(real_.osd_id() + 1) +
                            " is recovering: it takes this change itself in a moment",
                        StatusReason::kPeerRecovering),
                 faulty);
    }
    return status;
  }

 private:
  // The faults of either batched call's answer; false when it has no item kFaultyItem.
  template <typename ManyResponse>
  bool ChangeAnswer(ManyResponse* response) const {
    if (response->results_size() <= kFaultyItem) return false;
    if (fault_ == Fault::kShortAnswer) {
      response->mutable_results()->RemoveLast();
    } else if (fault_ == Fault::kStaleEpoch) {
      auto* faulty = response->mutable_results(kFaultyItem);
      faulty->clear_response();
      SetRefusal(Status(StatusCode::kStaleEpoch, "epoch 1 is older than the OSD's 2"), faulty);
    }
    return true;
  }

  // The real OSD's answer to an asynchronous call.
  template <typename Response, typename Request>
  Result<Response> Await(void (OsdClient::*start)(std::shared_ptr<const Request>,
                                                  std::function<void(Result<Response>)>),
                         const Request& request) {
    auto answer = std::make_shared<std::promise<Result<Response>>>();
    std::future<Result<Response>> future = answer->get_future();
    (real_.*start)(std::make_shared<const Request>(request),
                   [answer](Result<Response> r) { answer->set_value(std::move(r)); });
    return future.get();
  }
  template <typename Response>
  static grpc::Status Forward(Result<Response> result, Response* response) {
    if (!result.ok()) return ToGrpc(result.status());
    *response = std::move(*result);
    return grpc::Status::OK;
  }

  OsdClient real_;
  const Fault fault_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

class BatchedCallsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cluster_ = new TestCluster(TestClusterOptions{.osds = 3, .tls = false});
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }

  // A proxy with `fault` in front of the first OSD, and a client whose map sends that OSD's
  // calls to the proxy.
  void StartProxy(OsdProxy::Fault fault, RpcOptions options = {}) {
    ClusterMap map = cluster_->map();
    proxied_ = map.osds.front().id;
    proxy_ = std::make_unique<OsdProxy>(map.osds.front(), fault);
    ASSERT_TRUE(proxy_->started());
    map.osds.front().address = proxy_->address();
    client_ = std::make_unique<ClusterClient>(map, options);
  }

  // `n` whole objects whose original (or `copy`) the proxied OSD holds, written (both copies)
  // directly.
  std::vector<Oid> ObjectsOnProxiedOsd(size_t n, std::vector<std::string>* bytes,
                                       CopyFlag copy = CopyFlag::kOriginal) {
    std::vector<Oid> oids;
    const Placement& placement = cluster_->client().placement();
    while (oids.size() < n) {
      const Oid oid{1, ++next_fno_, 0, ObjectType::kData, CopyFlag::kOriginal};
      if (placement.OsdFor(oid.WithFlag(copy)) != proxied_) continue;
      const std::string data =
          "object of file " + std::to_string(oid.fno) + std::string(1000 + 97 * oids.size(), 'x');
      EXPECT_TRUE(cluster_->client().WriteBothCopies(oid, data, {.replace = true}).ok());
      oids.push_back(oid);
      bytes->push_back(data);
    }
    return oids;
  }

  // ReadManyAsync through the test's client: each read's result, in order.
  std::vector<Result<wire::ReadResponse>> ReadMany(const std::vector<Oid>& oids) {
    std::mutex mu;
    std::vector<Result<wire::ReadResponse>> results(oids.size(), Status::Internal("unanswered"));
    std::vector<int> answers(oids.size(), 0);
    PendingCalls pending;
    pending.Add(static_cast<int>(oids.size()));
    client_->ReadManyAsync(oids, [&](size_t i, Result<wire::ReadResponse> r) {
      {
        std::lock_guard lock(mu);
        ++answers[i];
        results[i] = std::move(r);
      }
      pending.Done(Status::Ok());
    });
    EXPECT_TRUE(pending.Wait().ok());
    for (size_t i = 0; i < oids.size(); ++i) EXPECT_EQ(answers[i], 1) << oids[i].ToString();
    return results;
  }

  // Both copies of each object written with one batch (SendWrites): each object's outcome.
  std::vector<Status> WriteBatch(const std::vector<Oid>& oids,
                                 const std::vector<std::string>& bytes) {
    std::mutex mu;
    std::vector<Status> outcomes(oids.size(), Status::Internal("unanswered"));
    PendingCalls pending;
    CopyWriteBatch batch;
    for (size_t i = 0; i < oids.size(); ++i) {
      pending.Add();
      client_->WriteBothCopiesAsync(
          oids[i], bytes[i], {.replace = true},
          [&, i](Status st) {
            {
              std::lock_guard lock(mu);
              outcomes[i] = st;
            }
            pending.Done(Status::Ok());
          },
          &batch);
    }
    client_->SendWrites(std::move(batch));
    EXPECT_TRUE(pending.Wait().ok());
    std::lock_guard lock(mu);
    return outcomes;
  }
  // Both copies of the object hold `bytes` (read directly from the OSDs).
  static void ExpectBothCopies(const Oid& oid, const std::string& bytes) {
    for (CopyFlag copy : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
      Result<wire::ReadResponse> read = cluster_->client().Read(oid.WithFlag(copy));
      ASSERT_TRUE(read.ok()) << read.status().ToString();
      EXPECT_EQ(read->data(), bytes) << oid.WithFlag(copy).ToString();
    }
  }

  // Neither copy of any of the objects is stored (read directly from the OSDs).
  static void ExpectGone(const std::vector<Oid>& oids) {
    for (const Oid& oid : oids) {
      for (CopyFlag copy : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
        Result<wire::ReadResponse> read = cluster_->client().Read(oid.WithFlag(copy));
        EXPECT_TRUE(read.status().Is(StatusCode::kNotFound))
            << oid.WithFlag(copy).ToString() << ": " << read.status().ToString();
      }
    }
  }
  static void ExpectAllOk(const std::vector<Status>& results) {
    for (const Status& st : results) EXPECT_TRUE(st.ok()) << st.ToString();
  }

  static TestCluster* cluster_;
  static uint64_t next_fno_;
  uint32_t proxied_ = 0;
  std::unique_ptr<OsdProxy> proxy_;
  std::unique_ptr<ClusterClient> client_;
};
TestCluster* BatchedCallsTest::cluster_ = nullptr;
uint64_t BatchedCallsTest::next_fno_ = 5000;

TEST_F(BatchedCallsTest, AnOldOsdGetsSingleCallsAndIsAskedAgainOnlyAfterTheRecheckTime) {
  StartProxy(OsdProxy::Fault::kOldOsd);
  std::vector<std::string> bytes;
  const std::vector<Oid> oids = ObjectsOnProxiedOsd(5, &bytes);

  for (int round = 1; round <= 2; ++round) {
    const std::vector<Result<wire::ReadResponse>> results = ReadMany(oids);
    for (size_t i = 0; i < oids.size(); ++i) {
      ASSERT_TRUE(results[i].ok()) << results[i].status().ToString();
      EXPECT_EQ(results[i]->data(), bytes[i]);
    }
    // One refused ReadMany in all: the second round's batch went out as plain reads at once.
    EXPECT_EQ(proxy_->read_many_calls.load(), 1) << "round " << round;
    EXPECT_EQ(proxy_->reads.load(), 5 * round);
  }

  // Writes the same way: the first batch is refused and sent as single writes, the second goes
  // out as single writes at once.
  for (int round = 1; round <= 2; ++round) {
    for (size_t i = 0; i < oids.size(); ++i) {
      bytes[i] = "rewritten in round " + std::to_string(round) + " " + std::to_string(i);
    }
    for (const Status& st : WriteBatch(oids, bytes)) EXPECT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(proxy_->write_many_calls.load(), 1) << "round " << round;
    EXPECT_EQ(proxy_->writes.load(), 5 * round);
    for (size_t i = 0; i < oids.size(); ++i) ExpectBothCopies(oids[i], bytes[i]);
  }
}

TEST_F(BatchedCallsTest, AWriteLeftOutOfTheAnswerFailsAlone) {
  StartProxy(OsdProxy::Fault::kShortAnswer);
  std::vector<std::string> bytes;
  const std::vector<Oid> oids = ObjectsOnProxiedOsd(4, &bytes);
  for (std::string& b : bytes) b = "second version of " + b;
  // The proxied OSD holds the four originals (one WriteMany); their replicas are elsewhere.
  const std::vector<Status> outcomes = WriteBatch(oids, bytes);
  ASSERT_EQ(proxy_->write_many_calls.load(), 1);
  for (size_t i = 0; i + 1 < oids.size(); ++i) {
    EXPECT_TRUE(outcomes[i].ok()) << outcomes[i].ToString();
    ExpectBothCopies(oids[i], bytes[i]);
  }
  EXPECT_TRUE(outcomes.back().Is(StatusCode::kInternal)) << outcomes.back().ToString();
  EXPECT_NE(outcomes.back().message().find("WriteMany answered 3 of 4"), std::string::npos)
      << outcomes.back().ToString();
}

TEST_F(BatchedCallsTest, AWriteRefusedForAStaleEpochIsSentAgainAlone) {
  StartProxy(OsdProxy::Fault::kStaleEpoch);
  std::vector<std::string> bytes;
  const std::vector<Oid> oids = ObjectsOnProxiedOsd(3, &bytes);
  for (std::string& b : bytes) b = "second version of " + b;
  for (const Status& st : WriteBatch(oids, bytes)) EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(proxy_->write_many_calls.load(), 1);
  // The refused one, again as a plain Write; and, since this proxy let the real OSD apply the
  // write it answered as refused, the resend left that copy a version ahead of the other: a
  // repair record is asked for there (as after an answer lost and the write sent again).
  EXPECT_EQ(proxy_->writes.load(), 2);
  for (size_t i = 0; i < oids.size(); ++i) ExpectBothCopies(oids[i], bytes[i]);
}

TEST_F(BatchedCallsTest, AnOldOsdIsAskedAgainOnceTheRecheckTimeHasPassed) {
  StartProxy(OsdProxy::Fault::kOldOsd, RpcOptions{.old_osd_recheck = std::chrono::milliseconds(0)});
  std::vector<std::string> bytes;
  const std::vector<Oid> oids = ObjectsOnProxiedOsd(3, &bytes);
  for (int round = 1; round <= 2; ++round) {
    for (const Result<wire::ReadResponse>& r : ReadMany(oids)) EXPECT_TRUE(r.ok());
    EXPECT_EQ(proxy_->read_many_calls.load(), round);
  }
}

TEST_F(BatchedCallsTest, AReadLeftOutOfTheAnswerFailsAlone) {
  StartProxy(OsdProxy::Fault::kShortAnswer);
  std::vector<std::string> bytes;
  const std::vector<Oid> oids = ObjectsOnProxiedOsd(4, &bytes);
  const std::vector<Result<wire::ReadResponse>> results = ReadMany(oids);
  ASSERT_EQ(proxy_->read_many_calls.load(), 1);
  for (size_t i = 0; i + 1 < oids.size(); ++i) {
    ASSERT_TRUE(results[i].ok()) << results[i].status().ToString();
    EXPECT_EQ(results[i]->data(), bytes[i]);
  }
  EXPECT_TRUE(results.back().status().Is(StatusCode::kInternal))
      << results.back().status().ToString();
  EXPECT_NE(results.back().status().message().find("answered 3 of 4"), std::string::npos)
      << results.back().status().ToString();
}

TEST_F(BatchedCallsTest, ACorruptedReadFailsItsChecksumAlone) {
  StartProxy(OsdProxy::Fault::kCorruptRead);
  std::vector<std::string> bytes;
  const std::vector<Oid> oids = ObjectsOnProxiedOsd(3, &bytes);
  const std::vector<Result<wire::ReadResponse>> results = ReadMany(oids);
  ASSERT_EQ(proxy_->read_many_calls.load(), 1);
  for (size_t i = 0; i < oids.size(); ++i) {
    if (i == OsdProxy::kFaultyItem) {
      EXPECT_TRUE(results[i].status().Is(StatusCode::kCorruption))
          << results[i].status().ToString();
      continue;
    }
    ASSERT_TRUE(results[i].ok()) << results[i].status().ToString();
    EXPECT_EQ(results[i]->data(), bytes[i]);
  }
}

TEST_F(BatchedCallsTest, AReadRefusedForAStaleEpochIsSentAgainAlone) {
  StartProxy(OsdProxy::Fault::kStaleEpoch);
  std::vector<std::string> bytes;
  const std::vector<Oid> oids = ObjectsOnProxiedOsd(3, &bytes);
  const std::vector<Result<wire::ReadResponse>> results = ReadMany(oids);
  for (size_t i = 0; i < oids.size(); ++i) {
    ASSERT_TRUE(results[i].ok()) << results[i].status().ToString();
    EXPECT_EQ(results[i]->data(), bytes[i]);
  }
  EXPECT_EQ(proxy_->read_many_calls.load(), 1);
  EXPECT_EQ(proxy_->reads.load(), 1);  // the refused one, again as a plain Read
}

TEST_F(BatchedCallsTest, AReadRefusedWhileRecoveringMarksTheOsdDown) {
  StartProxy(OsdProxy::Fault::kRecoveringRead);
  std::vector<std::string> bytes;
  const std::vector<Oid> oids = ObjectsOnProxiedOsd(3, &bytes);
  ASSERT_TRUE(client_->DownOsds().empty());
  const std::vector<Result<wire::ReadResponse>> results = ReadMany(oids);
  EXPECT_TRUE(ClusterClient::IsRecovering(results[OsdProxy::kFaultyItem].status()))
      << results[OsdProxy::kFaultyItem].status().ToString();
  EXPECT_TRUE(results[0].ok()) << results[0].status().ToString();
  // As a plain Read's refusal would: the other copies serve until the OSD answers again (for
  // the first backoff, 1 s). Once per call, however many of its reads were refused.
  EXPECT_EQ(client_->Osd(proxied_)->marked_down(), 1u);
  EXPECT_EQ(client_->Osd(proxied_)->transport_failures(), 1u);
  EXPECT_EQ(client_->DownOsds(), std::vector<uint32_t>{proxied_});
}

TEST_F(BatchedCallsTest, ARefusalBecauseAnotherOsdRecoversLeavesThisOneUp) {
  // A peer fenced by a recovering OSD (RepairRequest.fence) refuses some changes, naming that
  // OSD: the caller sees the refusal (and retries), but the peer itself answered.
  StartProxy(OsdProxy::Fault::kAnothersRecoveryRead);
  std::vector<std::string> bytes;
  const std::vector<Oid> oids = ObjectsOnProxiedOsd(3, &bytes);
  const std::vector<Result<wire::ReadResponse>> results = ReadMany(oids);
  EXPECT_TRUE(ClusterClient::IsRecovering(results[OsdProxy::kFaultyItem].status()))
      << results[OsdProxy::kFaultyItem].status().ToString();
  EXPECT_TRUE(results[0].ok()) << results[0].status().ToString();
  EXPECT_EQ(client_->Osd(proxied_)->marked_down(), 0u);
  EXPECT_EQ(client_->Osd(proxied_)->transport_failures(), 0u);
  EXPECT_TRUE(client_->DownOsds().empty());
}

// The data objects of freed files: their originals on the proxied OSD go in one DeleteMany,
// then their replicas (on the other OSDs) the same way; no single Delete reaches that OSD.
TEST_F(BatchedCallsTest, DataObjectsAreDeletedInOneCallPerOsd) {
  StartProxy(OsdProxy::Fault::kNone);
  std::vector<std::string> bytes;
  const std::vector<Oid> oids = ObjectsOnProxiedOsd(12, &bytes);
  ExpectAllOk(client_->DeleteDataObjects(oids));
  EXPECT_EQ(proxy_->delete_many_calls.load(), 1);
  EXPECT_EQ(proxy_->deletes.load(), 0);
  ExpectGone(oids);
}

TEST_F(BatchedCallsTest, AnOldOsdGetsSingleDeletes) {
  StartProxy(OsdProxy::Fault::kOldOsd);
  std::vector<std::string> bytes;
  const std::vector<Oid> oids = ObjectsOnProxiedOsd(4, &bytes);
  ExpectAllOk(client_->DeleteDataObjects(oids));
  EXPECT_EQ(proxy_->delete_many_calls.load(), 1);
  EXPECT_EQ(proxy_->deletes.load(), 4);
  ExpectGone(oids);
}

// A delete left out of the answer, or refused for a stale epoch: that object alone goes the
// careful way (DeleteBothCopies), and every object ends up deleted.
TEST_F(BatchedCallsTest, ADeleteLeftOutOrRefusedGoesAgainAlone) {
  for (OsdProxy::Fault fault : {OsdProxy::Fault::kShortAnswer, OsdProxy::Fault::kStaleEpoch}) {
    SCOPED_TRACE(fault == OsdProxy::Fault::kShortAnswer ? "short answer" : "stale epoch");
    StartProxy(fault);
    std::vector<std::string> bytes;
    const std::vector<Oid> oids = ObjectsOnProxiedOsd(4, &bytes);
    ExpectAllOk(client_->DeleteDataObjects(oids));
    EXPECT_EQ(proxy_->delete_many_calls.load(), 1);
    EXPECT_EQ(proxy_->deletes.load(), 1) << "the one left out or refused, alone";
    ExpectGone(oids);
  }
}

// The replicas' OSD fails once their originals are deleted: each original keeps a tombstone
// with a repair record, and the replay deletes the replica, so no copy is left without its twin.
TEST_F(BatchedCallsTest, ReplicasWhoseOsdFailsAreDeletedByTheRepair) {
  StartProxy(OsdProxy::Fault::kDeletesFail);
  std::vector<std::string> bytes;
  const std::vector<Oid> oids = ObjectsOnProxiedOsd(4, &bytes, CopyFlag::kReplica);
  ExpectAllOk(client_->DeleteDataObjects(oids));
  EXPECT_EQ(proxy_->delete_many_calls.load(), 1) << "the replicas, together";
  for (const Oid& oid : oids) {
    EXPECT_TRUE(cluster_->client().Read(oid.WithFlag(CopyFlag::kReplica)).ok())
        << "the replica stays until the repair: " << oid.ToString();
  }
  const CommandResult repair = cluster_->Repair();
  ASSERT_EQ(repair.exit_code, 0) << repair.out << repair.err;
  ExpectGone(oids);
}

}  // namespace
}  // namespace orthofs::testing
