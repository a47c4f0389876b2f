// The COR window table: one MovingWindow per (client, file) on a replica OSD, one per file on a
// client, with idle windows expiring ([Sui 2010] §3.2).
#include "common/window_table.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "common/prefetch_testing.h"

namespace orthofs {
namespace {

// A fixed point in time, `s` seconds (plus `ms` milliseconds) after the clock's epoch.
WindowClock::time_point T(int64_t s, int64_t ms = 0) {
  return WindowClock::time_point{} + std::chrono::seconds(s) + std::chrono::milliseconds(ms);
}

constexpr std::chrono::milliseconds kExpiry{10'000};  // 10 s

const WindowKey kFile{"client-a", 1, 7};

// ---- OnClientRead ----

TEST(WindowTableTest, EmptyTableHasNoWindows) {
  WindowTable table(Cor(WindowPolicy::kWing), kExpiry);
  EXPECT_EQ(table.size(), 0u);
  EXPECT_FALSE(table.Find(kFile).has_value());
  EXPECT_FALSE(table.Covers(kFile, 0));
  EXPECT_EQ(table.Expire(T(1000)), 0u);
}

TEST(WindowTableTest, OnClientReadCreatesWindowOnFirstUse) {
  WindowTable table(Cor(WindowPolicy::kWing, 4, 40), kExpiry);
  WindowChange change = table.OnClientRead(kFile, 10, T(0));
  EXPECT_EQ(table.size(), 1u);
  EXPECT_EQ(change.pivot, 10u);
  EXPECT_EQ(change.size, 4u);  // the initial window
  EXPECT_FALSE(change.doubled);
  EXPECT_EQ(Str(change.prefetch), "[8,13)");  // the whole first extent: wing 2 around 10

  std::optional<MovingWindow> w = table.Find(kFile);
  ASSERT_TRUE(w.has_value());
  EXPECT_TRUE(w->has_pivot());
  EXPECT_EQ(w->pivot(), 10u);
  EXPECT_EQ(w->size(), 4u);
  EXPECT_EQ(Str(w->Extent()), "[8,13)");
  EXPECT_TRUE(table.Covers(kFile, 8));
  EXPECT_TRUE(table.Covers(kFile, 12));
  EXPECT_FALSE(table.Covers(kFile, 13));
}

TEST(WindowTableTest, OnClientReadMovesPivotWithoutChangingSize) {
  WindowTable table(Cor(WindowPolicy::kWing), kExpiry);
  table.Set(kFile, 10, 4, T(0));  // [8,13)
  WindowChange change = table.OnClientRead(kFile, 11, T(1));
  EXPECT_EQ(change.pivot, 11u);
  EXPECT_EQ(change.size, 4u);
  EXPECT_FALSE(change.doubled);
  EXPECT_EQ(Str(change.prefetch), "[13,14)");

  change = table.OnClientRead(kFile, 9, T(2));  // backwards: [7,12)
  EXPECT_EQ(change.pivot, 9u);
  EXPECT_EQ(change.size, 4u);
  EXPECT_FALSE(change.doubled);
  EXPECT_EQ(Str(change.prefetch), "[7,9)");

  change = table.OnClientRead(kFile, 9, T(3));  // same pivot: nothing new
  EXPECT_TRUE(change.prefetch.empty()) << Str(change.prefetch);
  EXPECT_EQ(change.size, 4u);

  change = table.OnClientRead(kFile, 100, T(4));  // far away: the whole new extent
  EXPECT_EQ(Str(change.prefetch), "[98,103)");
  EXPECT_EQ(change.size, 4u);

  std::optional<MovingWindow> w = table.Find(kFile);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->pivot(), 100u);
  EXPECT_EQ(w->size(), 4u);
  EXPECT_EQ(table.size(), 1u);
}

TEST(WindowTableTest, OnClientReadWithForwardPolicyPrefetchesTheNewTail) {
  WindowTable table(Cor(WindowPolicy::kForward), kExpiry);
  table.Set(kFile, 10, 4, T(0));  // [11,15)
  WindowChange change = table.OnClientRead(kFile, 11, T(1));
  EXPECT_EQ(Str(change.prefetch), "[15,16)");
  EXPECT_EQ(change.pivot, 11u);
  EXPECT_EQ(change.size, 4u);
  change = table.OnClientRead(kFile, 14, T(2));
  EXPECT_EQ(Str(change.prefetch), "[16,19)");
  EXPECT_EQ(change.size, 4u);
  EXPECT_FALSE(change.doubled);
}

// ---- OnNotify ----

TEST(WindowTableTest, OnNotifyDoublesUpToMaxAndPrefetchesNewMinusOld) {
  WindowTable table(Cor(WindowPolicy::kWing), kExpiry);
  struct Step {
    uint32_t size;
    bool doubled;
    std::string prefetch;
  };
  const std::vector<Step> steps = {
      {2, true, "[999,1002)"},  // created at initial 1, doubled to 2: wing 1
      {4, true, "[998,999) [1002,1003)"},
      {8, true, "[996,998) [1003,1005)"},
      {16, true, "[992,996) [1005,1009)"},
      {32, true, "[984,992) [1009,1017)"},
      {40, true, "[980,984) [1017,1021)"},  // capped at the maximum
      {40, false, ""},                      // at the maximum: no growth, nothing new
      {40, false, ""},
  };
  for (size_t i = 0; i < steps.size(); ++i) {
    WindowChange change = table.OnNotify(kFile, 1000, T(static_cast<int64_t>(i)));
    EXPECT_EQ(change.size, steps[i].size) << "notify " << i;
    EXPECT_EQ(change.doubled, steps[i].doubled) << "notify " << i;
    EXPECT_EQ(Str(change.prefetch), steps[i].prefetch) << "notify " << i;
    EXPECT_EQ(change.pivot, 1000u) << "notify " << i;
  }
  std::optional<MovingWindow> w = table.Find(kFile);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->size(), 40u);
  EXPECT_EQ(w->pivot(), 1000u);
  EXPECT_EQ(table.size(), 1u);
}

TEST(WindowTableTest, OnNotifyToAnotherPivotPrefetchesNewExtentMinusOld) {
  {
    WindowTable table(Cor(WindowPolicy::kWing), kExpiry);
    table.Set(kFile, 10, 4, T(0));                          // [8,13)
    WindowChange change = table.OnNotify(kFile, 14, T(1));  // size 8: [10,19)
    EXPECT_EQ(change.pivot, 14u);
    EXPECT_EQ(change.size, 8u);
    EXPECT_TRUE(change.doubled);
    EXPECT_EQ(Str(change.prefetch), "[13,19)");
    change = table.OnNotify(kFile, 500, T(2));  // size 16: [492,509), disjoint
    EXPECT_EQ(change.size, 16u);
    EXPECT_TRUE(change.doubled);
    EXPECT_EQ(Str(change.prefetch), "[492,509)");
  }
  {
    WindowTable table(Cor(WindowPolicy::kForward), kExpiry);
    table.Set(kFile, 10, 4, T(0));                          // [11,15)
    WindowChange change = table.OnNotify(kFile, 12, T(1));  // size 8: [13,21)
    EXPECT_EQ(change.pivot, 12u);
    EXPECT_EQ(change.size, 8u);
    EXPECT_TRUE(change.doubled);
    EXPECT_EQ(Str(change.prefetch), "[15,21)");
  }
}

TEST(WindowTableTest, OnNotifyAtMaxIsNotDoubled) {
  WindowTable table(Cor(WindowPolicy::kWing, 1, 16), kExpiry);
  table.Set(kFile, 10, 16, T(0));  // [2,19)
  WindowChange change = table.OnNotify(kFile, 10, T(1));
  EXPECT_FALSE(change.doubled);
  EXPECT_EQ(change.size, 16u);
  EXPECT_TRUE(change.prefetch.empty()) << Str(change.prefetch);
  change = table.OnNotify(kFile, 100, T(2));  // moves, still not doubled
  EXPECT_FALSE(change.doubled);
  EXPECT_EQ(change.size, 16u);
  EXPECT_EQ(change.pivot, 100u);
  EXPECT_EQ(Str(change.prefetch), "[92,109)");

  // A window one doubling below the maximum is capped and reported doubled.
  WindowTable capped(Cor(WindowPolicy::kWing, 1, 40), kExpiry);
  capped.Set(kFile, 100, 32, T(0));
  change = capped.OnNotify(kFile, 100, T(1));
  EXPECT_TRUE(change.doubled);
  EXPECT_EQ(change.size, 40u);
  EXPECT_EQ(Str(change.prefetch), "[80,84) [117,121)");
}

TEST(WindowTableTest, OnNotifyInFixedModeNeverDoubles) {
  PrefetchConfig config = Cor(WindowPolicy::kWing, 8, 40);
  config.fixed_window = true;
  WindowTable table(config, kExpiry);
  WindowChange change = table.OnNotify(kFile, 100, T(0));  // created: size 8, wing 4
  EXPECT_FALSE(change.doubled);
  EXPECT_EQ(change.size, 8u);
  EXPECT_EQ(change.pivot, 100u);
  EXPECT_EQ(Str(change.prefetch), "[96,105)");
  change = table.OnNotify(kFile, 200, T(1));
  EXPECT_FALSE(change.doubled);
  EXPECT_EQ(change.size, 8u);
  EXPECT_EQ(Str(change.prefetch), "[196,205)");
  change = table.OnNotify(kFile, 200, T(2));
  EXPECT_FALSE(change.doubled);
  EXPECT_EQ(change.size, 8u);
  EXPECT_TRUE(change.prefetch.empty()) << Str(change.prefetch);
}

// ---- independence of keys ----

TEST(WindowTableTest, WindowsOfDifferentClientsForTheSameFileAreIndependent) {
  WindowTable table(Cor(WindowPolicy::kWing), kExpiry);
  const WindowKey a{"client-a", 1, 7};
  const WindowKey b{"client-b", 1, 7};
  const WindowKey local{"", 1, 7};  // a client's own table uses an empty client id

  table.OnNotify(a, 100, T(0));  // size 2
  table.OnNotify(a, 100, T(1));  // size 4: [98,103)
  EXPECT_FALSE(table.Find(b).has_value());
  EXPECT_FALSE(table.Covers(b, 100));

  WindowChange change = table.OnClientRead(b, 100, T(2));
  EXPECT_EQ(change.size, 1u);                    // a fresh window, not a's
  EXPECT_EQ(Str(change.prefetch), "[100,101)");  // a's window prefetched nothing for b
  change = table.OnNotify(b, 20, T(3));
  EXPECT_EQ(change.size, 2u);  // b's own doubling, from 1
  EXPECT_TRUE(change.doubled);

  table.Set(local, 500, 8, T(4));
  EXPECT_EQ(table.size(), 3u);

  std::optional<MovingWindow> wa = table.Find(a);
  std::optional<MovingWindow> wb = table.Find(b);
  std::optional<MovingWindow> wl = table.Find(local);
  ASSERT_TRUE(wa && wb && wl);
  EXPECT_EQ(wa->pivot(), 100u);
  EXPECT_EQ(wa->size(), 4u);
  EXPECT_EQ(wb->pivot(), 20u);
  EXPECT_EQ(wb->size(), 2u);
  EXPECT_EQ(wl->pivot(), 500u);
  EXPECT_EQ(wl->size(), 8u);
  EXPECT_TRUE(table.Covers(a, 102));
  EXPECT_FALSE(table.Covers(b, 102));
  EXPECT_TRUE(table.Covers(b, 21));
  EXPECT_FALSE(table.Covers(a, 21));
  EXPECT_TRUE(table.Covers(local, 504));
  EXPECT_FALSE(table.Covers(a, 504));
}

TEST(WindowTableTest, WindowsOfDifferentFilesOfOneClientAreIndependent) {
  WindowTable table(Cor(WindowPolicy::kWing), kExpiry);
  const WindowKey f1{"client-a", 1, 7};
  const WindowKey other_fno{"client-a", 1, 8};
  const WindowKey other_fnso{"client-a", 2, 7};  // same fno, another namespace

  table.OnNotify(f1, 50, T(0));
  table.OnNotify(f1, 50, T(1));
  table.OnNotify(f1, 50, T(2));  // size 8: [46,55)
  EXPECT_EQ(table.size(), 1u);
  EXPECT_FALSE(table.Find(other_fno).has_value());
  EXPECT_FALSE(table.Find(other_fnso).has_value());

  WindowChange change = table.OnNotify(other_fno, 50, T(3));
  EXPECT_EQ(change.size, 2u);
  EXPECT_EQ(Str(change.prefetch), "[49,52)");
  change = table.OnClientRead(other_fnso, 60, T(4));
  EXPECT_EQ(change.size, 1u);
  EXPECT_EQ(Str(change.prefetch), "[60,61)");
  EXPECT_EQ(table.size(), 3u);

  std::optional<MovingWindow> w1 = table.Find(f1);
  std::optional<MovingWindow> w2 = table.Find(other_fno);
  std::optional<MovingWindow> w3 = table.Find(other_fnso);
  ASSERT_TRUE(w1 && w2 && w3);
  EXPECT_EQ(w1->size(), 8u);
  EXPECT_EQ(w1->pivot(), 50u);
  EXPECT_EQ(w2->size(), 2u);
  EXPECT_EQ(w2->pivot(), 50u);
  EXPECT_EQ(w3->size(), 1u);
  EXPECT_EQ(w3->pivot(), 60u);
  EXPECT_TRUE(table.Covers(f1, 46));
  EXPECT_FALSE(table.Covers(other_fno, 46));
  EXPECT_FALSE(table.Covers(other_fnso, 50));
}

// ---- Set, Covers, Find ----

TEST(WindowTableTest, SetReplacesTheWindowAndCoversAnswersByIt) {
  WindowTable table(Cor(WindowPolicy::kWing), kExpiry);
  table.OnNotify(kFile, 10, T(0));
  table.OnNotify(kFile, 10, T(1));  // size 4 around 10: [8,13)
  ASSERT_TRUE(table.Covers(kFile, 8));

  table.Set(kFile, 50, 8, T(2));  // [46,55)
  EXPECT_EQ(table.size(), 1u);
  std::optional<MovingWindow> w = table.Find(kFile);
  ASSERT_TRUE(w.has_value());
  EXPECT_TRUE(w->has_pivot());
  EXPECT_EQ(w->pivot(), 50u);
  EXPECT_EQ(w->size(), 8u);
  EXPECT_EQ(Str(w->Extent()), "[46,55)");
  for (uint64_t i = 0; i < 80; ++i) {
    EXPECT_EQ(table.Covers(kFile, i), i >= 46 && i < 55) << i;
  }

  // Later changes continue from the window that was set, not from the replaced one.
  WindowChange change = table.OnClientRead(kFile, 51, T(3));
  EXPECT_EQ(Str(change.prefetch), "[55,56)");
  EXPECT_EQ(change.size, 8u);
  change = table.OnNotify(kFile, 51, T(4));  // size 16: [43,60)
  EXPECT_TRUE(change.doubled);
  EXPECT_EQ(change.size, 16u);
  EXPECT_EQ(Str(change.prefetch), "[43,47) [56,60)");

  // Set can also shrink a window.
  table.Set(kFile, 200, 2, T(5));  // [199,202)
  EXPECT_EQ(table.Find(kFile)->size(), 2u);
  EXPECT_FALSE(table.Covers(kFile, 51));
  EXPECT_TRUE(table.Covers(kFile, 199));
  EXPECT_TRUE(table.Covers(kFile, 201));
  EXPECT_FALSE(table.Covers(kFile, 202));
}

TEST(WindowTableTest, SetCreatesAWindowForANewKey) {
  WindowTable table(Cor(WindowPolicy::kWing), kExpiry);
  const WindowKey client{"", 3, 9};
  table.Set(client, 10, 4, T(0));
  EXPECT_EQ(table.size(), 1u);
  std::optional<MovingWindow> w = table.Find(client);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->pivot(), 10u);
  EXPECT_EQ(w->size(), 4u);
  EXPECT_FALSE(table.Covers(client, 7));
  EXPECT_TRUE(table.Covers(client, 8));
  EXPECT_TRUE(table.Covers(client, 12));
  EXPECT_FALSE(table.Covers(client, 13));
}

