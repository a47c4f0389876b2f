#include "common/cow_bytes.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>

namespace orthofs {
namespace {

TEST(CowBytesTest, StartsEmptyAndSharesEmptyBytes) {
  CowBytes bytes;
  EXPECT_TRUE(bytes.empty());
  EXPECT_EQ(bytes.view(), "");
  EXPECT_FALSE(bytes.IsShared());
  std::shared_ptr<const std::string> held = bytes.Share();
  EXPECT_EQ(*held, "");
}

// Sharing copies nothing: the holder sees the very buffer the cache has.
TEST(CowBytesTest, ShareHandsOutTheSameBuffer) {
  CowBytes bytes;
  bytes.Assign("abcdef");
  const char* where = bytes.view().data();
  std::shared_ptr<const std::string> held = bytes.Share();
  EXPECT_EQ(held->data(), where);
  EXPECT_TRUE(bytes.IsShared());
}

// Every way of changing the bytes leaves what a holder has untouched.
TEST(CowBytesTest, ChangesWhileSharedLeaveTheHolderUntouched) {
  CowBytes bytes;
  bytes.Assign("0123456789");
  std::shared_ptr<const std::string> held = bytes.Share();

  bytes.Mutable()[0] = 'X';
  EXPECT_EQ(bytes.view(), "X123456789");
  EXPECT_EQ(*held, "0123456789");
  EXPECT_FALSE(bytes.IsShared());  // the change made the cache's bytes its own

  std::shared_ptr<const std::string> held2 = bytes.Share();
  bytes.Assign("new");
  EXPECT_EQ(bytes.view(), "new");
  EXPECT_EQ(*held2, "X123456789");

  std::shared_ptr<const std::string> held3 = bytes.Share();
  bytes.TruncateTo(1);
  EXPECT_EQ(bytes.view(), "n");
  EXPECT_EQ(*held3, "new");

  std::shared_ptr<const std::string> held4 = bytes.Share();
  bytes.Clear();
  EXPECT_TRUE(bytes.empty());
  EXPECT_EQ(*held4, "n");
  EXPECT_EQ(*held, "0123456789");
}

// Unshared, changes happen in place (no copy per write).
TEST(CowBytesTest, ChangesInPlaceWhenNotShared) {
  CowBytes bytes;
  bytes.Assign(std::string(1000, 'a'));
  const char* where = bytes.view().data();
  bytes.Mutable()[5] = 'b';
  bytes.Assign(std::string(1000, 'c'));
  bytes.TruncateTo(10);
  EXPECT_EQ(bytes.view().data(), where);
  EXPECT_EQ(bytes.view(), std::string(10, 'c'));
  {
    std::shared_ptr<const std::string> held = bytes.Share();  // released again
  }
  bytes.Mutable()[0] = 'd';
  EXPECT_EQ(bytes.view().data(), where);
  bytes.TruncateTo(100);  // not longer: nothing changes
  EXPECT_EQ(bytes.view(), "d" + std::string(9, 'c'));
}

TEST(CowBytesTest, AdoptTakesTheStringAsItIs) {
  CowBytes bytes;
  std::string s(4096, 'z');
  bytes.Adopt(std::move(s));
  EXPECT_EQ(bytes.view(), std::string(4096, 'z'));
}

// A holder releasing on another thread (a write-back finishing) while the owner keeps
// changing the bytes: the holder always reads the bytes as they were when shared.
TEST(CowBytesTest, HoldersOnOtherThreadsSeeStableBytes) {
  CowBytes bytes;
  bytes.Assign(std::string(4096, '0'));
  for (int round = 0; round < 200; ++round) {
    std::shared_ptr<const std::string> held = bytes.Share();
    const char expected = (*held)[0];
    std::thread reader([held = std::move(held), expected] {
      for (char c : *held) ASSERT_EQ(c, expected);
    });
    std::string& mine = bytes.Mutable();
    mine.assign(4096, static_cast<char>('a' + round % 26));
    reader.join();
  }
}

}  // namespace
}  // namespace orthofs
