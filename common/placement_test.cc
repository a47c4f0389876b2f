// Placement: namespace splitting, the replica OSD of a file, the original OSD of an object
// under both strategies (migration, repartition). Proves what docs/DESIGN.md §2 states:
// determinism, orthogonality (original OSD != replica OSD), near-uniform load (chi-square),
// that migration moves exactly the objects whose first choice was the replica OSD, and that
// weights are respected.
#include "common/placement.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/cluster_map.h"
#include "common/md5.h"
#include "common/oid.h"

namespace orthofs {
namespace {

constexpr uint64_t kSpace = uint64_t{1} << 32;
constexpr uint32_t kMaxU32 = std::numeric_limits<uint32_t>::max();
constexpr uint64_t kMaxU64 = std::numeric_limits<uint64_t>::max();
constexpr PlacementStrategy kBothStrategies[] = {PlacementStrategy::kMigration,
                                                 PlacementStrategy::kRepartition};
const ObjectType kAllTypes[] = {ObjectType::kData, ObjectType::kInode, ObjectType::kDirent,
                                ObjectType::kSymlink, ObjectType::kSuper};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

// OSD ids deliberately differ from the placement index and are not sorted (1000, 993, 986, ...),
// so a mix-up of index and id, or a sort by id, shows up.
uint32_t IdOfIndex(size_t i) { return static_cast<uint32_t>(1000 - 7 * i); }
size_t IndexOfId(uint32_t id) { return (1000 - id) / 7; }

ClusterMap MakeMap(size_t n, PlacementStrategy strategy, const std::vector<double>& weights = {}) {
  ClusterMap m;
  m.epoch = 1;
  m.strategy = strategy;
  for (size_t i = 0; i < n; ++i) {
    m.osds.push_back({IdOfIndex(i), "osd" + std::to_string(i) + ".test:7000",
                      weights.empty() ? 1.0 : weights[i]});
  }
  EXPECT_TRUE(ValidateClusterMap(m).ok()) << ValidateClusterMap(m).ToString();
  return m;
}

const char* Name(PlacementStrategy s) {
  return s == PlacementStrategy::kMigration ? "migration" : "repartition";
}

Oid MakeOid(uint32_t fnso, uint64_t fno, uint64_t offset, ObjectType type = ObjectType::kData,
            CopyFlag flag = CopyFlag::kOriginal) {
  Oid o;
  o.fnso = fnso;
  o.fno = fno;
  o.offset = offset;
  o.type = type;
  o.flag = flag;
  return o;
}

// floor(v * n / 2^32): docs/DESIGN.md §2.2's owner_N(v) for equal weights.
uint32_t FloorOwner(uint32_t v, uint64_t n) {
  return static_cast<uint32_t>((uint64_t{v} * n) >> 32);
}

uint32_t Be32(const Md5Digest& d, int i) {
  return (uint32_t{d[i]} << 24) | (uint32_t{d[i + 1]} << 16) | (uint32_t{d[i + 2]} << 8) |
         uint32_t{d[i + 3]};
}

void PutBe(std::string* s, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) s->push_back(static_cast<char>(v >> (8 * i)));
}

// An independent re-implementation of docs/DESIGN.md §2.3's placement for equal weights, built from
// Md5() and the floor formula only (no NamespaceSplit, no Placement::*HashInput).
struct Reference {
  size_t n;
  PlacementStrategy strategy;

  static std::string FileBytes(uint32_t fnso, uint64_t fno) {
    std::string s;
    PutBe(&s, fnso, 4);
    PutBe(&s, fno, 8);
    return s;
  }
  static std::string ObjectBytes(const Oid& o) {
    std::string s = FileBytes(o.fnso, o.fno);
    s.push_back(static_cast<char>(o.type));
    PutBe(&s, o.offset, 8);
    return s;
  }
  uint32_t ReplicaIndex(uint32_t fnso, uint64_t fno) const {
    return FloorOwner(Be32(Md5(FileBytes(fnso, fno)), 0), n);
  }
  uint32_t FirstChoiceIndex(const Oid& o) const {
    return FloorOwner(Be32(Md5(ObjectBytes(o)), 0), n);
  }
  uint32_t OriginalIndex(const Oid& o) const {
    const uint32_t r = ReplicaIndex(o.fnso, o.fno);
    const Md5Digest d = Md5(ObjectBytes(o));
    const uint32_t h = Be32(d, 0);
    const uint32_t h2 = Be32(d, 4);
    uint32_t i;
    if (strategy == PlacementStrategy::kMigration) {
      i = FloorOwner(h, n);
      if (i != r) return i;
      i = FloorOwner(h2, n - 1);
    } else {
      i = FloorOwner(h, n - 1);
    }
    return i >= r ? i + 1 : i;  // the i-th of the OSDs other than r
  }
};

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Random OIDs over the whole range, with extremes (fnso 0 / 1 / max, fno 0 / max, offset max)
// and all types. Fields are wide enough that repeats are rare.
Oid RandomOid(std::mt19937_64& rng) {
  Oid o;
  switch (rng() % 4) {
    case 0:
      o.fnso = 0;
      break;
    case 1:
      o.fnso = 1;
      break;
    case 2:
      o.fnso = kMaxU32;
      break;
    default:
      o.fnso = static_cast<uint32_t>(rng());
  }
  o.fno = rng() % 16 == 0 ? (rng() % 2 ? 0 : kMaxU64) : rng() >> (rng() % 40);
  o.type = kAllTypes[rng() % 5];
  o.offset = o.type == ObjectType::kData || o.type == ObjectType::kDirent
                 ? (rng() % 2 ? rng() % 1000 : rng())
                 : 0;
  if (rng() % 16 == 0) o.offset = kMaxU64;
  o.flag = rng() % 2 ? CopyFlag::kOriginal : CopyFlag::kReplica;
  return o;
}

// ---- chi-square -----------------------------------------------------------------------------

// Regularized upper incomplete gamma function Q(a, x) (series for x < a + 1, Lentz continued
// fraction otherwise; Numerical Recipes, 3rd ed., section 6.2).
double GammaQ(double a, double x) {
  if (x <= 0) return 1.0;
  const double log_prefix = -x + a * std::log(x) - std::lgamma(a);
  if (x < a + 1) {
    double ap = a;
    double sum = 1.0 / a;
    double del = sum;
    for (int n = 0; n < 10000; ++n) {
      ap += 1;
      del *= x / ap;
      sum += del;
      if (std::fabs(del) < std::fabs(sum) * 1e-16) break;
    }
    return 1.0 - sum * std::exp(log_prefix);
  }
  const double tiny = 1e-300;
  double b = x + 1 - a;
  double c = 1 / tiny;
  double d = 1 / b;
  double h = d;
  for (int i = 1; i < 10000; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    const double del = d * c;
    h *= del;
    if (std::fabs(del - 1) < 1e-16) break;
  }
  return std::exp(log_prefix) * h;
}

// The `quantile` quantile of the chi-square distribution with df degrees of freedom
// (P(X > x) = 1 - quantile), by bisection on Q(df/2, x/2).
double ChiSquareQuantile(int df, double quantile) {
  double lo = 0;
  double hi = 10000;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    if (GammaQ(df / 2.0, mid / 2) > 1 - quantile) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return (lo + hi) / 2;
}

// Every uniformity test in this file accepts when the statistic is below the 99.99% quantile
// of chi-square with N-1 degrees of freedom (a fair hash fails one such check in 10 000).
constexpr double kQuantile = 0.9999;
double Critical(size_t n) { return ChiSquareQuantile(static_cast<int>(n) - 1, kQuantile); }

TEST(ChiSquareTest, QuantilesMatchPublishedTables) {
  // df = 1: (z_{1-0.0001/2})^2 = 3.890592^2; df = 2: exactly -2 ln(1e-4). Others from the
  // NIST/SEMATECH e-Handbook table 1.3.6.7.4 (95%) and standard 99.99% tables.
  EXPECT_NEAR(ChiSquareQuantile(1, 0.9999), 15.1367, 1e-3);
  EXPECT_NEAR(ChiSquareQuantile(2, 0.9999), -2 * std::log(1e-4), 1e-6);
  EXPECT_NEAR(ChiSquareQuantile(5, 0.9999), 25.745, 1e-2);
  EXPECT_NEAR(ChiSquareQuantile(10, 0.9999), 35.564, 1e-2);
  EXPECT_NEAR(ChiSquareQuantile(1, 0.95), 3.841, 1e-3);
  EXPECT_NEAR(ChiSquareQuantile(5, 0.95), 11.070, 1e-3);
  EXPECT_NEAR(ChiSquareQuantile(10, 0.95), 18.307, 1e-3);
  EXPECT_NEAR(ChiSquareQuantile(11, 0.99), 24.725, 1e-3);
}

// Per-OSD counts of one placement run over `files` files of `m` objects each.
struct Tally {
  size_t n = 0;
  uint64_t files = 0;
  uint64_t m = 0;                       // objects per file
  std::vector<uint64_t> originals;      // original objects per OSD index
  std::vector<uint64_t> replica_files;  // files whose replica OSD is this index
  // Expected originals per OSD given each file's replica OSD: a file with replica OSD r puts
  // m * w_j / (W - w_r) of its originals on each j != r (both strategies).
  std::vector<double> conditional_expected;
  uint64_t orthogonality_violations = 0;
  uint64_t migrated = 0;  // FilePlacement::Original::migrated (Api::kPerFile only)