TEST(WindowTableTest, CoversWithForwardPolicyIsTheObjectsAfterThePivot) {
  WindowTable table(Cor(WindowPolicy::kForward), kExpiry);
  table.Set(kFile, 50, 8, T(0));  // [51,59)
  for (uint64_t i = 0; i < 80; ++i) {
    EXPECT_EQ(table.Covers(kFile, i), i >= 51 && i < 59) << i;
  }
  EXPECT_FALSE(table.Covers(kFile, 50));  // the pivot is not in a forward window
  table.Set(kFile, 10, 2, T(1));          // [11,13)
  EXPECT_FALSE(table.Covers(kFile, 51));
  EXPECT_TRUE(table.Covers(kFile, 11));
  EXPECT_TRUE(table.Covers(kFile, 12));
  EXPECT_FALSE(table.Covers(kFile, 13));
}

TEST(WindowTableTest, FindAndCoversOfUnknownKeysAnswerNothingAndCreateNothing) {
  WindowTable table(Cor(WindowPolicy::kWing), kExpiry);
  table.Set(kFile, 10, 4, T(0));
  for (const WindowKey& unknown :
       {WindowKey{"client-b", 1, 7}, WindowKey{"", 1, 7}, WindowKey{"client-a", 1, 8},
        WindowKey{"client-a", 2, 7}, WindowKey{"client-a", 0, 0}}) {
    EXPECT_FALSE(table.Find(unknown).has_value())
        << unknown.client_id << " " << unknown.fnso << " " << unknown.fno;
    EXPECT_FALSE(table.Covers(unknown, 10));
  }
  EXPECT_EQ(table.size(), 1u);
  EXPECT_TRUE(table.Find(kFile).has_value());
}

