// The client's batched calls (ReadMany, WriteMany) against an OSD that answers them badly or
// not at all: a proxy stands in front of one real OSD, forwards every call to it, and either
// plays an OSD from before the batched calls (UNIMPLEMENTED) or changes one read of a ReadMany
// answer (left out, corrupted, refused for a stale epoch, refused while recovering). Each
// result must still reach its caller, right or with the right error.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "client/osd_client.h"
#include "client/wire.h"
#include "tests/test_cluster.h"

namespace orthofs::testing {
namespace {

class OsdProxy final : public wire::Osd::Service {
 public:
  enum class Fault { kNone, kOldOsd, kShortAnswer, kCorruptRead, kStaleEpochRead, kRecoveringRead };
  // The read of every ReadMany answer that a fault changes (the others pass as they are).
  static constexpr int kFaultyRead = 1;

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
  grpc::Status WriteMany(grpc::ServerContext*, const wire::WriteManyRequest* request,
                         wire::WriteManyResponse* response) override {
    ++write_many_calls;
    if (fault_ == Fault::kOldOsd) return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "");
    return Forward(Await<wire::WriteManyResponse>(&OsdClient::WriteManyAsync, *request), response);
  }
  grpc::Status ReadMany(grpc::ServerContext*, const wire::ReadManyRequest* request,
                        wire::ReadManyResponse* response) override {
    ++read_many_calls;
    if (fault_ == Fault::kOldOsd) return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "");
    grpc::Status status =
        Forward(Await<wire::ReadManyResponse>(&OsdClient::ReadManyAsync, *request), response);
    if (!status.ok() || response->results_size() <= kFaultyRead) return status;
    wire::ReadManyResult* faulty = response->mutable_results(kFaultyRead);
    switch (fault_) {
      case Fault::kShortAnswer:
        response->mutable_results()->RemoveLast();
        break;
      case Fault::kCorruptRead:
        (*faulty->mutable_response()->mutable_data())[0] ^= 0x40;
        break;
      case Fault::kStaleEpochRead:
        faulty->clear_response();
        SetRefusal(Status(StatusCode::kStaleEpoch, "epoch 1 is older than the OSD's 2"), faulty);
        break;
      case Fault::kRecoveringRead:
        faulty->clear_response();
        SetRefusal(Status::Unavailable("OSD is recovering: read the other copy"), faulty);
        break;
      case Fault::kNone:
      case Fault::kOldOsd:
        break;
    }
    return status;
  }

 private:
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

  // `n` whole objects whose original the proxied OSD holds, written (both copies) directly.
  std::vector<Oid> ObjectsOnProxiedOsd(size_t n, std::vector<std::string>* bytes) {
    std::vector<Oid> oids;
    const Placement& placement = cluster_->client().placement();
    while (oids.size() < n) {
      const Oid oid{1, ++next_fno_, 0, ObjectType::kData, CopyFlag::kOriginal};
      if (placement.OsdFor(oid) != proxied_) continue;
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
    CopyWriteBatch batch;
    PendingCalls pending;
    for (size_t i = 0; i < oids.size(); ++i) {
      bytes[i] = "rewritten in round " + std::to_string(round) + " " + std::to_string(i);
      pending.Add();
      client_->WriteBothCopiesAsync(
          oids[i], bytes[i], {.replace = true}, [&](Status st) { pending.Done(st); }, &batch);
    }
    client_->SendWrites(std::move(batch));
    ASSERT_TRUE(pending.Wait().ok());
    EXPECT_EQ(proxy_->write_many_calls.load(), 1) << "round " << round;
    EXPECT_EQ(proxy_->writes.load(), 5 * round);
    for (size_t i = 0; i < oids.size(); ++i) {
      for (CopyFlag copy : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
        Result<wire::ReadResponse> read = cluster_->client().Read(oids[i].WithFlag(copy));
        ASSERT_TRUE(read.ok()) << read.status().ToString();
        EXPECT_EQ(read->data(), bytes[i]);
      }
    }
  }
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
    if (i == OsdProxy::kFaultyRead) {
      EXPECT_TRUE(results[i].status().Is(StatusCode::kCorruption))
          << results[i].status().ToString();
      continue;
    }
    ASSERT_TRUE(results[i].ok()) << results[i].status().ToString();
    EXPECT_EQ(results[i]->data(), bytes[i]);
  }
}

TEST_F(BatchedCallsTest, AReadRefusedForAStaleEpochIsSentAgainAlone) {
  StartProxy(OsdProxy::Fault::kStaleEpochRead);
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
  EXPECT_TRUE(ClusterClient::IsRecovering(results[OsdProxy::kFaultyRead].status()))
      << results[OsdProxy::kFaultyRead].status().ToString();
  EXPECT_TRUE(results[0].ok()) << results[0].status().ToString();
  // As a plain Read's refusal would: the other copies serve until the OSD answers again (for
  // the first backoff, 1 s). Once per call, however many of its reads were refused.
  EXPECT_EQ(client_->Osd(proxied_)->marked_down(), 1u);
  EXPECT_EQ(client_->Osd(proxied_)->transport_failures(), 1u);
  EXPECT_EQ(client_->DownOsds(), std::vector<uint32_t>{proxied_});
}

}  // namespace
}  // namespace orthofs::testing
