#include "mount/mount_point.h"

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

namespace orthofs {

namespace {

// /proc/mounts' field with its \ooo escapes undone.
std::string Unescape(std::string_view field) {
  std::string out;
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size()) {
      const std::string_view octal = field.substr(i + 1, 3);
      if (octal.find_first_not_of("01234567") == std::string_view::npos) {
        out += static_cast<char>((octal[0] - '0') * 64 + (octal[1] - '0') * 8 + (octal[2] - '0'));
        i += 3;
        continue;
      }
    }
    out += field[i];
  }
  return out;
}

std::string ReadMounts() {
  std::ifstream in("/proc/self/mounts");
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The absolute path of `path` without following its last component (which may be a dead
// mount, where realpath fails).
std::string Absolute(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string parent = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  const std::string leaf = slash == std::string::npos ? path : path.substr(slash + 1);
  char resolved[PATH_MAX];
  if (realpath(parent.empty() ? "/" : parent.c_str(), resolved) == nullptr) return path;
  std::string abs = resolved;
  if (leaf.empty()) return abs;
  return abs == "/" ? "/" + leaf : abs + "/" + leaf;
}

// fusermount3 -u -z `path`: true when it succeeded.
bool LazyUnmount(const std::string& path) {
  const pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    execlp("fusermount3", "fusermount3", "-u", "-z", path.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

std::optional<std::string> MountTypeAt(std::string_view mounts, const std::string& path) {
  std::optional<std::string> type;
  std::istringstream lines{std::string(mounts)};
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string source, target, fstype;
    if (!(fields >> source >> target >> fstype)) continue;
    if (Unescape(target) == path) type = fstype;  // the last one mounted there wins
  }
  return type;
}

Status PrepareMountPoint(const std::string& path) {
  const std::string where = Absolute(path);
  // statfs asks the mount's process every time; stat may answer from the kernel's cache of
  // the root's attributes for a second after the process died.
  struct statvfs fs {};
  struct stat st {};
  if (statvfs(path.c_str(), &fs) != 0 || stat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOTCONN) {
      const std::optional<std::string> type = MountTypeAt(ReadMounts(), where);
      if (type != "fuse.orthofs") {
        return Status::InvalidArgument(path + " is a FUSE mount whose process died (" +
                                       type.value_or("unknown type") +
                                       "): unmount it first: fusermount3 -u " + path);
      }
      if (!LazyUnmount(where)) {
        return Status::InvalidArgument(path +
                                       " is an OrthoFS mount whose process died, and "
                                       "fusermount3 -u -z could not remove it: run it yourself");
      }
      std::cerr << "orthofs-mount: replaced the dead OrthoFS mount at " << path
                << " (its process had died)\n";
      return PrepareMountPoint(path);
    }
    return Status::InvalidArgument("mount point " + path + ": " + std::strerror(err));
  }
  if (!S_ISDIR(st.st_mode)) {
    return Status::InvalidArgument("mount point " + path + " is not a directory");
  }
  if (MountTypeAt(ReadMounts(), where) == "fuse.orthofs") {
    return Status::InvalidArgument(path +
                                   " is an OrthoFS mount already (a second one would hide "
                                   "it): unmount it first: fusermount3 -u " +
                                   path);
  }
  return Status::Ok();
}

}  // namespace orthofs
