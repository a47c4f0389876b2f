// Two clients of one namespace: one TestCluster (3 OSDs) and two independent mounts A and B
// of the same fnso, shared by the suite; every test works in its own subdirectory, made
// through A. The clients share nothing but the objects on the OSDs, so everything here goes
// through the namespace's optimistic concurrency (conditional writes + retry) and the
// close-to-open consistency of the FUSE client.
//
// The kernel of each client may trust attributes and entries it got from its own mount for
// up to 1 s (attr/entry timeout). Wherever one client checks what the other did, it waits
// kCacheTimeout first, so a stale answer is never the kernel's documented cache window.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <latch>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/inode.h"
#include "common/oid.h"
#include "tests/posix_files.h"
#include "tests/test_cluster.h"

namespace orthofs::testing {
namespace {

constexpr uint32_t kFnso = 1;
// Longer than the 1 s attribute/entry timeout the mount gives the kernel.
constexpr auto kCacheTimeout = std::chrono::milliseconds(1200);

// Names without "." and "..".
std::multiset<std::string> Names(const std::string& path) { return ListDir(path, false); }

// Replaces a file's content in place (same inode), the way an editor's '>' does.
void RewriteFile(const std::string& path, const std::string& data) {
  int fd = open(path.c_str(), O_WRONLY | O_TRUNC);
  ASSERT_GE(fd, 0) << "open " << path << ": " << std::strerror(errno);
  ASSERT_TRUE(WriteFull(fd, data, 0)) << "write " << path << ": " << std::strerror(errno);
  ASSERT_EQ(close(fd), 0) << "close " << path << ": " << std::strerror(errno);
}

// What differs between two listings, for failure messages.
std::string Diff(const std::multiset<std::string>& got, const std::multiset<std::string>& want) {
  std::vector<std::string> missing, extra;
  std::set_difference(want.begin(), want.end(), got.begin(), got.end(),
                      std::back_inserter(missing));
  std::set_difference(got.begin(), got.end(), want.begin(), want.end(), std::back_inserter(extra));
  std::ostringstream out;
  out << got.size() << " names listed, " << want.size() << " expected; missing " << missing.size()
      << ":";
  for (size_t i = 0; i < missing.size() && i < 10; ++i) out << " " << missing[i];
  out << "; unexpected or duplicated " << extra.size() << ":";
  for (size_t i = 0; i < extra.size() && i < 10; ++i) out << " " << extra[i];
  return out.str();
}

std::string Name(const char* prefix, int index) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%03d", prefix, index);
  return buf;
}

class FuseMulticlientTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    umask(022);
    try {
      cluster_ = new TestCluster();
      a_ = new TestMount(cluster_, kFnso);
      b_ = new TestMount(cluster_, kFnso);
    } catch (const std::exception& e) {
      setup_error_ = new std::string(e.what());
    }
  }

  static void TearDownTestSuite() {
    delete b_;
    b_ = nullptr;
    delete a_;
    a_ = nullptr;
    delete cluster_;
    cluster_ = nullptr;
    delete setup_error_;
    setup_error_ = nullptr;
  }

  void SetUp() override {
    ASSERT_EQ(setup_error_, nullptr) << *setup_error_;
    ASSERT_NE(a_, nullptr);
    ASSERT_NE(b_, nullptr);
    ASSERT_NE(a_->path(), b_->path());
    name_ = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ASSERT_EQ(mkdir((*a_ / name_).c_str(), 0755), 0) << name_ << ": " << std::strerror(errno);
  }

  // A path inside this test's directory, through client A or B.
  std::string A(const std::string& relative) const { return *a_ / (name_ + "/" + relative); }
  std::string B(const std::string& relative) const { return *b_ / (name_ + "/" + relative); }
  std::string DirA() const { return *a_ / name_; }
  std::string DirB() const { return *b_ / name_; }

  static void WaitForCaches() { std::this_thread::sleep_for(kCacheTimeout); }
  // A writes `data` to `name`; B, once its caches let it see that, opens it to read (-1 and a
  // test failure if it cannot).
  int OpenInBWhatAWrote(const std::string& name, const std::string& data) {
    CreateFile(A(name), data);
    WaitForCaches();
    const int fd = open(B(name).c_str(), O_RDONLY);
    EXPECT_GE(fd, 0) << std::strerror(errno);
    return fd;
  }

  static TestCluster* cluster_;
  static TestMount* a_;
  static TestMount* b_;
  static std::string* setup_error_;
  std::string name_;
};

TestCluster* FuseMulticlientTest::cluster_ = nullptr;
TestMount* FuseMulticlientTest::a_ = nullptr;
TestMount* FuseMulticlientTest::b_ = nullptr;
std::string* FuseMulticlientTest::setup_error_ = nullptr;

// ---- 1. close-to-open ----

// A file written and closed through one client reads whole through the other when it opens
// the file afterwards, also after in-place rewrites (same inode) that change its length.
// Nobody holds the file open across the other client's close, and every open by the reader
// comes more than the attribute timeout after the writer's close, so close-to-open promises
// the new content exactly.
TEST_F(FuseMulticlientTest, CloseToOpenAcrossClients) {
  // 300000 bytes span three 128 KiB objects.
  const std::string v1 = RandomBytes(300000, 1);
  CreateFile(A("f"), v1);
  {
    SCOPED_TRACE("created through A, first read through B");
    const std::string got = ReadFile(B("f"));
    EXPECT_TRUE(got == v1) << Mismatch(got, v1);
  }

  // Longer: B has the inode (with the old size) in its kernel from the read above.
  const std::string v2 = RandomBytes(500000, 2);
  RewriteFile(A("f"), v2);
  WaitForCaches();
  {
    SCOPED_TRACE("rewritten longer through A, read again through B");
    EXPECT_EQ(FreshStat(B("f")).st_size, static_cast<off_t>(v2.size()))
        << "B's size after A's close";
    const std::string got = ReadFile(B("f"));
    EXPECT_TRUE(got == v2) << Mismatch(got, v2);
  }

  // Shorter.
  const std::string v3 = RandomBytes(1000, 3);
  RewriteFile(A("f"), v3);
  WaitForCaches();
  {
    SCOPED_TRACE("rewritten shorter through A, read again through B");
    EXPECT_EQ(FreshStat(B("f")).st_size, static_cast<off_t>(v3.size()))
        << "B's size after A's close";
    const std::string got = ReadFile(B("f"));
    EXPECT_TRUE(got == v3) << Mismatch(got, v3);
  }

  // And the other way round: A, which wrote every version so far, reads B's.
  const std::string v4 = RandomBytes(200000, 4);
  RewriteFile(B("f"), v4);
  WaitForCaches();
  {
    SCOPED_TRACE("rewritten through B, read through A");
    EXPECT_EQ(FreshStat(A("f")).st_size, static_cast<off_t>(v4.size()))
        << "A's size after B's close";
    const std::string got = ReadFile(A("f"));
    EXPECT_TRUE(got == v4) << Mismatch(got, v4);
  }

  // A file the reader never looked up before: nothing cached, so this part isolates the
  // data path from attribute caching.
  const std::string g = RandomBytes(400000, 5);
  CreateFile(A("g"), g);
  {
    SCOPED_TRACE("new file through A, first read through B");
    const std::string got = ReadFile(B("g"));
    EXPECT_TRUE(got == g) << Mismatch(got, g);
  }
}