// ---- EraseFile ----

TEST(WindowTableTest, EraseFileDropsTheFilesWindowsOfEveryClientAndNothingElse) {
  WindowTable table(Cor(WindowPolicy::kWing), kExpiry);
  const WindowKey a{"client-a", 1, 7};
  const WindowKey b{"client-b", 1, 7};
  const WindowKey local{"", 1, 7};
  const WindowKey a_other_fno{"client-a", 1, 8};
  const WindowKey b_other_fnso{"client-b", 2, 7};
  table.OnClientRead(a, 10, T(0));
  table.OnNotify(b, 20, T(0));
  table.Set(local, 30, 4, T(0));
  table.Set(a_other_fno, 40, 8, T(0));
  table.OnNotify(b_other_fnso, 50, T(0));
  ASSERT_EQ(table.size(), 5u);

  table.EraseFile(1, 7);
  EXPECT_EQ(table.size(), 2u);
  EXPECT_FALSE(table.Find(a).has_value());
  EXPECT_FALSE(table.Find(b).has_value());
  EXPECT_FALSE(table.Find(local).has_value());
  EXPECT_FALSE(table.Covers(local, 30));
  std::optional<MovingWindow> w1 = table.Find(a_other_fno);
  std::optional<MovingWindow> w2 = table.Find(b_other_fnso);
  ASSERT_TRUE(w1 && w2);
  EXPECT_EQ(w1->pivot(), 40u);
  EXPECT_EQ(w1->size(), 8u);
  EXPECT_EQ(w2->pivot(), 50u);
  EXPECT_EQ(w2->size(), 2u);

  table.EraseFile(9, 9);  // unknown file: nothing happens
  EXPECT_EQ(table.size(), 2u);
  table.EraseFile(1, 7);  // already gone
  EXPECT_EQ(table.size(), 2u);

  // A later read of the erased file starts afresh.
  WindowChange change = table.OnNotify(b, 20, T(1));
  EXPECT_EQ(change.size, 2u);
  EXPECT_EQ(Str(change.prefetch), "[19,22)");
  EXPECT_EQ(table.size(), 3u);
}

