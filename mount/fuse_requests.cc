#include "mount/fuse_requests.h"

namespace orthofs {

const char* FuseOpName(FuseOp op) {
  switch (op) {
    case FuseOp::kLookup:
      return "lookup";
    case FuseOp::kGetattr:
      return "getattr";
    case FuseOp::kSetattr:
      return "setattr";
    case FuseOp::kReadlink:
      return "readlink";
    case FuseOp::kMknod:
      return "mknod";
    case FuseOp::kMkdir:
      return "mkdir";
    case FuseOp::kSymlink:
      return "symlink";
    case FuseOp::kLink:
      return "link";
    case FuseOp::kUnlink:
      return "unlink";
    case FuseOp::kRmdir:
      return "rmdir";
    case FuseOp::kRename:
      return "rename";
    case FuseOp::kOpen:
      return "open";
    case FuseOp::kCreate:
      return "create";
    case FuseOp::kRead:
      return "read";
    case FuseOp::kWrite:
      return "write";
    case FuseOp::kFlush:
      return "flush";
    case FuseOp::kRelease:
      return "release";
    case FuseOp::kFsync:
      return "fsync";
    case FuseOp::kFsyncdir:
      return "fsyncdir";
    case FuseOp::kOpendir:
      return "opendir";
    case FuseOp::kReaddir:
      return "readdir";
    case FuseOp::kReaddirplus:
      return "readdirplus";
    case FuseOp::kReleasedir:
      return "releasedir";
    case FuseOp::kStatfs:
      return "statfs";
    case FuseOp::kSetxattr:
      return "setxattr";
    case FuseOp::kGetxattr:
      return "getxattr";
    case FuseOp::kListxattr:
      return "listxattr";
    case FuseOp::kRemovexattr:
      return "removexattr";
    case FuseOp::kFallocate:
      return "fallocate";
    case FuseOp::kLseek:
      return "lseek";
    case FuseOp::kGetlk:
      return "getlk";
    case FuseOp::kSetlk:
      return "setlk";
    case FuseOp::kFlock:
      return "flock";
  }
  return "unknown";
}

}  // namespace orthofs
