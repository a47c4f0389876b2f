// The cluster map: YAML parsing, validation with messages that name the field, formatting.
#include "common/cluster_map.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <iomanip>
#include <string>
#include <vector>

#include "common/placement.h"

namespace orthofs {
namespace {

constexpr char kValidMap[] = R"(# three OSDs, everything explicit
epoch: 7
object_size: 65536
placement: repartition
osds:
  - id: 1
    address: "osd1.example:7001"
    weight: 1
  - id: 2
    address: 10.0.0.2:7002
    weight: 2.5
  - id: 30
    address: "[::1]:7003"
    weight: 0.5
)";

// A valid map with the given replacement for its osds list.
std::string MapWithOsds(const std::string& osds_yaml) { return "epoch: 1\nosds:\n" + osds_yaml; }

std::string TwoOsds(const std::string& first_address, const std::string& second_address) {
  return MapWithOsds("  - {id: 1, address: \"" + first_address + "\"}\n  - {id: 2, address: \"" +
                     second_address + "\"}\n");
}

// Asserts that parsing fails with kInvalidArgument and a message containing every fragment.
void ExpectInvalid(const std::string& yaml, const std::vector<std::string>& fragments) {
  Result<ClusterMap> map = ParseClusterMap(yaml);
  ASSERT_FALSE(map.ok()) << "accepted:\n" << yaml;
  EXPECT_EQ(map.status().code(), StatusCode::kInvalidArgument) << map.status().ToString();
  for (const std::string& f : fragments) {
    EXPECT_NE(map.status().message().find(f), std::string::npos)
        << "message '" << map.status().message() << "' lacks '" << f << "' for:\n"
        << yaml;
  }
}

void ExpectMapsEqual(const ClusterMap& a, const ClusterMap& b) {
  EXPECT_EQ(a.epoch, b.epoch);
  EXPECT_EQ(a.object_size, b.object_size);
  EXPECT_EQ(a.strategy, b.strategy);
  EXPECT_EQ(a.tcp_congestion, b.tcp_congestion);
  ASSERT_EQ(a.osds.size(), b.osds.size());
  for (size_t i = 0; i < a.osds.size(); ++i) {
    EXPECT_EQ(a.osds[i].id, b.osds[i].id) << i;
    EXPECT_EQ(a.osds[i].address, b.osds[i].address) << i;
    // Exact: weights decide placement.
    EXPECT_EQ(a.osds[i].weight, b.osds[i].weight) << "osds[" << i << "]: " << std::setprecision(17)
                                                  << a.osds[i].weight << " vs " << b.osds[i].weight;
  }
}

ClusterMap SimpleMap(size_t n) {
  ClusterMap m;
  for (size_t i = 0; i < n; ++i) {
    m.osds.push_back({static_cast<uint32_t>(i + 1), "host" + std::to_string(i) + ":7000", 1.0});
  }
  return m;
}

// ---- valid maps ----

TEST(ClusterMapTest, ParsesValidMap) {
  Result<ClusterMap> map = ParseClusterMap(kValidMap);
  ASSERT_TRUE(map.ok()) << map.status().ToString();
  EXPECT_EQ(map->epoch, 7u);
  EXPECT_EQ(map->object_size, 65536u);
  EXPECT_EQ(map->strategy, PlacementStrategy::kRepartition);
  ASSERT_EQ(map->osds.size(), 3u);
  EXPECT_EQ(map->osds[0].id, 1u);
  EXPECT_EQ(map->osds[0].address, "osd1.example:7001");
  EXPECT_EQ(map->osds[0].weight, 1.0);
  EXPECT_EQ(map->osds[1].id, 2u);
  EXPECT_EQ(map->osds[1].address, "10.0.0.2:7002");
  EXPECT_EQ(map->osds[1].weight, 2.5);
  EXPECT_EQ(map->osds[2].id, 30u);
  EXPECT_EQ(map->osds[2].address, "[::1]:7003");
  EXPECT_EQ(map->osds[2].weight, 0.5);
  EXPECT_TRUE(ValidateClusterMap(*map).ok());
}

TEST(ClusterMapTest, Defaults) {
  Result<ClusterMap> map = ParseClusterMap(R"(
epoch: 3
osds:
  - id: 0
    address: a:1
  - id: 4294967295
    address: b:65535
)");
  ASSERT_TRUE(map.ok()) << map.status().ToString();
  EXPECT_EQ(map->epoch, 3u);
  EXPECT_EQ(map->object_size, kDefaultObjectSize);
  EXPECT_EQ(map->object_size, 131072u);
  EXPECT_EQ(map->strategy, PlacementStrategy::kMigration);
  ASSERT_EQ(map->osds.size(), 2u);
  EXPECT_EQ(map->osds[0].id, 0u);
  EXPECT_EQ(map->osds[1].id, 4294967295u);
  EXPECT_EQ(map->osds[0].weight, 1.0);
  EXPECT_EQ(map->osds[1].weight, 1.0);

  ClusterMap defaults;
  EXPECT_EQ(defaults.epoch, 1u);
  EXPECT_EQ(defaults.object_size, kDefaultObjectSize);
  EXPECT_EQ(defaults.strategy, PlacementStrategy::kMigration);
  EXPECT_EQ(map->tcp_congestion, "");  // each host's default
}

TEST(ClusterMapTest, OsdOrderIsPreserved) {
  Result<ClusterMap> map =
      ParseClusterMap(MapWithOsds("  - {id: 9, address: \"a:1\"}\n  - {id: 3, address: \"b:1\"}\n"
                                  "  - {id: 5, address: \"c:1\"}\n"));
  ASSERT_TRUE(map.ok()) << map.status().ToString();
  ASSERT_EQ(map->osds.size(), 3u);
  EXPECT_EQ(map->osds[0].id, 9u);
  EXPECT_EQ(map->osds[1].id, 3u);
  EXPECT_EQ(map->osds[2].id, 5u);
}

TEST(ClusterMapTest, ObjectSizeBounds) {
  for (uint32_t size : {kMinObjectSize, 8192u, kDefaultObjectSize, kMaxObjectSize}) {
    Result<ClusterMap> map =
        ParseClusterMap("epoch: 1\nobject_size: " + std::to_string(size) +
                        "\nosds:\n  - {id: 1, address: \"a:1\"}\n  - {id: 2, address: \"b:1\"}\n");
    ASSERT_TRUE(map.ok()) << size << ": " << map.status().ToString();
    EXPECT_EQ(map->object_size, size);
  }
}

TEST(ClusterMapTest, BothStrategiesParse) {
  for (const char* name : {"migration", "repartition"}) {
    Result<ClusterMap> map = ParseClusterMap(std::string("epoch: 1\nplacement: ") + name +
                                             "\nosds:\n  - {id: 1, address: \"a:1\"}\n"
                                             "  - {id: 2, address: \"b:1\"}\n");
    ASSERT_TRUE(map.ok()) << name << ": " << map.status().ToString();
    EXPECT_EQ(PlacementStrategyName(map->strategy), name);
  }
}

TEST(ClusterMapTest, StrategyNames) {
  EXPECT_EQ(PlacementStrategyName(PlacementStrategy::kMigration), "migration");
  EXPECT_EQ(PlacementStrategyName(PlacementStrategy::kRepartition), "repartition");
  Result<PlacementStrategy> m = ParsePlacementStrategy("migration");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(*m, PlacementStrategy::kMigration);
  Result<PlacementStrategy> r = ParsePlacementStrategy("repartition");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, PlacementStrategy::kRepartition);
  for (const char* bad : {"", "Migration", "crush", "repartition "}) {
    Result<PlacementStrategy> s = ParsePlacementStrategy(bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.status().message().find("unknown placement strategy"), std::string::npos);
  }
}