// ---- Expire ----

TEST(WindowTableTest, ExpireDropsExactlyTheWindowsIdleLongerThanTheExpiry) {
  WindowTable table(Cor(WindowPolicy::kWing), kExpiry);
  const WindowKey w0{"c", 1, 0};
  const WindowKey w5{"c", 1, 5};
  const WindowKey w5b{"d", 1, 5};
  const WindowKey w12{"c", 1, 12};
  table.OnClientRead(w0, 1, T(0));
  table.OnClientRead(w5, 1, T(5));
  table.OnNotify(w5b, 1, T(5, 1));
  table.Set(w12, 1, 4, T(12));
  ASSERT_EQ(table.size(), 4u);

  EXPECT_EQ(table.Expire(T(10)), 0u);  // w0 idle exactly the expiry: not longer
  EXPECT_EQ(table.size(), 4u);
  EXPECT_EQ(table.Expire(T(10, 1)), 1u);  // w0 idle 10.001 s
  EXPECT_EQ(table.size(), 3u);
  EXPECT_FALSE(table.Find(w0).has_value());

  EXPECT_EQ(table.Expire(T(15)), 0u);  // w5 idle exactly 10 s
  EXPECT_EQ(table.Expire(T(15, 1)), 1u);
  EXPECT_FALSE(table.Find(w5).has_value());
  EXPECT_TRUE(table.Find(w5b).has_value());  // touched 1 ms later
  EXPECT_EQ(table.Expire(T(15, 2)), 1u);
  EXPECT_FALSE(table.Find(w5b).has_value());

  EXPECT_EQ(table.size(), 1u);
  EXPECT_TRUE(table.Find(w12).has_value());
  EXPECT_EQ(table.Expire(T(15, 2)), 0u);  // nothing more to drop at the same time

  EXPECT_EQ(table.Expire(T(100)), 1u);
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.Expire(T(200)), 0u);
}