  explicit Tally(size_t n_osds = 0)
      : n(n_osds), originals(n_osds), replica_files(n_osds), conditional_expected(n_osds) {}

  void Merge(const Tally& o) {
    files += o.files;
    m = o.m;
    for (size_t j = 0; j < n; ++j) {
      originals[j] += o.originals[j];
      replica_files[j] += o.replica_files[j];
      conditional_expected[j] += o.conditional_expected[j];
    }
    orthogonality_violations += o.orthogonality_violations;
    migrated += o.migrated;
  }
  uint64_t ReplicaObjects(size_t j) const { return replica_files[j] * m; }
  uint64_t Total(size_t j) const { return originals[j] + ReplicaObjects(j); }
};

// Which API places the originals: Placement::OriginalOsdFor per object (hashes the file and
// the object), or the file's FilePlacement as the data path does (hashes the file once).
enum class Api { kPerObject, kPerFile };

// Places `m` objects of each file in [begin, end). file(f) gives (fnso, fno); object(f, k)
// the k-th OID of file f.
template <typename FileFn, typename ObjectFn>
Tally RunPlacement(const Placement& p, Api api, uint64_t begin, uint64_t end, uint64_t m,
                   FileFn file, ObjectFn object) {
  const ClusterMap& map = p.map();
  const size_t n = map.osds.size();
  double total_weight = 0;
  for (const auto& osd : map.osds) total_weight += osd.weight;
  Tally t(n);
  t.m = m;
  for (uint64_t f = begin; f < end; ++f) {
    const auto [fnso, fno] = file(f);
    const uint32_t replica_id = p.ReplicaOsdFor(fnso, fno);
    const size_t r = IndexOfId(replica_id);
    ++t.files;
    ++t.replica_files[r];
    for (size_t j = 0; j < n; ++j) {
      if (j != r) {
        t.conditional_expected[j] +=
            static_cast<double>(m) * map.osds[j].weight / (total_weight - map.osds[r].weight);
      }
    }
    std::optional<FilePlacement> fp;
    if (api == Api::kPerFile) {
      fp = p.ForFile(fnso, fno);
      if (fp->replica_osd() != replica_id) {
        ADD_FAILURE() << "FilePlacement disagrees on the replica OSD of " << fnso << "/" << fno;
      }
    }
    for (uint64_t k = 0; k < m; ++k) {
      const Oid oid = object(f, k);
      uint32_t original_id;
      if (api == Api::kPerObject) {
        original_id = p.OriginalOsdFor(oid);
      } else {
        const FilePlacement::Original o = fp->OriginalFor(oid.type, oid.offset);
        original_id = o.osd;
        t.migrated += o.migrated;
      }
      if (original_id == replica_id) ++t.orthogonality_violations;
      ++t.originals[IndexOfId(original_id)];
    }
  }
  return t;
}

// The same, split over threads by contiguous file ranges (counts are sums, so the result does
// not depend on the thread count).
template <typename FileFn, typename ObjectFn>
Tally RunParallel(const Placement& p, Api api, uint64_t files, uint64_t m, FileFn file,
                  ObjectFn object) {
  const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
  std::vector<Tally> parts(threads);
  std::vector<std::thread> workers;
  for (unsigned i = 0; i < threads; ++i) {
    workers.emplace_back([&, i] {
      parts[i] =
          RunPlacement(p, api, files * i / threads, files * (i + 1) / threads, m, file, object);
    });
  }
  for (auto& w : workers) w.join();
  Tally total(p.map().osds.size());
  for (const Tally& t : parts) total.Merge(t);
  return total;
}

// Pearson's statistic over files for the replica OSDs: each file's replica OSD is one draw, so
// replica_files is multinomial(files, w_j / W). Replica *objects* cannot be tested per object:
// all m replicas of a file land on the same OSD, so they are not independent draws (their
// Pearson statistic over objects would be m times too large); replica objects per OSD are
// exactly m * replica_files.
double ReplicaChiSquare(const Tally& t, const std::vector<double>& weights) {
  double total_weight = 0;
  for (double w : weights) total_weight += w;
  double chi2 = 0;
  for (size_t j = 0; j < t.n; ++j) {
    const double expected = static_cast<double>(t.files) * weights[j] / total_weight;
    const double d = static_cast<double>(t.replica_files[j]) - expected;
    chi2 += d * d / expected;
  }
  return chi2;
}

// Pearson's statistic for originals given the files' replica OSDs: conditional on R, every
// object's original OSD is an independent draw from the OSDs other than R, so this tests the
// object-level spread (h, h2, the split among N-1) without the file-level noise. Its
// distribution is dominated by chi-square(N-1) (covariance of the standardized counts is
// I minus a PSD matrix, with sqrt(E) in its null space), so the N-1 critical value is valid.
double ConditionalOriginalsChiSquare(const Tally& t) {
  double chi2 = 0;
  for (size_t j = 0; j < t.n; ++j) {
    const double e = t.conditional_expected[j];
    if (e == 0) continue;
    const double d = static_cast<double>(t.originals[j]) - e;
    chi2 += d * d / e;
  }
  return chi2;
}

// Chi-square for per-file-clustered counts with equal weights. Originals are clustered by file
// too: an OSD gets none of the originals of the ~1/N of files whose replicas it holds, so the
// per-OSD original count varies with the number of such files, and Pearson over objects would
// be about 1 + m/(N-1)^2 times too large (33x for N = 6, m = 800: the "naive" statistic printed
// below is ~170 where chi-square(5) averages 5). Treat files as the independent units instead:
// X_j = sum over files of Y_fj, where Y_fj (objects of file f on OSD j) has mean mu and
// variance var derived from the placement model, and sum_j Y_fj is the same for every file.
// Then Cov(X) = F var N/(N-1) (I - J/N) and
//   T = (N-1)/N * sum_j (X_j - F mu)^2 / (F var)
// is asymptotically chi-square(N-1) (first-order Rao-Scott correction). For plain multinomial
// counts it reduces to Pearson's statistic.
double ClusteredChiSquare(const std::vector<uint64_t>& x, uint64_t files, double mu, double var) {
  const double n = static_cast<double>(x.size());
  const double f = static_cast<double>(files);
  double sum = 0;
  for (uint64_t v : x) {
    const double d = static_cast<double>(v) - f * mu;
    sum += d * d;
  }
  return (n - 1) / n * sum / (f * var);
}

// Per-file mean and variance of one OSD's share of a file's m originals, equal weights.
// With probability 1/N the OSD is R and gets 0; otherwise Binomial(m, 1/(N-1)).
double OriginalsMean(double n, double m) { return m / n; }
double OriginalsVar(double n, double m) {
  return m * (n - 2) / (n * (n - 1))   // E[Var(Y | R)]
         + m * m / (n * n * (n - 1));  // Var(E[Y | R])
}
// The same for originals plus replicas: m with probability 1/N (the OSD is R), otherwise
// Binomial(m, 1/(N-1)).
double TotalsMean(double n, double m) { return 2 * m / n; }
double TotalsVar(double n, double m) {
  return m * (n - 2) / (n * (n - 1)) + m * m * (n - 2) * (n - 2) / (n * n * (n - 1));
}

struct UniformityStats {
  double replicas;               // Pearson over files
  double originals_conditional;  // Pearson given R
  double originals_clustered;    // files as units
  double totals_clustered;       // files as units
  double naive_originals;        // Pearson over objects: NOT valid, printed for comparison only
};

UniformityStats ComputeUniformity(const Tally& t) {
  const double n = static_cast<double>(t.n);
  const double m = static_cast<double>(t.m);
  UniformityStats s{};
  s.replicas = ReplicaChiSquare(t, std::vector<double>(t.n, 1.0));
  s.originals_conditional = ConditionalOriginalsChiSquare(t);
  s.originals_clustered =
      ClusteredChiSquare(t.originals, t.files, OriginalsMean(n, m), OriginalsVar(n, m));
  std::vector<uint64_t> totals;
  for (size_t j = 0; j < t.n; ++j) totals.push_back(t.Total(j));
  // With N = 2 every file puts exactly m objects on each OSD: the variance is 0 and the test
  // is exact equality (checked by the caller).
  s.totals_clustered =
      t.n == 2 ? 0.0 : ClusteredChiSquare(totals, t.files, TotalsMean(n, m), TotalsVar(n, m));
  const double expected_per_osd = static_cast<double>(t.files) * m / n;
  for (uint64_t v : t.originals) {
    const double d = static_cast<double>(v) - expected_per_osd;
    s.naive_originals += d * d / expected_per_osd;
  }
  return s;
}

void ExpectUniform(const Tally& t, const std::string& label) {
  const UniformityStats s = ComputeUniformity(t);
  const double critical = Critical(t.n);
  std::printf(
      "[ chi2     ] %s: N=%zu files=%llu objects/file=%llu critical(99.99%%, df=%zu)=%.2f "
      "replicas(over files)=%.2f originals|R=%.2f originals(clustered)=%.2f "
      "totals(clustered)=%.2f [naive originals over objects=%.1f, invalid]\n",
      label.c_str(), t.n, static_cast<unsigned long long>(t.files),
      static_cast<unsigned long long>(t.m), t.n - 1, critical, s.replicas, s.originals_conditional,
      s.originals_clustered, s.totals_clustered, s.naive_originals);
  EXPECT_LT(s.replicas, critical) << label << ": replicas per OSD";
  EXPECT_LT(s.originals_conditional, critical) << label << ": originals given replica OSDs";
  EXPECT_LT(s.originals_clustered, critical) << label << ": originals per OSD";
  EXPECT_LT(s.totals_clustered, critical) << label << ": total objects per OSD";
  if (t.n == 2) {
    for (size_t j = 0; j < 2; ++j) EXPECT_EQ(t.Total(j), t.files * t.m) << label;
  }
}

// ---------------------------------------------------------------------------------------------
// NamespaceSplit
// ---------------------------------------------------------------------------------------------

TEST(NamespaceSplitTest, EqualWeightsAreExactlyTheFloorFormula) {
  std::mt19937_64 rng(1);
  for (size_t n = 1; n <= 16; ++n) {
    // Any common weight gives the same split, whatever its value.
    for (double w : {1.0, 0.5, 3.7, 1000.0, 1e6, 0.0001}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " weight=" + std::to_string(w));
      NamespaceSplit split(std::vector<double>(n, w));
      ASSERT_EQ(split.size(), n);
      std::vector<uint64_t> probes = {0, 1, kSpace - 2, kSpace - 1};
      for (size_t i = 0; i < n; ++i) {
        // Segment i starts at ceil(i * 2^32 / n).
        const uint64_t start = (i * kSpace + n - 1) / n;
        ASSERT_EQ(split.SegmentStart(i), start) << i;
        for (int64_t delta = -2; delta <= 2; ++delta) {
          const int64_t v = static_cast<int64_t>(start) + delta;
          if (v >= 0 && v < static_cast<int64_t>(kSpace))
            probes.push_back(static_cast<uint64_t>(v));
        }
      }
      for (int i = 0; i < 2000; ++i) probes.push_back(rng() >> 32);
      for (uint64_t v : probes) {
        ASSERT_EQ(split.Owner(static_cast<uint32_t>(v)), FloorOwner(static_cast<uint32_t>(v), n))
            << "v=" << v;
      }
      EXPECT_EQ(split.Owner(0), 0u);
      EXPECT_EQ(split.Owner(kMaxU32), n - 1);
    }
  }
}

