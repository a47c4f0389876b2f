// fcntl and flock locks across clients: one TestCluster (3 OSDs) and two mounts A and B of one
// namespace, shared by the suite. Locks taken through one mount must hold against the other
// (client/lock_manager.h); both mounts are this test process, but the owners the kernel
// passes differ per mount, so A's and B's locks conflict as two hosts' would. Locks of
// processes on one mount are tested with fork().
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "tests/metrics_scrape.h"
#include "tests/posix_files.h"
#include "tests/test_cluster.h"

namespace orthofs::testing {
namespace {

constexpr uint32_t kFnso = 1;
// Short, so that a killed client's locks go within the test: a beat every 400 ms.
const std::vector<std::string> kMountFlags = {"--lock-lease", "2"};

// fcntl lock of [start, start + len) (len 0: to any end) through `fd`; the errno, 0 if taken.
int Lock(int fd, short type, off_t start, off_t len, bool wait = false) {
  struct flock lock {};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  lock.l_start = start;
  lock.l_len = len;
  return fcntl(fd, wait ? F_SETLKW : F_SETLK, &lock) == 0 ? 0 : errno;
}

// F_GETLK: what keeps a lock of `type` over the range from being taken (l_type F_UNLCK: none).
struct flock Holder(int fd, short type, off_t start, off_t len) {
  struct flock lock {};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  lock.l_start = start;
  lock.l_len = len;
  EXPECT_EQ(fcntl(fd, F_GETLK, &lock), 0) << std::strerror(errno);
  return lock;
}

int Flock(int fd, int op) { return flock(fd, op) == 0 ? 0 : errno; }

// Runs `body` in a child process; its exit code (the body returns it), or -1 if it crashed.
template <typename Body>
int InChild(Body body) {
  const pid_t pid = fork();
  if (pid == 0) _exit(body());
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

class FuseLocksTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    metrics_port_ = FreePort();
    std::vector<std::string> b_flags = kMountFlags;
    b_flags.insert(b_flags.end(), {"--metrics", "127.0.0.1:" + std::to_string(metrics_port_)});
    suite_.Start(kFnso, {kMountFlags, b_flags});
  }
  static void TearDownTestSuite() { suite_.Stop(); }

  void SetUp() override {
    ASSERT_EQ(suite_.error(), "");
    a_ = &suite_.mount(0);
    b_ = &suite_.mount(1);
    cluster_ = &suite_.cluster();
    name_ = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    CreateFile(*a_ / name_, std::string(4096, 'x'));
    // B may trust its kernel's "no such name" for the attribute timeout: past it, B sees it.
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    fd_a_ = open((*a_ / name_).c_str(), O_RDWR);
    fd_b_ = open((*b_ / name_).c_str(), O_RDWR);
    ASSERT_GE(fd_a_, 0) << std::strerror(errno);
    ASSERT_GE(fd_b_, 0) << std::strerror(errno);
  }

  void TearDown() override {
    if (fd_a_ >= 0) close(fd_a_);
    if (fd_b_ >= 0) close(fd_b_);
  }

