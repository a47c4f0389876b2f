// FUSE requests a mount received, by operation (orthofs-mount --metrics): the round trips
// between the kernel and the mount a workload costs, before any OSD is asked (a lookup per
// path component not cached, a write request per write() call).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace orthofs {

enum class FuseOp {
  kLookup,
  kGetattr,
  kSetattr,
  kReadlink,
  kMknod,
  kMkdir,
  kSymlink,
  kLink,
  kUnlink,
  kRmdir,
  kRename,
  kOpen,
  kCreate,
  kRead,
  kWrite,
  kFlush,
  kRelease,
  kFsync,
  kFsyncdir,
  kOpendir,
  kReaddir,
  kReaddirplus,
  kReleasedir,
  kStatfs,
  kSetxattr,
  kGetxattr,
  kListxattr,
  kRemovexattr,
  kFallocate,
  kLseek,
  kGetlk,
  kSetlk,
  kFlock,
};
inline constexpr size_t kFuseOpCount = static_cast<size_t>(FuseOp::kFlock) + 1;

// The operation's name as libfuse's fuse_lowlevel_ops calls it ("getattr").
const char* FuseOpName(FuseOp op);

// Thread-safe: the mount's FUSE worker threads count side by side.
class FuseRequestCounts {
 public:
  void Count(FuseOp op) { counts_[Index(op)].fetch_add(1, std::memory_order_relaxed); }
  uint64_t count(FuseOp op) const { return counts_[Index(op)].load(std::memory_order_relaxed); }

 private:
  static size_t Index(FuseOp op) { return static_cast<size_t>(op); }
  std::array<std::atomic<uint64_t>, kFuseOpCount> counts_{};
};

}  // namespace orthofs