TEST(NamespaceSplitTest, EqualWeightsManyRandomValues) {
  std::mt19937_64 rng(2);
  for (size_t n : {2u, 3u, 5u, 6u, 7u, 12u, 100u, 1000u}) {
    NamespaceSplit split(std::vector<double>(n, 1.0));
    for (int i = 0; i < 100000; ++i) {
      const uint32_t v = static_cast<uint32_t>(rng());
      ASSERT_EQ(split.Owner(v), FloorOwner(v, n)) << "n=" << n << " v=" << v;
    }
  }
}

TEST(NamespaceSplitTest, SingleMemberOwnsEverything) {
  NamespaceSplit split({2.5});
  EXPECT_EQ(split.size(), 1u);
  EXPECT_EQ(split.SegmentStart(0), 0u);
  EXPECT_EQ(split.Owner(0), 0u);
  EXPECT_EQ(split.Owner(kMaxU32), 0u);
}

TEST(NamespaceSplitTest, WeightedSegmentsAreProportional) {
  // Weights 1, 2, 3 own 1/6, 2/6, 3/6 of the space: starts ceil(k * 2^32 / 6) for k = 0, 1, 3.
  NamespaceSplit split({1, 2, 3});
  ASSERT_EQ(split.size(), 3u);
  EXPECT_EQ(split.SegmentStart(0), 0u);
  EXPECT_EQ(split.SegmentStart(1), (kSpace + 5) / 6);
  EXPECT_EQ(split.SegmentStart(2), kSpace / 2);
  EXPECT_EQ(split.Owner(static_cast<uint32_t>(split.SegmentStart(1) - 1)), 0u);
  EXPECT_EQ(split.Owner(static_cast<uint32_t>(split.SegmentStart(1))), 1u);
  EXPECT_EQ(split.Owner(static_cast<uint32_t>(kSpace / 2 - 1)), 1u);
  EXPECT_EQ(split.Owner(static_cast<uint32_t>(kSpace / 2)), 2u);
  EXPECT_EQ(split.Owner(kMaxU32), 2u);

  const std::vector<double> weights = {1, 2, 3, 4, 5, 6, 0.5, 10};
  double total = 0;
  for (double w : weights) total += w;
  NamespaceSplit s(weights);
  for (size_t i = 0; i < weights.size(); ++i) {
    const uint64_t end = i + 1 < weights.size() ? s.SegmentStart(i + 1) : kSpace;
    const double length = static_cast<double>(end - s.SegmentStart(i));
    EXPECT_NEAR(length, weights[i] / total * static_cast<double>(kSpace), 1.0) << i;
    // Segment boundaries map to the right member.
    EXPECT_EQ(s.Owner(static_cast<uint32_t>(s.SegmentStart(i))), i);
    EXPECT_EQ(s.Owner(static_cast<uint32_t>(end - 1)), i);
  }
}

