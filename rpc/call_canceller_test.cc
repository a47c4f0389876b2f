#include "rpc/call_canceller.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <thread>

#include "rpc/osd_client.h"

namespace orthofs {
namespace {

// A loopback port nobody listens on, held (bound, not listening) for the test's life so that
// connections to it are refused.
class RefusingPort {
 public:
  RefusingPort() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    socklen_t len = sizeof addr;
    EXPECT_EQ(getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    port_ = ntohs(addr.sin_port);
  }
  ~RefusingPort() { close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// A client whose calls wait (wait_for_ready) a minute, far longer than these tests, for an OSD that
// never answers: only cancellation ends them early.
struct WaitingClient {
  RefusingPort port;
  std::shared_ptr<CallCanceller> canceller = std::make_shared<CallCanceller>();
  std::unique_ptr<OsdClient> client;
  WaitingClient() {
    RpcOptions options;
    options.deadline = std::chrono::seconds(60);
    options.wait_for_ready = true;
    options.canceller = canceller;
    client = std::make_unique<OsdClient>(
        OsdInfo{.id = 7, .address = "127.0.0.1:" + std::to_string(port.port())}, options);
  }
  void AwaitTracked(size_t n) const {
    while (canceller->tracked() != n) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
};

void ExpectCancelled(const Status& st) {
  EXPECT_TRUE(st.Is(StatusCode::kUnavailable)) << st.ToString();
  EXPECT_NE(st.message().find("call cancelled"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("OSD 7"), std::string::npos) << st.ToString();
}

TEST(CallCancellerTest, CancelAllEndsASyncCallWaitingForAnOsdThatIsDown) {
  WaitingClient w;
  auto call = std::async(std::launch::async, [&] { return w.client->Stat({}).status(); });
  w.AwaitTracked(1);
  w.canceller->CancelAll();
  ExpectCancelled(call.get());
  EXPECT_EQ(w.canceller->tracked(), 0u);
}

TEST(CallCancellerTest, CancelAllEndsAnAsyncCallWaitingForAnOsdThatIsDown) {
  WaitingClient w;
  std::promise<Status> outcome;
  w.client->ReadAsync(std::make_shared<wire::ReadRequest>(),
                      [&](Result<wire::ReadResponse> r) { outcome.set_value(r.status()); });
  w.AwaitTracked(1);
  w.canceller->CancelAll();
  ExpectCancelled(outcome.get_future().get());
  EXPECT_EQ(w.canceller->tracked(), 0u);
}

// Beyond the calls in flight, later ones wait in the client's queue; CancelAll finishes all of
// them, each as cancelled.
TEST(CallCancellerTest, CancelAllFinishesEveryQueuedCall) {
  WaitingClient w;
  constexpr int kCalls = 20000;
  std::mutex mu;
  std::condition_variable cv;
  int cancelled = 0;
  int finished = 0;
  for (int i = 0; i < kCalls; ++i) {
    w.client->ReadAsync(std::make_shared<wire::ReadRequest>(), [&](Result<wire::ReadResponse> r) {
      std::lock_guard lock(mu);
      if (r.status().message().find("call cancelled") != std::string::npos) {
        ++cancelled;
      }
      ++finished;
      cv.notify_all();
    });
  }
  w.AwaitTracked(32);  // the client's limit of calls in flight; the rest are queued
  w.canceller->CancelAll();
  std::unique_lock lock(mu);
  cv.wait(lock, [&] { return finished == kCalls; });
  EXPECT_EQ(cancelled, kCalls);
  EXPECT_EQ(w.canceller->tracked(), 0u);
}

TEST(CallCancellerTest, CallsAfterCancelAllFailAtOnceWithoutStarting) {
  WaitingClient w;
  w.canceller->CancelAll();
  w.canceller->CancelAll();  // idempotent
  EXPECT_TRUE(w.canceller->cancelled());
  ExpectCancelled(w.client->Health({}).status());
  std::promise<Status> outcome;
  w.client->WriteAsync(std::make_shared<wire::WriteRequest>(),
                       [&](Result<wire::WriteResponse> r) { outcome.set_value(r.status()); });
  ExpectCancelled(outcome.get_future().get());
  EXPECT_EQ(w.canceller->tracked(), 0u);
}

TEST(CallCancellerTest, CallsWithoutACancellerStillFailByTheirDeadline) {
  RefusingPort port;
  RpcOptions options;
  options.deadline = std::chrono::milliseconds(200);
  options.wait_for_ready = true;
  OsdClient client(OsdInfo{.id = 3, .address = "127.0.0.1:" + std::to_string(port.port())},
                   options);
  const Status st = client.Stat({}).status();
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.message().find("call cancelled"), std::string::npos) << st.ToString();
}

}  // namespace
}  // namespace orthofs