// An append through one client right after the other client's close lands after the other
// client's bytes, though its kernel still has the shorter size it saw before (close-to-open:
// the open reads the INODE; the kernel would have appended at its own cached size).
TEST_F(FuseMulticlientTest, AppendRightAfterTheOtherClientsCloseLandsAtTheEnd) {
  std::string model = "first line\n";
  CreateFile(A("log"), model);
  auto append = [](const std::string& path, const std::string& line) {
    int fd = open(path.c_str(), O_WRONLY | O_APPEND);
    ASSERT_GE(fd, 0) << "open " << path << ": " << std::strerror(errno);
    ASSERT_EQ(write(fd, line.data(), line.size()), static_cast<ssize_t>(line.size()))
        << "append to " << path << ": " << std::strerror(errno);
    ASSERT_EQ(close(fd), 0) << "close " << path << ": " << std::strerror(errno);
  };
  for (int round = 0; round < 5; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    ASSERT_TRUE(ReadFile(B("log")) == model);  // B's kernel has the size as of now
    const std::string through_a = "A's line " + std::to_string(round) + "\n";
    append(A("log"), through_a);
    const std::string through_b = "B's line " + std::to_string(round) + "\n";
    // Through a descriptor that reads too: what it reads back where B's kernel believed the
    // end was is A's line, not bytes of its own the kernel kept there.
    int fd = open(B("log").c_str(), O_RDWR | O_APPEND);
    ASSERT_GE(fd, 0) << "open through B: " << std::strerror(errno);
    ASSERT_EQ(write(fd, through_b.data(), through_b.size()), static_cast<ssize_t>(through_b.size()))
        << "append through B: " << std::strerror(errno);
    std::string back(through_a.size(), '\0');
    EXPECT_EQ(pread(fd, back.data(), back.size(), static_cast<off_t>(model.size())),
              static_cast<ssize_t>(back.size()));
    EXPECT_EQ(back, through_a) << "read back through B's appending descriptor";
    ASSERT_EQ(close(fd), 0) << std::strerror(errno);
    model += through_a + through_b;
    EXPECT_EQ(ReadFile(B("log")), model) << "read through B";
    EXPECT_EQ(ReadFile(A("log")), model) << "read through A";
    EXPECT_EQ(FreshStat(B("log")).st_size, static_cast<off_t>(model.size()));
  }
}

// A name the other client removed and made again refers to the new file at once, although this
// client's kernel still holds the name's old inode: the mount answers ESTALE for the old one,
// and the kernel looks the name up again instead of failing with ENOENT.
TEST_F(FuseMulticlientTest, NameRemadeByTheOtherClientOpensTheNewFile) {
  for (int round = 0; round < 5; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const std::string old_content = RandomBytes(1000 + round, 40 + round);
    const std::string new_content = RandomBytes(3000 + round, 50 + round);
    CreateFile(A("f"), old_content);
    ASSERT_TRUE(ReadFile(B("f")) == old_content);  // B's kernel caches the name and inode
    ASSERT_EQ(unlink(A("f").c_str()), 0) << std::strerror(errno);
    CreateFile(A("f"), new_content);
    struct stat st;
    ASSERT_EQ(stat(B("f").c_str(), &st), 0) << "stat through B: " << std::strerror(errno);
    EXPECT_EQ(st.st_size, static_cast<off_t>(new_content.size()));
    const std::string got = ReadFile(B("f"));
    EXPECT_TRUE(got == new_content) << "read through B: " << Mismatch(got, new_content);
    ASSERT_EQ(unlink(B("f").c_str()), 0) << std::strerror(errno);
  }
}

// A file the other client made shorter reads to its new end right after that client's close,
// though this client's kernel still holds the old, larger size: reads at the start and past
// the new end at once get exactly the new bytes and nothing, not zeros up to a size the
// short answer to the later read made up (Linux takes whichever short answer comes first as
// the size; common/kernel_sizes.h).
TEST_F(FuseMulticlientTest, ShrunkByTheOtherClientReadsToTheNewEnd) {
  for (int round = 0; round < 10; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const std::string long_content = RandomBytes(3 * 1048576 + 77, 60 + round);
    const std::string short_content = RandomBytes(1234 + round, 70 + round);
    CreateFile(A("f"), long_content);
    ASSERT_EQ(FreshStat(B("f")).st_size, static_cast<off_t>(long_content.size()));
    RewriteFile(A("f"), short_content);
    int fd = open(B("f").c_str(), O_RDONLY);
    ASSERT_GE(fd, 0) << "open through B: " << std::strerror(errno);
    // Two readers of the one descriptor: the start of the file and 2 MiB in.
    std::string head(131072, '\0');
    std::string far(131072, '\0');
    ssize_t head_read = -1;
    ssize_t far_read = -1;
    std::latch start(2);
    std::thread far_reader([&] {
      start.arrive_and_wait();
      far_read = pread(fd, far.data(), far.size(), 2 * 1048576);
    });
    start.arrive_and_wait();
    head_read = pread(fd, head.data(), head.size(), 0);
    far_reader.join();
    ASSERT_EQ(close(fd), 0);
    EXPECT_EQ(far_read, 0) << "read past the new end";
    ASSERT_GE(head_read, 0) << "read of the start: " << std::strerror(errno);
    head.resize(static_cast<size_t>(head_read));
    EXPECT_TRUE(head == short_content) << "the start: " << Mismatch(head, short_content);
    const std::string got = ReadFile(B("f"));
    EXPECT_TRUE(got == short_content) << "read again through B: " << Mismatch(got, short_content);
    EXPECT_EQ(FreshStat(B("f")).st_size, static_cast<off_t>(short_content.size()));
    ASSERT_EQ(unlink(A("f").c_str()), 0) << std::strerror(errno);
  }
}

