#include "common/proto_wire.h"

#include <gtest/gtest.h>

#include <string>

namespace orthofs {
namespace {

TEST(ProtoWireTest, VarintsAreLittleEndianGroupsOfSeven) {
  std::string out;
  AppendVarint(&out, 0);
  AppendVarint(&out, 1);
  AppendVarint(&out, 127);
  AppendVarint(&out, 128);
  AppendVarint(&out, 300);
  EXPECT_EQ(out, std::string("\x00\x01\x7f\x80\x01\xac\x02", 7));
  std::string max;
  AppendVarint(&max, UINT64_MAX);
  EXPECT_EQ(max, std::string(9, '\xff') + "\x01");
}

TEST(ProtoWireTest, TagsAndLengthDelimitedHeaders) {
  std::string out;
  AppendTag(&out, 1, WireType::kVarint);
  AppendTag(&out, 5, WireType::kFixed32);
  AppendLengthDelimitedHeader(&out, 4, 131072);  // a WriteRequest's 128 KiB of data
  EXPECT_EQ(out, std::string("\x08\x2d\x22\x80\x80\x08", 6));
  std::string big_field;
  AppendTag(&big_field, 16, WireType::kLengthDelimited);  // two-byte tag
  EXPECT_EQ(big_field, "\x82\x01");
}

}  // namespace
}  // namespace orthofs