TEST(WindowTableTest, ExpireCountsEveryDroppedWindow) {
  WindowTable table(Cor(WindowPolicy::kWing), kExpiry);
  for (uint64_t fno = 0; fno < 5; ++fno) table.OnClientRead({"c", 1, fno}, 3, T(0));
  for (uint64_t fno = 5; fno < 8; ++fno) table.OnClientRead({"c", 1, fno}, 3, T(20));
  ASSERT_EQ(table.size(), 8u);
  EXPECT_EQ(table.Expire(T(25)), 5u);
  EXPECT_EQ(table.size(), 3u);
  for (uint64_t fno = 0; fno < 8; ++fno) {
    const WindowKey key{"c", 1, fno};
    EXPECT_EQ(table.Find(key).has_value(), fno >= 5) << fno;
  }
}

TEST(WindowTableTest, RecentlyTouchedWindowsSurviveExpire) {
  WindowTable table(Cor(WindowPolicy::kWing), kExpiry);
  const WindowKey read{"c", 1, 1};
  const WindowKey notified{"c", 1, 2};
  const WindowKey set{"c", 1, 3};
  const WindowKey idle{"c", 1, 4};
  for (const WindowKey& key : {read, notified, set, idle}) table.OnClientRead(key, 10, T(0));
  ASSERT_EQ(table.size(), 4u);

  table.OnClientRead(read, 11, T(8));
  table.OnNotify(notified, 10, T(8));
  table.Set(set, 30, 4, T(8));

  EXPECT_EQ(table.Expire(T(15)), 1u);  // only the idle one (idle 15 s > 10 s)
  EXPECT_EQ(table.size(), 3u);
  EXPECT_FALSE(table.Find(idle).has_value());
  std::optional<MovingWindow> r = table.Find(read);
  std::optional<MovingWindow> n = table.Find(notified);
  std::optional<MovingWindow> s = table.Find(set);
  ASSERT_TRUE(r && n && s);
  EXPECT_EQ(r->pivot(), 11u);
  EXPECT_EQ(n->size(), 2u);
  EXPECT_EQ(s->pivot(), 30u);
  EXPECT_EQ(s->size(), 4u);

  EXPECT_EQ(table.Expire(T(18)), 0u);  // idle exactly 10 s since the touch
  EXPECT_EQ(table.Expire(T(18, 1)), 3u);
  EXPECT_EQ(table.size(), 0u);
}