TEST(ClusterMapTest, FindOsd) {
  Result<ClusterMap> map = ParseClusterMap(kValidMap);
  ASSERT_TRUE(map.ok());
  const OsdInfo* osd = map->FindOsd(30);
  ASSERT_NE(osd, nullptr);
  EXPECT_EQ(osd->address, "[::1]:7003");
  EXPECT_EQ(map->FindOsd(2), &map->osds[1]);
  EXPECT_EQ(map->FindOsd(3), nullptr);
  EXPECT_EQ(map->FindOsd(0), nullptr);
}

// ---- formatting ----

TEST(ClusterMapTest, FormatRoundTrip) {
  Result<ClusterMap> map = ParseClusterMap(kValidMap);
  ASSERT_TRUE(map.ok());
  std::string text = FormatClusterMap(*map);
  Result<ClusterMap> again = ParseClusterMap(text);
  ASSERT_TRUE(again.ok()) << again.status().ToString() << "\n" << text;
  ExpectMapsEqual(*map, *again);
  // Formatting is a fixed point.
  EXPECT_EQ(FormatClusterMap(*again), text);
}

TEST(ClusterMapTest, FormatRoundTripVariety) {
  ClusterMap m;
  m.epoch = 123456789012345;
  m.object_size = kMaxObjectSize;
  m.strategy = PlacementStrategy::kMigration;
  m.tcp_congestion = "reno";
  m.osds = {{0, "a-b_c.d:1", 1.0},
            {4294967295u, "[fe80::1]:65535", 0.25},
            {17, "192.168.1.200:7000", 1000000.0},
            {18, "h:2", 0.001}};
  ASSERT_TRUE(ValidateClusterMap(m).ok()) << ValidateClusterMap(m).ToString();
  Result<ClusterMap> again = ParseClusterMap(FormatClusterMap(m));
  ASSERT_TRUE(again.ok()) << again.status().ToString() << "\n" << FormatClusterMap(m);
  ExpectMapsEqual(m, *again);

  m.strategy = PlacementStrategy::kRepartition;
  m.object_size = kMinObjectSize;
  Result<ClusterMap> rep = ParseClusterMap(FormatClusterMap(m));
  ASSERT_TRUE(rep.ok()) << rep.status().ToString();
  ExpectMapsEqual(m, *rep);
}

