#include "common/await_all.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>

namespace orthofs {
namespace {

TEST(AwaitAllTest, NoCallsAnswerAtOnce) {
  int started = 0;
  auto answers = AwaitAll<int>(0, [&](size_t, std::function<void(int)>) { ++started; });
  EXPECT_TRUE(answers.empty());
  EXPECT_EQ(started, 0);
}

TEST(AwaitAllTest, AnswersInTheOrderOfTheCallsWhateverOrderTheyCome) {
  // Each call answers on its own thread, the later calls sooner.
  std::vector<std::thread> threads;
  auto answers = AwaitAll<std::string>(8, [&](size_t i, std::function<void(std::string)> done) {
    threads.emplace_back([i, done = std::move(done)] {
      std::this_thread::sleep_for(std::chrono::milliseconds(2 * (8 - i)));
      done("answer " + std::to_string(i));
    });
  });
  for (std::thread& t : threads) t.join();
  ASSERT_EQ(answers.size(), 8u);
  for (size_t i = 0; i < answers.size(); ++i) EXPECT_EQ(answers[i], "answer " + std::to_string(i));
}

TEST(AwaitAllTest, ACallMayAnswerBeforeItsStartReturns) {
  auto answers = AwaitAll<int>(
      3, [](size_t i, std::function<void(int)> done) { done(static_cast<int>(i) * 10); });
  EXPECT_EQ(answers, (std::vector<int>{0, 10, 20}));
}

// Answers need no default constructor (Result<T> has none).
struct NoDefault {
  explicit NoDefault(int v) : value(v) {}
  int value;
};

TEST(AwaitAllTest, AnswersNeedNoDefaultConstructor) {
  auto answers = AwaitAll<NoDefault>(2, [](size_t i, std::function<void(NoDefault)> done) {
    done(NoDefault(static_cast<int>(i) + 1));
  });
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[1].value, 2);
}

}  // namespace
}  // namespace orthofs