TEST(WindowTableTest, ZeroExpiryKeepsOnlyWindowsTouchedNow) {
  WindowTable table(Cor(WindowPolicy::kWing), std::chrono::milliseconds(0));
  const WindowKey earlier{"c", 1, 1};
  const WindowKey now{"c", 1, 2};
  table.OnClientRead(earlier, 5, T(3));
  table.OnClientRead(now, 5, T(3, 1));
  EXPECT_EQ(table.Expire(T(3, 1)), 1u);
  EXPECT_FALSE(table.Find(earlier).has_value());
  EXPECT_TRUE(table.Find(now).has_value());
}

// ---- size ----

TEST(WindowTableTest, SizeCountsDistinctKeys) {
  WindowTable table(Cor(WindowPolicy::kWing), kExpiry);
  EXPECT_EQ(table.size(), 0u);
  table.OnClientRead({"a", 1, 1}, 0, T(0));
  EXPECT_EQ(table.size(), 1u);
  table.OnClientRead({"a", 1, 1}, 1, T(1));  // same key
  table.OnNotify({"a", 1, 1}, 9, T(1));
  table.Set({"a", 1, 1}, 3, 4, T(1));
  EXPECT_EQ(table.size(), 1u);
  table.OnNotify({"b", 1, 1}, 0, T(2));
  EXPECT_EQ(table.size(), 2u);
  table.Set({"a", 1, 2}, 0, 4, T(3));
  EXPECT_EQ(table.size(), 3u);
  table.Find({"z", 9, 9});
  table.Covers({"z", 9, 9}, 0);
  EXPECT_EQ(table.size(), 3u);
  table.EraseFile(1, 1);
  EXPECT_EQ(table.size(), 1u);
  EXPECT_EQ(table.Expire(T(100)), 1u);
  EXPECT_EQ(table.size(), 0u);
}

}  // namespace
}  // namespace orthofs

namespace orthofs {
namespace {

PrefetchConfig BatchConfig() {
  PrefetchConfig c;
  c.mode = PrefetchMode::kCor;
  c.initial_window = 16;  // wing 8: batches of 4 objects
  c.max_window = 16;
  return c;
}

uint64_t Count(const std::vector<IndexRange>& ranges) {
  uint64_t n = 0;
  for (const IndexRange& r : ranges) n += r.size();
  return n;
}

TEST(WindowTableBatchTest, SequentialReadsLoadInBatchesOfHalfAWing) {
  WindowTable table(BatchConfig(), std::chrono::seconds(60), {.batch_prefetches = true});
  const WindowKey key{"c", 1, 7};
  const auto t = WindowClock::time_point{};
  // A notify loads the whole window at once.
  WindowChange first = table.OnNotify(key, 0, t);
  ASSERT_EQ(first.prefetch, (std::vector<IndexRange>{{0, 9}}));
  // In-window reads add one object each; every fourth read releases a run of four.
  std::vector<IndexRange> loaded;
  for (uint64_t i = 1; i <= 12; ++i) {
    WindowChange c = table.OnClientRead(key, i, t);
    if (i % 4 == 0) {
      ASSERT_EQ(c.prefetch.size(), 1u) << "read " << i;
      EXPECT_EQ(c.prefetch[0], (IndexRange{i + 8 - 3, i + 9})) << "read " << i;
    } else {
      EXPECT_TRUE(c.prefetch.empty()) << "read " << i;
    }
    loaded.insert(loaded.end(), c.prefetch.begin(), c.prefetch.end());
  }
  EXPECT_EQ(Count(loaded), 12u);
}

TEST(WindowTableBatchTest, ReaderAlwaysHasHalfAWingLoadedAhead) {
  WindowTable table(BatchConfig(), std::chrono::seconds(60), {.batch_prefetches = true});
  const WindowKey key{"c", 1, 7};
  const auto t = WindowClock::time_point{};
  uint64_t loaded_end = 0;
  for (const IndexRange& r : table.OnNotify(key, 0, t).prefetch) loaded_end = r.end;
  for (uint64_t i = 1; i < 200; ++i) {
    for (const IndexRange& r : table.OnClientRead(key, i, t).prefetch) {
      EXPECT_EQ(r.begin, loaded_end) << "a gap in what was loaded, read " << i;
      loaded_end = r.end;
    }
    EXPECT_GE(loaded_end, i + 1 + 4) << "fewer than half a wing loaded ahead of read " << i;
  }
}

TEST(WindowTableBatchTest, PendingObjectsLeftBehindAreDropped) {
  WindowTable table(BatchConfig(), std::chrono::seconds(60), {.batch_prefetches = true});
  const WindowKey key{"c", 1, 7};
  const auto t = WindowClock::time_point{};
  table.OnNotify(key, 100, t);                         // loads 92..108
  table.OnClientRead(key, 101, t);                     // 109 pending
  table.OnClientRead(key, 102, t);                     // 110 pending
  WindowChange back = table.OnClientRead(key, 90, t);  // far back: 82..98 is the window
  // 109 and 110 fell out of the window; the new objects at the back are due together.
  for (const IndexRange& r : back.prefetch) {
    EXPECT_LT(r.end, 99u);
    EXPECT_GE(r.begin, 82u);
  }
  EXPECT_EQ(back.prefetch, (std::vector<IndexRange>{{82, 94}}));  // new at the back: 82..93
}

TEST(WindowTableBatchTest, WithoutBatchingEveryReadLoadsItsDifference) {
  WindowTable table(BatchConfig(), std::chrono::seconds(60));
  const WindowKey key{"c", 1, 7};
  const auto t = WindowClock::time_point{};
  table.OnNotify(key, 0, t);
  EXPECT_EQ(table.OnClientRead(key, 1, t).prefetch, (std::vector<IndexRange>{{9, 10}}));
}

}  // namespace
}  // namespace orthofs

