// The client's data path (client/file_io.h) on real OSDs, with faults between its calls put
// there by ClusterClient::TestHooks: what a flush promises must be on the OSDs when it returns.
#include "client/file_io.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "client/osd_client.h"
#include "tests/test_cluster.h"

namespace orthofs {
namespace {

using testing::TestCluster;

constexpr uint32_t kFnso = 1;
constexpr uint64_t kFno = 4242;

// An object written whole goes to the OSDs at once, on a flush thread. Written again in part
// while that write-back is still on its way, it is dirty once more when it ends; a flush
// (fsync, close) that began meanwhile must write that part too before it returns, although it
// found the object in flight and skipped it. It used to return with the part only in the
// client's cache.
TEST(FileIoTest, AFlushWritesWhatWasWrittenAgainDuringAWriteBack) {
  TestCluster cluster;
  ClusterClient client(cluster.map(), cluster.Rpc("client"));
  std::promise<void> entered;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> writes_of_the_object{0};
  client.SetTestHooks({.before_writing_both_copies = [&](const Oid& original) {
    if (original.fno != kFno || writes_of_the_object++ != 0) return;
    entered.set_value();  // the first write-back is in flight: hold it there
    released.wait();
  }});
  const uint64_t object_size = cluster.map().object_size;
  // No partly written object is due by age during the test: only a flush writes it.
  FileIo io(&client, kFnso, FileIoOptions{.max_dirty_age = std::chrono::minutes(10)});

  ASSERT_TRUE(io.Write(kFno, 0, std::string(object_size, 'a')).ok());
  ASSERT_EQ(entered.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready)
      << "the object written whole was not written back at once";
  const std::string again(4096, 'b');
  ASSERT_TRUE(io.Write(kFno, 0, again).ok());

  Status flushed = Status::Internal("not flushed");
  std::thread flusher([&] { flushed = io.Flush(kFno); });
  // Let the flush find the object in flight before that write-back may end.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  release.set_value();
  flusher.join();
  ASSERT_TRUE(flushed.ok()) << flushed.ToString();

  for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
    const Oid copy{kFnso, kFno, 0, ObjectType::kData, flag};
    Result<wire::ReadResponse> read = client.Read(copy);
    ASSERT_TRUE(read.ok()) << copy.ToString() << ": " << read.status().ToString();
    ASSERT_EQ(read->data().size(), object_size) << copy.ToString();
    EXPECT_EQ(read->data().substr(0, again.size()), again)
        << copy.ToString() << ": the part written again is not there after the flush";
    EXPECT_EQ(read->data().substr(again.size()), std::string(object_size - again.size(), 'a'))
        << copy.ToString();
  }
  EXPECT_EQ(writes_of_the_object.load(), 2);
}

}  // namespace
}  // namespace orthofs