// A hole punched through one client reads as zeros through the other at its next open, though
// that client had read (and cached) the old bytes: the punch publishes a new mtime at once,
// before the puncher closes the file.
TEST_F(FuseMulticlientTest, HolePunchedByTheOtherClientReadsAsZeros) {
  const std::string content = RandomBytes(300000, 80);
  CreateFile(A("f"), content);
  ASSERT_TRUE(ReadFile(B("f")) == content);
  Fd fd(open(A("f").c_str(), O_WRONLY));
  ASSERT_GE(fd.get(), 0) << std::strerror(errno);
  // Object 1 goes whole, objects 0 and 2 keep their other bytes.
  ASSERT_EQ(fallocate(fd.get(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 1000, 298000), 0)
      << std::strerror(errno);
  WaitForCaches();
  std::string expected = content;
  std::fill(expected.begin() + 1000, expected.begin() + 299000, '\0');
  const std::string got = ReadFile(B("f"));
  EXPECT_TRUE(got == expected) << Mismatch(got, expected);
  ASSERT_EQ(fd.Close(), 0);
}

// Without --negative-timeout a name another client creates is seen at once; with it, a client
// that looked the name up before keeps it missing for that long, then sees it. Its own create of
// a name it found missing works at once, and so does an open with O_CREAT (no O_EXCL) of a name
// it takes for missing that another client made meanwhile: it opens that file.
TEST_F(FuseMulticlientTest, NegativeTimeoutKeepsAMissingNameMissingThatLong) {
  constexpr double kTimeout = 3;
  TestMount c(cluster_, kFnso, {"-o", "negative_timeout=3"});
  const std::string c_dir = c / name_;
  struct stat st;
  EXPECT_EQ(Errno(stat(B("new").c_str(), &st)), "ENOENT");
  const auto before_lookup = std::chrono::steady_clock::now();
  EXPECT_EQ(Errno(stat((c_dir + "/new").c_str(), &st)), "ENOENT");
  CreateFile(A("new"), "made by A");
  EXPECT_EQ(Errno(stat(B("new").c_str(), &st)), "OK") << "the default asks every time";
  const std::string missing_for_c = Errno(stat((c_dir + "/new").c_str(), &st));
  if (std::chrono::steady_clock::now() - before_lookup <
      std::chrono::duration<double>(kTimeout)) {  // a machine this slow could not tell
    EXPECT_EQ(missing_for_c, "ENOENT") << "C remembers the name missing";
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(kTimeout + 0.5));
  EXPECT_EQ(Errno(stat((c_dir + "/new").c_str(), &st)), "OK") << "after the timeout";
  EXPECT_EQ(ReadFile(c_dir + "/new"), "made by A");

  EXPECT_EQ(Errno(stat((c_dir + "/own").c_str(), &st)), "ENOENT");
  CreateFile(c_dir + "/own", "made by C");
  EXPECT_EQ(ReadFile(c_dir + "/own"), "made by C");
  EXPECT_EQ(ReadFile(A("own")), "made by C");

  // ">>" on a name C takes for missing, which A has made since.
  EXPECT_EQ(Errno(stat((c_dir + "/log").c_str(), &st)), "ENOENT");
  CreateFile(A("log"), "A's line\n");
  Fd fd(open((c_dir + "/log").c_str(), O_CREAT | O_WRONLY | O_APPEND, 0644));
  ASSERT_GE(fd.get(), 0) << "open(O_CREAT) of a file made elsewhere: " << std::strerror(errno);
  ASSERT_EQ(write(fd.get(), "C's line\n", 9), 9) << std::strerror(errno);
  ASSERT_EQ(fd.Close(), 0);
  EXPECT_EQ(ReadFile(A("log")), "A's line\nC's line\n");
  EXPECT_EQ(Errno(open((c_dir + "/log").c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644)), "EEXIST");
}

// ---- 2. concurrent creates in one directory ----

TEST_F(FuseMulticlientTest, ConcurrentCreatesInOneDirectoryFromBothClients) {
  constexpr int kThreadsPerClient = 4;
  constexpr int kFilesPerThread = 250;
  ASSERT_EQ(mkdir(A("d").c_str(), 0755), 0);

  struct Failure {
    std::string name;
    std::string error;
  };
  std::vector<std::vector<Failure>> failures(2 * kThreadsPerClient);
  std::multiset<std::string> expected;
  std::latch start(2 * kThreadsPerClient);
  std::vector<std::thread> threads;
  for (int client = 0; client < 2; ++client) {
    for (int t = 0; t < kThreadsPerClient; ++t) {
      const int slot = client * kThreadsPerClient + t;
      const std::string prefix = std::string(client == 0 ? "a" : "b") + std::to_string(t) + "-";
      const std::string dir = client == 0 ? A("d") : B("d");
      for (int i = 0; i < kFilesPerThread; ++i) expected.insert(Name(prefix.c_str(), i));
      threads.emplace_back([&, slot, prefix, dir] {
        start.arrive_and_wait();
        for (int i = 0; i < kFilesPerThread; ++i) {
          const std::string name = Name(prefix.c_str(), i);
          int fd = open((dir + "/" + name).c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
          if (fd < 0) {
            failures[slot].push_back({name, "create: " + ErrName(errno)});
            continue;
          }
          if (close(fd) != 0) failures[slot].push_back({name, "close: " + ErrName(errno)});
        }
      });
    }
  }
  for (auto& t : threads) t.join();
  size_t failed = 0;
  for (const auto& list : failures) {
    for (const auto& f : list) {
      if (++failed <= 10) ADD_FAILURE() << f.name << ": " << f.error;
    }
  }
  EXPECT_EQ(failed, 0u) << "creates or closes that failed";
  ASSERT_EQ(expected.size(), 2u * kThreadsPerClient * kFilesPerThread);

  WaitForCaches();
  const std::multiset<std::string> through_a = Names(A("d"));
  const std::multiset<std::string> through_b = Names(B("d"));
  EXPECT_TRUE(through_a == expected) << "through A: " << Diff(through_a, expected);
  EXPECT_TRUE(through_b == expected) << "through B: " << Diff(through_b, expected);
  size_t bad = 0;
  for (const std::string& name : expected) {
    for (const std::string& path : {A("d/" + name), B("d/" + name)}) {
      struct stat st;
      const std::string rc = Errno(lstat(path.c_str(), &st));
      const bool ok = rc == "OK" && S_ISREG(st.st_mode) && st.st_nlink == 1 && st.st_size == 0;
      if (!ok && ++bad <= 10) {
        ADD_FAILURE() << path << ": " << rc << " mode " << std::oct << st.st_mode << std::dec
                      << " nlink " << st.st_nlink;
      }
    }
  }
  EXPECT_EQ(bad, 0u) << "names that did not stat as empty regular files";
  // Files add no links to their directory.
  EXPECT_EQ(FreshStat(A("d")).st_nlink, 2u);
  EXPECT_EQ(FreshStat(B("d")).st_nlink, 2u);
}

// ---- 3. concurrent renames between directories ----

TEST_F(FuseMulticlientTest, ConcurrentRenamesBetweenDirectories) {
  constexpr int kFiles = 200;
  for (const char* d : {"X", "Y", "Z"}) ASSERT_EQ(mkdir(A(d).c_str(), 0755), 0) << d;
  // Each file holds its own index.
  for (int i = 0; i < kFiles; ++i) {
    ASSERT_NO_FATAL_FAILURE(CreateFile(A("X/" + Name("f", i)), std::to_string(i) + "\n"));
  }

  // Renames [first, last) from one directory to another through `dir` (A's or B's view of
  // the test directory); the errors come back as "name: ERRNO".
  auto mover = [](std::string dir, const char* from, const char* to, int first, int last,
                  std::latch* start, std::vector<std::string>* errors) {
    return std::thread([=] {
      start->arrive_and_wait();
      for (int i = first; i < last; ++i) {
        const std::string name = Name("f", i);
        const std::string src = dir + "/" + from + "/" + name;
        const std::string dst = dir + "/" + to + "/" + name;
        if (rename(src.c_str(), dst.c_str()) != 0) {
          errors->push_back(name + " " + from + "->" + to + ": " + ErrName(errno));
        }
      }
    });
  };

  std::vector<std::string> errors_a, errors_b;
  {
    // Phase 1: A moves 0..99 and B moves 100..199 from X to Y.
    std::latch start(2);
    std::thread ta = mover(DirA(), "X", "Y", 0, 100, &start, &errors_a);
    std::thread tb = mover(DirB(), "X", "Y", 100, 200, &start, &errors_b);
    ta.join();
    tb.join();
  }
  {
    // Phase 2: A moves 0..49 and B moves 100..149 on from Y to Z.
    std::latch start(2);
    std::thread ta = mover(DirA(), "Y", "Z", 0, 50, &start, &errors_a);
    std::thread tb = mover(DirB(), "Y", "Z", 100, 150, &start, &errors_b);
    ta.join();
    tb.join();
  }
  for (const auto& e : errors_a) ADD_FAILURE() << "through A: " << e;
  for (const auto& e : errors_b) ADD_FAILURE() << "through B: " << e;

  std::multiset<std::string> want_y, want_z;
  for (int i = 50; i < 100; ++i) want_y.insert(Name("f", i));
  for (int i = 150; i < 200; ++i) want_y.insert(Name("f", i));
  for (int i = 0; i < 50; ++i) want_z.insert(Name("f", i));
  for (int i = 100; i < 150; ++i) want_z.insert(Name("f", i));

  WaitForCaches();
  for (const auto& [label, dir] : {std::pair<std::string, std::string>{"A", DirA()},
                                   std::pair<std::string, std::string>{"B", DirB()}}) {
    SCOPED_TRACE("through " + label);
    const auto x = Names(dir + "/X");
    const auto y = Names(dir + "/Y");
    const auto z = Names(dir + "/Z");
    EXPECT_TRUE(x.empty()) << "X: " << Diff(x, {});
    EXPECT_TRUE(y == want_y) << "Y: " << Diff(y, want_y);
    EXPECT_TRUE(z == want_z) << "Z: " << Diff(z, want_z);
    EXPECT_EQ((Names(dir)), (std::multiset<std::string>{"X", "Y", "Z"}));
    for (const auto& [sub, names] :
         {std::pair<std::string, const std::multiset<std::string>*>{"Y", &want_y},
          {"Z", &want_z}}) {
      for (const std::string& name : *names) {
        const std::string path = dir + "/" + sub + "/" + name;
        const int index = std::stoi(name.substr(1));
        std::string got;
        try {
          got = ReadFile(path);
        } catch (const std::exception& e) {
          ADD_FAILURE() << e.what();
          continue;
        }
        EXPECT_EQ(got, std::to_string(index) + "\n") << path;
        const struct stat st = FreshStat(path);
        EXPECT_TRUE(S_ISREG(st.st_mode)) << path;
        EXPECT_EQ(st.st_nlink, 1u) << path;
      }
    }
    // Moving files changes no directory's link count.
    EXPECT_EQ(FreshStat(dir).st_nlink, 5u);
    for (const char* d : {"X", "Y", "Z"}) EXPECT_EQ(FreshStat(dir + "/" + d).st_nlink, 2u) << d;
  }
}

// Two directories moved into each other at once, one by each client (mv P Q/ beside
// mv Q P/): one move wins and the other fails (EINVAL, or ENOENT), never both succeed, which would
// leave P and Q in a cycle cut off from the root (Namespace's move lease and recorded
// parents).
TEST_F(FuseMulticlientTest, DirectoriesMovedIntoEachOtherStayReachable) {
  constexpr int kRounds = 20;
  std::vector<std::string> outcomes;
  for (int i = 0; i < kRounds; ++i) {
    const std::string p = Name("P", i), q = Name("Q", i);
    ASSERT_EQ(mkdir(A(p).c_str(), 0755), 0) << p;
    ASSERT_EQ(mkdir(A(q).c_str(), 0755), 0) << q;
    ASSERT_NO_FATAL_FAILURE(CreateFile(A(p + "/in-p"), "p"));
    ASSERT_NO_FATAL_FAILURE(CreateFile(A(q + "/in-q"), "q"));
  }
  WaitForCaches();  // B sees every P and Q
  for (int i = 0; i < kRounds; ++i) {
    const std::string p = Name("P", i), q = Name("Q", i);
    std::latch start(2);
    int a_errno = 0, b_errno = 0;
    std::thread ta([&] {
      start.arrive_and_wait();
      if (rename(A(p).c_str(), A(q + "/" + p).c_str()) != 0) a_errno = errno;
    });
    std::thread tb([&] {
      start.arrive_and_wait();
      if (rename(B(q).c_str(), B(p + "/" + q).c_str()) != 0) b_errno = errno;
    });
    ta.join();
    tb.join();
    outcomes.push_back(p + ": A " + (a_errno ? ErrName(a_errno) : "OK") + ", B " +
                       (b_errno ? ErrName(b_errno) : "OK"));
    // The second finds it would move its directory into itself (EINVAL), or, when its kernel
    // looked the path up again after the first move, finds the target's parent gone from the
    // top (ENOENT).
    auto lost = [](int e) { return e == EINVAL || e == ENOENT; };
    EXPECT_TRUE((a_errno == 0 && lost(b_errno)) || (lost(a_errno) && b_errno == 0))
        << outcomes.back();
  }
  WaitForCaches();
  const std::multiset<std::string> top = Names(DirA());
  for (int i = 0; i < kRounds; ++i) {
    const std::string p = Name("P", i), q = Name("Q", i);
    SCOPED_TRACE(outcomes[i]);
    // Exactly one at the top (the other inside it), or both if both moves failed.
    const bool p_top = top.count(p) == 1, q_top = top.count(q) == 1;
    ASSERT_TRUE(p_top || q_top) << p << " and " << q << " are cut off from the root";
    const std::string p_path = p_top ? A(p) : A(q + "/" + p);
    const std::string q_path = q_top ? A(q) : A(p + "/" + q);
    EXPECT_EQ(ReadFile(p_path + "/in-p"), "p");
    EXPECT_EQ(ReadFile(q_path + "/in-q"), "q");
  }
}

// ---- 4. the same name created exclusively by both clients at once ----

TEST_F(FuseMulticlientTest, ExclusiveCreateOfTheSameNameHasOneWinner) {
  constexpr int kNames = 50;
  // results[client][i]: "OK" or the errno name of client's O_EXCL create of name i.
  std::vector<std::vector<std::string>> results(2, std::vector<std::string>(kNames));
  std::barrier sync(2);
  auto racer = [&](int client, std::string dir) {
    return std::thread([&, client, dir] {
      for (int i = 0; i < kNames; ++i) {
        const std::string path = dir + "/" + Name("n", i);
        sync.arrive_and_wait();  // both clients go for the same name together
        int fd = open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
        if (fd < 0) {
          results[client][i] = ErrName(errno);
          continue;
        }
        // The winner writes its mark through the descriptor it got.
        const std::string mark = client == 0 ? "A" : "B";
        const bool wrote = WriteFull(fd, mark, 0);
        const int write_err = errno;
        if (close(fd) != 0) {
          results[client][i] = "close: " + ErrName(errno);
        } else {
          results[client][i] = wrote ? "OK" : "write: " + ErrName(write_err);
        }
      }
    });
  };
  std::thread ta = racer(0, DirA());
  std::thread tb = racer(1, DirB());
  ta.join();
  tb.join();

  WaitForCaches();
  std::multiset<std::string> expected;
  for (int i = 0; i < kNames; ++i) {
    const std::string name = Name("n", i);
    expected.insert(name);
    const std::string& ra = results[0][i];
    const std::string& rb = results[1][i];
    const bool one_winner = (ra == "OK" && rb == "EEXIST") || (ra == "EEXIST" && rb == "OK");
    EXPECT_TRUE(one_winner) << name << ": A got " << ra << ", B got " << rb;
    if (!one_winner) continue;
    // The file in the namespace is the one the winner's descriptor wrote to (read through
    // the winner: whether the loser's kernel cached the inode while it was still empty
    // depends on timing, and what such a cached size does is CloseToOpenAcrossClients').
    const bool a_won = ra == "OK";
    const std::string& winner_path = a_won ? A(name) : B(name);
    EXPECT_EQ(ReadFile(winner_path), a_won ? "A" : "B") << name;
    const struct stat st = FreshStat(winner_path);
    EXPECT_TRUE(S_ISREG(st.st_mode)) << name;
    EXPECT_EQ(st.st_nlink, 1u) << name;
  }
  const auto through_a = Names(DirA());
  const auto through_b = Names(DirB());
  EXPECT_EQ(through_a.size(), static_cast<size_t>(kNames));
  EXPECT_TRUE(through_a == expected) << "through A: " << Diff(through_a, expected);
  EXPECT_TRUE(through_b == expected) << "through B: " << Diff(through_b, expected);
}

// ---- 5. O_APPEND from many threads of one client ----

TEST_F(FuseMulticlientTest, ConcurrentAppendsFromOneClient) {
  constexpr int kThreads = 8;
  constexpr int kLines = 200;
  CreateFile(A("log"), "");
  std::vector<std::vector<std::string>> errors(kThreads);
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Each thread has its own open file description.
      int fd = open(A("log").c_str(), O_WRONLY | O_APPEND);
      start.arrive_and_wait();
      if (fd < 0) {
        errors[t].push_back("open: " + ErrName(errno));
        return;
      }
      for (int n = 0; n < kLines; ++n) {
        const std::string line =
            "thread " + std::to_string(t) + " line " + std::to_string(n) + "\n";
        const ssize_t w = write(fd, line.data(), line.size());
        if (w != static_cast<ssize_t>(line.size())) {
          errors[t].push_back("write " + std::to_string(n) + ": " +
                              (w < 0 ? ErrName(errno) : "short, " + std::to_string(w)));
        }
      }
      if (close(fd) != 0) errors[t].push_back("close: " + ErrName(errno));
    });
  }
  for (auto& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) {
    for (const auto& e : errors[t]) ADD_FAILURE() << "thread " << t << ": " << e;
  }

  // Checks the content: every line whole, each thread's lines in order, none lost.
  auto check = [&](const std::string& content) {
    std::vector<int> next(kThreads, 0);
    std::istringstream in(content);
    std::string line;
    int lines = 0, malformed = 0;
    while (std::getline(in, line)) {
      ++lines;
      int t = -1, n = -1;
      char tail = 0;
      if (std::sscanf(line.c_str(), "thread %d line %d%c", &t, &n, &tail) != 2 || t < 0 ||
          t >= kThreads || line != "thread " + std::to_string(t) + " line " + std::to_string(n)) {
        if (++malformed <= 5) ADD_FAILURE() << "malformed line " << lines << ": '" << line << "'";
        continue;
      }
      EXPECT_EQ(n, next[t]) << "thread " << t << "'s lines out of order at line " << lines;
      next[t] = n + 1;
    }
    EXPECT_EQ(lines, kThreads * kLines);
    EXPECT_EQ(malformed, 0);
    EXPECT_TRUE(content.empty() || content.back() == '\n') << "last line cut";
    for (int t = 0; t < kThreads; ++t) EXPECT_EQ(next[t], kLines) << "thread " << t;
  };
  size_t expected_size = 0;
  for (int t = 0; t < kThreads; ++t) {
    for (int n = 0; n < kLines; ++n) {
      expected_size += ("thread " + std::to_string(t) + " line " + std::to_string(n) + "\n").size();
    }
  }
  {
    SCOPED_TRACE("through A");
    EXPECT_EQ(FreshStat(A("log")).st_size, static_cast<off_t>(expected_size));
    const std::string content = ReadFile(A("log"));
    // For a failure: what the kernel believes after the read (a short read would shrink it).
    struct stat after {};
    EXPECT_EQ(stat(A("log").c_str(), &after), 0);
    SCOPED_TRACE("read " + std::to_string(content.size()) +
                 " bytes; the kernel's size after: " + std::to_string(after.st_size));
    check(content);
  }
  // B never looked the file up: it reads what A published at its closes.
  {
    SCOPED_TRACE("through B");
    EXPECT_EQ(FreshStat(B("log")).st_size, static_cast<off_t>(expected_size));
    check(ReadFile(B("log")));
  }
}

