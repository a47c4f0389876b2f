#include "common/cached_versions.h"

#include <gtest/gtest.h>

namespace orthofs {
namespace {

using Cached = CachedVersions::Cached;

TEST(CachedVersionsTest, FirstOpenHasNothingCachedThenTheSameVersionIsValid) {
  CachedVersions versions;
  EXPECT_EQ(versions.Open(7, 3), Cached::kNothing);
  EXPECT_EQ(versions.Open(7, 3), Cached::kValid);
  EXPECT_EQ(versions.Open(7, 3), Cached::kValid);
  EXPECT_EQ(versions.Open(8, 3), Cached::kNothing) << "another file";
}

TEST(CachedVersionsTest, AnotherVersionAtOpenIsStaleOnceThenValid) {
  CachedVersions versions;
  versions.Open(7, 3);
  EXPECT_EQ(versions.Open(7, 5), Cached::kStale);
  EXPECT_EQ(versions.Open(7, 5), Cached::kValid);
  EXPECT_EQ(versions.Open(7, 4), Cached::kStale) << "older counts as changed too";
}

TEST(CachedVersionsTest, OwnChangeKeepsTheCachesOnlyFromTheVersionBefore) {
  CachedVersions versions;
  versions.Open(7, 3);
  EXPECT_TRUE(versions.OwnChange(7, 4));
  EXPECT_EQ(versions.Open(7, 4), Cached::kValid);
  EXPECT_FALSE(versions.OwnChange(7, 6)) << "someone else wrote version 5";
  EXPECT_FALSE(versions.OwnChange(9, 1)) << "never opened";
}

TEST(CachedVersionsTest, ForgottenFileIsStaleAtTheNextOpenEvenIfNeverOpened) {
  CachedVersions versions;
  versions.Open(7, 3);
  versions.Forget(7);
  EXPECT_FALSE(versions.OwnChange(7, 4)) << "the version the caches hold is unknown";
  EXPECT_EQ(versions.Open(7, 3), Cached::kStale);
  EXPECT_EQ(versions.Open(7, 3), Cached::kValid);
  versions.Forget(9);
  EXPECT_EQ(versions.Open(9, 1), Cached::kStale);
}

TEST(CachedVersionsTest, AfterTheTableIsClearedUnknownFilesCountAsStale) {
  CachedVersions versions(/*capacity=*/2);
  EXPECT_EQ(versions.Open(1, 1), Cached::kNothing);
  EXPECT_EQ(versions.Open(2, 1), Cached::kNothing);
  EXPECT_EQ(versions.Open(3, 1), Cached::kNothing);  // over capacity: the table is cleared
  EXPECT_EQ(versions.Open(1, 1), Cached::kStale) << "file 1 may still be cached";
  EXPECT_EQ(versions.Open(4, 1), Cached::kStale) << "so may a file never seen";
  EXPECT_EQ(versions.Open(1, 1), Cached::kValid);

  CachedVersions forgetting(/*capacity=*/1);
  forgetting.Open(1, 1);
  forgetting.Forget(2);  // over capacity here too
  EXPECT_EQ(forgetting.Open(3, 1), Cached::kStale);
}

}  // namespace
}  // namespace orthofs
