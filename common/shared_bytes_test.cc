#include "common/shared_bytes.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace orthofs {
namespace {

std::shared_ptr<const std::string> Bytes(std::string s) {
  return std::make_shared<const std::string>(std::move(s));
}

TEST(SharedBytesTest, PiecesOfOwnersAndZerosJoinInOrder) {
  SharedBytes read;
  auto a = Bytes("abcdef");
  read.Append(a, 2, 3);
  read.AppendZeros(2);
  read.Append(Bytes("xyz"), 0, 3);
  EXPECT_EQ(read.size(), 8u);
  EXPECT_EQ(read.Join(), std::string("cde\0\0xyz", 8));
  EXPECT_EQ(read.pieces().pieces().size(), 3u);
}

TEST(SharedBytesTest, APieceIsClampedToItsOwnersEnd) {
  SharedBytes read;
  read.Append(Bytes("abc"), 1, 100);
  read.Append(Bytes("abc"), 3, 1);  // at the end: nothing
  read.Append(nullptr, 0, 5);
  EXPECT_EQ(read.Join(), "bc");
}

TEST(SharedBytesTest, KeepsItsOwnersAlive) {
  SharedBytes read;
  {
    auto a = Bytes(std::string(1000, 'q'));
    read.Append(a, 0, 1000);
    std::weak_ptr<const std::string> weak = a;
    a.reset();
    EXPECT_FALSE(weak.expired()) << "the pieces refer to it";
  }
  EXPECT_EQ(read.Join(), std::string(1000, 'q'));
}

TEST(SharedBytesTest, LongZeroRunsAreSeveralPiecesOfZeros) {
  SharedBytes read;
  read.AppendZeros(600 << 10);
  EXPECT_EQ(read.size(), 600u << 10);
  EXPECT_GT(read.pieces().pieces().size(), 1u);
  EXPECT_EQ(read.Join(), std::string(600 << 10, '\0'));
  read.AppendZeros(0);
  EXPECT_EQ(read.size(), 600u << 10);
}

TEST(SharedBytesTest, AppendMovesAnotherReadsPiecesAndOwners) {
  SharedBytes first;
  first.Append(Bytes("head"), 0, 4);
  SharedBytes second;
  auto tail = Bytes("tail");
  second.Append(tail, 0, 4);
  std::weak_ptr<const std::string> weak = tail;
  tail.reset();
  first.Append(std::move(second));
  EXPECT_TRUE(second.empty());
  EXPECT_FALSE(weak.expired());
  EXPECT_EQ(first.Join(), "headtail");
}

TEST(SharedBytesTest, TruncateKeepsTheFirstBytes) {
  SharedBytes read;
  read.Append(Bytes("abcd"), 0, 4);
  read.AppendZeros(3);
  read.Append(Bytes("efgh"), 0, 4);
  read.TruncateTo(6);
  EXPECT_EQ(read.Join(), std::string("abcd\0\0", 6));
  read.TruncateTo(100);
  EXPECT_EQ(read.size(), 6u);
  read.TruncateTo(0);
  EXPECT_TRUE(read.empty());
}

}  // namespace
}  // namespace orthofs
