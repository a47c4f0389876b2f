#include "client/delayed_calls.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

namespace orthofs {
namespace {

using std::chrono::milliseconds;

template <typename Predicate>
bool Eventually(Predicate p) {
  for (int i = 0; i < 1000 && !p(); ++i) std::this_thread::sleep_for(milliseconds(2));
  return p();
}

TEST(DelayedCallsTest, RunsEachCallOnceInTheOrderItIsDue) {
  DelayedCalls calls;
  std::mutex mu;
  std::vector<int> order;
  auto note = [&](int n) {
    return [&, n] {
      std::lock_guard lock(mu);
      order.push_back(n);
    };
  };
  calls.After(milliseconds(60), note(3));
  calls.After(milliseconds(0), note(1));
  calls.After(milliseconds(30), note(2));
  ASSERT_TRUE(Eventually([&] {
    std::lock_guard lock(mu);
    return order.size() == 3;
  }));
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(calls.waiting(), 0u);
}

TEST(DelayedCallsTest, NotBeforeItsDelay) {
  DelayedCalls calls;
  std::atomic<bool> ran{false};
  const auto start = DelayedCalls::Clock::now();
  std::atomic<int64_t> ran_after_ms{-1};
  calls.After(milliseconds(50), [&] {
    ran_after_ms =
        std::chrono::duration_cast<milliseconds>(DelayedCalls::Clock::now() - start).count();
    ran = true;
  });
  ASSERT_TRUE(Eventually([&] { return ran.load(); }));
  EXPECT_GE(ran_after_ms.load(), 50);
}

TEST(DelayedCallsTest, CallsStillWaitingAreDroppedAtDestruction) {
  std::atomic<bool> ran{false};
  {
    DelayedCalls calls;
    calls.After(std::chrono::hours(1), [&] { ran = true; });
    EXPECT_EQ(calls.waiting(), 1u);
  }
  EXPECT_FALSE(ran.load());
}

TEST(DelayedCallsTest, ACallMayScheduleAnother) {
  DelayedCalls calls;
  std::atomic<int> runs{0};
  calls.After(milliseconds(1), [&] {
    ++runs;
    calls.After(milliseconds(1), [&] { ++runs; });
  });
  EXPECT_TRUE(Eventually([&] { return runs.load() == 2; }));
}

}  // namespace
}  // namespace orthofs