// BUG (cluster_map.cc, FormatClusterMap: `out << "    weight: " << osd.weight`): weights are
// written with the stream's default 6 significant digits, so a valid weight such as 123456.7
// comes back as 123457 and 1234.5678 as 1234.57. The header promises "YAML text that
// ParseClusterMap reads back to an equal map", and placement reads weights at 1/1000
// resolution (123456700 vs 123457000 fixed-point units), so re-reading a formatted map moves
// objects. Fix: print with std::setprecision(std::numeric_limits<double>::max_digits10).
TEST(ClusterMapTest, FormatKeepsFullWeightPrecision) {
  ClusterMap m = SimpleMap(3);
  m.osds[0].weight = 123456.7;
  m.osds[1].weight = 1234.5678;
  m.osds[2].weight = 0.1 + 0.2;  // 0.30000000000000004
  ASSERT_TRUE(ValidateClusterMap(m).ok());
  std::string text = FormatClusterMap(m);
  Result<ClusterMap> again = ParseClusterMap(text);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ExpectMapsEqual(m, *again);
  // What makes it matter: the hash-space segments, i.e. placement, differ after re-reading.
  std::vector<double> before;
  std::vector<double> after;
  for (size_t i = 0; i < m.osds.size(); ++i) {
    before.push_back(m.osds[i].weight);
    after.push_back(again->osds[i].weight);
  }
  NamespaceSplit split_before(before);
  NamespaceSplit split_after(after);
  for (size_t i = 0; i < m.osds.size(); ++i) {
    EXPECT_EQ(split_before.SegmentStart(i), split_after.SegmentStart(i)) << "segment " << i;
  }
}

