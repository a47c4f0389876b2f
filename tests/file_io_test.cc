// The client's data path (client/file_io.h) on real OSDs, with faults between its calls put
// there by ClusterClient::TestHooks: what a flush promises must be on the OSDs when it returns.
#include "client/file_io.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "client/cluster_client.h"
#include "common/placement.h"
#include "tests/test_cluster.h"

namespace orthofs {
namespace {

using testing::TestCluster;

constexpr uint32_t kFnso = 1;
constexpr uint64_t kFno = 4242;

// The first file number from 100 on whose first object has neither copy on `osd`; 0 if none.
uint64_t FileWithNoCopyOn(const Placement& placement, uint32_t osd) {
  for (uint64_t fno = 100; fno < 100000; ++fno) {
    if (placement.ReplicaOsdFor(kFnso, fno) != osd &&
        placement.OriginalOsdFor(Oid{kFnso, fno, 0, ObjectType::kData}) != osd) {
      return fno;
    }
  }
  return 0;
}

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

// A read that fetched an object while a truncation was on its way (after PrepareTruncate,
// before the OSDs deleted the object) lands after it. Its old bytes must not stay cached past
// the new end: when the file grows again, that range reads as zeros.
TEST(FileIoTest, AReadDuringATruncationLeavesNoOldBytesPastTheNewEnd) {
  TestCluster cluster;
  ClusterClient client(cluster.map(), cluster.Rpc("client"));
  const uint64_t object_size = cluster.map().object_size;
  FileIo io(&client, kFnso);
  ASSERT_TRUE(io.Write(kFno, 0, std::string(2 * object_size, 'a')).ok());
  ASSERT_TRUE(io.Flush(kFno).ok());
  io.Forget(kFno);  // nothing cached: the read below fetches

  std::promise<void> arrived;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> held{false};
  const Oid second{kFnso, kFno, 1, ObjectType::kData};
  client.SetTestHooks({.after_reading = [&](const Oid& copy) {
    if (copy.fno != kFno || copy.offset != 1 || held.exchange(true)) return;
    arrived.set_value();  // the old bytes are here: hold them until the truncation is done
    released.wait();
  }});

  // ftruncate to one object: PrepareTruncate, then (the INODE's SetAttr) the OSDs delete the
  // second object, then Truncated. A reader that still knows the old size reads in between.
  ASSERT_TRUE(io.PrepareTruncate(kFno).ok());
  Result<SharedBytes> old_read = Status::Internal("not read");
  std::thread reader([&] { old_read = io.Read(kFno, object_size, 4096, 2 * object_size); });
  ASSERT_EQ(arrived.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready);
  ASSERT_TRUE(client.DeleteBothCopies(second).ok());
  io.Truncated(kFno, object_size);
  release.set_value();
  reader.join();
  ASSERT_TRUE(old_read.ok()) << old_read.status().ToString();  // read before the truncation

  // The file grows back to two objects (ftruncate up): the second reads as zeros.
  Result<SharedBytes> grown = io.Read(kFno, object_size, 4096, 2 * object_size);
  ASSERT_TRUE(grown.ok()) << grown.status().ToString();
  EXPECT_EQ(grown->Join(), std::string(4096, '\0')) << "old bytes past the truncation came back";
}

// A truncation that fails (its INODE update on the OSDs answers an error) leaves the file as
// it was: the bytes written past the new end, still only in the client's cache when the
// truncation began, read back. PrepareTruncate used to drop them first.
TEST(FileIoTest, ATruncationThatFailsLosesNoWrittenBytes) {
  TestCluster cluster;
  ClusterClient client(cluster.map(), cluster.Rpc("client"));
  const uint64_t object_size = cluster.map().object_size;
  // Only a flush writes the second object's partly written bytes back during the test.
  FileIo io(&client, kFnso, FileIoOptions{.max_dirty_age = std::chrono::minutes(10)});
  const std::string tail(4096, 't');
  ASSERT_TRUE(io.Write(kFno, 0, std::string(object_size, 'a')).ok());
  ASSERT_TRUE(io.Write(kFno, object_size, tail).ok());

  ASSERT_TRUE(io.PrepareTruncate(kFno).ok());  // ftruncate to one object, then its SetAttr fails
  Result<SharedBytes> read = io.Read(kFno, object_size, tail.size(), object_size + tail.size());
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->Join(), tail) << "the bytes past the new end were lost";
  io.Forget(kFno);  // what the OSDs hold: PrepareTruncate wrote them back
  read = io.Read(kFno, object_size, tail.size(), object_size + tail.size());
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->Join(), tail) << "the bytes past the new end were not written back";
}