TEST(NamespaceSplitTest, OwnerAlwaysLandsInItsSegment) {
  std::mt19937_64 rng(3);
  const std::vector<std::vector<double>> weight_sets = {
      {1, 1},
      {1, 1e6},
      {1e6, 1},
      {0.001, 0.002, 0.003},
      {7, 0.25, 3, 11},
      {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12},
      // Tiny weights among huge ones: segments of width 0 or 1.
      {1e6, 0.0001, 1e6, 1e6, 1e6, 1e6, 0.0001}};
  for (const auto& weights : weight_sets) {
    NamespaceSplit s(weights);
    ASSERT_EQ(s.SegmentStart(0), 0u);
    for (size_t i = 1; i < weights.size(); ++i) ASSERT_LE(s.SegmentStart(i - 1), s.SegmentStart(i));
    auto check = [&](uint32_t v) {
      const uint32_t o = s.Owner(v);
      ASSERT_LT(o, weights.size());
      ASSERT_LE(s.SegmentStart(o), v);
      const uint64_t end = o + 1 < weights.size() ? s.SegmentStart(o + 1) : kSpace;
      ASSERT_LT(uint64_t{v}, end) << "member " << o << " owns an empty segment";
    };
    check(0);
    check(kMaxU32);
    for (size_t i = 0; i < weights.size(); ++i) {
      const uint64_t start = s.SegmentStart(i);
      if (start < kSpace) check(static_cast<uint32_t>(start));
      if (start > 0) check(static_cast<uint32_t>(start - 1));
    }
    for (int i = 0; i < 20000; ++i) check(static_cast<uint32_t>(rng()));
  }
}

TEST(NamespaceSplitTest, WeightsBelowResolutionCountAsOneThousandth) {
  // Weights are fixed-point with 1/1000 resolution (and at least 1 unit): weights that round
  // to the same number of units split the space equally.
  NamespaceSplit a({0.0001, 0.0004});
  NamespaceSplit b({1, 1});
  EXPECT_EQ(a.SegmentStart(1), b.SegmentStart(1));
  NamespaceSplit c({1.0, 1.0004});
  EXPECT_EQ(c.SegmentStart(1), kSpace / 2);
}

// ---------------------------------------------------------------------------------------------
// Hash inputs and hashes
// ---------------------------------------------------------------------------------------------

TEST(PlacementHashTest, FileHashInputLayout) {
  const std::string want("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c", 12);
  EXPECT_EQ(Placement::FileHashInput(0x01020304, 0x05060708090a0b0c), want);
  EXPECT_EQ(Placement::FileHashInput(0, 0), std::string(12, '\0'));
  EXPECT_EQ(Placement::FileHashInput(kMaxU32, kMaxU64), std::string(12, '\xff'));
  EXPECT_EQ(Placement::FileHashInput(1, 0), std::string("\0\0\0\x01\0\0\0\0\0\0\0\0", 12));
  EXPECT_EQ(Placement::FileHashInput(0, 1), std::string("\0\0\0\0\0\0\0\0\0\0\0\x01", 12));
}

TEST(PlacementHashTest, ObjectHashInputLayout) {
  const Oid o = MakeOid(0x01020304, 0x05060708090a0b0c, 0x1112131415161718, ObjectType::kDirent);
  const std::string want(
      "\x01\x02\x03\x04"                   // fnso
      "\x05\x06\x07\x08\x09\x0a\x0b\x0c"   // fno
      "\x03"                               // type
      "\x11\x12\x13\x14\x15\x16\x17\x18",  // offset
      21);
  EXPECT_EQ(Placement::ObjectHashInput(o), want);
  // The flag is not hashed: both copies of an object share their hash input.
  EXPECT_EQ(Placement::ObjectHashInput(o.OtherCopy()), want);
  // The object input extends the file input.
  EXPECT_EQ(Placement::ObjectHashInput(o).substr(0, 12), Placement::FileHashInput(o.fnso, o.fno));

  std::mt19937_64 rng(4);
  for (int i = 0; i < 1000; ++i) {
    const Oid r = RandomOid(rng);
    ASSERT_EQ(Placement::FileHashInput(r.fnso, r.fno), Reference::FileBytes(r.fnso, r.fno));
    ASSERT_EQ(Placement::ObjectHashInput(r), Reference::ObjectBytes(r));
  }
}