// BUG (cluster_map.cc, ParseInto: `int64_t epoch` / ReadScalar<int64_t>): ClusterMap::epoch is
// a uint64_t and ValidateClusterMap accepts any epoch >= 1, but ParseClusterMap reads it as
// int64_t, so FormatClusterMap of a valid map with epoch > 2^63-1 does not parse back
// ("epoch: '18446744073709551615' has the wrong type"). Either read a uint64_t or make
// ValidateClusterMap reject epochs above INT64_MAX.
TEST(ClusterMapTest, FormatRoundTripHugeEpoch) {
  ClusterMap m = SimpleMap(2);
  m.epoch = UINT64_MAX;
  ASSERT_TRUE(ValidateClusterMap(m).ok());
  Result<ClusterMap> again = ParseClusterMap(FormatClusterMap(m));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->epoch, UINT64_MAX);
}

// ---- errors ----

TEST(ClusterMapErrorTest, DuplicateId) {
  ExpectInvalid(MapWithOsds("  - {id: 3, address: \"a:1\"}\n  - {id: 4, address: \"b:1\"}\n"
                            "  - {id: 3, address: \"c:1\"}\n"),
                {"osds[2].id", "duplicate id 3", "osds[0]"});
}

TEST(ClusterMapErrorTest, TooFewOsds) {
  ExpectInvalid("epoch: 1\nosds: []\n", {"osds", "0 OSD(s)", "at least 2"});
  ExpectInvalid(MapWithOsds("  - {id: 1, address: \"a:1\"}\n"), {"osds", "1 OSD(s)", "at least 2"});
  ClusterMap one = SimpleMap(1);
  Status st = ValidateClusterMap(one);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("at least 2"), std::string::npos) << st.message();
}

TEST(ClusterMapErrorTest, MissingOsds) { ExpectInvalid("epoch: 1\n", {"osds", "missing"}); }

TEST(ClusterMapErrorTest, OsdsNotAList) {
  ExpectInvalid("epoch: 1\nosds: 5\n", {"osds", "must be a list"});
  ExpectInvalid("epoch: 1\nosds: {id: 1, address: \"a:1\"}\n", {"osds", "must be a list"});
  ExpectInvalid("epoch: 1\nosds:\n", {"osds", "must be a list"});
}

TEST(ClusterMapErrorTest, OsdNotAMapping) {
  ExpectInvalid(MapWithOsds("  - a:1\n  - {id: 2, address: \"b:1\"}\n"),
                {"osds[0]", "must be a mapping"});
}

TEST(ClusterMapErrorTest, OsdMissingFields) {
  ExpectInvalid(MapWithOsds("  - {address: \"a:1\"}\n  - {id: 2, address: \"b:1\"}\n"),
                {"osds[0].id", "missing"});
  ExpectInvalid(MapWithOsds("  - {id: 1, address: \"a:1\"}\n  - {id: 2}\n"),
                {"osds[1].address", "missing"});
}

TEST(ClusterMapErrorTest, BadId) {
  ExpectInvalid(MapWithOsds("  - {id: -1, address: \"a:1\"}\n  - {id: 2, address: \"b:1\"}\n"),
                {"osds[0].id", "0..4294967295"});
  ExpectInvalid(
      MapWithOsds("  - {id: 4294967296, address: \"a:1\"}\n  - {id: 2, address: \"b:1\"}\n"),
      {"osds[0].id", "0..4294967295"});
  ExpectInvalid(MapWithOsds("  - {id: one, address: \"a:1\"}\n  - {id: 2, address: \"b:1\"}\n"),
                {"osds[0].id", "wrong type"});
  ExpectInvalid(MapWithOsds("  - {id: [1], address: \"a:1\"}\n  - {id: 2, address: \"b:1\"}\n"),
                {"osds[0].id", "must be a scalar"});
}