// A cluster of which a test stops every OSD but the first, and a client of it.
class FileIoFailoverTest : public ::testing::Test {
 protected:
  void StopOthers() {
    for (uint32_t id : Others()) cluster_.Stop(id, SIGKILL);
  }
  void StartOthers() {
    for (uint32_t id : Others()) cluster_.Start(id);
  }
  std::vector<uint32_t> Others() const {
    std::vector<uint32_t> others;
    for (const OsdInfo& osd : cluster_.map().osds) {
      if (osd.id != live_) others.push_back(osd.id);
    }
    return others;
  }

  TestCluster cluster_;
  ClusterClient client_{cluster_.map(), cluster_.Rpc("client")};
  const uint64_t object_size_ = cluster_.map().object_size;
  const Placement placement_{cluster_.map()};
  const uint32_t live_ = cluster_.map().osds.front().id;
};

// Under memory pressure a writer writes back the oldest dirty object itself, which may be
// another file's. When that write-back fails (both copies' OSDs are down), the other file's
// fsync or close reports it; the writer, whose bytes are cached, is not failed for it, and
// relieves the pressure with the next oldest objects instead. It used to answer the other
// file's error (EIO) to the write.
TEST_F(FileIoFailoverTest, AWriterIsNotFailedForAnotherFilesWriteBack) {
  // One OSD stays up. Every object of `mine` and `held` has its replica there; both copies of
  // `theirs`' first object are on the OSDs that stop.
  uint64_t mine = 0, held = 0;
  for (uint64_t fno = 100; fno < 100000 && held == 0; ++fno) {
    if (placement_.ReplicaOsdFor(kFnso, fno) != live_) continue;
    if (mine == 0) {
      mine = fno;
    } else {
      held = fno;
    }
  }
  const uint64_t theirs = FileWithNoCopyOn(placement_, live_);
  ASSERT_TRUE(mine != 0 && held != 0 && theirs != 0);

  // The one flush thread is kept busy with `held`'s object until the end: every other
  // write-back is the writer's own.
  std::promise<void> entered;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> holding{false};
  std::atomic<int> writes_of_theirs{0};
  client_.SetTestHooks({.before_writing_both_copies = [&](const Oid& original) {
    if (original.fno == theirs) ++writes_of_theirs;
    if (original.fno != held || holding.exchange(true)) return;
    entered.set_value();
    released.wait();
  }});
  FileIo io(&client_, kFnso,
            FileIoOptions{.cache_bytes = 16 * object_size_,  // W1: 8 objects pinned
                          .flush_threads = 1,
                          .max_dirty_age = std::chrono::minutes(10)});
  ASSERT_TRUE(io.Write(held, 0, std::string(object_size_, 'h')).ok());  // due at once
  ASSERT_EQ(entered.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready);
  const std::string part(object_size_ - 1, 'x');  // not whole: due only by age or a flush
  ASSERT_TRUE(io.Write(theirs, 0, part).ok());
  StopOthers();

  for (uint64_t i = 0; i < 12; ++i) {
    const Status written = io.Write(mine, i * object_size_, part);
    EXPECT_TRUE(written.ok()) << "write " << i << ": " << written.ToString();
  }
  EXPECT_GE(io.stats().synchronous_write_backs, 1u) << "no pressure: nothing tested";
  // Once failed, the other file's object is left to its own flush (the held flush thread's,
  // here): later writes do not try it again, each waiting for it to fail.
  EXPECT_EQ(writes_of_theirs.load(), 1);
  // The one flush thread is held: only the writer wrote anything back.
  EXPECT_GE(io.stats().cache.flushes, 1u) << "the writer wrote back none of its own objects";
  EXPECT_TRUE(io.Flush(mine).ok());  // one copy and a repair record each
  EXPECT_FALSE(io.Flush(theirs).ok()) << "its failure was not reported to it";

  release.set_value();
  StartOthers();
  EXPECT_TRUE(io.Flush(held).ok());
}

