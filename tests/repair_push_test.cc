// A repair record's push that crosses a deletion of both copies. The OSD holding the record
// reads its copy and sends it to the other OSD, which is slow to take it (here: stopped for a
// moment); meanwhile a client deletes the object. The push lands after the deletion, and the
// record's next pass must delete the copy it brought back, or that copy stays without its twin
// (found by `orthofs scrub` as "missing" after a stalled OSD went on, tests/osd_stall_test.sh).
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <string>
#include <thread>

#include "client/cluster_client.h"
#include "tests/test_cluster.h"

namespace orthofs::testing {
namespace {

// SIGCONT for a stopped process, however the test ends.
class Resume {
 public:
  explicit Resume(pid_t pid) : pid_(pid) {}
  ~Resume() { Now(); }
  void Now() {
    if (pid_ > 0) kill(pid_, SIGCONT);
    pid_ = 0;
  }

 private:
  pid_t pid_;
};

TEST(RepairPushTest, ACopyPushedAfterItsDeletionGoesAtTheNextPass) {
  TestCluster cluster(TestClusterOptions{.osds = 3});
  ClusterClient& client = cluster.client();
  const Oid original{1, 900, 0, ObjectType::kData, CopyFlag::kOriginal};
  const Oid replica = original.OtherCopy();
  const uint32_t slow = client.placement().OsdFor(replica);
  const std::string data(cluster.map().object_size, 'p');

  // A first record, pushed once the worker runs its passes (the first comes an interval after
  // the OSD starts): the next one is pushed at once.
  const Oid warm_up{1, 901, 0, ObjectType::kData, CopyFlag::kOriginal};
  ASSERT_TRUE(client.Write(warm_up, data, {.replace = true, .record_repair = true}).ok());
  for (int i = 0; i < 200 && !client.Read(warm_up.OtherCopy()).ok(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(client.Read(warm_up.OtherCopy()).ok()) << "the first record was never pushed";

  ASSERT_EQ(kill(cluster.Pid(slow), SIGSTOP), 0);
  Resume resume(cluster.Pid(slow));
  // The original alone, with a record for the replica: its OSD sends the push at once, which
  // waits in the stopped OSD's socket.
  ASSERT_TRUE(client.Write(original, data, {.replace = true, .record_repair = true}).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // The deletion of both copies: the original goes (a data copy keeps no tombstone); the
  // replica's delete would find nothing yet, so it is left out here.
  Result<wire::DeleteResponse> gone = client.DeleteCopy(original, std::nullopt, std::nullopt);
  ASSERT_TRUE(gone.ok()) << gone.status().ToString();
  resume.Now();

  const CommandResult repaired = cluster.Repair();
  ASSERT_EQ(repaired.exit_code, 0) << repaired.out << repaired.err;
  for (const Oid& copy : {original, replica}) {
    Result<wire::ReadResponse> read = client.Read(copy);
    EXPECT_TRUE(read.status().Is(StatusCode::kNotFound))
        << copy.ToString() << ": " << (read.ok() ? "still there" : read.status().ToString());
  }
}

}  // namespace
}  // namespace orthofs::testing