TEST(ClusterMapErrorTest, BadAddresses) {
  struct Case {
    std::string address;
    std::string fragment;
  };
  const std::vector<Case> cases = {
      {"hostonly", "is not host:port"},
      {":7000", "is not host:port"},
      {"", "is not host:port"},
      {"host:", "port must be a number in 1..65535"},
      {"host:0", "port must be a number in 1..65535"},
      {"host:70000", "port must be a number in 1..65535"},
      {"host:65536", "port must be a number in 1..65535"},
      {"host:http", "port must be a number in 1..65535"},
      {"host:-1", "port must be a number in 1..65535"},
      {"host:+80", "port must be a number in 1..65535"},
      {"host:80a", "port must be a number in 1..65535"},
      {"host: 80", "port must be a number in 1..65535"},
      {"ho st:7000", "bad character in host"},
      {"host/x:7000", "bad character in host"},
      {"h@st:7000", "bad character in host"},
      {"::1:7000", "write an IPv6 host as [addr]:port"},
      {"fe80::1:7000", "write an IPv6 host as [addr]:port"},
      {"[::1]", "must be an IPv6 address"},  // the last ':' is inside the brackets
      {"[]:7000", "must be an IPv6 address"},
      {"[::1:7000", "must be an IPv6 address"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("address '" + c.address + "'");
    Status st = ValidateAddress(c.address);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find(c.fragment), std::string::npos) << st.message();
    ExpectInvalid(TwoOsds("ok:1", c.address), {"osds[1].address", c.fragment});
  }
}

TEST(ClusterMapErrorTest, ValidAddresses) {
  for (const char* a : {"localhost:7000", "a:1", "a:65535", "10.0.0.1:7000", "my-host_1.example:80",
                        "[::1]:7000", "[fe80::1]:7000", "[2001:db8::7]:443", "host:07000"}) {
    EXPECT_TRUE(ValidateAddress(a).ok()) << a << ": " << ValidateAddress(a).ToString();
  }
  Result<ClusterMap> map = ParseClusterMap(TwoOsds("[::1]:7000", "[::1]:7001"));
  EXPECT_TRUE(map.ok()) << map.status().ToString();
}

// BUG (cluster_map.cc, ValidateAddress, the `host.front() == '['` branch): only the brackets
// are checked, never what is inside them, so "[not an address]:7000" and "[a\"b]:7000" are
// accepted as IPv6 hosts. The second one also breaks FormatClusterMap, which writes the
// address between double quotes without escaping. The content should be limited to IPv6
// characters (hex digits, ':', '.', and a '%zone' suffix).
TEST(ClusterMapErrorTest, BracketedHostMustLookLikeIpv6) {
  for (const char* a : {"[not an address]:7000", "[a\"b]:7000", "[host/x]:7000"}) {
    Status st = ValidateAddress(a);
    EXPECT_FALSE(st.ok()) << a << " accepted";
  }
}

// Found by tests/fuzz/cluster_map_fuzzer: inet_pton saw only "::1" of "[::1\0...]", so a NUL
// (a YAML "\0" escape) smuggled anything, here a quote, into an accepted address, and
// FormatClusterMap then wrote a map that does not parse.
TEST(ClusterMapErrorTest, AddressWithNulIsRefused) {
  constexpr char kAddress[] = "[::1\0\"]:7000";
  EXPECT_FALSE(ValidateAddress(std::string(kAddress, sizeof(kAddress) - 1)).ok());
  ExpectInvalid(TwoOsds("[::1\\0\\\"]:7000", "b:1"), {"osds[0].address", "NUL"});
}

TEST(ClusterMapErrorTest, DuplicateAddress) {
  ExpectInvalid(MapWithOsds("  - {id: 1, address: \"a:1\"}\n  - {id: 2, address: \"b:1\"}\n"
                            "  - {id: 3, address: \"a:1\"}\n"),
                {"osds[2].address", "duplicate address a:1", "osds[0]"});
}

TEST(ClusterMapErrorTest, UnknownStrategy) {
  ExpectInvalid(
      "epoch: 1\nplacement: crush\nosds:\n  - {id: 1, address: \"a:1\"}\n"
      "  - {id: 2, address: \"b:1\"}\n",
      {"placement", "unknown placement strategy 'crush'"});
  ExpectInvalid(
      "epoch: 1\nplacement: [migration]\nosds:\n  - {id: 1, address: \"a:1\"}\n"
      "  - {id: 2, address: \"b:1\"}\n",
      {"placement", "must be a scalar"});
}

