// The FUSE low-level callbacks of orthofs-mount (mount/fuse_ops.cc): each translates one
// request into calls of the client library and its answer into a reply, as libfuse's
// example/passthrough_hp.cc does. Their userdata is the mount's OrthoFs (mount/mount_fs.h).
#pragma once

#include <fuse_lowlevel.h>

namespace orthofs {

fuse_lowlevel_ops MakeOps();
// Reads requests and writes replies as libfuse would, seeing them on the way (KillPrivV2:
// whether the kernel leaves dropping set-ID bits to the mount). Userdata: the OrthoFs.
const fuse_custom_io* RawTrafficIo();

}  // namespace orthofs