namespace orthofs {
namespace {

TEST(NearestObjectsTest, TakesTheObjectsNearestThePivotAfterItFirst) {
  const std::vector<IndexRange> around{{5, 10}, {11, 16}};  // pivot 10 excluded
  EXPECT_EQ(NearestObjects(around, 10, 1), (std::vector<IndexRange>{{11, 12}}));
  EXPECT_EQ(NearestObjects(around, 10, 2), (std::vector<IndexRange>{{9, 10}, {11, 12}}));
  EXPECT_EQ(NearestObjects(around, 10, 5), (std::vector<IndexRange>{{8, 10}, {11, 14}}));
  EXPECT_EQ(NearestObjects(around, 10, 100), around);
  EXPECT_TRUE(NearestObjects(around, 10, 0).empty());
}

TEST(NearestObjectsTest, AHugeRangeCostsNoMoreThanTheQuantity) {
  constexpr uint64_t kLast = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(NearestObjects({{0, kLast}}, 1000, 3), (std::vector<IndexRange>{{999, 1002}}));
  EXPECT_EQ(NearestObjects({{0, kLast}}, kLast, 2), (std::vector<IndexRange>{{kLast - 2, kLast}}));
  EXPECT_EQ(NearestObjects({{0, kLast}}, 0, 2), (std::vector<IndexRange>{{0, 2}}));
}

PrefetchConfig ThrottleConfig() {
  PrefetchConfig c;
  c.mode = PrefetchMode::kCor;
  c.initial_window = 1;
  c.max_window = 16;
  return c;
}

uint64_t Objects(const std::vector<IndexRange>& ranges) {
  uint64_t n = 0;
  for (const IndexRange& r : ranges) n += r.size();
  return n;
}

TEST(WindowTableThrottleTest, NotifiesWithoutReadsInBetweenHalveWhatLoads) {
  WindowTable table(ThrottleConfig(), std::chrono::seconds(60), {.throttle_unused_windows = true});
  const WindowKey key{"c", 1, 7};
  const auto t = WindowClock::time_point{};
  // A random reader: every read misses the window.
  std::vector<uint64_t> loaded;
  std::vector<uint32_t> sizes;
  for (uint64_t jump : {1000, 3000, 5000, 7000, 9000, 11000, 13000}) {
    WindowChange c = table.OnNotify(key, jump, t);
    loaded.push_back(Objects(c.prefetch));
    sizes.push_back(c.size);
    EXPECT_TRUE(c.prefetch.empty() || c.prefetch.front().begin <= jump);
  }
  // The window still doubles as the protocol says; what it may load halves after each unused
  // load: a whole window (17) first, then 8, 4, 2, 1, 1, 1.
  EXPECT_EQ(sizes, (std::vector<uint32_t>{2, 4, 8, 16, 16, 16, 16}));
  EXPECT_EQ(loaded, (std::vector<uint64_t>{3, 5, 4, 2, 1, 1, 1}));
}

TEST(WindowTableThrottleTest, ReadsInsideTheWindowRestoreTheQuantity) {
  WindowTable table(ThrottleConfig(), std::chrono::seconds(60), {.throttle_unused_windows = true});
  const WindowKey key{"c", 1, 7};
  const auto t = WindowClock::time_point{};
  for (uint64_t jump : {1000, 3000, 5000, 7000, 9000, 11000}) table.OnNotify(key, jump, t);
  // Quantity is 1 now; five reads inside the window double it back to a whole window
  // (2, 4, 8, 16, 17).
  for (uint64_t i = 11001; i <= 11005; ++i) table.OnClientRead(key, i, t);
  WindowChange far = table.OnNotify(key, 20000, t);
  EXPECT_EQ(Objects(far.prefetch), 17u);  // the whole 16-window (wing 8) around the pivot
  EXPECT_EQ(far.throttled, 0u);
}

TEST(WindowTableThrottleTest, NearMissesOfASequentialBurstDoNotThrottle) {
  WindowTable table(ThrottleConfig(), std::chrono::seconds(60), {.throttle_unused_windows = true});
  const WindowKey key{"c", 1, 7};
  const auto t = WindowClock::time_point{};
  // A reader asking for objects 0..7 at once: every one beyond the narrow window is a notify.
  uint64_t loaded = 0;
  for (uint64_t i = 0; i < 8; ++i) {
    WindowChange c = table.OnNotify(key, i, t);
    EXPECT_EQ(c.throttled, 0u) << "object " << i;
    loaded += Objects(c.prefetch);
  }
  EXPECT_GE(loaded, 8u + 8u);  // the burst and a wing ahead of it
}

TEST(WindowTableThrottleTest, WithoutThrottlingRandomReadersLoadWholeWindows) {
  WindowTable table(ThrottleConfig(), std::chrono::seconds(60));
  const WindowKey key{"c", 1, 7};
  const auto t = WindowClock::time_point{};
  uint64_t last = 0;
  for (uint64_t jump : {1000, 3000, 5000, 7000, 9000, 11000}) {
    last = Objects(table.OnNotify(key, jump, t).prefetch);
  }
  EXPECT_EQ(last, 17u);
}

}  // namespace
}  // namespace orthofs

