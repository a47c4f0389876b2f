#include "client/deferred_releases.h"

#include <gtest/gtest.h>

#include <algorithm>
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
  int batches = 0;
  size_t largest_batch = 0;

  std::vector<Status> Release(const std::vector<Unlinked>& files) {
    ++started;
    std::unique_lock lock(mu);
    opened_cv.wait(lock, [&] { return opened; });
    std::vector<Status> results;
    for (const Unlinked& u : files) {
      released.insert(u.fno);
      results.push_back(u.fno % 2 == 0 ? Status::Ok()
                                       : Status::Unavailable("odd file " + std::to_string(u.fno)));
    }
    ++batches;
    largest_batch = std::max(largest_batch, files.size());
    return results;
  }
  DeferredReleases::ReleaseMany Releaser() {
    return [this](const std::vector<Unlinked>& files) { return Release(files); };
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
  DeferredReleases releases(gate.Releaser(), 16, 2);
  for (uint64_t fno = 1; fno <= 6; ++fno) ASSERT_TRUE(releases.Add(Unlinked{fno, true}));
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
  DeferredReleases releases(gate.Releaser(), 3, 1);
  ASSERT_TRUE(releases.Add(Unlinked{10, true}));
  // The one worker takes file 10 and blocks; three more fill the queue.
  for (int i = 0; i < 1000 && gate.started.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(gate.started.load(), 1);
  EXPECT_TRUE(releases.Add(Unlinked{11, true}));
  EXPECT_TRUE(releases.Add(Unlinked{12, true}));
  EXPECT_TRUE(releases.Add(Unlinked{13, true}));
  EXPECT_FALSE(releases.Add(Unlinked{14, true}));
  EXPECT_EQ(releases.counts().refused, 1u);
  gate.Open();
  releases.Drain();
  EXPECT_EQ(gate.Released(), 4u);
  EXPECT_TRUE(releases.Add(Unlinked{14, true}));  // room again
  releases.Drain();
  EXPECT_EQ(gate.Released(), 5u);
}

TEST(DeferredReleasesTest, DestructionRunsEveryQueuedRelease) {
  Gate gate;
  gate.Open();
  {
    DeferredReleases releases(gate.Releaser(), 100, 2);
    for (uint64_t fno = 1; fno <= 50; ++fno) ASSERT_TRUE(releases.Add(Unlinked{fno, true}));
  }
  EXPECT_EQ(gate.Released(), 50u);
}

// Files that wait while a release runs go together in the next one.
TEST(DeferredReleasesTest, WhatWaitsGoesInOneBatch) {
  Gate gate;
  DeferredReleases releases(gate.Releaser(), 1000, 1);
  ASSERT_TRUE(releases.Add(Unlinked{2, true}));
  for (int i = 0; i < 1000 && gate.started.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(gate.started.load(), 1);
  const size_t waiting = DeferredReleases::kMaxBatch + 10;
  for (uint64_t fno = 100; fno < 100 + waiting; ++fno) {
    ASSERT_TRUE(releases.Add(Unlinked{fno, true}));
  }
  gate.Open();
  releases.Drain();
  EXPECT_EQ(gate.Released(), waiting + 1);
  std::lock_guard lock(gate.mu);
  EXPECT_EQ(gate.batches, 3);  // the first alone, then kMaxBatch, then the rest
  EXPECT_EQ(gate.largest_batch, DeferredReleases::kMaxBatch);
}

TEST(DeferredReleasesTest, DrainWithNothingAddedReturnsAtOnce) {
  DeferredReleases releases(
      [](const std::vector<Unlinked>& files) { return std::vector<Status>(files.size()); });
  releases.Drain();
  EXPECT_EQ(releases.counts().deferred, 0u);
}

}  // namespace
}  // namespace orthofs
