// FUSE_HANDLE_KILLPRIV_V2 under libfuse 3.14, which predates it.
//
// Without it Linux asks the mount for the file's "security.capability" attribute before every
// write() (one more round trip per call, half of a small writer's requests) and clears
// set-ID bits itself with a setattr. With it Linux asks once per file (again only after it
// refreshed the file's attributes) and instead flags the writes, truncations and changes of
// owner made by someone without CAP_FSETID; the file system drops the privileges
// (Inode::DropPrivileges). libfuse 3.14 neither offers the flag at INIT nor passes the flags of
// writes and opens on, so the mount sees the raw traffic (fuse_session_custom_io): it adds the
// flag to the INIT reply when the kernel offered it (Linux 5.11 and later), and reads those
// request flags itself. (A setattr's flag libfuse does pass on: FUSE_SET_ATTR_KILL_SUID.)
// Everything here is parsing; no I/O.
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace orthofs {

// What a request from the kernel asks beyond what libfuse passes on.
struct KernelRequestFlags {
  // FUSE_WRITE_KILL_SUIDGID or FUSE_OPEN_KILL_SUIDGID: the write or truncating open is made by
  // someone without CAP_FSETID.
  bool drop_privileges = false;
};

// The flags of a raw request (fuse_in_header and its arguments) as read from /dev/fuse.
// Short or unknown requests have none.
KernelRequestFlags FlagsOfRequest(const void* request, size_t size);

class KillPrivV2 {
 public:
  // Every request read from /dev/fuse, before libfuse sees it. Remembers the INIT request, and
  // the flags of this thread's request (FlagsOfRequestBeingServed).
  void RequestRead(const void* request, size_t size);
  // Every reply, before it is written: sets FUSE_HANDLE_KILLPRIV_V2 in the reply to INIT when
  // the kernel offered it. iov[0] is the fuse_out_header, iov[1] the arguments.
  void ReplyWriting(iovec* iov, int count);
  // True once the kernel was told the mount drops privileges itself.
  bool negotiated() const { return negotiated_.load(std::memory_order_acquire); }

 private:
  std::atomic<bool> init_read_{false};
  std::atomic<uint64_t> init_unique_{0};
  std::atomic<bool> offered_{false};
  std::atomic<bool> negotiated_{false};
};

// Whether a process's /proc/PID/status text shows `capability` (CAP_FSETID, ...) in its
// effective set. Linux flags no fallocate (FUSE_HANDLE_KILLPRIV_V2 covers writes, truncations
// and changes of owner only), so for those the mount asks about the caller itself. Text
// without a readable CapEff line has none.
bool HasEffectiveCapability(std::string_view proc_status, int capability);
// Whether a process's /proc/PID/uid_map text is the initial user namespace's (every uid mapped
// to itself). CapEff counts in the process's own user namespace, which anyone can create
// (unshare -U) with a full set; Linux's own check is against the initial one.
bool IsInitialUserNamespace(std::string_view uid_map);

// The flags of the request the calling thread read last: the one it serves, since libfuse's
// loops (fuse_session_loop, and each worker of fuse_session_loop_mt) read a request and then
// serve it on the same thread.
KernelRequestFlags FlagsOfRequestBeingServed();

}  // namespace orthofs
