#include "tests/posix_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

namespace orthofs::testing {

std::string ErrName(int err) {
  if (err == 0) return "OK";
  const char* name = strerrorname_np(err);
  return name != nullptr ? name : "errno " + std::to_string(err);
}

std::string Errno(long rc) { return rc != -1 ? "OK" : ErrName(errno); }

bool WriteFull(int fd, const std::string& data, uint64_t offset) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n =
        pwrite(fd, data.data() + done, data.size() - done, static_cast<off_t>(offset + done));
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

std::string ReadFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) throw std::runtime_error("open " + path + ": " + std::strerror(errno));
  std::string out, chunk(256 * 1024, '\0');
  for (;;) {
    ssize_t n = read(fd, chunk.data(), chunk.size());
    if (n < 0) {
      close(fd);
      throw std::runtime_error("read " + path + ": " + std::strerror(errno));
    }
    if (n == 0) break;
    out.append(chunk.data(), static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

void CreateFile(const std::string& path, const std::string& data, mode_t mode) {
  int fd = open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY, mode);
  ASSERT_GE(fd, 0) << "create " << path << ": " << std::strerror(errno);
  ASSERT_TRUE(WriteFull(fd, data, 0)) << "write " << path << ": " << std::strerror(errno);
  ASSERT_EQ(close(fd), 0) << "close " << path << ": " << std::strerror(errno);
}

struct stat FreshStat(const std::string& path, bool follow) {
  struct statx sx {};
  const int flags = AT_STATX_FORCE_SYNC | (follow ? 0 : AT_SYMLINK_NOFOLLOW);
  if (statx(AT_FDCWD, path.c_str(), flags, STATX_BASIC_STATS, &sx) != 0) {
    throw std::runtime_error("statx " + path + ": " + std::strerror(errno));
  }
  struct stat st {};
  st.st_ino = sx.stx_ino;
  st.st_mode = sx.stx_mode;
  st.st_nlink = sx.stx_nlink;
  st.st_uid = sx.stx_uid;
  st.st_gid = sx.stx_gid;
  st.st_size = static_cast<off_t>(sx.stx_size);
  st.st_rdev = makedev(sx.stx_rdev_major, sx.stx_rdev_minor);
  st.st_atim = {sx.stx_atime.tv_sec, sx.stx_atime.tv_nsec};
  st.st_mtim = {sx.stx_mtime.tv_sec, sx.stx_mtime.tv_nsec};
  st.st_ctim = {sx.stx_ctime.tv_sec, sx.stx_ctime.tv_nsec};
  return st;
}

std::string RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string out(n, '\0');
  for (size_t i = 0; i < n; i += 8) {
    uint64_t v = rng();
    std::memcpy(out.data() + i, &v, std::min<size_t>(8, n - i));
  }
  return out;
}

std::multiset<std::string> ListDir(const std::string& path, bool with_dots) {
  std::multiset<std::string> names;
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) throw std::runtime_error("opendir " + path + ": " + std::strerror(errno));
  errno = 0;
  while (struct dirent* e = readdir(dir)) {
    const std::string name = e->d_name;
    if (with_dots || (name != "." && name != "..")) names.insert(name);
  }
  const int err = errno;
  closedir(dir);
  if (err != 0) throw std::runtime_error("readdir " + path + ": " + std::strerror(err));
  return names;
}

Fd::~Fd() {
  if (fd_ >= 0) close(fd_);
}

int Fd::Close() {
  const int rc = close(fd_);
  fd_ = -1;
  return rc;
}

std::string ReadAt(int fd, uint64_t offset, uint64_t length, size_t chunk) {
  std::string out(length, '\0');
  uint64_t done = 0;
  while (done < length) {
    const uint64_t want = chunk == 0 ? length - done : std::min<uint64_t>(chunk, length - done);
    const ssize_t n = pread(fd, out.data() + done, want, static_cast<off_t>(offset + done));
    if (n < 0) throw std::runtime_error(std::string("pread: ") + std::strerror(errno));
    if (n == 0) break;
    done += static_cast<uint64_t>(n);
  }
  out.resize(done);
  return out;
}

std::string Mismatch(std::string_view got, std::string_view want, uint64_t object_size) {
  std::ostringstream out;
  out << "got " << got.size() << " bytes, expected " << want.size();
  const size_t common = std::min(got.size(), want.size());
  size_t i = 0;
  while (i < common && got[i] == want[i]) ++i;
  if (i < common) {
    out << "; first difference at byte " << i;
    if (object_size > 0) {
      out << " (object " << i / object_size << ", offset " << i % object_size << ")";
    }
  }
  if (got.size() < want.size() &&
      want.find_first_not_of('\0', got.size()) == std::string_view::npos) {
    out << "; the missing expected bytes are all zeros";
  }
  if (got.size() > want.size() &&
      got.find_first_not_of('\0', want.size()) == std::string_view::npos) {
    out << "; the bytes past the expected end are all zeros";
  }
  return out.str();
}

bool WaitFor(const std::function<bool()>& done, std::chrono::steady_clock::duration limit,
             std::chrono::steady_clock::duration poll) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(poll);
  }
}

uint64_t ResidentPages(const std::string& dir) {
  uint64_t resident = 0;
  const long page = ::sysconf(_SC_PAGESIZE);
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    const uint64_t size = entry.file_size();
    if (size == 0) continue;
    const int fd = ::open(entry.path().c_str(), O_RDONLY | O_CLOEXEC);
    EXPECT_GE(fd, 0) << entry.path();
    if (fd < 0) continue;
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    EXPECT_NE(map, MAP_FAILED) << entry.path();
    if (map != MAP_FAILED) {
      std::vector<unsigned char> in_core((size + page - 1) / page);
      EXPECT_EQ(::mincore(map, size, in_core.data()), 0);
      for (unsigned char c : in_core) resident += c & 1;
      ::munmap(map, size);
    }
    ::close(fd);
  }
  return resident;
}

bool OnTmpfs(const std::string& dir) {
  struct statfs fs {};
  return ::statfs(dir.c_str(), &fs) == 0 && fs.f_type == TMPFS_MAGIC;
}

}  // namespace orthofs::testing