TEST(PlacementHashTest, ReplicaOsdIsOwnerOfFirstFourBytesOfMd5) {
  std::mt19937_64 rng(5);
  for (size_t n = 2; n <= 12; ++n) {
    const Placement p(MakeMap(n, PlacementStrategy::kMigration));
    for (int i = 0; i < 2000; ++i) {
      const Oid o = RandomOid(rng);
      const Md5Digest d = Md5(Placement::FileHashInput(o.fnso, o.fno));
      const uint32_t h = Be32(d, 0);
      ASSERT_EQ(h, PlacementHashesOf(Placement::FileHashInput(o.fnso, o.fno)).h);
      ASSERT_EQ(p.ReplicaOsdFor(o.fnso, o.fno), IdOfIndex(FloorOwner(h, n)))
          << "n=" << n << " " << o.ToString();
    }
  }
}

TEST(PlacementHashTest, MatchesIndependentReferenceImplementation) {
  std::mt19937_64 rng(6);
  for (size_t n = 2; n <= 12; ++n) {
    for (PlacementStrategy s : kBothStrategies) {
      const Placement p(MakeMap(n, s));
      const Reference ref{n, s};
      for (int i = 0; i < 3000; ++i) {
        const Oid o = RandomOid(rng);
        ASSERT_EQ(p.ReplicaOsdFor(o.fnso, o.fno), IdOfIndex(ref.ReplicaIndex(o.fnso, o.fno)));
        ASSERT_EQ(p.FirstChoiceOsdFor(o), IdOfIndex(ref.FirstChoiceIndex(o)));
        ASSERT_EQ(p.OriginalOsdFor(o), IdOfIndex(ref.OriginalIndex(o)))
            << Name(s) << " n=" << n << " " << o.ToString();
      }
    }
  }
}

// Placement decides where stored data lives, so it must never change silently between
// versions. Expected ids computed independently with Python's hashlib (big-endian
// fnso‖fno[‖type‖offset], floor(h * N / 2^32), migration by h2 over the N-1 others).
TEST(PlacementHashTest, GoldenValues) {
  struct Golden {
    size_t n;
    Oid oid;
    uint32_t replica, first_choice, migration, repartition;
  };
  const std::vector<Golden> golden = {
      {6, MakeOid(1, 1, 0), 972, 1000, 1000, 1000},
      {6, MakeOid(1, 1, 1), 972, 972, 986, 979},  // first choice was R: moved
      {6, MakeOid(1, 42, 7), 986, 993, 993, 993},
      {6, MakeOid(1, 42, 0), 986, 986, 993, 993},  // moved
      {6, MakeOid(0, 0, 0, ObjectType::kInode), 979, 986, 986, 993},
      {6, MakeOid(7, 123456789, 3, ObjectType::kDirent), 1000, 986, 986, 986},
      {6, MakeOid(kMaxU32, kMaxU64, kMaxU64, ObjectType::kSuper), 972, 986, 986, 986},
      {6, MakeOid(2, 1000, 0, ObjectType::kSymlink), 993, 972, 972, 972},
      {3, MakeOid(1, 1, 0), 986, 1000, 1000, 1000},
      {3, MakeOid(1, 1, 1), 986, 986, 993, 993},  // moved
      {3, MakeOid(1, 42, 7), 993, 1000, 1000, 1000},
      {3, MakeOid(0, 0, 0, ObjectType::kInode), 993, 993, 1000, 1000},  // moved
      {3, MakeOid(7, 123456789, 3, ObjectType::kDirent), 1000, 993, 993, 993},
      {3, MakeOid(kMaxU32, kMaxU64, kMaxU64, ObjectType::kSuper), 986, 993, 993, 1000},
      {3, MakeOid(2, 1000, 0, ObjectType::kSymlink), 1000, 986, 986, 986},
  };
  for (const Golden& g : golden) {
    SCOPED_TRACE("n=" + std::to_string(g.n) + " " + g.oid.ToString());
    const Placement mig(MakeMap(g.n, PlacementStrategy::kMigration));
    const Placement rep(MakeMap(g.n, PlacementStrategy::kRepartition));
    EXPECT_EQ(mig.ReplicaOsdFor(g.oid.fnso, g.oid.fno), g.replica);
    EXPECT_EQ(rep.ReplicaOsdFor(g.oid.fnso, g.oid.fno), g.replica);
    EXPECT_EQ(mig.FirstChoiceOsdFor(g.oid), g.first_choice);
    EXPECT_EQ(rep.FirstChoiceOsdFor(g.oid), g.first_choice);
    EXPECT_EQ(mig.OriginalOsdFor(g.oid), g.migration);
    EXPECT_EQ(rep.OriginalOsdFor(g.oid), g.repartition);
  }
}

// ---------------------------------------------------------------------------------------------
// Determinism, dispatch
// ---------------------------------------------------------------------------------------------

TEST(PlacementTest, Deterministic) {
  for (PlacementStrategy s : kBothStrategies) {
    for (size_t n : {2u, 5u, 9u}) {
      const ClusterMap map =
          MakeMap(n, s, n == 5 ? std::vector<double>{1, 2, 0.5, 3, 1} : std::vector<double>{});
      const Placement a(map);
      const Placement b(map);
      const Placement copy = a;
      Result<ClusterMap> reparsed = ParseClusterMap(FormatClusterMap(map));
      ASSERT_TRUE(reparsed.ok()) << reparsed.status().ToString();
      const Placement c(*reparsed);
      std::mt19937_64 rng(7);
      for (int i = 0; i < 5000; ++i) {
        const Oid o = RandomOid(rng);
        const uint32_t replica = a.ReplicaOsdFor(o.fnso, o.fno);
        const uint32_t original = a.OriginalOsdFor(o);
        const uint32_t first = a.FirstChoiceOsdFor(o);
        for (const Placement* other : {&a, &b, &copy, &c}) {
          ASSERT_EQ(other->ReplicaOsdFor(o.fnso, o.fno), replica) << o.ToString();
          ASSERT_EQ(other->OriginalOsdFor(o), original) << o.ToString();
          ASSERT_EQ(other->FirstChoiceOsdFor(o), first) << o.ToString();
          ASSERT_EQ(other->OsdFor(o), a.OsdFor(o)) << o.ToString();
        }
      }
    }
  }
}

TEST(PlacementTest, KeepsItsMap) {
  const ClusterMap map = MakeMap(4, PlacementStrategy::kRepartition, {1, 2, 3, 4});
  const Placement p(map);
  EXPECT_EQ(p.map().epoch, map.epoch);
  EXPECT_EQ(p.map().strategy, PlacementStrategy::kRepartition);
  ASSERT_EQ(p.map().osds.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(p.map().osds[i].id, map.osds[i].id);
    EXPECT_EQ(p.map().osds[i].weight, map.osds[i].weight);
  }
}