// A write the cache has no room for (its dirty objects cannot be written back: both copies'
// OSDs are down) fails with nothing of it cached: its bytes must not land once the OSDs are
// back, past the size its failure left. (They were cached first and written back later.) The
// writes accepted before it all land.
TEST_F(FileIoFailoverTest, AWriteRefusedForWantOfRoomLeavesNothingToLandLater) {
  const uint64_t fno = FileWithNoCopyOn(placement_, live_);
  ASSERT_NE(fno, 0u);
  auto object = [&](uint64_t index) { return Oid{kFnso, fno, index, ObjectType::kData}; };
  std::vector<uint64_t> indexes;  // objects with neither copy on the OSD that stays up
  for (uint64_t index = 0; indexes.size() < 32; ++index) {
    if (placement_.OriginalOsdFor(object(index)) != live_) indexes.push_back(index);
  }
  StopOthers();
  FileIo io(&client_, kFnso,
            FileIoOptions{.cache_bytes = 4 * object_size_,
                          .flush_threads = 1,
                          .max_dirty_age = std::chrono::minutes(10)});
  std::vector<uint64_t> accepted;
  std::optional<uint64_t> refused;
  for (uint64_t index : indexes) {
    if (!io.Write(fno, index * object_size_, std::string(object_size_, 'w')).ok()) {
      refused = index;
      break;
    }
    accepted.push_back(index);
  }
  ASSERT_TRUE(refused.has_value()) << "the cache never ran out of room: nothing tested";
  StartOthers();
  // The first flushes report the write-backs that failed while the OSDs were down, and the
  // client_'s channels reconnect with a backoff.
  Status flushed = io.Flush(fno);
  for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
       !flushed.ok() && std::chrono::steady_clock::now() < until;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    flushed = io.Flush(fno);
  }
  ASSERT_TRUE(flushed.ok()) << flushed.ToString();
  for (uint64_t index : accepted) {
    EXPECT_TRUE(client_.ReadEitherCopy(object(index)).ok()) << "accepted object " << index;
  }
  for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
    // A restarted OSD refuses reads until it has replayed its peers' repair records, and the
    // client's channel to it may still be in its reconnect backoff.
    Result<wire::ReadResponse> read = client_.Read(object(*refused).WithFlag(flag));
    for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
         (ClusterClient::IsRecovering(read.status()) ||
          ClusterClient::IsOsdFailure(read.status())) &&
         std::chrono::steady_clock::now() < until;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      read = client_.Read(object(*refused).WithFlag(flag));
    }
    EXPECT_TRUE(read.status().Is(StatusCode::kNotFound))
        << "object " << *refused << " (refused): " << read.status().ToString();
  }
}

// A file forgotten (deleted) while one of its write-backs is in flight: that write-back fails
// after Forget began, and its error must not stay behind for a file that is gone (every later
// FlushAll, an unmount, reported it).
TEST_F(FileIoFailoverTest, AWriteBackFailingDuringForgetLeavesNoError) {
  // Both copies of the file's first object on OSDs that stop; one OSD stays up.
  const uint64_t gone = FileWithNoCopyOn(placement_, live_);
  ASSERT_NE(gone, 0u);
  std::promise<void> entered;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> holding{false};
  client_.SetTestHooks({.before_writing_both_copies = [&](const Oid& original) {
    if (original.fno != gone || holding.exchange(true)) return;
    entered.set_value();
    released.wait();
  }});
  FileIo io(&client_, kFnso, FileIoOptions{.max_dirty_age = std::chrono::minutes(10)});
  ASSERT_TRUE(io.Write(gone, 0, std::string(object_size_, 'g')).ok());  // due at once
  ASSERT_EQ(entered.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready);
  StopOthers();
  std::thread forget([&] { io.Forget(gone); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // Forget waits for the flight
  release.set_value();
  forget.join();
  const Status flushed = io.FlushAll();
  EXPECT_TRUE(flushed.ok()) << flushed.ToString();
}

// OSDs that refuse every write for lack of space (they keep back more than the disk has), and
// half an object of a file cached, to be written back.
class FileIoOnFullOsdsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(io_.Write(kFno, 0, std::string(cluster_.map().object_size / 2, 'a')).ok());
  }

  TestCluster cluster_{
      testing::TestClusterOptions{.extra_osd_flags = {"--reserve-mb", std::to_string(1u << 30)}}};
  ClusterClient client_{cluster_.map(), cluster_.Rpc("client")};
  FileIo io_{&client_, kFnso, FileIoOptions{.max_dirty_age = std::chrono::minutes(10)}};
};

// Truncating is how users free space on full OSDs. A file's bytes the OSDs refuse for lack of
// space are dropped either way; they do not fail its truncation too, and its fsync or close
// still reports them.
TEST_F(FileIoOnFullOsdsTest, BytesRefusedForLackOfSpaceDoNotFailATruncation) {
  const Status prepared = io_.PrepareTruncate(kFno);
  EXPECT_TRUE(prepared.ok()) << prepared.ToString();
  const Status flushed = io_.Flush(kFno);
  EXPECT_TRUE(flushed.Is(StatusCode::kNoSpace)) << flushed.ToString();
}

// A flush that does not report (lseek's, fallocate's) returns a write-back failure and leaves
// it for the file's fsync or close, which report it once. (lseek used to take it away: the
// bytes were dropped, and fsync answered success.)
TEST_F(FileIoOnFullOsdsTest, AFlushThatDoesNotReportLeavesTheErrorForFsync) {
  const Status seeking = io_.Flush(kFno, /*reports=*/false);
  EXPECT_TRUE(seeking.Is(StatusCode::kNoSpace)) << seeking.ToString();
  const Status fsynced = io_.Flush(kFno);
  EXPECT_TRUE(fsynced.Is(StatusCode::kNoSpace)) << fsynced.ToString();
  EXPECT_TRUE(io_.Flush(kFno).ok()) << "reported twice";
}

}  // namespace
}  // namespace orthofs