  static SuiteCluster suite_;
  static int metrics_port_;  // B's --metrics
  TestCluster* cluster_ = nullptr;
  TestMount* a_ = nullptr;
  TestMount* b_ = nullptr;
  std::string name_;
  int fd_a_ = -1;
  int fd_b_ = -1;
};

SuiteCluster FuseLocksTest::suite_;
int FuseLocksTest::metrics_port_ = 0;

TEST_F(FuseLocksTest, AWriteLockThroughOneClientKeepsTheOtherOutOfItsRangeOnly) {
  ASSERT_EQ(Lock(fd_a_, F_WRLCK, 0, 100), 0);
  EXPECT_EQ(Lock(fd_b_, F_WRLCK, 50, 10), EAGAIN);
  EXPECT_EQ(Lock(fd_b_, F_RDLCK, 99, 1), EAGAIN);
  EXPECT_EQ(Lock(fd_b_, F_RDLCK, 100, 0), 0) << "the range past A's";
  const struct flock held = Holder(fd_b_, F_RDLCK, 0, 10);
  EXPECT_EQ(held.l_type, F_WRLCK);
  EXPECT_EQ(held.l_start, 0);
  EXPECT_EQ(held.l_len, 100);
  EXPECT_EQ(held.l_pid, 0) << "a process of another client: no pid here";
  EXPECT_EQ(Holder(fd_a_, F_WRLCK, 0, 100).l_type, F_UNLCK) << "A's own lock is no conflict";
  EXPECT_EQ(Holder(fd_a_, F_WRLCK, 0, 0).l_type, F_RDLCK) << "B's read lock from 100 on";
  // A unlocks the middle: B gets exactly that.
  ASSERT_EQ(Lock(fd_a_, F_UNLCK, 40, 20), 0);
  EXPECT_EQ(Lock(fd_b_, F_WRLCK, 40, 20), 0);
  EXPECT_EQ(Lock(fd_b_, F_WRLCK, 39, 1), EAGAIN);
  EXPECT_EQ(Lock(fd_b_, F_WRLCK, 60, 1), EAGAIN);
}

TEST_F(FuseLocksTest, ReadLocksAreSharedAcrossClients) {
  ASSERT_EQ(Lock(fd_a_, F_RDLCK, 0, 0), 0);
  EXPECT_EQ(Lock(fd_b_, F_RDLCK, 0, 0), 0);
  EXPECT_EQ(Lock(fd_a_, F_WRLCK, 0, 1), EAGAIN) << "an upgrade waits for B's read lock";
  ASSERT_EQ(Lock(fd_b_, F_UNLCK, 0, 0), 0);
  EXPECT_EQ(Lock(fd_a_, F_WRLCK, 0, 1), 0);
}

TEST_F(FuseLocksTest, ProcessesOfOneClientConflictAndTheirLocksGoWhenTheyExit) {
  ASSERT_EQ(Lock(fd_a_, F_WRLCK, 0, 10), 0);
  // Another process on the same mount is another owner.
  EXPECT_EQ(InChild([&] { return Lock(fd_a_, F_WRLCK, 5, 1); }), EAGAIN);
  EXPECT_EQ(InChild([&] { return Holder(fd_a_, F_WRLCK, 5, 1).l_pid == getppid() ? 0 : 1; }), 0)
      << "F_GETLK names a holder of this client by its pid";
  ASSERT_EQ(Lock(fd_a_, F_UNLCK, 0, 10), 0);
  // A process that exits holding a lock (no unlock, no explicit close) loses it.
  ASSERT_EQ(InChild([&] {
              const int fd = open((*a_ / name_).c_str(), O_RDWR);
              return fd < 0 ? 100 : Lock(fd, F_WRLCK, 0, 0);
            }),
            0);
  EXPECT_EQ(Lock(fd_b_, F_WRLCK, 0, 0), 0);
}

TEST_F(FuseLocksTest, ClosingAnyDescriptorOfTheFileDropsTheProcesssLocks) {
  ASSERT_EQ(Lock(fd_a_, F_WRLCK, 0, 0), 0);
  const int other = open((*a_ / name_).c_str(), O_RDONLY);
  ASSERT_GE(other, 0);
  ASSERT_EQ(close(other), 0);  // POSIX: the lock taken through fd_a_ goes too
  EXPECT_EQ(Lock(fd_b_, F_WRLCK, 0, 0), 0);
}

TEST_F(FuseLocksTest, AWaitingLockIsGrantedOnceTheOtherClientUnlocks) {
  ASSERT_EQ(Lock(fd_a_, F_WRLCK, 0, 0), 0);
  std::atomic<bool> granted = false;
  int result = -1;
  std::thread waiter([&] {
    result = Lock(fd_b_, F_WRLCK, 0, 0, /*wait=*/true);
    granted = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_FALSE(granted) << "granted while A held the lock";
  ASSERT_EQ(Lock(fd_a_, F_UNLCK, 0, 0), 0);
  waiter.join();
  EXPECT_EQ(result, 0);
  EXPECT_EQ(Lock(fd_a_, F_RDLCK, 0, 1), EAGAIN) << "B holds it now";
}

TEST_F(FuseLocksTest, AWaitEndsWithEintrWhenASignalComes) {
  ASSERT_EQ(Lock(fd_a_, F_WRLCK, 0, 0), 0);
  const int child = InChild([&] {
    struct sigaction on_alarm {};
    on_alarm.sa_handler = [](int) {};  // no SA_RESTART: the wait returns EINTR
    sigaction(SIGALRM, &on_alarm, nullptr);
    alarm(1);
    return Lock(fd_b_, F_WRLCK, 0, 0, /*wait=*/true);
  });
  EXPECT_EQ(child, EINTR);
  EXPECT_EQ(Holder(fd_b_, F_WRLCK, 0, 0).l_type, F_WRLCK) << "A still holds it";
}

TEST_F(FuseLocksTest, FlockHoldsAcrossClientsUntilTheOpenFileCloses) {
  ASSERT_EQ(Flock(fd_a_, LOCK_EX | LOCK_NB), 0);
  EXPECT_EQ(Flock(fd_b_, LOCK_SH | LOCK_NB), EWOULDBLOCK);
  EXPECT_EQ(Lock(fd_b_, F_WRLCK, 0, 0), 0) << "flock and fcntl locks are apart, as on Linux";
  ASSERT_EQ(Lock(fd_b_, F_UNLCK, 0, 0), 0);
  ASSERT_EQ(Flock(fd_a_, LOCK_SH), 0) << "a conversion";
  EXPECT_EQ(Flock(fd_b_, LOCK_SH | LOCK_NB), 0);
  EXPECT_EQ(Flock(fd_a_, LOCK_EX | LOCK_NB), EWOULDBLOCK);
  ASSERT_EQ(Flock(fd_b_, LOCK_UN), 0);
  ASSERT_EQ(Flock(fd_a_, LOCK_EX | LOCK_NB), 0);
  close(fd_a_);  // the last descriptor of the open file: its flock goes
  fd_a_ = -1;
  // Linux passes that on as the file's release, after close(2) returned: B waits for it.
  EXPECT_EQ(Flock(fd_b_, LOCK_EX), 0);
}

TEST_F(FuseLocksTest, WhatTheHolderWroteBeforeUnlockingIsWhatTheNextHolderReads) {
  // Both keep the file open all along (no close-to-open): the lock alone orders them, as a
  // database's processes on two hosts.
  char buf[4096];
  ASSERT_EQ(pread(fd_b_, buf, sizeof buf, 0), 4096);  // B's caches hold the old bytes
  for (int round = 0; round < 5; ++round) {
    const int writer = round % 2 == 0 ? fd_a_ : fd_b_;
    const int reader = round % 2 == 0 ? fd_b_ : fd_a_;
    ASSERT_EQ(Lock(writer, F_WRLCK, 0, 0, true), 0);
    const std::string data(4096 + round * 1000, static_cast<char>('a' + round));
    ASSERT_TRUE(WriteFull(writer, data, 0));
    ASSERT_EQ(Lock(writer, F_UNLCK, 0, 0), 0);
    ASSERT_EQ(Lock(reader, F_RDLCK, 0, 0, true), 0);
    std::string got(data.size() + 10, '\0');
    ASSERT_EQ(pread(reader, got.data(), got.size(), 0), static_cast<ssize_t>(data.size()))
        << "round " << round;
    got.resize(data.size());
    EXPECT_EQ(got, data) << "round " << round;
    ASSERT_EQ(Lock(reader, F_UNLCK, 0, 0), 0);
  }
}

TEST_F(FuseLocksTest, AKilledClientsLocksGoOnceItsLeaseRunsOut) {
  TestMount dying(cluster_, kFnso, kMountFlags);
  const int fd = open((dying / name_).c_str(), O_RDWR);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_EQ(Lock(fd, F_WRLCK, 0, 0), 0);
  ASSERT_EQ(Flock(fd, LOCK_EX), 0);
  const std::string ns = "{fnso=\"1\"}";
  auto metric = [&](const std::map<std::string, double>& m, const std::string& name) {
    return m.at("orthofs_client_" + name + ns);
  };
  const std::map<std::string, double> at_start = ScrapeMetrics(metrics_port_);
  // B sees the session now and again past the lease: it beat in between.
  EXPECT_EQ(Lock(fd_b_, F_WRLCK, 0, 0), EAGAIN);
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  EXPECT_EQ(Lock(fd_b_, F_WRLCK, 0, 0), EAGAIN) << "a live client's locks outlast the lease";
  EXPECT_EQ(Flock(fd_b_, LOCK_SH | LOCK_NB), EWOULDBLOCK);
  dying.Kill();  // no close: the client dies holding both
  close(fd);     // the connection is gone: nothing reaches a mount
  const std::map<std::string, double> before = ScrapeMetrics(metrics_port_);
  EXPECT_EQ(metric(before, "locks_refused_total") - metric(at_start, "locks_refused_total"), 3);
  // The first try finds the dead client's session as last seen; waiting outlasts the lease.
  EXPECT_EQ(Lock(fd_b_, F_WRLCK, 0, 0, /*wait=*/true), 0);
  EXPECT_EQ(Flock(fd_b_, LOCK_SH), 0);
  const std::map<std::string, double> after = ScrapeMetrics(metrics_port_);
  EXPECT_EQ(
      metric(after, "locks_taken_from_dead_total") - metric(before, "locks_taken_from_dead_total"),
      1)
      << "one table held both of the dead client's locks";
  EXPECT_EQ(metric(after, "locks_granted_total") - metric(before, "locks_granted_total"), 2);
  EXPECT_EQ(metric(after, "locked_files"), 1);
}

TEST_F(FuseLocksTest, TwoSharedFlocksConvertingToExclusiveDoNotDeadlock) {
  ASSERT_EQ(Flock(fd_a_, LOCK_SH), 0);
  ASSERT_EQ(Flock(fd_b_, LOCK_SH), 0);
  int b_result = -1;
  std::thread b([&] { b_result = Flock(fd_b_, LOCK_EX); });
  // B waits, and gives up its shared lock while it does (as Linux does): A's conversion then
  // goes through.
  int a_result = EWOULDBLOCK;
  for (int i = 0; i < 200 && a_result == EWOULDBLOCK; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    a_result = Flock(fd_a_, LOCK_EX | LOCK_NB);
  }
  EXPECT_EQ(a_result, 0);
  ASSERT_EQ(Flock(fd_a_, LOCK_UN), 0);
  b.join();
  EXPECT_EQ(b_result, 0);
}

TEST_F(FuseLocksTest, LocalLocksHoldWithinTheirMountOnly) {
  TestMount local(cluster_, kFnso, {"--local-locks"});
  const int fd = open((local / name_).c_str(), O_RDWR);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_EQ(Lock(fd, F_WRLCK, 0, 0), 0);
  EXPECT_EQ(InChild([&] { return Lock(fd, F_WRLCK, 0, 0); }), EAGAIN) << "its kernel's lock";
  EXPECT_EQ(Lock(fd_b_, F_WRLCK, 0, 0), 0) << "no other client sees it";
  EXPECT_EQ(Lock(fd, F_WRLCK, 0, 0), 0) << "nor does it see theirs";
  close(fd);
}

TEST_F(FuseLocksTest, SqliteWritersOnTwoClientsLoseNoUpdate) {
  // Two clients of the default lease (15 s). With the suite's 2 s one, a machine loaded enough
  // to hold back a holder's beats (every 400 ms) for 2 s hands its lock to the other writer,
  // the lease's documented risk: a CI run under ctest -j2 once lost one update that way.
  TestMount one(cluster_, kFnso);
  TestMount two(cluster_, kFnso);
  const std::string script = SourceDir() + "/tests/sqlite_shared_writer.py";
  const std::string db = name_ + ".db";
  CommandResult init = RunCommand({"/usr/bin/python3", script, one / db, "init"});
  ASSERT_EQ(init.exit_code, 0) << init.err;
  CommandResult from_a, from_b;
  std::thread a([&] {
    from_a = RunCommand({"/usr/bin/python3", script, one / db, "write", "a", "150"});
  });
  std::thread b([&] {
    from_b = RunCommand({"/usr/bin/python3", script, two / db, "write", "b", "150"});
  });
  a.join();
  b.join();
  ASSERT_EQ(from_a.exit_code, 0) << from_a.err;
  ASSERT_EQ(from_b.exit_code, 0) << from_b.err;
  for (const TestMount* m : {&one, &two}) {
    CommandResult check = RunCommand({"/usr/bin/python3", script, *m / db, "check"});
    ASSERT_EQ(check.exit_code, 0) << check.err;
    EXPECT_EQ(check.out, "ok 300 300 a:150:0-149,b:150:0-149\n") << m->path();
  }
}

TEST_F(FuseLocksTest, FsckCollectsTheLocksOfARemovedFileAndKeepsLiveSessions) {
  // Another client removes the file while A holds a lock on it: the lock object stays until
  // A unlocks, or fsck collects it.
  ASSERT_EQ(Lock(fd_a_, F_WRLCK, 0, 0), 0);
  close(fd_b_);
  fd_b_ = -1;
  ASSERT_EQ(unlink((*b_ / name_).c_str()), 0);
  // B frees the file's data objects after the unlink answered; statfs waits for that (`df`
  // right after `rm` counts the space), so fsck finds only the lock object left over.
  struct statvfs sv {};
  ASSERT_EQ(statvfs(b_->path().c_str(), &sv), 0) << std::strerror(errno);
  auto fsck = [&] {
    CommandResult run =
        cluster_->Orthofs("fsck", {"--fnso", std::to_string(kFnso), "--json", "--grace", "0"});
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return nlohmann::json::parse(run.out);
  };
  const nlohmann::json first = fsck();
  EXPECT_EQ(first["dangling_entries"], 0) << first;
  EXPECT_EQ(first["orphan_objects"], 1) << "the removed file's lock object: " << first;
  EXPECT_GE(first["lock_sessions"], 1) << "A's session, at least";
  const nlohmann::json second = fsck();
  EXPECT_EQ(second["orphan_objects"], 0) << second;
  EXPECT_EQ(second["lock_sessions"], first["lock_sessions"]) << "no live session is collected";
  // A's lock on a file gone: the unlock finds nothing and succeeds.
  EXPECT_EQ(Lock(fd_a_, F_UNLCK, 0, 0), 0);
}

}  // namespace
}  // namespace orthofs::testing
