#include "common/kernel_dentries.h"

#include <gtest/gtest.h>

namespace orthofs {
namespace {

TEST(KernelDentries, ANameNeverToldIsNotHeld) {
  KernelDentries dentries;
  EXPECT_FALSE(dentries.Held(1, "a").has_value());
}

TEST(KernelDentries, TheLastAnswerForANameIsHeld) {
  KernelDentries dentries;
  dentries.Told(1, "a", 10);
  EXPECT_EQ(dentries.Held(1, "a"), 10u);
  dentries.Told(1, "a", 11);  // looked up again after another client made a new "a"
  EXPECT_EQ(dentries.Held(1, "a"), 11u);
  EXPECT_FALSE(dentries.Held(2, "a").has_value()) << "another directory's name";
  EXPECT_FALSE(dentries.Held(1, "ab").has_value());
}

TEST(KernelDentries, NamesWithTheSeparatorStayApart) {
  KernelDentries dentries;
  dentries.Told(1, "2/x", 10);  // not a valid name, but keys must not collide
  dentries.Told(12, "x", 20);
  EXPECT_EQ(dentries.Held(1, "2/x"), 10u);
  EXPECT_EQ(dentries.Held(12, "x"), 20u);
}

TEST(KernelDentries, AForgottenNameIsNotHeld) {
  KernelDentries dentries;
  dentries.Told(1, "a", 10);
  dentries.Forget(1, "a");
  EXPECT_FALSE(dentries.Held(1, "a").has_value());
  dentries.Forget(1, "never");  // harmless
}

TEST(KernelDentries, PastItsBoundItStartsOver) {
  KernelDentries dentries(3);
  dentries.Told(1, "a", 10);
  dentries.Told(1, "b", 11);
  dentries.Told(1, "c", 12);
  EXPECT_EQ(dentries.tracked_names(), 3u);
  dentries.Told(1, "d", 13);
  EXPECT_EQ(dentries.tracked_names(), 1u);
  EXPECT_EQ(dentries.Held(1, "d"), 13u);
  EXPECT_FALSE(dentries.Held(1, "a").has_value());
}

}  // namespace
}  // namespace orthofs
