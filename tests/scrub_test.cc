// orthofs scrub and damaged copies through the real path: records damaged on an OSD's disk
// (written into its RocksDB while it is stopped, as a bad disk would leave them), copies made
// stale or removed behind the file system's back. Reads return the right bytes from the intact
// copy, writes heal the damaged one, and scrub finds and rewrites every bad copy.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/object_record.h"
#include "common/oid.h"
#include "osd/object_store.h"
#include "tests/posix_files.h"
#include "tests/test_cluster.h"

namespace orthofs::testing {
namespace {

constexpr uint32_t kFnso = 1;
constexpr uint64_t kObjectSize = 131072;

Oid DataOid(uint64_t fno, uint64_t index, CopyFlag flag = CopyFlag::kOriginal) {
  return Oid{kFnso, fno, index, ObjectType::kData, flag};
}

// Flips one byte of each copy's stored bytes on its OSD's disk; each OSD is stopped for it
// and started again (its object cache then starts empty).
void DamageOnDisk(TestCluster& cluster, const std::vector<Oid>& copies) {
  std::map<uint32_t, std::vector<Oid>> by_osd;
  for (const Oid& oid : copies) by_osd[cluster.client().placement().OsdFor(oid)].push_back(oid);
  for (const auto& [osd, oids] : by_osd) {
    cluster.Stop(osd);
    {
      Result<std::unique_ptr<ObjectStore>> store = ObjectStore::Open(cluster.DataDir(osd), {});
      ASSERT_TRUE(store.ok()) << store.status().ToString();
      for (const Oid& oid : oids) {
        const std::string key = EncodeStoreKey(oid);
        Result<std::string> record = (*store)->GetRecordBytes(key);
        ASSERT_TRUE(record.ok()) << oid.ToString() << ": " << record.status().ToString();
        ASSERT_GT(record->size(), kObjectRecordHeaderSize) << oid.ToString();
        (*record)[record->size() - 1] ^= 0x5a;
        ASSERT_TRUE((*store)->PutRecordBytes(key, *record).ok());
      }
    }
    cluster.Start(osd);
  }
}

// Writes file "f" through a mount that is gone afterwards; returns its fno.
uint64_t CreateThroughMount(TestCluster& cluster, const std::string& data) {
  TestMount writer(&cluster, kFnso);
  CreateFile(writer / "f", data);
  return FreshStat(writer / "f").st_ino;
}

struct Scrub {
  int exit_code = -1;
  nlohmann::json report;
};

Scrub RunScrub(TestCluster& cluster) {
  CommandResult r = cluster.Orthofs("scrub", {"--fnso", "1", "--json"});
  Scrub scrub{r.exit_code, {}};
  EXPECT_FALSE(r.out.empty()) << "scrub printed nothing; stderr: " << r.err;
  if (!r.out.empty()) scrub.report = nlohmann::json::parse(r.out);
  return scrub;
}

TEST(ScrubTest, ReadsSurviveBadCopiesAndScrubRewritesEachOne) {
  TestCluster cluster(TestClusterOptions{.osds = 3});
  const uint64_t objects = 16;
  const std::string data = RandomBytes(objects * kObjectSize, 11);
  const uint64_t fno = CreateThroughMount(cluster, data);
  // Damaged: four originals and one replica. Stale: a replica one version behind (the
  // original rewritten with the same bytes). Missing: one replica.
  DamageOnDisk(cluster, {DataOid(fno, 0), DataOid(fno, 1), DataOid(fno, 2), DataOid(fno, 3),
                         DataOid(fno, 5, CopyFlag::kReplica)});
  ASSERT_TRUE(cluster.client()
                  .Write(DataOid(fno, 7), data.substr(7 * kObjectSize, kObjectSize),
                         ObjectWrite{.replace = true})
                  .ok());
  ASSERT_TRUE(cluster.client().DeleteCopy(DataOid(fno, 9, CopyFlag::kReplica), {}, {}).ok());

  {
    TestMount reader(&cluster, kFnso);
    EXPECT_TRUE(ReadFile(reader / "f") == data) << "reads did not fall back to intact copies";
  }

  Scrub first = RunScrub(cluster);
  EXPECT_EQ(first.exit_code, 0) << first.report.dump();
  EXPECT_EQ(first.report["corrupt"], 5) << first.report.dump();
  EXPECT_EQ(first.report["stale"], 1) << first.report.dump();
  EXPECT_EQ(first.report["missing"], 1) << first.report.dump();
  EXPECT_EQ(first.report["repaired"], 7) << first.report.dump();
  EXPECT_EQ(first.report["repaired_copies"].size(), 7u) << first.report.dump();
  EXPECT_NE(first.report.dump().find(DataOid(fno, 9, CopyFlag::kReplica).ToString() + " missing"),
            std::string::npos)
      << first.report.dump();
  EXPECT_EQ(first.report["unrecoverable"], 0) << first.report.dump();
  ExpectTwoEqualCopies(cluster, kFnso, fno, objects);

  Scrub second = RunScrub(cluster);
  EXPECT_EQ(second.exit_code, 0);
  EXPECT_EQ(second.report["repaired"], 0) << second.report.dump();
  EXPECT_EQ(second.report["matched"], second.report["objects"]) << second.report.dump();
  TestMount reader(&cluster, kFnso);
  EXPECT_TRUE(ReadFile(reader / "f") == data);
}

// Only both copies damaged loses data: EIO on that object alone, and scrub names it.
TEST(ScrubTest, AnObjectWithNoIntactCopyFailsAloneAndScrubNamesIt) {
  TestCluster cluster(TestClusterOptions{.osds = 3});
  const uint64_t objects = 6;
  const std::string data = RandomBytes(objects * kObjectSize, 12);
  const uint64_t fno = CreateThroughMount(cluster, data);
  DamageOnDisk(cluster, {DataOid(fno, 2), DataOid(fno, 2, CopyFlag::kReplica)});
  TestMount reader(&cluster, kFnso);
  Fd fd(open((reader / "f").c_str(), O_RDONLY));
  ASSERT_GE(fd.get(), 0) << std::strerror(errno);
  for (uint64_t i = 0; i < objects; ++i) {
    std::string buf(kObjectSize, '\0');
    const ssize_t n = pread(fd.get(), buf.data(), buf.size(), i * kObjectSize);
    if (i == 2) {
      EXPECT_EQ(n, -1);
      EXPECT_EQ(errno, EIO);
    } else {
      ASSERT_EQ(n, static_cast<ssize_t>(kObjectSize)) << "object " << i << std::strerror(errno);
      EXPECT_TRUE(buf == data.substr(i * kObjectSize, kObjectSize)) << "object " << i;
    }
  }
  Scrub scrub = RunScrub(cluster);
  EXPECT_EQ(scrub.exit_code, 3) << scrub.report.dump();
  EXPECT_EQ(scrub.report["unrecoverable"], 1) << scrub.report.dump();
  EXPECT_EQ(scrub.report["unrecoverable_oids"],
            nlohmann::json::array({DataOid(fno, 2).ToString()}));
}

// A write into an object whose replica is damaged succeeds (the original takes it with a
// repair record) and the replay replaces the damaged record whole.
TEST(ScrubTest, AWriteOverADamagedCopyHealsIt) {
  TestCluster cluster(TestClusterOptions{.osds = 3});
  std::string data = RandomBytes(4 * kObjectSize, 13);
  const uint64_t fno = CreateThroughMount(cluster, data);
  DamageOnDisk(cluster, {DataOid(fno, 1, CopyFlag::kReplica)});
  {
    TestMount mount(&cluster, kFnso);
    Fd fd(open((mount / "f").c_str(), O_RDWR));
    ASSERT_GE(fd.get(), 0) << std::strerror(errno);
    const std::string patch(100, 'p');
    ASSERT_TRUE(WriteFull(fd.get(), patch, kObjectSize + 10)) << std::strerror(errno);
    ASSERT_EQ(fsync(fd.get()), 0) << std::strerror(errno);
    ASSERT_EQ(fd.Close(), 0) << std::strerror(errno);
    data.replace(kObjectSize + 10, patch.size(), patch);
  }
  EXPECT_EQ(cluster.Repair().exit_code, 0);
  ExpectTwoEqualCopies(cluster, kFnso, fno, 4);
  Scrub scrub = RunScrub(cluster);
  EXPECT_EQ(scrub.report["repaired"], 0) << scrub.report.dump();
  TestMount reader(&cluster, kFnso);
  EXPECT_TRUE(ReadFile(reader / "f") == data);
}

}  // namespace
}  // namespace orthofs::testing