TEST(PlacementTest, OsdForDispatchesOnFlagAndHolds) {
  std::mt19937_64 rng(8);
  for (PlacementStrategy s : kBothStrategies) {
    for (size_t n : {2u, 3u, 7u}) {
      const ClusterMap map = MakeMap(n, s);
      const Placement p(map);
      for (int i = 0; i < 3000; ++i) {
        const Oid o = RandomOid(rng);
        const Oid original = o.WithFlag(CopyFlag::kOriginal);
        const Oid replica = o.WithFlag(CopyFlag::kReplica);
        // The original's OSD ignores the flag of the OID it is asked about.
        ASSERT_EQ(p.OriginalOsdFor(original), p.OriginalOsdFor(replica));
        ASSERT_EQ(p.OsdFor(original), p.OriginalOsdFor(o));
        ASSERT_EQ(p.OsdFor(replica), p.ReplicaOsdFor(o.fnso, o.fno));
        ASSERT_NE(p.OsdFor(original), p.OsdFor(replica));
        // Exactly one OSD of the map holds each copy, and an unknown id holds nothing.
        for (const Oid& copy : {original, replica}) {
          int holders = 0;
          for (const OsdInfo& osd : map.osds) holders += p.Holds(osd.id, copy) ? 1 : 0;
          ASSERT_EQ(holders, 1) << copy.ToString();
          ASSERT_TRUE(p.Holds(p.OsdFor(copy), copy));
          ASSERT_FALSE(p.Holds(1, copy));
        }
      }
    }
  }
}

TEST(PlacementTest, AllReplicasOfAFileShareOneOsd) {
  const Placement p(MakeMap(7, PlacementStrategy::kMigration));
  std::mt19937_64 rng(9);
  for (int f = 0; f < 200; ++f) {
    const uint32_t fnso = static_cast<uint32_t>(rng() % 3);
    const uint64_t fno = rng();
    const uint32_t r = p.ReplicaOsdFor(fnso, fno);
    for (int k = 0; k < 50; ++k) {
      const Oid o = MakeOid(fnso, fno, rng() % 100000, kAllTypes[rng() % 5], CopyFlag::kReplica);
      ASSERT_EQ(p.OsdFor(o), r);
    }
  }
}

