// Thrashing control: the lowering-PFQ policy of [Wu 1993] §4 and its figures of merit.
#include "common/thrashing_control.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace orthofs {
namespace {

// With the default shares and this capacity, W1 = 50 and W2 = 40 exactly.
constexpr uint64_t kCapacity = 100;
constexpr uint64_t kW1 = 50;
constexpr uint64_t kW2 = 40;

ThrashingConfig Config(uint32_t p_min = 4, uint32_t p_max = 40) {
  ThrashingConfig config;
  config.p_min = p_min;
  config.p_max = p_max;
  return config;
}

// One pressure episode without a raise: reach W1, then fall to W2 (which ends it).
void Episode(ThrashingController& c) {
  c.Observe(kW1, kCapacity);
  c.Observe(kW2, kCapacity);
}

TEST(ThrashingControlTest, DefaultConfig) {
  ThrashingConfig config;
  EXPECT_EQ(config.w1_share, 0.5);
  EXPECT_EQ(config.w2_share, 0.4);
  EXPECT_EQ(config.p_min, 4u);
  EXPECT_EQ(config.p_max, 40u);
}

TEST(ThrashingControlTest, StartsAtPMaxWithoutPressure) {
  ThrashingController c(Config());
  EXPECT_EQ(c.prefetch_quantity(), 40u);
  EXPECT_FALSE(c.under_pressure());
  EXPECT_EQ(c.stats().pressure_episodes, 0u);
  EXPECT_EQ(c.stats().pfq_lowered, 0u);
  EXPECT_EQ(c.stats().pfq_raised, 0u);

  ThrashingController other(Config(2, 17));
  EXPECT_EQ(other.prefetch_quantity(), 17u);
}

TEST(ThrashingControlTest, BelowW1NothingChanges) {
  ThrashingController c(Config());
  for (uint64_t used : {0u, 10u, 39u, 40u, 41u, 49u, 0u, 49u}) {
    c.Observe(used, kCapacity);
    EXPECT_FALSE(c.under_pressure()) << used;
    EXPECT_EQ(c.prefetch_quantity(), 40u) << used;  // already at p_max: no raise
  }
  EXPECT_EQ(c.stats().pressure_episodes, 0u);
  EXPECT_EQ(c.stats().pfq_lowered, 0u);
  EXPECT_EQ(c.stats().pfq_raised, 0u);
}

TEST(ThrashingControlTest, ReachingW1StartsPressureAndHalvesPfq) {
  ThrashingController c(Config());
  c.Observe(kW1 - 1, kCapacity);
  EXPECT_FALSE(c.under_pressure());
  c.Observe(kW1, kCapacity);  // W1 itself counts as reached
  EXPECT_TRUE(c.under_pressure());
  EXPECT_EQ(c.prefetch_quantity(), 20u);
  EXPECT_EQ(c.stats().pressure_episodes, 1u);
  EXPECT_EQ(c.stats().pfq_lowered, 1u);
  EXPECT_EQ(c.stats().pfq_raised, 0u);
}

TEST(ThrashingControlTest, ReachingW1UsesTheShareOfTheGivenCapacity) {
  ThrashingConfig config = Config();
  config.w1_share = 0.75;
  config.w2_share = 0.25;
  ThrashingController c(config);
  c.Observe(749, 1000);
  EXPECT_FALSE(c.under_pressure());
  c.Observe(750, 1000);
  EXPECT_TRUE(c.under_pressure());
  EXPECT_EQ(c.prefetch_quantity(), 20u);
  c.Observe(251, 1000);
  EXPECT_TRUE(c.under_pressure());
  c.Observe(250, 1000);
  EXPECT_FALSE(c.under_pressure());
}

TEST(ThrashingControlTest, StayingAboveW1HalvesOnlyOncePerEpisode) {
  ThrashingController c(Config());
  for (uint64_t used : {50u, 60u, 100u, 75u, 50u, 200u}) {
    c.Observe(used, kCapacity);
    EXPECT_TRUE(c.under_pressure()) << used;
    EXPECT_EQ(c.prefetch_quantity(), 20u) << used;
  }
  EXPECT_EQ(c.stats().pressure_episodes, 1u);
  EXPECT_EQ(c.stats().pfq_lowered, 1u);
}

TEST(ThrashingControlTest, BetweenW2AndW1PressurePersists) {
  ThrashingController c(Config());
  c.Observe(kW1, kCapacity);
  ASSERT_TRUE(c.under_pressure());
  for (uint64_t used : {49u, 45u, 41u, 60u, 41u}) {
    c.Observe(used, kCapacity);
    EXPECT_TRUE(c.under_pressure()) << used;  // hysteresis: not over until W2
    EXPECT_EQ(c.prefetch_quantity(), 20u) << used;
  }
  EXPECT_EQ(c.stats().pressure_episodes, 1u);
  EXPECT_EQ(c.stats().pfq_lowered, 1u);
  EXPECT_EQ(c.stats().pfq_raised, 0u);
}

TEST(ThrashingControlTest, PressureEndsAtW2) {
  ThrashingController c(Config());
  c.Observe(kW1, kCapacity);
  c.Observe(kW2 + 1, kCapacity);
  EXPECT_TRUE(c.under_pressure());
  c.Observe(kW2, kCapacity);  // W2 itself ends the pressure
  EXPECT_FALSE(c.under_pressure());

  ThrashingController d(Config());
  d.Observe(kW1, kCapacity);
  d.Observe(0, kCapacity);  // far below W2 also ends it
  EXPECT_FALSE(d.under_pressure());
}

TEST(ThrashingControlTest, ObservationEndingPressureDoesNotRaisePfq) {
  // "at or below W2 pressure ends and each further observation at or below W2 doubles PFQ":
  // the observation that ends the episode does not raise yet.
  ThrashingController c(Config());
  c.Observe(kW1, kCapacity);
  ASSERT_EQ(c.prefetch_quantity(), 20u);
  c.Observe(kW2, kCapacity);
  EXPECT_FALSE(c.under_pressure());
  EXPECT_EQ(c.prefetch_quantity(), 20u);
  EXPECT_EQ(c.stats().pfq_raised, 0u);
}

TEST(ThrashingControlTest, FurtherObservationsAtOrBelowW2DoubleUpToPMax) {
  ThrashingController c(Config());
  c.Observe(kW1, kCapacity);
  ASSERT_EQ(c.prefetch_quantity(), 20u);
  c.Observe(kW2, kCapacity);  // pressure over
  c.Observe(kW2, kCapacity);
  EXPECT_EQ(c.prefetch_quantity(), 40u);
  c.Observe(0, kCapacity);
  c.Observe(kW2, kCapacity);
  EXPECT_EQ(c.prefetch_quantity(), 40u);  // capped at p_max
  EXPECT_FALSE(c.under_pressure());
  EXPECT_EQ(c.stats().pfq_raised, 1u);
}

TEST(ThrashingControlTest, ObservationsBetweenW2AndW1AfterPressureDoNotRaise) {
  ThrashingController c(Config());
  c.Observe(kW1, kCapacity);
  c.Observe(kW2, kCapacity);  // pressure over, PFQ 20
  ASSERT_FALSE(c.under_pressure());
  const uint32_t pfq = c.prefetch_quantity();
  c.Observe(kW2 + 1, kCapacity);
  c.Observe(kW1 - 1, kCapacity);
  EXPECT_FALSE(c.under_pressure());
  EXPECT_EQ(c.prefetch_quantity(), pfq);  // only observations at or below W2 raise
}

TEST(ThrashingControlTest, RepeatedEpisodesHalveDownToPMin) {
  ThrashingController c(Config(4, 40));
  std::vector<uint32_t> pfqs;
  for (int i = 0; i < 6; ++i) {
    c.Observe(kW1, kCapacity);
    EXPECT_TRUE(c.under_pressure());
    pfqs.push_back(c.prefetch_quantity());
    c.Observe(kW2, kCapacity);
    EXPECT_FALSE(c.under_pressure());
  }
  EXPECT_EQ(pfqs, (std::vector<uint32_t>{20, 10, 5, 4, 4, 4}));
  EXPECT_EQ(c.stats().pressure_episodes, 6u);
  EXPECT_EQ(c.stats().pfq_lowered, 4u);  // at p_min an episode cannot lower any further
  EXPECT_EQ(c.stats().pfq_raised, 0u);
}

TEST(ThrashingControlTest, RaisesFromPMinBackToPMax) {
  ThrashingController c(Config(4, 40));
  for (int i = 0; i < 4; ++i) Episode(c);
  ASSERT_EQ(c.prefetch_quantity(), 4u);
  std::vector<uint32_t> pfqs;
  for (int i = 0; i < 6; ++i) {
    c.Observe(kW2 - 10, kCapacity);
    pfqs.push_back(c.prefetch_quantity());
  }
  EXPECT_EQ(pfqs, (std::vector<uint32_t>{8, 16, 32, 40, 40, 40}));
  EXPECT_EQ(c.stats().pfq_raised, 4u);
  EXPECT_EQ(c.stats().pfq_lowered, 4u);
  EXPECT_EQ(c.stats().pressure_episodes, 4u);
}

TEST(ThrashingControlTest, HalvingStopsAtNonPowerOfTwoPMin) {
  ThrashingController c(Config(5, 12));
  std::vector<uint32_t> pfqs;
  for (int i = 0; i < 3; ++i) {
    c.Observe(kW1 + 10, kCapacity);
    pfqs.push_back(c.prefetch_quantity());
    c.Observe(kW2 - 10, kCapacity);
  }
  EXPECT_EQ(pfqs, (std::vector<uint32_t>{6, 5, 5}));
  c.Observe(0, kCapacity);
  EXPECT_EQ(c.prefetch_quantity(), 10u);
  c.Observe(0, kCapacity);
  EXPECT_EQ(c.prefetch_quantity(), 12u);  // doubling capped at p_max
}

TEST(ThrashingControlTest, HalvingNeverGoesBelowPMin) {
  // One episode is enough when half of p_max is already below p_min.
  ThrashingController c(Config(30, 40));
  c.Observe(kW1, kCapacity);
  EXPECT_TRUE(c.under_pressure());
  EXPECT_EQ(c.prefetch_quantity(), 30u);
  EXPECT_EQ(c.stats().pfq_lowered, 1u);

  ThrashingController flat(Config(40, 40));
  flat.Observe(kW1, kCapacity);
  EXPECT_TRUE(flat.under_pressure());  // synchronous writes are still forced
  EXPECT_EQ(flat.prefetch_quantity(), 40u);
  EXPECT_EQ(flat.stats().pressure_episodes, 1u);
  EXPECT_EQ(flat.stats().pfq_lowered, 0u);  // nothing to lower
}

TEST(ThrashingControlTest, RaisedPfqIsHalvedAgainByTheNextEpisode) {
  ThrashingController c(Config(4, 40));
  Episode(c);
  c.Observe(0, kCapacity);
  ASSERT_EQ(c.prefetch_quantity(), 40u);
  c.Observe(kW1, kCapacity);
  EXPECT_TRUE(c.under_pressure());
  EXPECT_EQ(c.prefetch_quantity(), 20u);
  EXPECT_EQ(c.stats().pressure_episodes, 2u);
  EXPECT_EQ(c.stats().pfq_lowered, 2u);
  EXPECT_EQ(c.stats().pfq_raised, 1u);
}

TEST(ThrashingControlTest, ZeroCapacityNeverTriggers) {
  ThrashingController c(Config());
  for (uint64_t used : {0u, 1u, 100u, 1000000u}) {
    c.Observe(used, 0);
    EXPECT_FALSE(c.under_pressure()) << used;
    EXPECT_EQ(c.prefetch_quantity(), 40u) << used;
  }
  EXPECT_EQ(c.stats().pressure_episodes, 0u);
  EXPECT_EQ(c.stats().pfq_lowered, 0u);
}

TEST(ThrashingControlTest, DegreeOfThrashing) {
  EXPECT_EQ(DegreeOfThrashing(0, 0), 0.0);
  EXPECT_EQ(DegreeOfThrashing(5, 0), 0.0);
  EXPECT_EQ(DegreeOfThrashing(0, 10), 0.0);
  EXPECT_DOUBLE_EQ(DegreeOfThrashing(1, 4), 0.25);
  EXPECT_DOUBLE_EQ(DegreeOfThrashing(3, 4), 0.75);
  EXPECT_DOUBLE_EQ(DegreeOfThrashing(7, 7), 1.0);
  EXPECT_DOUBLE_EQ(DegreeOfThrashing(1, 3), 1.0 / 3.0);
}

TEST(ThrashingControlTest, SynchronousReadRatio) {
  EXPECT_EQ(SynchronousReadRatio(0, 0), 0.0);
  EXPECT_EQ(SynchronousReadRatio(5, 0), 0.0);
  EXPECT_EQ(SynchronousReadRatio(0, 10), 0.0);
  EXPECT_DOUBLE_EQ(SynchronousReadRatio(1, 2), 0.5);
  EXPECT_DOUBLE_EQ(SynchronousReadRatio(10, 10), 1.0);
  EXPECT_DOUBLE_EQ(SynchronousReadRatio(2, 3), 2.0 / 3.0);
}

}  // namespace
}  // namespace orthofs
