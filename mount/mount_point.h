// The mount point's checks before orthofs-mount mounts: a directory, not an OrthoFS mount that
// is alive, and a dead OrthoFS mount there (its process killed: the kernel answers ENOTCONN,
// and libfuse refuses to mount over it) replaced.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace orthofs {

// The file system type mounted last at `path`, from the text of /proc/mounts (or
// /proc/self/mounts), whose fields escape space, tab, newline and backslash as \ooo. nullopt
// when nothing is mounted there.
std::optional<std::string> MountTypeAt(std::string_view mounts, const std::string& path);

// Ok when `path` can take the mount. A dead OrthoFS mount there is lazily unmounted first
// (fusermount3 -u -z), and says so in one line on stderr. Refused with the command to run: a
// dead FUSE mount of another file system, a live OrthoFS mount (stacking a second one over it
// hides the first), a path that is not a directory or does not exist.
Status PrepareMountPoint(const std::string& path);

}  // namespace orthofs