// ---- 6. mkdir/rmdir of one name racing between the clients ----

TEST_F(FuseMulticlientTest, MkdirRmdirRaceLeavesAConsistentName) {
  constexpr int kRounds = 100;
  std::vector<std::vector<std::string>> unexpected(2);
  std::vector<std::map<std::string, int>> outcomes(2);
  std::barrier sync(2);
  auto racer = [&](int client, std::string path) {
    return std::thread([&, client, path] {
      for (int round = 0; round < kRounds; ++round) {
        sync.arrive_and_wait();
        const int made = mkdir(path.c_str(), 0755);
        const int made_err = errno;
        const int removed = rmdir(path.c_str());
        const int removed_err = errno;
        ++outcomes[client]["mkdir " + (made == 0 ? std::string("OK") : ErrName(made_err))];
        ++outcomes[client]["rmdir " + (removed == 0 ? std::string("OK") : ErrName(removed_err))];
        if (made != 0 && made_err != EEXIST && made_err != ENOENT && made_err != ENOTEMPTY) {
          unexpected[client].push_back("round " + std::to_string(round) +
                                       ": mkdir: " + ErrName(made_err));
        }
        if (removed != 0 && removed_err != EEXIST && removed_err != ENOENT &&
            removed_err != ENOTEMPTY) {
          unexpected[client].push_back("round " + std::to_string(round) +
                                       ": rmdir: " + ErrName(removed_err));
        }
      }
    });
  };
  std::thread ta = racer(0, A("d"));
  std::thread tb = racer(1, B("d"));
  ta.join();
  tb.join();
  for (int client = 0; client < 2; ++client) {
    std::ostringstream summary;
    for (const auto& [what, count] : outcomes[client]) summary << " " << what << " x" << count;
    RecordProperty(client == 0 ? "outcomes_a" : "outcomes_b", summary.str());
    for (const auto& e : unexpected[client]) {
      ADD_FAILURE() << "through " << (client == 0 ? "A" : "B") << ", " << e
                    << " (outcomes:" << summary.str() << ")";
    }
  }

  WaitForCaches();
  const auto through_a = Names(DirA());
  const auto through_b = Names(DirB());
  EXPECT_TRUE(through_a == through_b)
      << "A and B list the parent differently: " << Diff(through_a, through_b);
  EXPECT_TRUE(through_a.empty() || through_a == std::multiset<std::string>{"d"})
      << Diff(through_a, {"d"});
  const bool listed = through_a.count("d") == 1;
  for (const auto& [label, dir] : {std::pair<std::string, std::string>{"A", DirA()},
                                   std::pair<std::string, std::string>{"B", DirB()}}) {
    SCOPED_TRACE("through " + label);
    struct stat st;
    const std::string found = Errno(lstat((dir + "/d").c_str(), &st));
    if (listed) {
      ASSERT_EQ(found, "OK") << "listed but not found";
      EXPECT_TRUE(S_ISDIR(st.st_mode));
      EXPECT_TRUE(Names(dir + "/d").empty());
      EXPECT_EQ(FreshStat(dir + "/d").st_nlink, 2u);
    } else {
      EXPECT_EQ(found, "ENOENT") << "not listed but found";
    }
    // The parent counts exactly the subdirectory that is left, if any.
    EXPECT_EQ(FreshStat(dir).st_nlink, listed ? 3u : 2u);
  }

  // The name is still usable from both sides (waiting out each kernel's entry cache after
  // the other client changed the name).
  if (listed) {
    ASSERT_EQ(rmdir(B("d").c_str()), 0) << std::strerror(errno);
    WaitForCaches();
  }
  ASSERT_EQ(mkdir(A("d").c_str(), 0755), 0) << std::strerror(errno);
  WaitForCaches();
  ASSERT_EQ(rmdir(B("d").c_str()), 0) << std::strerror(errno);
  WaitForCaches();
  EXPECT_TRUE(Names(DirA()).empty());
  EXPECT_TRUE(Names(DirB()).empty());
  EXPECT_EQ(FreshStat(DirA()).st_nlink, 2u);
}

