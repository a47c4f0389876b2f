#include "client/deferred_releases.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

namespace orthofs {
namespace {

// A release that blocks until the test opens the gate, noting which files it freed.
struct Gate {
  std::mutex mu;
  std::condition_variable opened_cv;
  bool opened = false;
  std::set<uint64_t> released;
  std::atomic<int> started{0};

  Status Release(uint64_t fno) {
    ++started;
    std::unique_lock lock(mu);
    opened_cv.wait(lock, [&] { return opened; });
    released.insert(fno);
    return fno % 2 == 0 ? Status::Ok() : Status::Unavailable("odd file " + std::to_string(fno));
  }
  DeferredReleases::Release For(uint64_t fno) {
    return [this, fno] { return Release(fno); };
  }
  void Open() {
    {
      std::lock_guard lock(mu);
      opened = true;
    }
    opened_cv.notify_all();
  }
  size_t Released() {
    std::lock_guard lock(mu);
    return released.size();
  }
};

TEST(DeferredReleasesTest, DrainWaitsForEveryReleaseAddedAndCountsFailures) {
  Gate gate;
  DeferredReleases releases(16, 2);
  for (uint64_t fno = 1; fno <= 6; ++fno) ASSERT_TRUE(releases.Add(fno, gate.For(fno)));
  EXPECT_EQ(releases.counts().waiting, 6u);
  std::atomic<bool> drained{false};
  std::thread drainer([&] {
    releases.Drain();
    drained = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(drained.load()) << "Drain returned while releases were blocked";
  gate.Open();
  drainer.join();
  EXPECT_EQ(gate.Released(), 6u);
  const DeferredReleases::Counts c = releases.counts();
  EXPECT_EQ(c.deferred, 6u);
  EXPECT_EQ(c.failed, 3u);  // the odd ones
  EXPECT_EQ(c.waiting, 0u);
  EXPECT_EQ(c.refused, 0u);
}

TEST(DeferredReleasesTest, RefusesPastItsBoundSoTheCallerReleases) {
  Gate gate;
  DeferredReleases releases(3, 1);
  ASSERT_TRUE(releases.Add(10, gate.For(10)));
  // The one worker takes file 10 and blocks; three more fill the queue.
  for (int i = 0; i < 1000 && gate.started.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(gate.started.load(), 1);
  EXPECT_TRUE(releases.Add(11, gate.For(11)));
  EXPECT_TRUE(releases.Add(12, gate.For(12)));
  EXPECT_TRUE(releases.Add(13, gate.For(13)));
  EXPECT_FALSE(releases.Add(14, gate.For(14)));
  EXPECT_EQ(releases.counts().refused, 1u);
  gate.Open();
  releases.Drain();
  EXPECT_EQ(gate.Released(), 4u);
  EXPECT_TRUE(releases.Add(14, gate.For(14)));  // room again
  releases.Drain();
  EXPECT_EQ(gate.Released(), 5u);
}

TEST(DeferredReleasesTest, DestructionRunsEveryQueuedRelease) {
  Gate gate;
  gate.Open();
  {
    DeferredReleases releases(100, 2);
    for (uint64_t fno = 1; fno <= 50; ++fno) ASSERT_TRUE(releases.Add(fno, gate.For(fno)));
  }
  EXPECT_EQ(gate.Released(), 50u);
}

TEST(DeferredReleasesTest, DrainWithNothingAddedReturnsAtOnce) {
  DeferredReleases releases;
  releases.Drain();
  EXPECT_EQ(releases.counts().deferred, 0u);
}

}  // namespace
}  // namespace orthofs
