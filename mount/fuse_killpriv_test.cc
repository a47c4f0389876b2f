#include "mount/fuse_killpriv.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fuse.h>

#include <cstring>
#include <string>
#include <thread>

namespace orthofs {
namespace {

// A raw request as Linux writes it to /dev/fuse: the header, then the arguments.
template <typename Args>
std::string Request(uint32_t opcode, uint64_t unique, const Args& args) {
  fuse_in_header header{};
  header.opcode = opcode;
  header.unique = unique;
  header.len = sizeof header + sizeof args;
  std::string bytes(sizeof header + sizeof args, '\0');
  std::memcpy(bytes.data(), &header, sizeof header);
  std::memcpy(bytes.data() + sizeof header, &args, sizeof args);
  return bytes;
}

bool DropsPrivileges(const std::string& request) {
  return FlagsOfRequest(request.data(), request.size()).drop_privileges;
}

TEST(FlagsOfRequestTest, WriteByAnUnprivilegedUser) {
  fuse_write_in write{};
  write.size = 4096;
  EXPECT_FALSE(DropsPrivileges(Request(FUSE_WRITE, 7, write)));
  write.write_flags = FUSE_WRITE_KILL_SUIDGID;
  EXPECT_TRUE(DropsPrivileges(Request(FUSE_WRITE, 7, write)));
  write.write_flags = FUSE_WRITE_CACHE;  // another flag alone
  EXPECT_FALSE(DropsPrivileges(Request(FUSE_WRITE, 7, write)));
}

TEST(FlagsOfRequestTest, TruncatingOpen) {
  fuse_open_in open{};
  open.flags = O_WRONLY | O_TRUNC;
  EXPECT_FALSE(DropsPrivileges(Request(FUSE_OPEN, 9, open)));
  open.open_flags = FUSE_OPEN_KILL_SUIDGID;
  EXPECT_TRUE(DropsPrivileges(Request(FUSE_OPEN, 9, open)));
}

// libfuse 3.14 passes a setattr's flag on (FUSE_SET_ATTR_KILL_SUID in to_set), and a create
// makes a new file: neither is read here.
TEST(FlagsOfRequestTest, SetattrAndCreateAreLeftToLibfuse) {
  static_assert(FATTR_KILL_SUIDGID == (1 << 11), "FUSE_SET_ATTR_KILL_SUID in fuse_lowlevel.h");
  fuse_setattr_in setattr{};
  setattr.valid = FATTR_SIZE | FATTR_KILL_SUIDGID;
  EXPECT_FALSE(DropsPrivileges(Request(FUSE_SETATTR, 8, setattr)));
  fuse_create_in create{};
  create.open_flags = FUSE_OPEN_KILL_SUIDGID;
  EXPECT_FALSE(DropsPrivileges(Request(FUSE_CREATE, 10, create)));
}

TEST(FlagsOfRequestTest, ShortAndOtherRequestsHaveNone) {
  fuse_write_in write{};
  write.write_flags = FUSE_WRITE_KILL_SUIDGID;
  const std::string whole = Request(FUSE_WRITE, 11, write);
  // Cut off before write_flags ends: not read past what arrived.
  const size_t cut = sizeof(fuse_in_header) + offsetof(fuse_write_in, write_flags) + 3;
  EXPECT_FALSE(FlagsOfRequest(whole.data(), cut).drop_privileges);
  EXPECT_FALSE(FlagsOfRequest(whole.data(), sizeof(fuse_in_header) - 1).drop_privileges);
  EXPECT_FALSE(FlagsOfRequest(whole.data(), 0).drop_privileges);
  // The same bits in a read's arguments mean nothing.
  fuse_read_in read{};
  read.read_flags = FUSE_WRITE_KILL_SUIDGID;
  EXPECT_FALSE(DropsPrivileges(Request(FUSE_READ, 12, read)));
}

// The reply libfuse writes to INIT: the header and a fuse_init_out of `size` bytes.
struct InitReply {
  fuse_out_header header{};
  fuse_init_out args{};
  iovec iov[2];