TEST(FilePlacementTest, AgreesWithPerObjectPlacement) {
  std::mt19937_64 rng(10);
  for (size_t n = 2; n <= 12; ++n) {
    for (PlacementStrategy s : kBothStrategies) {
      const Placement p(
          MakeMap(n, s, n % 3 == 0 ? std::vector<double>(n, 2.5) : std::vector<double>{}));
      for (int f = 0; f < 100; ++f) {
        const Oid file = RandomOid(rng);
        const FilePlacement fp = p.ForFile(file.fnso, file.fno);
        ASSERT_EQ(fp.replica_osd(), p.ReplicaOsdFor(file.fnso, file.fno));
        for (int k = 0; k < 30; ++k) {
          Oid o = RandomOid(rng);
          o.fnso = file.fnso;
          o.fno = file.fno;
          const FilePlacement::Original orig = fp.OriginalFor(o.type, o.offset);
          ASSERT_EQ(orig.osd, p.OriginalOsdFor(o)) << Name(s) << " " << o.ToString();
          ASSERT_EQ(fp.OriginalOsdFor(o.type, o.offset), orig.osd);
          ASSERT_NE(orig.osd, fp.replica_osd());
          // migrated: exactly the migration-strategy objects whose first choice was R.
          const bool first_was_r = p.FirstChoiceOsdFor(o) == fp.replica_osd();
          ASSERT_EQ(orig.migrated, s == PlacementStrategy::kMigration && first_was_r)
              << Name(s) << " " << o.ToString();
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Orthogonality
// ---------------------------------------------------------------------------------------------

// 100 000 objects (2 000 files x 50 objects of mixed types) for every N in 2..12 and both
// strategies: no original may sit on its file's replica OSD. The same data also gets the
// uniformity checks at a smaller scale than the big N = 6 run below.
TEST(PlacementOrthogonalityTest, EveryNBothStrategies) {
  constexpr uint64_t kFiles = 2000;
  constexpr uint64_t kObjectsPerFile = 50;
  for (size_t n = 2; n <= 12; ++n) {
    for (PlacementStrategy s : kBothStrategies) {
      const Placement p(MakeMap(n, s));
      // Distinct files: fnso cycles through 0, 1, max and random values; fno is random (0 and
      // max among them) and never repeats within a namespace.
      std::mt19937_64 rng(1000 + n * 2 + static_cast<int>(s));
      std::vector<std::pair<uint32_t, uint64_t>> files;
      std::set<std::pair<uint32_t, uint64_t>> seen;
      while (files.size() < kFiles) {
        const size_t i = files.size();
        const uint32_t fnso = i % 4 == 0   ? 0
                              : i % 4 == 1 ? 1
                              : i % 4 == 2 ? kMaxU32
                                           : static_cast<uint32_t>(rng());
        const uint64_t fno = i < 4 ? (i % 2 ? kMaxU64 : 0) : rng() >> (rng() % 40);
        if (seen.insert({fnso, fno}).second) files.emplace_back(fnso, fno);
      }
      auto file = [&](uint64_t f) { return files[f]; };
      // Distinct objects within a file, each of a pseudo-random type: offset k (DATA objects
      // are the file's first blocks), a random 64-bit offset for DIRENT (a name hash), and
      // the largest offset for the last object.
      auto object = [&](uint64_t f, uint64_t k) {
        const uint64_t mix = SplitMix64(f * kObjectsPerFile + k + 1000000 * n);
        Oid o = MakeOid(files[f].first, files[f].second, k, kAllTypes[mix % 5]);
        if (o.type == ObjectType::kDirent) o.offset = SplitMix64(mix);
        if (k == kObjectsPerFile - 1) o.offset = kMaxU64;
        return o;
      };
      const Tally t = RunPlacement(p, Api::kPerObject, 0, kFiles, kObjectsPerFile, file, object);
      const std::string label = std::string(Name(s)) + " N=" + std::to_string(n);
      ASSERT_EQ(t.files * t.m, 100000u);
      EXPECT_EQ(t.orthogonality_violations, 0u) << label;
      ExpectUniform(t, label);
    }
  }
}

TEST(PlacementOrthogonalityTest, WeightedMaps) {
  const std::vector<std::vector<double>> weight_sets = {
      {1, 1e6},
      {1e6, 1},
      {1, 2, 3, 4, 5, 6},
      {0.001, 1000, 0.5, 7},
      {1e6, 0.0001, 1e6, 1e6, 1e6, 1e6, 0.0001},  // segments of width 0 or 1
      {100, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
  };
  std::mt19937_64 rng(11);
  for (const auto& weights : weight_sets) {
    for (PlacementStrategy s : kBothStrategies) {
      const Placement p(MakeMap(weights.size(), s, weights));
      for (int i = 0; i < 20000; ++i) {
        const Oid o = RandomOid(rng);
        ASSERT_NE(p.OriginalOsdFor(o), p.ReplicaOsdFor(o.fnso, o.fno))
            << Name(s) << " " << o.ToString() << " weights[0]=" << weights[0];
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Uniformity, big run
// ---------------------------------------------------------------------------------------------

// 10 000 files x 800 objects (8M objects per strategy, placed through FilePlacement as the data
// path does: one MD5 per object plus one per file). Running this for every N in 2..12 would
// take too long, so the big run uses one N = 6 map (the per-N checks above use 100 000
// objects each, through Placement::OriginalOsdFor). Files are numbered sequentially like inodes
// (fnso 1, fno 1..10000), objects are DATA at offsets 0..799. Bound: every statistic below
// the 99.99% chi-square quantile for N-1 = 5 degrees of freedom (25.745). See ReplicaChiSquare,
// ClusteredChiSquare and ConditionalOriginalsChiSquare for why replicas and originals are tested
// with files as the independent units rather than objects.
TEST(PlacementUniformityTest, TenThousandFilesOf800ObjectsN6) {
  constexpr size_t kN = 6;
  constexpr uint64_t kFiles = 10000;
  constexpr uint64_t kObjectsPerFile = 800;
  for (PlacementStrategy s : kBothStrategies) {
    const auto start = std::chrono::steady_clock::now();
    const Placement p(MakeMap(kN, s));
    const Tally t = RunParallel(
        p, Api::kPerFile, kFiles, kObjectsPerFile,
        [](uint64_t f) { return std::make_pair(uint32_t{1}, f + 1); },
        [](uint64_t f, uint64_t k) { return MakeOid(1, f + 1, k); });
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string label = std::string(Name(s)) + " (big run)";
    ASSERT_EQ(t.files, kFiles);
    EXPECT_EQ(t.orthogonality_violations, 0u) << label;
    uint64_t originals = 0;
    uint64_t replicas = 0;
    for (size_t j = 0; j < kN; ++j) {
      originals += t.originals[j];
      replicas += t.ReplicaObjects(j);
      std::printf("[ counts   ] %s osd %u: originals=%llu replica objects=%llu total=%llu\n",
                  label.c_str(), IdOfIndex(j), static_cast<unsigned long long>(t.originals[j]),
                  static_cast<unsigned long long>(t.ReplicaObjects(j)),
                  static_cast<unsigned long long>(t.Total(j)));
    }
    EXPECT_EQ(originals, kFiles * kObjectsPerFile);
    EXPECT_EQ(replicas, kFiles * kObjectsPerFile);
    // Migration moves the objects whose first choice was R: Binomial(8M, 1/6), within 5 sd.
    // Repartition never reports a migration.
    if (s == PlacementStrategy::kMigration) {
      const double objects = static_cast<double>(kFiles * kObjectsPerFile);
      EXPECT_NEAR(static_cast<double>(t.migrated), objects / kN,
                  5 * std::sqrt(objects * (1.0 / kN) * (1 - 1.0 / kN)));
    } else {
      EXPECT_EQ(t.migrated, 0u);
    }
    std::printf("[ migrated ] %s: %llu of %llu\n", label.c_str(),
                static_cast<unsigned long long>(t.migrated),
                static_cast<unsigned long long>(kFiles * kObjectsPerFile));
    ExpectUniform(t, label);
    // A plain per-OSD bound too: each count within 5 standard deviations of its mean, with the
    // per-file variances of the model above (about 2.3% for originals, 11% for replica
    // objects, 4.5% for totals: replicas move in blocks of 800).
    const double n = kN;
    const double m = kObjectsPerFile;
    const double f = kFiles;
    const double replica_var = m * m * (1 / n) * (1 - 1 / n);
    for (size_t j = 0; j < kN; ++j) {
      EXPECT_NEAR(static_cast<double>(t.originals[j]), f * OriginalsMean(n, m),
                  5 * std::sqrt(f * OriginalsVar(n, m)))
          << label << " " << j;
      EXPECT_NEAR(static_cast<double>(t.ReplicaObjects(j)), f * m / n,
                  5 * std::sqrt(f * replica_var))
          << label << " " << j;
      EXPECT_NEAR(static_cast<double>(t.Total(j)), f * TotalsMean(n, m),
                  5 * std::sqrt(f * TotalsVar(n, m)))
          << label << " " << j;
    }
    std::printf("[ time     ] %s: %.1f s\n", label.c_str(), seconds);
  }
}

// ---------------------------------------------------------------------------------------------
// Migration moves exactly the objects whose first choice was the replica OSD
// ---------------------------------------------------------------------------------------------

TEST(PlacementMigrationTest, MovesExactlyTheObjectsWhoseFirstChoiceWasR) {
  std::mt19937_64 rng(12);
  for (size_t n = 2; n <= 12; ++n) {
    // Equal weights, and weights 1, 2, 3, 4, 1, 2, ...
    const std::vector<std::vector<double>> weight_sets = {
        std::vector<double>(n, 1.0), [&] {
          std::vector<double> w;
          for (size_t i = 0; i < n; ++i) w.push_back(1.0 + static_cast<double>(i % 4));
          return w;
        }()};
    for (const auto& weights : weight_sets) {
      const bool equal = weights == std::vector<double>(n, 1.0);
      const Placement p(MakeMap(n, PlacementStrategy::kMigration, weights));
      const Placement rep(MakeMap(n, PlacementStrategy::kRepartition, weights));
      constexpr int kObjects = 30000;
      int moved = 0;
      std::vector<uint64_t> moved_to_offset(n);  // moved objects by (O - R) mod n
      for (int i = 0; i < kObjects; ++i) {
        const Oid o = RandomOid(rng);
        const uint32_t r = p.ReplicaOsdFor(o.fnso, o.fno);
        const uint32_t first = p.FirstChoiceOsdFor(o);
        const uint32_t original = p.OriginalOsdFor(o);
        // The first choice does not depend on the strategy.
        ASSERT_EQ(rep.FirstChoiceOsdFor(o), first);
        if (first != r) {
          ASSERT_EQ(original, first) << "n=" << n << " " << o.ToString() << " moved needlessly";
        } else {
          ASSERT_NE(original, first) << "n=" << n << " " << o.ToString() << " stayed on R";
          ++moved;
          const size_t offset = (IndexOfId(original) + n - IndexOfId(r)) % n;
          ++moved_to_offset[offset];
        }
      }
      EXPECT_GT(moved, 0) << "n=" << n;
      EXPECT_LT(moved, kObjects) << "n=" << n;
      if (equal) {
        // With equal weights P(first choice == R) = 1/N independently per object (h of the
        // object is independent of h of the file): moved ~ Binomial(kObjects, 1/N). Accept
        // within 5 standard deviations.
        const double p1 = 1.0 / static_cast<double>(n);
        const double mean = kObjects * p1;
        const double sd = std::sqrt(kObjects * p1 * (1 - p1));
        EXPECT_NEAR(moved, mean, 5 * sd) << "n=" << n;
        // Moved objects spread evenly over the other N-1 OSDs (by h2). Pearson over the
        // N-1 positions relative to R; critical value for N-2 degrees of freedom.
        if (n > 2) {
          double chi2 = 0;
          const double e = static_cast<double>(moved) / static_cast<double>(n - 1);
          for (size_t k = 1; k < n; ++k) {
            const double d = static_cast<double>(moved_to_offset[k]) - e;
            chi2 += d * d / e;
          }
          EXPECT_LT(chi2, ChiSquareQuantile(static_cast<int>(n) - 2, kQuantile)) << "n=" << n;
        }
      }
    }
  }
}

TEST(PlacementMigrationTest, RepartitionMayMoveOtherObjectsMigrationNever) {
  // The point of migration: compared with owner_N(h), only 1/N of the objects change OSD;
  // repartition re-splits everything among N-1 OSDs and moves far more.
  const size_t n = 8;
  const Placement mig(MakeMap(n, PlacementStrategy::kMigration));
  const Placement rep(MakeMap(n, PlacementStrategy::kRepartition));
  std::mt19937_64 rng(13);
  int mig_moved = 0;
  int rep_moved = 0;
  constexpr int kObjects = 20000;
  for (int i = 0; i < kObjects; ++i) {
    const Oid o = RandomOid(rng);
    mig_moved += mig.OriginalOsdFor(o) != mig.FirstChoiceOsdFor(o);
    rep_moved += rep.OriginalOsdFor(o) != rep.FirstChoiceOsdFor(o);
  }
  EXPECT_LT(mig_moved, kObjects / 8 + 500);
  EXPECT_GT(rep_moved, kObjects / 4);
}

// ---------------------------------------------------------------------------------------------
// Weights
// ---------------------------------------------------------------------------------------------

// Share of all originals that OSD j holds: sum over r != j of P(R = r) * P(O = j | R = r) with
// P(R = r) = w_r / W and P(O = j | R = r) = w_j / (W - w_r) for both strategies (migration:
// w_j/W + (w_r/W) * w_j/(W - w_r), which is the same). Note that this is NOT w_j / W: an OSD
// never holds originals of the files it replicates, and a heavier OSD replicates more files,
// so originals are less than proportional to weight (orthogonality makes exact proportionality
// impossible; e.g. no OSD can hold more than 1 - w_j/W of the originals).
std::vector<double> ExpectedOriginalShares(const std::vector<double>& w) {
  double total = 0;
  for (double x : w) total += x;
  std::vector<double> share(w.size());
  for (size_t j = 0; j < w.size(); ++j) {
    for (size_t r = 0; r < w.size(); ++r) {
      if (r != j) share[j] += (w[r] / total) * (w[j] / (total - w[r]));
    }
  }
  return share;
}

TEST(PlacementWeightsTest, SharesFollowWeights) {
  const std::vector<double> weights = {1, 2, 3, 4, 5, 6};
  constexpr uint64_t kFiles = 20000;
  constexpr uint64_t kObjectsPerFile = 20;
  const double total_weight = 21;
  const std::vector<double> original_shares = ExpectedOriginalShares(weights);
  for (PlacementStrategy s : kBothStrategies) {
    const Placement p(MakeMap(weights.size(), s, weights));
    const Tally t = RunParallel(
        p, Api::kPerFile, kFiles, kObjectsPerFile,
        [](uint64_t f) { return std::make_pair(uint32_t{3}, f * 7919 + 11); },
        [](uint64_t f, uint64_t k) { return MakeOid(3, f * 7919 + 11, k); });
    EXPECT_EQ(t.orthogonality_violations, 0u);
    const double replicas = ReplicaChiSquare(t, weights);
    const double conditional = ConditionalOriginalsChiSquare(t);
    const double critical = Critical(weights.size());
    std::printf(
        "[ chi2     ] weights 1..6 %s: replicas(over files)=%.2f originals|R=%.2f "
        "critical=%.2f\n",
        Name(s), replicas, conditional, critical);
    EXPECT_LT(replicas, critical) << Name(s);
    EXPECT_LT(conditional, critical) << Name(s);
    const double objects = static_cast<double>(kFiles * kObjectsPerFile);
    for (size_t j = 0; j < weights.size(); ++j) {
      const double replica_share = static_cast<double>(t.ReplicaObjects(j)) / objects;
      const double original_share = static_cast<double>(t.originals[j]) / objects;
      std::printf("[ weights  ] %s w=%.0f replicas %.4f (want %.4f) originals %.4f (want %.4f)\n",
                  Name(s), weights[j], replica_share, weights[j] / total_weight, original_share,
                  original_shares[j]);
      // Relative tolerances are ~5 standard deviations at 20 000 files.
      EXPECT_NEAR(replica_share / (weights[j] / total_weight), 1.0, 0.16) << Name(s) << " " << j;
      EXPECT_NEAR(original_share / original_shares[j], 1.0, 0.08) << Name(s) << " " << j;
    }
  }
}

TEST(PlacementWeightsTest, WeightTwoOsdGetsTwiceTheReplicas) {
  // OSD 0 has weight 2, the other five weight 1; 40 000 files x 10 objects.
  const std::vector<double> weights = {2, 1, 1, 1, 1, 1};
  constexpr uint64_t kFiles = 40000;
  constexpr uint64_t kObjectsPerFile = 10;
  const std::vector<double> original_shares = ExpectedOriginalShares(weights);
  // 2 * (5 * 1/6) / (2/5 + 4 * 1/6) = 1.5625 (see ExpectedOriginalShares).
  const double want_original_ratio = original_shares[0] / original_shares[1];
  ASSERT_NEAR(want_original_ratio, 1.5625, 1e-12);
  const double want_total_ratio = (2.0 / 7 + original_shares[0]) / (1.0 / 7 + original_shares[1]);
  for (PlacementStrategy s : kBothStrategies) {
    const Placement p(MakeMap(weights.size(), s, weights));
    const Tally t = RunParallel(
        p, Api::kPerFile, kFiles, kObjectsPerFile,
        [](uint64_t f) { return std::make_pair(uint32_t{4}, f); },
        [](uint64_t f, uint64_t k) { return MakeOid(4, f, k); });
    double light_replicas = 0;
    double light_originals = 0;
    double light_totals = 0;
    for (size_t j = 1; j < weights.size(); ++j) {
      light_replicas += static_cast<double>(t.ReplicaObjects(j)) / 5;
      light_originals += static_cast<double>(t.originals[j]) / 5;
      light_totals += static_cast<double>(t.Total(j)) / 5;
    }
    const double replica_ratio = static_cast<double>(t.ReplicaObjects(0)) / light_replicas;
    const double original_ratio = static_cast<double>(t.originals[0]) / light_originals;
    const double total_ratio = static_cast<double>(t.Total(0)) / light_totals;
    std::printf(
        "[ weights  ] weight 2 vs 1 %s: replicas x%.3f (want 2), originals x%.3f "
        "(want %.4f), total x%.3f (want %.4f)\n",
        Name(s), replica_ratio, original_ratio, want_original_ratio, total_ratio, want_total_ratio);
    // Standard deviation of the replica ratio is ~1.4% at 40 000 files: accept within ~5.
    EXPECT_NEAR(replica_ratio, 2.0, 0.15) << Name(s);
    EXPECT_NEAR(original_ratio, want_original_ratio, 0.1) << Name(s);
    EXPECT_NEAR(total_ratio, want_total_ratio, 0.1) << Name(s);
    EXPECT_LT(ReplicaChiSquare(t, weights), Critical(weights.size())) << Name(s);
    EXPECT_LT(ConditionalOriginalsChiSquare(t), Critical(weights.size())) << Name(s);
  }
}

}  // namespace
}  // namespace orthofs
