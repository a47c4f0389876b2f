#include "osd/peer_reachability.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace orthofs {
namespace {

using std::chrono::milliseconds;

// A peer set that answers or not, counting the pings it gets.
struct FakePeers {
  std::atomic<bool> answers{true};
  std::atomic<int> pings{0};
  bool Ping(uint32_t) {
    ++pings;
    return answers.load();
  }
};

template <typename Predicate>
bool Eventually(Predicate p) {
  for (int i = 0; i < 400; ++i) {
    if (p()) return true;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return p();
}

TEST(PeerReachabilityTest, AnAnsweringPeerIsPingedEachTime) {
  FakePeers peers;
  PeerReachability reach([&](uint32_t p) { return peers.Ping(p); }, milliseconds(10));
  EXPECT_TRUE(reach.Reachable(3));
  EXPECT_TRUE(reach.Reachable(3));
  EXPECT_EQ(peers.pings.load(), 2);
  EXPECT_FALSE(reach.KnownUnreachable(3));
}

TEST(PeerReachabilityTest, AnUnreachablePeerCostsOnePingUntilItAnswers) {
  FakePeers peers;
  peers.answers = false;
  PeerReachability reach([&](uint32_t p) { return peers.Ping(p); }, milliseconds(10));
  EXPECT_FALSE(reach.Reachable(3));
  const int after_first = peers.pings.load();
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(reach.Reachable(3));
  // Only the background thread pings it meanwhile, every 10 ms, not each asker.
  EXPECT_LT(peers.pings.load() - after_first, 50);
  peers.answers = true;
  EXPECT_TRUE(Eventually([&] { return !reach.KnownUnreachable(3); }))
      << "the background ping found it back";
  EXPECT_TRUE(reach.Reachable(3));
}

TEST(PeerReachabilityTest, APeerThatCalledIsReachableAgainAtOnce) {
  FakePeers peers;
  peers.answers = false;
  PeerReachability reach([&](uint32_t p) { return peers.Ping(p); }, milliseconds(100000));
  EXPECT_FALSE(reach.Reachable(2));
  EXPECT_TRUE(reach.KnownUnreachable(2));
  reach.NoteAnswered(2);
  EXPECT_FALSE(reach.KnownUnreachable(2));
  peers.answers = true;
  EXPECT_TRUE(reach.Reachable(2));
}

TEST(PeerReachabilityTest, PeersAreJudgedApart) {
  std::atomic<bool> two_answers{false};
  PeerReachability reach([&](uint32_t p) { return p != 2 || two_answers.load(); },
                         milliseconds(10));
  EXPECT_FALSE(reach.Reachable(2));
  EXPECT_TRUE(reach.Reachable(1));
  EXPECT_FALSE(reach.KnownUnreachable(1));
}

}  // namespace
}  // namespace orthofs
