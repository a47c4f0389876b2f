#include "common/answer_watch.h"

#include <gtest/gtest.h>

namespace orthofs {
namespace {

using std::chrono::milliseconds;
using Clock = AnswerWatch::Clock;

class AnswerWatchTest : public ::testing::Test {
 protected:
  Clock::time_point At(int ms) const { return start_ + milliseconds(ms); }
  // `n` calls answered `latency_ms` after they were sent, the last at `end_ms`.
  void Answer(AnswerWatch* watch, int n, int latency_ms, int end_ms) const {
    for (int i = 0; i < n; ++i) {
      const int answered = end_ms - (n - 1 - i);
      watch->RecordAnswer(At(answered - latency_ms), At(answered));
    }
  }
  const Clock::time_point start_ = Clock::now();
};

TEST_F(AnswerWatchTest, NothingWaitingIsNeverSilent) {
  AnswerWatch watch;
  EXPECT_FALSE(watch.Silent(At(100000), std::nullopt));
  Answer(&watch, 10, 1, 100);
  EXPECT_FALSE(watch.Silent(At(100000), std::nullopt));
}

TEST_F(AnswerWatchTest, ACallWaitingPastTheThresholdWithNoAnswersIsSilent) {
  AnswerWatch watch;
  Answer(&watch, 100, 1, 1000);  // a fast OSD: the threshold is its floor
  EXPECT_EQ(watch.SilenceThreshold(), milliseconds(500));
  EXPECT_FALSE(watch.Silent(At(1400), At(1000))) << "waited 400 ms: not yet";
  EXPECT_TRUE(watch.Silent(At(1501), At(1000)));
}

TEST_F(AnswerWatchTest, AnOsdThatKeepsAnsweringIsNotSilent) {
  // Loaded but alive: one call has waited long, but others are answered meanwhile.
  AnswerWatch watch;
  Answer(&watch, 100, 1, 1000);
  Answer(&watch, 1, 5, 5000);
  EXPECT_FALSE(watch.Silent(At(5100), At(1000)));
  EXPECT_TRUE(watch.Silent(At(5600), At(1000))) << "then nothing for 600 ms";
}

TEST_F(AnswerWatchTest, BeforeAnyAnswerTheSilenceCountsFromTheOldestCall) {
  AnswerWatch watch;
  EXPECT_FALSE(watch.Silent(At(400), At(0)));
  EXPECT_TRUE(watch.Silent(At(501), At(0)));
}

TEST_F(AnswerWatchTest, TheThresholdFollowsTheOsdsOwnLatency) {
  AnswerWatch watch;
  Answer(&watch, 200, 100, 10000);  // every answer took 100 ms: 8 x p99 = 800 ms
  EXPECT_EQ(watch.SilenceThreshold(), milliseconds(800));
  EXPECT_FALSE(watch.Silent(At(10700), At(9900)));
  EXPECT_TRUE(watch.Silent(At(10801), At(10000)));
  // However slow it is, a hung OSD is found within the cap.
  Answer(&watch, 300, 900, 20000);
  EXPECT_EQ(watch.SilenceThreshold(), milliseconds(1500));
}

TEST_F(AnswerWatchTest, OnlyTheRecentAnswersCount) {
  AnswerWatch watch;
  Answer(&watch, 300, 400, 10000);
  EXPECT_EQ(watch.SilenceThreshold(), milliseconds(1500));
  Answer(&watch, AnswerWatch::kSamples, 1, 20000);  // it got fast again
  EXPECT_EQ(watch.SilenceThreshold(), milliseconds(500));
}

TEST_F(AnswerWatchTest, QuantilesOfTheRecentAnswers) {
  AnswerWatch watch;
  EXPECT_EQ(watch.Quantile(0.99), Clock::duration::zero());
  for (int i = 1; i <= 100; ++i) watch.RecordAnswer(At(1000), At(1000 + i));
  EXPECT_EQ(watch.Quantile(0.5), milliseconds(50));
  EXPECT_EQ(watch.Quantile(0.99), milliseconds(99));
  EXPECT_EQ(watch.Quantile(1.0), milliseconds(100));
  EXPECT_EQ(watch.Quantile(0.0), milliseconds(1));
}

TEST_F(AnswerWatchTest, HedgeDelayIsAMultipleOfThe95thPercentileWithinBounds) {
  AnswerWatch watch;
  EXPECT_EQ(watch.HedgeDelay(), milliseconds(20)) << "no answers yet: the floor";
  Answer(&watch, 100, 30, 1000);
  EXPECT_EQ(watch.HedgeDelay(), milliseconds(90));
  Answer(&watch, AnswerWatch::kSamples, 1000, 5000);
  EXPECT_EQ(watch.HedgeDelay(), milliseconds(400));
}

TEST_F(AnswerWatchTest, AnAnswerArrivingOutOfOrderKeepsTheLatestTime) {
  AnswerWatch watch;
  watch.RecordAnswer(At(0), At(1000));
  watch.RecordAnswer(At(0), At(900));
  ASSERT_TRUE(watch.last_answer().has_value());
  EXPECT_EQ(*watch.last_answer(), At(1000));
}

}  // namespace
}  // namespace orthofs
