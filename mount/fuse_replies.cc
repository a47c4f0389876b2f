#include "mount/fuse_replies.h"

#include <spdlog/spdlog.h>

#include <cerrno>
#include <fstream>
#include <iterator>
#include <string>

#include "mount/fuse_killpriv.h"

namespace orthofs {

int ErrnoFor(const Status& st) {
  switch (st.code()) {
    case StatusCode::kOk:
      return 0;
    case StatusCode::kNotFound:
      return ENOENT;
    case StatusCode::kAlreadyExists:
      return EEXIST;
    case StatusCode::kNotADirectory:
      return ENOTDIR;
    case StatusCode::kIsADirectory:
      return EISDIR;
    case StatusCode::kNotEmpty:
      return ENOTEMPTY;
    case StatusCode::kNameTooLong:
      return ENAMETOOLONG;
    case StatusCode::kInvalidArgument:
      return EINVAL;
    case StatusCode::kPermissionDenied:
      return EACCES;
    case StatusCode::kNoAttribute:
      return ENODATA;
    case StatusCode::kTooBig:
      return E2BIG;
    case StatusCode::kBusy:
      return EBUSY;
    case StatusCode::kStale:
      return ESTALE;
    case StatusCode::kNoSpace:
      return ENOSPC;
    case StatusCode::kDeadlineExceeded:
      return ETIMEDOUT;
    default:
      return EIO;
  }
}

Credentials CallerOf(fuse_req_t req) {
  const fuse_ctx* ctx = fuse_req_ctx(req);
  return Credentials{ctx->uid, ctx->gid};
}

bool CallerHas(fuse_req_t req, int capability) {
  const pid_t pid = fuse_req_ctx(req)->pid;
  if (pid <= 0) return false;
  auto read_proc = [pid](const char* file) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/" + file);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  return IsInitialUserNamespace(read_proc("uid_map")) &&
         HasEffectiveCapability(read_proc("status"), capability);
}

void ReplyError(fuse_req_t req, const Status& st, const char* op) {
  const int err = ErrnoFor(st);
  if (err == EIO) {
    spdlog::warn("{}: {}", op, st.ToString());
  } else {
    spdlog::debug("{}: {}", op, st.ToString());  // expected errors: ENOENT, EEXIST, ...
  }
  fuse_reply_err(req, err);
}

int InodeErrno(fuse_ino_t ino, const Status& st) {
  if (!st.Is(StatusCode::kNotFound)) return ErrnoFor(st);
  return ino == kRootFno ? EIO : ESTALE;
}

void ReplyInodeError(fuse_req_t req, fuse_ino_t ino, const Status& st, const char* op) {
  const int err = InodeErrno(ino, st);
  if (err != ESTALE) return ReplyError(req, st, op);
  spdlog::debug("{} {}: {}; the inode is gone (ESTALE)", op, ino, st.ToString());
  fuse_reply_err(req, ESTALE);
}

}  // namespace orthofs
