// File helpers for tests that drive a mount through plain POSIX calls.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>

namespace orthofs::testing {

// "OK" for 0, else the symbolic errno ("EEXIST"), so failures read as names, not numbers.
std::string ErrName(int err);
// "OK" when the call did not return -1, else ErrName(errno).
std::string Errno(long rc);

// pwrite until done; false on an error (errno set).
bool WriteFull(int fd, const std::string& data, uint64_t offset);
// The whole file, through a fresh open. Throws on errors.
std::string ReadFile(const std::string& path);
// Creates a new file (O_EXCL, never O_TRUNC) holding `data`; gtest assertions on failure.
void CreateFile(const std::string& path, const std::string& data, mode_t mode = 0644);
// Attributes straight from the file system, bypassing the kernel's attribute cache.
struct stat FreshStat(const std::string& path, bool follow = true);
// Deterministic bytes for a seed.
std::string RandomBytes(size_t n, uint64_t seed);
// Pages of the files in `dir` (not below) that the page cache holds (mincore over a mapping).
uint64_t ResidentPages(const std::string& dir);
// Whether `dir` is on tmpfs, whose pages never leave the page cache.
bool OnTmpfs(const std::string& dir);
// Names readdir returns, with or without "." and ".."; a multiset, so duplicates show.
std::multiset<std::string> ListDir(const std::string& path, bool with_dots = true);

// Closes the descriptor when a test leaves early (a failed ASSERT).
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd();
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  // close(2)'s result; the descriptor is gone either way.
  int Close();

 private:
  int fd_;
};

// Up to `length` bytes at `offset` (fewer only at end of file), one pread per `chunk` bytes
// (0: as much as each pread gives). Throws on errors.
std::string ReadAt(int fd, uint64_t offset, uint64_t length, size_t chunk = 0);

// Sizes and the first differing byte of two contents, for failure messages (never the bytes
// themselves). With an object size, the difference is also placed in its object.
std::string Mismatch(std::string_view got, std::string_view want, uint64_t object_size = 0);

// Polls `done` every `poll` until it holds or `limit` has passed; its last answer.
bool WaitFor(const std::function<bool()>& done, std::chrono::steady_clock::duration limit,
             std::chrono::steady_clock::duration poll = std::chrono::milliseconds(100));

}  // namespace orthofs::testing
