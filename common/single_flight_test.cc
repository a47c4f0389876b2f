#include "common/single_flight.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>
#include <vector>

namespace orthofs {
namespace {

TEST(SingleFlightTest, CallsOneAfterTheOtherEachRun) {
  SingleFlight<int, int> flights;
  int calls = 0;
  EXPECT_EQ(flights.Do(1, [&] { return ++calls * 10; }), 10);
  EXPECT_EQ(flights.Do(1, [&] { return ++calls * 10; }), 20);
  EXPECT_EQ(flights.InFlight(), 0u);
}

// A call held until released, for key `key`; returns once it runs.
class HeldCall {
 public:
  HeldCall(SingleFlight<int, int>* flights, int key, int value) {
    answer_ = std::async(std::launch::async, [this, flights, key, value] {
      return flights->Do(key, [this, value] {
        running_ = true;
        release_.get_future().wait();
        return value;
      });
    });
    while (!running_) std::this_thread::yield();
  }
  int Release() {
    release_.set_value();
    return answer_.get();
  }

 private:
  std::atomic<bool> running_ = false;
  std::promise<void> release_;
  std::future<int> answer_;
};

TEST(SingleFlightTest, CallersArrivingDuringACallTakeItsAnswer) {
  SingleFlight<int, int> flights;
  HeldCall first(&flights, 1, 42);
  std::atomic<int> own_calls = 0;
  std::vector<std::future<int>> waiters;
  for (int i = 0; i < 3; ++i) {
    waiters.push_back(std::async(std::launch::async, [&] {
      return flights.Do(1, [&] {
        ++own_calls;
        return -1;
      });
    }));
  }
  while (flights.Waiting(1) < 3) std::this_thread::yield();
  EXPECT_EQ(first.Release(), 42);
  for (auto& waiter : waiters) EXPECT_EQ(waiter.get(), 42);
  EXPECT_EQ(own_calls, 0) << "none ran its own call";
  EXPECT_EQ(flights.InFlight(), 0u);
  EXPECT_EQ(flights.Do(1, [] { return 7; }), 7) << "once landed, the next call runs";
}

TEST(SingleFlightTest, ACallForAnotherKeyDoesNotWait) {
  SingleFlight<int, int> flights;
  HeldCall held(&flights, 1, 1);
  EXPECT_EQ(flights.Do(2, [] { return 2; }), 2);
  EXPECT_EQ(flights.InFlight(), 1u);
  EXPECT_EQ(held.Release(), 1);
}

}  // namespace
}  // namespace orthofs