  InitReply(uint64_t unique, int32_t error = 0, size_t size = sizeof(fuse_init_out)) {
    header.unique = unique;
    header.error = error;
    args.major = FUSE_KERNEL_VERSION;
    args.flags = FUSE_ASYNC_READ;
    iov[0] = {&header, sizeof header};
    iov[1] = {&args, size};
  }
};

fuse_init_in InitOffering(uint32_t flags) {
  fuse_init_in init{};
  init.major = FUSE_KERNEL_VERSION;
  init.minor = 38;
  init.flags = flags;
  return init;
}

TEST(KillPrivV2Test, SetInTheInitReplyWhenTheKernelOffersIt) {
  KillPrivV2 killpriv;
  const std::string init = Request(FUSE_INIT, 2, InitOffering(FUSE_HANDLE_KILLPRIV_V2));
  killpriv.RequestRead(init.data(), init.size());
  EXPECT_FALSE(killpriv.negotiated()) << "not before the reply";
  InitReply other(3);  // another request's reply
  killpriv.ReplyWriting(other.iov, 2);
  EXPECT_EQ(other.args.flags, static_cast<uint32_t>(FUSE_ASYNC_READ));
  InitReply reply(2);
  killpriv.ReplyWriting(reply.iov, 2);
  EXPECT_EQ(reply.args.flags, static_cast<uint32_t>(FUSE_ASYNC_READ | FUSE_HANDLE_KILLPRIV_V2))
      << "libfuse's own flags are kept";
  EXPECT_TRUE(killpriv.negotiated());
}

TEST(KillPrivV2Test, NotSetWhenTheKernelDoesNotOfferIt) {
  KillPrivV2 killpriv;
  const std::string init = Request(FUSE_INIT, 2, InitOffering(FUSE_ASYNC_READ));
  killpriv.RequestRead(init.data(), init.size());
  InitReply reply(2);
  killpriv.ReplyWriting(reply.iov, 2);
  EXPECT_EQ(reply.args.flags, static_cast<uint32_t>(FUSE_ASYNC_READ));
  EXPECT_FALSE(killpriv.negotiated()) << "Linux then clears set-ID bits itself";
}

TEST(KillPrivV2Test, ErrorAndShortInitRepliesAreLeftAlone) {
  KillPrivV2 killpriv;
  const std::string init = Request(FUSE_INIT, 2, InitOffering(FUSE_HANDLE_KILLPRIV_V2));
  killpriv.RequestRead(init.data(), init.size());
  InitReply refused(2, -EPROTO);
  killpriv.ReplyWriting(refused.iov, 2);
  EXPECT_EQ(refused.args.flags, static_cast<uint32_t>(FUSE_ASYNC_READ));
  // A reply shorter than the flags (a kernel older than protocol 7.5 gets 8 bytes).
  InitReply major_only(2, 0, 8);
  killpriv.ReplyWriting(major_only.iov, 2);
  EXPECT_EQ(major_only.args.flags, static_cast<uint32_t>(FUSE_ASYNC_READ));
  EXPECT_FALSE(killpriv.negotiated());
}

TEST(KillPrivV2Test, AnotherMajorVersionIsNoNegotiation) {
  KillPrivV2 killpriv;
  fuse_init_in init = InitOffering(FUSE_HANDLE_KILLPRIV_V2);
  init.major = 8;  // libfuse answers with its own version, for the kernel to try again
  const std::string request = Request(FUSE_INIT, 2, init);
  killpriv.RequestRead(request.data(), request.size());
  InitReply reply(2);
  killpriv.ReplyWriting(reply.iov, 2);
  EXPECT_EQ(reply.args.flags, static_cast<uint32_t>(FUSE_ASYNC_READ));
  EXPECT_FALSE(killpriv.negotiated());
}

TEST(KillPrivV2Test, NoReplyIsTouchedBeforeInitIsRead) {
  KillPrivV2 killpriv;
  InitReply reply(0);  // a notification has unique 0, like a fresh init_unique
  killpriv.ReplyWriting(reply.iov, 2);
  EXPECT_EQ(reply.args.flags, static_cast<uint32_t>(FUSE_ASYNC_READ));
  EXPECT_FALSE(killpriv.negotiated());
}

TEST(KillPrivV2Test, TheRequestBeingServedIsTheCallingThreadsLast) {
  KillPrivV2 killpriv;
  fuse_write_in write{};
  write.write_flags = FUSE_WRITE_KILL_SUIDGID;
  const std::string flagged = Request(FUSE_WRITE, 20, write);
  killpriv.RequestRead(flagged.data(), flagged.size());
  EXPECT_TRUE(FlagsOfRequestBeingServed().drop_privileges);
  std::thread other([&] {
    EXPECT_FALSE(FlagsOfRequestBeingServed().drop_privileges) << "another thread's request";
    write.write_flags = 0;
    const std::string plain = Request(FUSE_WRITE, 21, write);
    killpriv.RequestRead(plain.data(), plain.size());
    EXPECT_FALSE(FlagsOfRequestBeingServed().drop_privileges);
  });
  other.join();
  EXPECT_TRUE(FlagsOfRequestBeingServed().drop_privileges) << "unchanged by the other thread";
  fuse_read_in read{};
  const std::string next = Request(FUSE_READ, 22, read);
  killpriv.RequestRead(next.data(), next.size());
  EXPECT_FALSE(FlagsOfRequestBeingServed().drop_privileges) << "each request replaces it";
}

TEST(HasEffectiveCapabilityTest, ReadsTheCapEffMaskOfProcStatus) {
  const std::string root =
      "Name:\tbash\nUid:\t0\t0\t0\t0\nCapInh:\t0000000000000000\nCapPrm:\t000001ffffffffff\n"
      "CapEff:\t000001ffffffffff\nCapBnd:\t000001ffffffffff\n";
  EXPECT_TRUE(HasEffectiveCapability(root, 4));  // CAP_FSETID
  EXPECT_TRUE(HasEffectiveCapability(root, 40));
  EXPECT_FALSE(HasEffectiveCapability(root, 41));
  // A user's shell: permitted but not effective does not count.
  const std::string user = "Name:\tsh\nCapPrm:\t0000000000000010\nCapEff:\t0000000000000000\n";
  EXPECT_FALSE(HasEffectiveCapability(user, 4));
  EXPECT_TRUE(HasEffectiveCapability("Name:\tx\nCapEff:\t0000000000000010\n", 4));
  EXPECT_FALSE(HasEffectiveCapability("Name:\tx\nCapEff:\t0000000000000010\n", 3));
  // Nothing readable: no capability.
  EXPECT_FALSE(HasEffectiveCapability("", 4));
  EXPECT_FALSE(HasEffectiveCapability("Name:\tx\nCapEff:\tzz\n", 4));
  EXPECT_FALSE(HasEffectiveCapability("Name:\tx\nCapEff:\t0000000000000010\n", 64));
  EXPECT_FALSE(HasEffectiveCapability("CapEff:\t0000000000000010\n", 4)) << "not at a line start";
}

TEST(IsInitialUserNamespaceTest, OnlyTheIdentityMapOfEveryUid) {
  EXPECT_TRUE(IsInitialUserNamespace("         0          0 4294967295\n"));
  EXPECT_TRUE(IsInitialUserNamespace("0 0 4294967295"));
  // unshare -Ur as user 1000; a container's range; a namespace with two ranges.
  EXPECT_FALSE(IsInitialUserNamespace("         0       1000          1\n"));
  EXPECT_FALSE(IsInitialUserNamespace("         0     100000      65536\n"));
  EXPECT_FALSE(IsInitialUserNamespace("0 0 4294967295\n1 1 1\n"));
  EXPECT_FALSE(IsInitialUserNamespace(""));
  EXPECT_FALSE(IsInitialUserNamespace("0 0"));
  EXPECT_FALSE(IsInitialUserNamespace("0 0 x"));
}

}  // namespace
}  // namespace orthofs