TEST(ClusterMapErrorTest, UnknownKeys) {
  ExpectInvalid(
      "epoch: 1\nreplicas: 3\nosds:\n  - {id: 1, address: \"a:1\"}\n"
      "  - {id: 2, address: \"b:1\"}\n",
      {"replicas", "unknown key"});
  ExpectInvalid(
      MapWithOsds("  - {id: 1, address: \"a:1\", zone: x}\n  - {id: 2, address: \"b:1\"}\n"),
      {"osds[0].zone", "unknown key"});
  // Keys are case-sensitive.
  ExpectInvalid("Epoch: 1\nosds: []\n", {"Epoch", "unknown key"});
}

TEST(ClusterMapErrorTest, Epoch) {
  ExpectInvalid("osds:\n  - {id: 1, address: \"a:1\"}\n  - {id: 2, address: \"b:1\"}\n",
                {"epoch", "missing"});
  ExpectInvalid("epoch: 0\nosds:\n  - {id: 1, address: \"a:1\"}\n  - {id: 2, address: \"b:1\"}\n",
                {"epoch", "at least 1"});
  ExpectInvalid("epoch: -5\nosds:\n  - {id: 1, address: \"a:1\"}\n  - {id: 2, address: \"b:1\"}\n",
                {"epoch", "must be unsigned"});
  ExpectInvalid("epoch: one\nosds:\n  - {id: 1, address: \"a:1\"}\n  - {id: 2, address: \"b:1\"}\n",
                {"epoch", "wrong type"});
  ExpectInvalid("epoch: 1.5\nosds:\n  - {id: 1, address: \"a:1\"}\n  - {id: 2, address: \"b:1\"}\n",
                {"epoch", "wrong type"});
  ClusterMap m = SimpleMap(2);
  m.epoch = 0;
  Status st = ValidateClusterMap(m);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("epoch"), std::string::npos) << st.message();
}

TEST(ClusterMapErrorTest, ObjectSize) {
  auto with_size = [](const std::string& size) {
    return "epoch: 1\nobject_size: " + size +
           "\nosds:\n  - {id: 1, address: \"a:1\"}\n  - {id: 2, address: \"b:1\"}\n";
  };
  // Not a power of two.
  ExpectInvalid(with_size("100000"), {"object_size", "100000", "power of two", "4096..16777216"});
  ExpectInvalid(with_size("196608"), {"object_size", "power of two"});  // 3 * 64 KiB
  // Too small / too big powers of two.
  ExpectInvalid(with_size("2048"), {"object_size", "2048", "4096..16777216"});
  ExpectInvalid(with_size("1"), {"object_size", "4096..16777216"});
  ExpectInvalid(with_size("0"), {"object_size", "4096..16777216"});
  ExpectInvalid(with_size("33554432"), {"object_size", "33554432", "4096..16777216"});
  ExpectInvalid(with_size("2147483648"), {"object_size", "4096..16777216"});
  // Out of the u32 range or not a number.
  ExpectInvalid(with_size("-4096"), {"object_size", "out of range"});
  ExpectInvalid(with_size("4294967296"), {"object_size", "out of range"});
  ExpectInvalid(with_size("big"), {"object_size", "wrong type"});
}

TEST(ClusterMapErrorTest, BadWeight) {
  for (const char* w : {"0", "-1", "-0.5", "1000001", ".inf", ".nan"}) {
    SCOPED_TRACE(std::string("weight ") + w);
    ExpectInvalid(
        MapWithOsds("  - {id: 1, address: \"a:1\"}\n  - {id: 2, address: \"b:1\", weight: " +
                    std::string(w) + "}\n"),
        {"osds[1].weight", "(0, 1e6]"});
  }
  ExpectInvalid(MapWithOsds("  - {id: 1, address: \"a:1\", weight: heavy}\n"
                            "  - {id: 2, address: \"b:1\"}\n"),
                {"osds[0].weight", "wrong type"});
  // The bounds themselves: 1e6 is allowed, tiny positive weights are allowed.
  Result<ClusterMap> ok =
      ParseClusterMap(MapWithOsds("  - {id: 1, address: \"a:1\", weight: 1000000}\n"
                                  "  - {id: 2, address: \"b:1\", weight: 0.0001}\n"));
  EXPECT_TRUE(ok.ok()) << ok.status().ToString();
}

