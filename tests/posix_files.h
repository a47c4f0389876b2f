// File helpers for tests that drive a mount through plain POSIX calls.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <set>
#include <string>

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
// Names readdir returns, with or without "." and ".."; a multiset, so duplicates show.
std::multiset<std::string> ListDir(const std::string& path, bool with_dots = true);

}  // namespace orthofs::testing