// A creates a file in directory d while B removes d, both at once: exactly one succeeds (the
// file in d and ENOTEMPTY, or d gone and ENOENT). Both used to fail when the create's entry
// came just before the rmdir's emptiness check and its parent update just after the rmdir's
// mark: the create took its entry back and the rmdir had seen it. Now the create waits for the
// rmdir to end (Namespace::kRemovalWait).
TEST_F(FuseMulticlientTest, ACreateAndAnRmdirOfItsDirectoryNeverBothFail) {
  constexpr int kRounds = 60;
  for (int i = 0; i < kRounds; ++i) ASSERT_EQ(mkdir(A(Name("d", i)).c_str(), 0755), 0);
  WaitForCaches();  // B sees every d
  std::map<std::string, int> outcomes;
  std::vector<std::string> wrong;
  for (int i = 0; i < kRounds; ++i) {
    const std::string d = Name("d", i);
    std::latch start(2);
    int created_err = 0, removed_err = 0;
    std::thread ta([&] {
      start.arrive_and_wait();
      const int fd = open(A(d + "/f").c_str(), O_CREAT | O_WRONLY, 0644);
      if (fd < 0) {
        created_err = errno;
      } else if (close(fd) != 0) {
        created_err = errno;
      }
    });
    std::thread tb([&] {
      start.arrive_and_wait();
      if (rmdir(B(d).c_str()) != 0) removed_err = errno;
    });
    ta.join();
    tb.join();
    const std::string outcome = "create " + (created_err ? ErrName(created_err) : "OK") +
                                ", rmdir " + (removed_err ? ErrName(removed_err) : "OK");
    ++outcomes[outcome];
    const bool one_won = (created_err == 0 && removed_err == ENOTEMPTY) ||
                         (created_err == ENOENT && removed_err == 0);
    if (!one_won) wrong.push_back(d + ": " + outcome);
  }
  std::ostringstream summary;
  for (const auto& [what, count] : outcomes) summary << " " << what << " x" << count;
  RecordProperty("outcomes", summary.str());
  EXPECT_TRUE(wrong.empty()) << wrong.size() << " rounds, first " << wrong.front()
                             << " (outcomes:" << summary.str() << ")";
  WaitForCaches();
  // What is left agrees with what each was told.
  const std::multiset<std::string> top = Names(DirA());
  for (int i = 0; i < kRounds; ++i) {
    const std::string d = Name("d", i);
    struct stat st;
    const std::string file = Errno(lstat(A(d + "/f").c_str(), &st));
    if (top.count(d) == 1) {
      EXPECT_EQ(file, "OK") << d << " stayed without the file";
    } else {
      EXPECT_EQ(file, "ENOENT") << d;
    }
  }
}