namespace orthofs {
namespace {

TEST(WindowTableMissTest, AMissInsideTheWindowWidensAndLoadsEverythingAhead) {
  PrefetchConfig config;
  config.mode = PrefetchMode::kCor;
  config.initial_window = 8;
  config.max_window = 16;
  WindowTable table(config, std::chrono::seconds(60), {.batch_prefetches = true});
  const WindowKey key{"c", 1, 7};
  const auto t = WindowClock::time_point{};
  table.OnNotify(key, 0, t);                                        // size 16, wing 8: 0..8 loaded
  for (uint64_t i = 1; i <= 3; ++i) table.OnClientRead(key, i, t);  // 9..11 pending
  WindowChange miss = table.OnClientReadMiss(key, 4, t);
  EXPECT_EQ(miss.size, 16u);
  EXPECT_FALSE(miss.doubled);  // already at the maximum
  EXPECT_EQ(miss.pivot, 4u);
  // Everything ahead of the reader, not only the window's new edge.
  EXPECT_EQ(miss.prefetch, (std::vector<IndexRange>{{5, 13}}));
  // Pending objects went with it: the next reads start a fresh batch.
  EXPECT_TRUE(table.OnClientRead(key, 5, t).prefetch.empty());
}

TEST(WindowTableMissTest, AMissGrowsANarrowWindow) {
  PrefetchConfig config;
  config.mode = PrefetchMode::kCor;
  WindowTable table(config, std::chrono::seconds(60), {.batch_prefetches = true});
  const WindowKey key{"c", 1, 7};
  const auto t = WindowClock::time_point{};
  table.OnNotify(key, 0, t);  // size 2
  WindowChange miss = table.OnClientReadMiss(key, 1, t);
  EXPECT_TRUE(miss.doubled);
  EXPECT_EQ(miss.size, 4u);
  EXPECT_EQ(miss.prefetch, (std::vector<IndexRange>{{2, 4}}));
}

// Found by osd_request_fuzzer: index + 1 wrapped to 0 and asked to load 2^64 objects.
TEST(WindowTableMissTest, AMissAtTheLastIndexLoadsNothingBeyondIt) {
  constexpr uint64_t kLast = std::numeric_limits<uint64_t>::max();
  PrefetchConfig config;
  config.mode = PrefetchMode::kCor;
  WindowTable table(config, std::chrono::seconds(60), {.batch_prefetches = true});
  const WindowKey key{"c", 1, 7};
  const auto t = WindowClock::time_point{};
  table.OnNotify(key, 0, t);
  WindowChange miss = table.OnClientReadMiss(key, kLast, t);
  EXPECT_EQ(miss.pivot, kLast);
  EXPECT_TRUE(miss.prefetch.empty());
}

}  // namespace
}  // namespace orthofs