TEST(ClusterMapErrorTest, NotYaml) {
  ExpectInvalid("epoch: [1, 2\nosds: {", {"not valid YAML"});
  ExpectInvalid("epoch: 1\n  osds: - : ]]\n\t", {"not valid YAML"});
}

TEST(ClusterMapErrorTest, NotAMapping) {
  ExpectInvalid("", {"must be a YAML mapping"});
  ExpectInvalid("just a string", {"must be a YAML mapping"});
  ExpectInvalid("- epoch: 1\n- osds: []\n", {"must be a YAML mapping"});
  ExpectInvalid("42", {"must be a YAML mapping"});
}

TEST(ClusterMapErrorTest, ValidateDirectly) {
  ClusterMap m = SimpleMap(3);
  EXPECT_TRUE(ValidateClusterMap(m).ok());

  ClusterMap dup_id = m;
  dup_id.osds[2].id = dup_id.osds[0].id;
  EXPECT_NE(ValidateClusterMap(dup_id).message().find("osds[2].id: duplicate id 1 (also osds[0])"),
            std::string::npos)
      << ValidateClusterMap(dup_id).message();

  ClusterMap bad_weight = m;
  bad_weight.osds[1].weight = 0;
  EXPECT_NE(ValidateClusterMap(bad_weight).message().find("osds[1].weight"), std::string::npos);

  ClusterMap bad_size = m;
  bad_size.object_size = 5000;
  EXPECT_NE(ValidateClusterMap(bad_size).message().find("object_size"), std::string::npos);

  ClusterMap bad_address = m;
  bad_address.osds[0].address = "nohost";
  Status st = ValidateClusterMap(bad_address);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("osds[0].address"), std::string::npos) << st.message();
}

TEST(ClusterMapTest, PrefetchDefaultsAndFullSection) {
  ClusterMap defaults;
  EXPECT_EQ(defaults.prefetch.mode, PrefetchMode::kNone);
  EXPECT_EQ(defaults.prefetch.policy, WindowPolicy::kWing);
  EXPECT_EQ(defaults.prefetch.initial_window, 1u);
  EXPECT_EQ(defaults.prefetch.max_window, 40u);
  EXPECT_FALSE(defaults.prefetch.fixed_window);

  Result<ClusterMap> map = ParseClusterMap(R"(
epoch: 1
prefetch:
  mode: cor
  window: forward
  initial_window: 10
  max_window: 10
  fixed_window: true
osds:
  - {id: 0, address: "a:1"}
  - {id: 1, address: "b:2"}
)");
  ASSERT_TRUE(map.ok()) << map.status().ToString();
  EXPECT_EQ(map->prefetch.mode, PrefetchMode::kCor);
  EXPECT_EQ(map->prefetch.policy, WindowPolicy::kForward);
  EXPECT_EQ(map->prefetch.initial_window, 10u);
  EXPECT_EQ(map->prefetch.max_window, 10u);
  EXPECT_TRUE(map->prefetch.fixed_window);

  Result<ClusterMap> again = ParseClusterMap(FormatClusterMap(*map));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->prefetch, map->prefetch);

  Result<ClusterMap> spa = ParseClusterMap(
      "epoch: 1\nprefetch: {mode: spa}\nosds: [{id: 0, address: 'a:1'}, {id: 1, address: 'b:2'}]");
  ASSERT_TRUE(spa.ok()) << spa.status().ToString();
  EXPECT_EQ(spa->prefetch.mode, PrefetchMode::kSpa);
  EXPECT_EQ(spa->prefetch.max_window, 40u);  // the rest keeps its defaults
}

