// What the FUSE callbacks (mount/fuse_ops.cc, mount/fuse_lock_ops.cc) share: a Status as an
// errno and as a reply, and who made a request.
#pragma once

#include <fuse_lowlevel.h>

#include "client/namespace.h"
#include "common/status.h"

namespace orthofs {

int ErrnoFor(const Status& st);
// Replies `st` as its errno; unexpected errors (EIO) are logged as warnings.
void ReplyError(fuse_req_t req, const Status& st, const char* op);
// For requests on an inode the kernel knows: one another client removed (its INODE object is
// gone) is ESTALE, not ENOENT. The kernel then walks the path again with fresh lookups
// (LOOKUP_REVAL) and opens or stats what the name refers to now, say a file another client
// made under the same name; a name that is gone becomes ENOENT there.
// (Calls on an open descriptor get ESTALE too, as on NFS: there is no path to walk again.) A
// missing root is a broken namespace: EIO.
int InodeErrno(fuse_ino_t ino, const Status& st);
void ReplyInodeError(fuse_req_t req, fuse_ino_t ino, const Status& st, const char* op);

Credentials CallerOf(fuse_req_t req);
// Whether the process that made the request has `capability` (from /proc), as Linux's
// capable() would judge: in its effective set, in the initial user namespace. A process already
// gone has none.
bool CallerHas(fuse_req_t req, int capability);

}  // namespace orthofs
