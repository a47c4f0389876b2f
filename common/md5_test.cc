// MD5 (OpenSSL EVP) and the placement hashes h / h2 taken from its digest.
#include "common/md5.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace orthofs {
namespace {

std::string ToHex(const Md5Digest& d) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (uint8_t b : d) {
    s.push_back(kHex[b >> 4]);
    s.push_back(kHex[b & 15]);
  }
  return s;
}

uint32_t BigEndian32At(const Md5Digest& d, int i) {
  return (uint32_t{d[i]} << 24) | (uint32_t{d[i + 1]} << 16) | (uint32_t{d[i + 2]} << 8) |
         uint32_t{d[i + 3]};
}

// RFC 1321, appendix A.5 ("test suite").
TEST(Md5Test, Rfc1321TestSuite) {
  const std::vector<std::pair<std::string, std::string>> vectors = {
      {"", "d41d8cd98f00b204e9800998ecf8427e"},
      {"a", "0cc175b9c0f1b6a831c399e269772661"},
      {"abc", "900150983cd24fb0d6963f7d28e17f72"},
      {"message digest", "f96b697d7cb7938d525a2f31aaf161d0"},
      {"abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"},
      {"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
       "d174ab98d277d9f5a5611c2c9f419d9f"},
      {"12345678901234567890123456789012345678901234567890123456789012345678901234567890",
       "57edf4a22be3c955ac49da2e2107b67a"},
  };
  for (const auto& [input, hex] : vectors) {
    EXPECT_EQ(Md5Hex(input), hex) << "input '" << input << "'";
    EXPECT_EQ(ToHex(Md5(input)), hex) << "input '" << input << "'";
  }
}

TEST(Md5Test, MillionAs) {
  // A widely published long-message vector (one million 'a'; also checked with Python's hashlib).
  EXPECT_EQ(Md5Hex(std::string(1000000, 'a')), "7707d6ae4e027c70eea2a935c2296f21");
}

TEST(Md5Test, BinaryInputIncludingNulBytes) {
  // Expected digests from Python's hashlib.md5.
  EXPECT_EQ(Md5Hex(std::string_view("\0", 1)), "93b885adfe0da089cdf634904fd59f71");
  EXPECT_EQ(Md5Hex(std::string_view("a\0b", 3)), "70350f6027bce3713f6b76473084309b");
  std::string all_bytes;
  for (int i = 0; i < 256; ++i) all_bytes.push_back(static_cast<char>(i));
  EXPECT_EQ(Md5Hex(all_bytes), "e2c865db4162bed963bfaa9ef6ac18f0");
  // The whole view is hashed, not a C string up to the first NUL.
  EXPECT_NE(Md5Hex(std::string_view("a\0b", 3)), Md5Hex("a"));
}

TEST(Md5Test, HexIsLowerCase32Chars) {
  std::mt19937_64 rng(1);
  for (int i = 0; i < 100; ++i) {
    std::string input(rng() % 200, '\0');
    for (char& c : input) c = static_cast<char>(rng());
    std::string hex = Md5Hex(input);
    ASSERT_EQ(hex.size(), 32u);
    for (char c : hex) EXPECT_TRUE((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) << hex;
    EXPECT_EQ(hex, ToHex(Md5(input)));
  }
}

TEST(PlacementHashesTest, KnownDigests) {
  // MD5("") = d41d8cd9 8f00b204 ...; MD5("abc") = 90015098 3cd24fb0 ...
  PlacementHashes empty = PlacementHashesOf("");
  EXPECT_EQ(empty.h, 0xd41d8cd9u);
  EXPECT_EQ(empty.h2, 0x8f00b204u);
  PlacementHashes abc = PlacementHashesOf("abc");
  EXPECT_EQ(abc.h, 0x90015098u);
  EXPECT_EQ(abc.h2, 0x3cd24fb0u);
  // A digest whose first byte is >= 0x80: the value is unsigned big-endian, not sign-extended.
  PlacementHashes md = PlacementHashesOf("message digest");  // f96b697d 7cb7938d ...
  EXPECT_EQ(md.h, 0xf96b697du);
  EXPECT_EQ(md.h2, 0x7cb7938du);
}

TEST(PlacementHashesTest, FirstAndSecondBigEndianWordsOfDigest) {
  std::mt19937_64 rng(12345);
  for (int i = 0; i < 10000; ++i) {
    std::string input(rng() % 64, '\0');
    for (char& c : input) c = static_cast<char>(rng());
    Md5Digest d = Md5(input);
    PlacementHashes p = PlacementHashesOf(input);
    ASSERT_EQ(p.h, BigEndian32At(d, 0)) << i;
    ASSERT_EQ(p.h2, BigEndian32At(d, 4)) << i;
  }
}

TEST(Md5Test, ConcurrentCallsAgree) {
  // The EVP_MD is fetched once in a function-local static; concurrent first use and
  // concurrent digests must be safe and agree with a single-threaded run.
  std::vector<std::string> inputs;
  for (int i = 0; i < 2000; ++i) inputs.push_back("object-" + std::to_string(i));
  std::vector<std::string> expected;
  for (const auto& in : inputs) expected.push_back(Md5Hex(in));
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = 0; i < inputs.size(); ++i) {
        if (Md5Hex(inputs[i]) != expected[i]) ++mismatches[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

}  // namespace
}  // namespace orthofs