TEST(ClusterMapErrorTest, Prefetch) {
  const std::string osds = "osds: [{id: 0, address: 'a:1'}, {id: 1, address: 'b:2'}]\n";
  ExpectInvalid("epoch: 1\nprefetch: cor\n" + osds, {"prefetch", "must be a mapping"});
  ExpectInvalid("epoch: 1\nprefetch: {mode: fast}\n" + osds, {"prefetch.mode", "'fast'"});
  ExpectInvalid("epoch: 1\nprefetch: {window: wide}\n" + osds, {"prefetch.window", "'wide'"});
  ExpectInvalid("epoch: 1\nprefetch: {colour: red}\n" + osds, {"prefetch.colour", "unknown key"});
  ExpectInvalid("epoch: 1\nprefetch: {initial_window: 0}\n" + osds, {"prefetch", "initial_window"});
  ExpectInvalid("epoch: 1\nprefetch: {initial_window: 8, max_window: 4}\n" + osds,
                {"prefetch", "max_window", "smaller than initial_window"});
  ExpectInvalid("epoch: 1\nprefetch: {max_window: -3}\n" + osds,
                {"prefetch.max_window", "unsigned"});
  ExpectInvalid("epoch: 1\nprefetch: {fixed_window: maybe}\n" + osds,
                {"prefetch.fixed_window", "wrong type"});
}

TEST(ClusterMapTest, TcpCongestionRoundTripsAndIsWrittenOnlyWhenSet) {
  const std::string osds = "osds: [{id: 0, address: 'a:1'}, {id: 1, address: 'b:2'}]\n";
  Result<ClusterMap> map = ParseClusterMap("epoch: 1\ntcp_congestion: cubic\n" + osds);
  ASSERT_TRUE(map.ok()) << map.status().ToString();
  EXPECT_EQ(map->tcp_congestion, "cubic");
  const std::string text = FormatClusterMap(*map);
  EXPECT_NE(text.find("\ntcp_congestion: cubic\n"), std::string::npos) << text;
  Result<ClusterMap> again = ParseClusterMap(text);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ExpectMapsEqual(*map, *again);

  map->tcp_congestion.clear();
  EXPECT_EQ(FormatClusterMap(*map).find("tcp_congestion"), std::string::npos);
}

TEST(ClusterMapErrorTest, TcpCongestion) {
  const std::string osds = "osds: [{id: 0, address: 'a:1'}, {id: 1, address: 'b:2'}]\n";
  ExpectInvalid("epoch: 1\ntcp_congestion: ''\n" + osds, {"tcp_congestion", "empty"});
  ExpectInvalid("epoch: 1\ntcp_congestion: [cubic]\n" + osds, {"tcp_congestion", "scalar"});
  ExpectInvalid("epoch: 1\ntcp_congestion: 'cu bic'\n" + osds, {"tcp_congestion", "letters"});
  ExpectInvalid("epoch: 1\ntcp_congestion: abcdefghijklmnop\n" + osds,
                {"tcp_congestion", "1 to 15"});
  EXPECT_TRUE(ValidateTcpCongestionName("bbr").ok());
  EXPECT_TRUE(ValidateTcpCongestionName("abcdefghijklmno").ok());  // 15, the kernel's limit
  EXPECT_TRUE(ValidateTcpCongestionName("my_cc-2").ok());
  EXPECT_FALSE(ValidateTcpCongestionName("").ok());
  EXPECT_FALSE(ValidateTcpCongestionName("cubic\n").ok());
  EXPECT_FALSE(ValidateTcpCongestionName(std::string("cu\0bic", 6)).ok());
  // Each would come back from the formatted map as something else than this string.
  for (const char* bad : {"null", "Null", "NULL", "-", "_x", "-reno"}) {
    EXPECT_FALSE(ValidateTcpCongestionName(bad).ok()) << bad;
  }
  for (const char* good : {"nullish", "true", "yes", "123", "x-"}) {
    ClusterMap map = SimpleMap(2);
    map.tcp_congestion = good;
    ASSERT_TRUE(ValidateClusterMap(map).ok()) << good;
    Result<ClusterMap> again = ParseClusterMap(FormatClusterMap(map));
    ASSERT_TRUE(again.ok()) << good << ": " << again.status().ToString();
    EXPECT_EQ(again->tcp_congestion, good);
  }

  ClusterMap map = SimpleMap(2);
  map.tcp_congestion = "a/b";
  Status st = ValidateClusterMap(map);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("tcp_congestion"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace orthofs
