#include "common/byte_pieces.h"

#include <gtest/gtest.h>

#include <string>

namespace orthofs {
namespace {

// "0123456789" in pieces 0 | 123 | 45678 | 9, with an empty piece dropped on the way.
BytePieces Digits(const std::string& s) {
  BytePieces p;
  std::string_view v(s);
  p.Append(v.substr(0, 1));
  p.Append(v.substr(1, 0));
  p.Append(v.substr(1, 3));
  p.Append(v.substr(4, 5));
  p.Append(v.substr(9, 1));
  return p;
}

TEST(BytePiecesTest, KeepsNonEmptyPiecesInOrder) {
  const std::string s = "0123456789";
  BytePieces p = Digits(s);
  EXPECT_EQ(p.size(), 10u);
  ASSERT_EQ(p.pieces().size(), 4u);
  EXPECT_EQ(p.pieces()[2], "45678");
  EXPECT_EQ(p.pieces()[2].data(), s.data() + 4);  // in place, not copied
  EXPECT_EQ(p.Join(), s);
  EXPECT_TRUE(p == s);
  EXPECT_FALSE(p == "0123456780");
  EXPECT_FALSE(p == "012345678");
  EXPECT_TRUE(BytePieces() == "");
  EXPECT_TRUE(BytePieces().empty());
  EXPECT_TRUE(BytePieces(std::string_view()).pieces().empty());
}

// Every sub-range, across piece boundaries and beyond the end.
TEST(BytePiecesTest, SubTakesAnyRange) {
  const std::string s = "0123456789";
  BytePieces p = Digits(s);
  for (uint64_t offset = 0; offset <= 11; ++offset) {
    for (uint64_t length = 0; length <= 12; ++length) {
      const std::string expected = offset < s.size() ? s.substr(offset, length) : "";
      BytePieces sub = p.Sub(offset, length);
      EXPECT_EQ(sub.Join(), expected) << offset << "+" << length;
      EXPECT_EQ(sub.size(), expected.size());
    }
  }
}

TEST(BytePiecesTest, CopyToWritesEveryByte) {
  const std::string s = "0123456789";
  std::string out(12, '#');
  Digits(s).CopyTo(out.data() + 1);
  EXPECT_EQ(out, "#0123456789#");
}

}  // namespace
}  // namespace orthofs
