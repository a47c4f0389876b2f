#include "rpc/process_tuning.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace orthofs {
namespace {

// A malloc parameter the user set, as a variable or as a glibc tunable, is left alone.
TEST(ProcessTuningTest, MallocParametersTheEnvironmentSetsAreLeftAlone) {
  // The runner's own settings, restored at the end.
  const char* names[3] = {"MALLOC_ARENA_MAX", "MALLOC_MMAP_THRESHOLD_", "GLIBC_TUNABLES"};
  std::optional<std::string> saved[3];
  for (int i = 0; i < 3; ++i) {
    if (const char* value = getenv(names[i])) saved[i] = value;
    unsetenv(names[i]);
  }
  EXPECT_FALSE(SetByEnvironment("MALLOC_ARENA_MAX", "glibc.malloc.arena_max"));
  setenv("MALLOC_ARENA_MAX", "4", 1);
  EXPECT_TRUE(SetByEnvironment("MALLOC_ARENA_MAX", "glibc.malloc.arena_max"));
  unsetenv("MALLOC_ARENA_MAX");
  setenv("GLIBC_TUNABLES", "glibc.malloc.trim_threshold=1:glibc.malloc.arena_max=4", 1);
  EXPECT_TRUE(SetByEnvironment("MALLOC_ARENA_MAX", "glibc.malloc.arena_max"));
  EXPECT_FALSE(SetByEnvironment("MALLOC_MMAP_THRESHOLD_", "glibc.malloc.mmap_threshold"));
  for (int i = 0; i < 3; ++i) {
    if (saved[i]) {
      setenv(names[i], saved[i]->c_str(), 1);
    } else {
      unsetenv(names[i]);
    }
  }
}

}  // namespace
}  // namespace orthofs