// B holds directory A (open); A renames it to C and makes a new A; B's rmdir of A, within its
// kernel's entry timeout, removes the new A. Before, B's mount removed the new A while B's
// kernel marked the directory it held (now C) removed: listings and lookups under C failed
// in B until the kernel dropped it. The mount now answers ESTALE to a name that names another
// directory than the one it told the kernel, and the kernel looks the name up again. The same
// holds for a rename from the name, and over it.
TEST_F(FuseMulticlientTest, AnRmdirThroughANameTheOtherClientMadeAnewLeavesTheMovedOneAlive) {
  ASSERT_EQ(mkdir(B("A").c_str(), 0755), 0) << std::strerror(errno);
  const int held = open(B("A").c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(held, 0) << std::strerror(errno);
  ASSERT_EQ(rename(A("A").c_str(), A("C").c_str()), 0) << std::strerror(errno);
  ASSERT_EQ(mkdir(A("A").c_str(), 0755), 0) << std::strerror(errno);
  EXPECT_EQ(rmdir(B("A").c_str()), 0) << std::strerror(errno);
  ASSERT_NO_FATAL_FAILURE(CreateFile(A("C/f"), "f"));
  WaitForCaches();
  EXPECT_EQ(Names(DirB()), (std::multiset<std::string>{"C"}));
  EXPECT_EQ(Names(B("C")), (std::multiset<std::string>{"f"})) << "C is dead in B";
  EXPECT_EQ(ReadFile(B("C/f")), "f");
  close(held);
  // The same through a rename of the name instead of an rmdir.
  ASSERT_EQ(mkdir(B("D").c_str(), 0755), 0) << std::strerror(errno);
  const int held_d = open(B("D").c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(held_d, 0) << std::strerror(errno);
  ASSERT_EQ(rename(A("D").c_str(), A("E").c_str()), 0) << std::strerror(errno);
  ASSERT_EQ(mkdir(A("D").c_str(), 0755), 0) << std::strerror(errno);
  EXPECT_EQ(rename(B("D").c_str(), B("F").c_str()), 0) << std::strerror(errno);
  ASSERT_NO_FATAL_FAILURE(CreateFile(A("E/g"), "g"));
  WaitForCaches();
  EXPECT_EQ(Names(DirB()), (std::multiset<std::string>{"C", "E", "F"}));
  EXPECT_EQ(Names(B("E")), (std::multiset<std::string>{"g"}));
  close(held_d);
  // And through a rename over the name. (Linux looks a rename's target up afresh, so B's
  // kernel replaces the new G, and H stays alive; this checks that the mount agrees.)
  ASSERT_EQ(mkdir(B("G").c_str(), 0755), 0) << std::strerror(errno);
  const int held_g = open(B("G").c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(held_g, 0) << std::strerror(errno);
  ASSERT_EQ(mkdir(B("S").c_str(), 0755), 0) << std::strerror(errno);
  ASSERT_EQ(rename(A("G").c_str(), A("H").c_str()), 0) << std::strerror(errno);
  ASSERT_EQ(mkdir(A("G").c_str(), 0755), 0) << std::strerror(errno);
  EXPECT_EQ(rename(B("S").c_str(), B("G").c_str()), 0) << std::strerror(errno);
  ASSERT_NO_FATAL_FAILURE(CreateFile(A("H/h"), "h"));
  WaitForCaches();
  EXPECT_EQ(Names(DirB()), (std::multiset<std::string>{"C", "E", "F", "G", "H"}));
  EXPECT_EQ(Names(B("H")), (std::multiset<std::string>{"h"})) << "H is dead in B";
  close(held_g);
}

// A removes the file B has open and is writing: B's writes succeed (the descriptor stays
// usable), its close answers ESTALE, and nothing of the file stays on the OSDs. (A freed the
// objects of the size it knew; B's later objects stayed until fsck collected them.) So does
// the close of B's other descriptor, whose bytes went too (it used to answer OK).
TEST_F(FuseMulticlientTest, AFileRemovedWhileTheOtherClientWritesLeavesNoObjects) {
  const uint64_t object_size = cluster_->client().map().object_size;
  const int fd = open(B("f").c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  const int other = open(B("f").c_str(), O_WRONLY);
  ASSERT_GE(other, 0) << std::strerror(errno);
  ASSERT_TRUE(WriteFull(other, "other", 0));
  const uint64_t fno = FreshStat(B("f")).st_ino;
  ASSERT_TRUE(WriteFull(fd, std::string(3 * object_size, 'a'), 0));
  ASSERT_EQ(fsync(fd), 0) << std::strerror(errno);  // A sees 3 objects
  WaitForCaches();
  ASSERT_EQ(unlink(A("f").c_str()), 0) << std::strerror(errno);
  ASSERT_TRUE(WriteFull(fd, std::string(8 * object_size, 'b'), 3 * object_size));
  EXPECT_EQ(Errno(close(fd)), "ESTALE");
  EXPECT_EQ(Errno(close(other)), "ESTALE");
  for (CopyFlag flag : {CopyFlag::kOriginal, CopyFlag::kReplica}) {
    auto left = cluster_->client().ListFileObjects(flag, kFnso, fno, ObjectType::kData, 0, false);
    ASSERT_TRUE(left.ok()) << left.status().ToString();
    EXPECT_TRUE(left->empty()) << left->size() << " objects of the removed file stay";
  }
}

// B opened a file, and A replaced it by a rename before B read; A has it open nowhere, so it
// freed the old file at once: the INODE when the rename answered, the data objects in the
// background (client/deferred_releases.h), done once A's statfs answers. B's read answers
// ESTALE, as NFS does. It used to answer zeros as long as the old file: its deleted objects
// read as holes.
TEST_F(FuseMulticlientTest, AReaderOfAFileTheOtherClientReplacedGetsNoZeros) {
  const uint64_t object_size = cluster_->client().map().object_size;
  const int fd = OpenInBWhatAWrote("f", std::string(3 * object_size, 'o'));
  ASSERT_GE(fd, 0);
  ASSERT_NO_FATAL_FAILURE(CreateFile(A("f.tmp"), "new"));
  ASSERT_EQ(rename(A("f.tmp").c_str(), A("f").c_str()), 0) << std::strerror(errno);
  struct statvfs space;
  ASSERT_EQ(statvfs(A("").c_str(), &space), 0) << std::strerror(errno);
  std::string buffer(object_size, '?');
  const ssize_t n = pread(fd, buffer.data(), buffer.size(), object_size);
  EXPECT_EQ(Errno(n), "ESTALE") << "read " << n << " bytes, the first "
                                << static_cast<int>(buffer[0]);
  close(fd);
  EXPECT_EQ(ReadFile(B("f")), "new");
}

// B opened a file; A then cut it short (a truncating rewrite, say) before B read. B's reads
// end at the new end, as on a local file system: B used to read zeros, as long as the size it
// saw at its open, where A's truncation had deleted the objects.
TEST_F(FuseMulticlientTest, AReaderOfAFileTheOtherClientCutShortReadsToTheNewEnd) {
  const uint64_t object_size = cluster_->client().map().object_size;
  const int fd = OpenInBWhatAWrote("f", std::string(3 * object_size, 'o'));
  ASSERT_GE(fd, 0);
  ASSERT_EQ(truncate(A("f").c_str(), static_cast<off_t>(object_size / 2)), 0)
      << std::strerror(errno);
  std::string buffer(object_size, '?');
  EXPECT_EQ(pread(fd, buffer.data(), buffer.size(), static_cast<off_t>(object_size)), 0)
      << "read past the new end, the first byte " << static_cast<int>(buffer[0]);
  close(fd);
  EXPECT_EQ(ReadFile(B("f")), std::string(object_size / 2, 'o'));
}

// A replaced or removed a file it holds open: its INODE stays, unlinked, until A's close. B's
// kernel still holds the name for that file; B's open must find what the name is now (the new
// file, or none), not the old one (the mount answers ESTALE and the kernel looks again). B
// holding the old file open too changes nothing.
TEST_F(FuseMulticlientTest, AnOpenThroughANameTheOtherClientUnlinkedFindsWhatItNamesNow) {
  ASSERT_NO_FATAL_FAILURE(CreateFile(A("f"), "old"));
  ASSERT_NO_FATAL_FAILURE(CreateFile(A("g"), "old"));
  WaitForCaches();
  const int held_f = open(A("f").c_str(), O_RDONLY);
  ASSERT_GE(held_f, 0) << std::strerror(errno);
  const int held_g = open(A("g").c_str(), O_RDONLY);
  ASSERT_GE(held_g, 0) << std::strerror(errno);
  const int b_held_f = open(B("f").c_str(), O_RDONLY);  // B's kernel caches both names
  ASSERT_GE(b_held_f, 0) << std::strerror(errno);
  struct stat st;
  ASSERT_EQ(stat(B("g").c_str(), &st), 0) << std::strerror(errno);
  ASSERT_NO_FATAL_FAILURE(CreateFile(A("f.tmp"), "new"));
  ASSERT_EQ(rename(A("f.tmp").c_str(), A("f").c_str()), 0) << std::strerror(errno);
  ASSERT_EQ(unlink(A("g").c_str()), 0) << std::strerror(errno);
  EXPECT_EQ(ReadFile(B("f")), "new");
  const int opened = open(B("g").c_str(), O_RDONLY);
  EXPECT_EQ(Errno(opened), "ENOENT");
  if (opened >= 0) close(opened);
  close(b_held_f);
  close(held_f);
  close(held_g);
}

// The same race, watched at the objects: after every round (both clients idle) the DIRENT
// object holding the name must have its original and its replica in step (both absent, or
// both present at one version). Listings read the replicas and lookups the originals, so a
// copy out of step is a name that is listed but not found, or found but not listed. Stops at
// the first divergence and shows what the clients see then; correct code runs every round.
// Regression test for crossing copy updates: a replica write that arrived after another client
// deleted both copies used to bring the replica back. Deletes of metadata now leave versioned
// tombstones, and copy updates older than the stored version are dropped.
TEST_F(FuseMulticlientTest, MkdirRmdirRaceKeepsBothDirentCopiesInStep) {
  constexpr int kMaxRounds = 1500;
  const uint64_t dir_fno = FreshStat(DirA()).st_ino;
  const Oid dirent{kFnso, dir_fno, DirentOffset("d"), ObjectType::kDirent};
  auto describe = [&](CopyFlag flag, bool* exists, uint64_t* version) {
    Result<wire::ObjectMeta> meta = cluster_->client().Stat(dirent.WithFlag(flag));
    *exists = meta.ok();
    *version = meta.ok() ? meta->version() : 0;
    if (meta.ok()) return "version " + std::to_string(meta->version());
    return meta.status().Is(StatusCode::kNotFound) ? std::string("absent")
                                                   : meta.status().ToString();
  };
  std::barrier sync(2);
  std::atomic<bool> diverged{false};
  std::string divergence;
  auto racer = [&](int client, std::string path) {
    return std::thread([&, client, path] {
      for (int round = 0; round < kMaxRounds; ++round) {
        sync.arrive_and_wait();
        if (diverged) return;  // both threads see it after the same barrier
        (void)mkdir(path.c_str(), 0755);
        (void)rmdir(path.c_str());
        sync.arrive_and_wait();
        if (client != 0) continue;
        bool original = false, replica = false;
        uint64_t original_version = 0, replica_version = 0;
        const std::string o = describe(CopyFlag::kOriginal, &original, &original_version);
        const std::string r = describe(CopyFlag::kReplica, &replica, &replica_version);
        if (original != replica || original_version != replica_version) {
          divergence = "after round " + std::to_string(round) + " the DIRENT original is " + o +
                       ", its replica " + r;
          diverged = true;
        }
      }
    });
  };
  std::thread ta = racer(0, A("d"));
  std::thread tb = racer(1, B("d"));
  ta.join();
  tb.join();
  EXPECT_FALSE(diverged) << divergence;
  if (!diverged) return;

  // What that means for the clients: listing and lookup disagree about the name.
  WaitForCaches();
  for (const auto& [label, dir] : {std::pair<std::string, std::string>{"A", DirA()},
                                   std::pair<std::string, std::string>{"B", DirB()}}) {
    struct stat st;
    const std::string found = Errno(lstat((dir + "/d").c_str(), &st));
    const bool listed = Names(dir).count("d") == 1;
    EXPECT_EQ(listed, found == "OK") << "through " << label << ": 'd' is " << (listed ? "" : "not ")
                                     << "listed, lstat gives " << found;
  }
  // Emptiness is judged from the replicas too: a parent holding no name that lookup finds
  // must be removable.
  struct stat st;
  if (Errno(lstat(A("d").c_str(), &st)) == "ENOENT") {
    EXPECT_EQ(Errno(rmdir(DirA().c_str())), "OK") << "rmdir of the parent, whose 'd' is gone";
  }
}

}  // namespace
}  // namespace orthofs::testing
