// orthofs-bench: a Bonnie-style benchmark of any directory (a local one, an OrthoFS or a
// GlusterFS mount), after the modified Bonnie of the paper: N files written with large requests,
// then read with small requests round-robin across the files; plus a bonnie++ -n style
// create/stat/unlink test. Plain POSIX calls only, so every file system is measured alike.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench/bench_plan.h"
#include "bench/bench_stats.h"
#include "common/status.h"

namespace orthofs {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitError = 1;
constexpr int kExitUsage = 2;

constexpr char kDataFilePrefix[] = "orthofs-bench.";
constexpr char kMetadataDirName[] = "orthofs-bench.meta";
// Requests are held in memory whole; a larger one is a typo rather than a benchmark.
constexpr uint64_t kMaxRequestBytes = uint64_t{1} << 30;

struct BenchOptions {
  std::string dir;
  uint32_t files = 5;
  uint64_t file_bytes = uint64_t{100} << 20;
  uint64_t request_bytes = uint64_t{16} << 10;
  uint64_t write_request_bytes = uint64_t{1} << 20;
  AccessMode mode = AccessMode::kSequential;
  int runs = 5;
  std::string phase = "all";
  uint64_t seed = 1;
  bool json = false;
  uint32_t metadata_files = 1000;
  bool drop_caches = true;
  bool keep = false;
};

// printf into a std::string (GCC 12 has no <format>).
std::string Format(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string Format(const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list args_again;
  va_copy(args_again, args);
  const int length = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  std::string text(std::max(length, 0), '\0');
  std::vsnprintf(text.data(), text.size() + 1, format, args_again);
  va_end(args_again);
  return text;
}

// "open /mnt/x/orthofs-bench.0: No such file or directory", from the errno of the failed call.
Status ErrnoError(const char* call, const std::string& path) {
  return Status::IoError(std::string(call) + " " + path + ": " + std::strerror(errno));
}

std::string DataFilePath(const BenchOptions& options, uint32_t file) {
  return options.dir + "/" + kDataFilePrefix + std::to_string(file);
}

std::string MetadataDirPath(const BenchOptions& options) {
  return options.dir + "/" + kMetadataDirName;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return std::max(seconds, 1e-9);  // a rate, never a division by zero
}

// Closes on scope exit, for the error paths; the happy paths close explicitly to see errors.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() {
    if (fd_ >= 0) ::close(fd_);
  }
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

// A one-line progress bar on stderr, redrawn when the percentage changes; silent unless stderr
// is a terminal, so that logs and pipes stay clean.
class Progress {
 public:
  Progress() : enabled_(::isatty(STDERR_FILENO) == 1) {}

  void Start(std::string label, uint64_t total) {
    label_ = std::move(label);
    total_ = std::max<uint64_t>(total, 1);
    percent_ = -1;
    Update(0);
  }
  void Update(uint64_t done) {
    if (!enabled_) return;
    const int percent = static_cast<int>(done * 100 / total_);
    if (percent == percent_) return;
    percent_ = percent;
    const int width = 30;
    const int filled = percent * width / 100;
    std::cerr << "\r" << label_ << " [" << std::string(filled, '#')
              << std::string(width - filled, ' ') << "] " << percent << "%" << std::flush;
  }
  void Finish() {
    if (enabled_) std::cerr << "\r\033[K" << std::flush;  // erase the bar
  }

 private:
  bool enabled_;
  std::string label_;
  uint64_t total_ = 1;
  int percent_ = -1;
};

// Empties the page cache before reads so that they reach the file system under test. Needs
// root; without it, says so once and lets the benchmark go on.
class CacheDropper {
 public:
  explicit CacheDropper(bool enabled) : enabled_(enabled) {}

  // True if the caches were dropped.
  bool Drop() {
    if (!enabled_) return false;
    if (::geteuid() != 0) {
      GiveUp("not root");
      return false;
    }
    ::sync();  // dirty pages cannot be dropped
    const int fd = ::open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
    const bool dropped = fd >= 0 && ::write(fd, "3", 1) == 1;
    const std::string why = dropped ? "" : std::strerror(errno);
    if (fd >= 0) ::close(fd);
    if (!dropped) GiveUp(why);
    return dropped;
  }

 private:
  void GiveUp(const std::string& why) {
    std::cerr << "orthofs-bench: cannot drop page caches (" << why
              << "): reads may come from the page cache\n";
    enabled_ = false;
  }

  bool enabled_;
};

// Per-run rates of one phase.
struct PhaseRuns {
  std::vector<double> mb_s;   // 10^6 bytes per second
  std::vector<double> ops_s;  // requests (or files) per second
};

double Rounded(double value) { return std::round(value * 1000) / 1000; }

nlohmann::json RoundedList(const std::vector<double>& values) {
  nlohmann::json list = nlohmann::json::array();
  for (double v : values) list.push_back(Rounded(v));
  return list;
}

void ReportThroughput(const BenchOptions& options, const std::string& phase, std::string_view mode,
                      uint64_t request_bytes, const PhaseRuns& runs,
                      std::optional<bool> caches_dropped) {
  const SummaryStats mb_s = Summarize(runs.mb_s);
  const SummaryStats ops_s = Summarize(runs.ops_s);
  if (options.json) {
    nlohmann::json line = {{"phase", phase},
                           {"mode", mode},
                           {"dir", options.dir},
                           {"request_bytes", request_bytes},
                           {"runs", runs.mb_s.size()},
                           {"files", options.files},
                           {"file_bytes", options.file_bytes},
                           {"seed", options.seed},
                           {"mb_s_mean", Rounded(mb_s.mean)},
                           {"mb_s_median", Rounded(mb_s.median)},
                           {"mb_s_min", Rounded(mb_s.min)},
                           {"mb_s_max", Rounded(mb_s.max)},
                           {"ops_s_mean", Rounded(ops_s.mean)},
                           {"ops_s_median", Rounded(ops_s.median)},
                           {"mb_s_runs", RoundedList(runs.mb_s)},
                           {"ops_s_runs", RoundedList(runs.ops_s)}};
    if (caches_dropped) line["page_caches_dropped"] = *caches_dropped;
    std::cout << line.dump() << std::endl;
    return;
  }
  std::cout << Format(
                   "%-6s %-6s %8llu B x %zu runs: %.1f MB/s mean, %.1f median, %.1f min, "
                   "%.1f max; %.0f ops/s median",
                   phase.c_str(), std::string(mode).c_str(),
                   static_cast<unsigned long long>(request_bytes), runs.mb_s.size(), mb_s.mean,
                   mb_s.median, mb_s.min, mb_s.max, ops_s.median)
            << std::endl;
}

void ReportMetadata(const BenchOptions& options, const std::string& phase,
                    const std::vector<double>& files_s) {
  const SummaryStats stats = Summarize(files_s);
  if (options.json) {
    std::cout << nlohmann::json{{"phase", phase},
                                {"dir", options.dir},
                                {"runs", files_s.size()},
                                {"files", options.metadata_files},
                                {"seed", options.seed},
                                {"files_s_mean", Rounded(stats.mean)},
                                {"files_s_median", Rounded(stats.median)},
                                {"files_s_min", Rounded(stats.min)},
                                {"files_s_max", Rounded(stats.max)},
                                {"files_s_runs", RoundedList(files_s)}}
                     .dump()
              << std::endl;
    return;
  }
  std::cout << Format(
                   "%-6s %-6s %8u files x %zu runs: %.0f files/s mean, %.0f median, %.0f min, "
                   "%.0f max",
                   phase.c_str(), "", options.metadata_files, files_s.size(), stats.mean,
                   stats.median, stats.min, stats.max)
            << std::endl;
}

// ---- write ----

// Random bytes, not zeros: a file system or device that compresses or skips zero blocks would
// otherwise write almost nothing.
std::vector<char> PatternBlock(uint64_t bytes, uint64_t seed) {
  std::vector<char> block(bytes);
  std::mt19937_64 rng(seed);
  for (uint64_t i = 0; i < bytes; i += 8) {
    const uint64_t word = rng();
    std::memcpy(block.data() + i, &word, std::min<uint64_t>(8, bytes - i));
  }
  return block;
}

Status WriteAll(int fd, const char* data, uint64_t length, uint64_t offset,
                const std::string& path) {
  uint64_t done = 0;
  while (done < length) {
    const ssize_t n = ::pwrite(fd, data + done, length - done, offset + done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("write", path);
    if (n == 0) return Status::IoError("write " + path + ": wrote nothing");
    done += n;
  }
  return Status::Ok();
}

Status FinishFile(int fd, const std::string& path) {
  FdCloser closer(fd);
  if (::fsync(fd) != 0) return ErrnoError("fsync", path);
  if (::close(closer.release()) != 0) return ErrnoError("close", path);
  return Status::Ok();
}

// One run: every file created or truncated, written per the plan (file after file), fsynced
// and closed; all of it timed.
Status WriteRun(const BenchOptions& options, const std::vector<BenchRequest>& plan,
                std::vector<char>& block, Progress& progress, double* seconds) {
  const auto start = std::chrono::steady_clock::now();
  int fd = -1;
  uint32_t open_file = 0;
  std::string path;
  for (size_t i = 0; i < plan.size(); ++i) {
    const BenchRequest& request = plan[i];
    if (fd < 0 || request.file != open_file) {
      if (fd >= 0) ORTHOFS_RETURN_IF_ERROR(FinishFile(std::exchange(fd, -1), path));
      open_file = request.file;
      path = DataFilePath(options, open_file);
      fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd < 0) return ErrnoError("open", path);
    }
    // Stamp each block with where it goes, so that no two blocks of the run are identical.
    const uint64_t stamp[2] = {request.file, request.offset};
    std::memcpy(block.data(), stamp, std::min<size_t>(sizeof stamp, block.size()));
    Status written = WriteAll(fd, block.data(), request.length, request.offset, path);
    if (!written.ok()) {
      ::close(fd);
      return written;
    }
    progress.Update(i + 1);
  }
  if (fd >= 0) ORTHOFS_RETURN_IF_ERROR(FinishFile(fd, path));
  *seconds = SecondsSince(start);
  return Status::Ok();
}

Status RunWritePhase(const BenchOptions& options, PhaseRuns* runs) {
  Result<std::vector<BenchRequest>> plan =
      MakeWritePlan(options.files, options.file_bytes, options.write_request_bytes);
  if (!plan.ok()) return plan.status();
  std::vector<char> block = PatternBlock(options.write_request_bytes, options.seed);
  Progress progress;
  for (int run = 0; run < options.runs; ++run) {
    progress.Start(Format("write run %d/%d", run + 1, options.runs), plan->size());
    double seconds = 0;
    Status st = WriteRun(options, *plan, block, progress, &seconds);
    progress.Finish();
    ORTHOFS_RETURN_IF_ERROR(st);
    const double bytes = static_cast<double>(options.files) * options.file_bytes;
    runs->mb_s.push_back(bytes / 1e6 / seconds);
    runs->ops_s.push_back(static_cast<double>(plan->size()) / seconds);
  }
  return Status::Ok();
}

// ---- read ----

// The files a read needs, present and large enough, before anything is timed.
Status CheckDataFiles(const BenchOptions& options) {
  for (uint32_t file = 0; file < options.files; ++file) {
    const std::string path = DataFilePath(options, file);
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
      return Status::NotFound(ErrnoError("stat", path).message() +
                              " (create the files first with --phase write and the same "
                              "--files and --size)");
    }
    if (!S_ISREG(st.st_mode)) return Status::InvalidArgument(path + " is not a regular file");
    if (static_cast<uint64_t>(st.st_size) < options.file_bytes) {
      return Status::InvalidArgument(
          Format("%s has %lld bytes, fewer than --size %llu (write the files again with "
                 "--phase write and the same --size)",
                 path.c_str(), static_cast<long long>(st.st_size),
                 static_cast<unsigned long long>(options.file_bytes)));
    }
  }
  return Status::Ok();
}

Status ReadAll(int fd, char* buffer, uint64_t length, uint64_t offset, const std::string& path) {
  uint64_t done = 0;
  while (done < length) {
    const ssize_t n = ::pread(fd, buffer + done, length - done, offset + done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("read", path);
    if (n == 0) {
      return Status::IoError(Format("read %s: end of file at offset %llu (did the file shrink?)",
                                    path.c_str(), static_cast<unsigned long long>(offset + done)));
    }
    done += n;
  }
  return Status::Ok();
}

// One run: the plan's preads, timed; the files are opened before and closed after the clock so
// that only the reads are measured.
Status ReadRun(const BenchOptions& options, const std::vector<BenchRequest>& plan,
               std::vector<char>& buffer, Progress& progress, double* seconds) {
  std::vector<int> fds;
  struct CloseAll {
    std::vector<int>& fds;
    ~CloseAll() {
      for (int fd : fds) ::close(fd);
    }
  } close_all{fds};
  for (uint32_t file = 0; file < options.files; ++file) {
    const std::string path = DataFilePath(options, file);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoError("open", path);
    fds.push_back(fd);
  }
  const auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < plan.size(); ++i) {
    const BenchRequest& request = plan[i];
    Status st = ReadAll(fds[request.file], buffer.data(), request.length, request.offset,
                        DataFilePath(options, request.file));
    if (!st.ok()) return st;
    progress.Update(i + 1);
  }
  *seconds = SecondsSince(start);
  return Status::Ok();
}

Status RunReadPhase(const BenchOptions& options, const std::vector<BenchRequest>& plan,
                    CacheDropper& caches, PhaseRuns* runs, bool* all_dropped) {
  ORTHOFS_RETURN_IF_ERROR(CheckDataFiles(options));
  std::vector<char> buffer(options.request_bytes);
  uint64_t bytes = 0;
  for (const BenchRequest& request : plan) bytes += request.length;
  Progress progress;
  *all_dropped = true;
  for (int run = 0; run < options.runs; ++run) {
    *all_dropped &= caches.Drop();
    progress.Start(Format("read run %d/%d", run + 1, options.runs), plan.size());
    double seconds = 0;
    Status st = ReadRun(options, plan, buffer, progress, &seconds);
    progress.Finish();
    ORTHOFS_RETURN_IF_ERROR(st);
    runs->mb_s.push_back(static_cast<double>(bytes) / 1e6 / seconds);
    runs->ops_s.push_back(static_cast<double>(plan.size()) / seconds);
  }
  return Status::Ok();
}

// Removes the data files this configuration names; absent ones are fine.
Status RemoveDataFiles(const BenchOptions& options) {
  for (uint32_t file = 0; file < options.files; ++file) {
    const std::string path = DataFilePath(options, file);
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return ErrnoError("unlink", path);
  }
  return Status::Ok();
}

// ---- metadata ----

struct MetadataRuns {
  std::vector<double> create;  // files per second
  std::vector<double> stat;
  std::vector<double> list;
  std::vector<double> unlink;
};

// What a network file system's client may cache of names and attributes before asking again
// (FUSE file systems: about a second): the listing waits that long after the stats, so that it
// lists as `ls -l` does in a directory not looked at lately.
constexpr auto kAttributeCacheExpiry = std::chrono::milliseconds(1100);

// readdir of `dir` and an fstatat of every entry, as `ls -l` does; `want` entries besides "."
// and "..".
Status ListWithAttributes(const std::string& dir, size_t want) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return ErrnoError("opendir", dir);
  size_t listed = 0;
  Status st = Status::Ok();
  errno = 0;
  while (const dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    struct stat attributes;
    if (::fstatat(::dirfd(d), e->d_name, &attributes, AT_SYMLINK_NOFOLLOW) != 0) {
      st = ErrnoError("stat", dir + "/" + e->d_name);
      break;
    }
    ++listed;
    errno = 0;
  }
  if (st.ok() && errno != 0) st = ErrnoError("readdir", dir);
  ::closedir(d);
  if (st.ok() && listed != want) {
    st = Status::Corruption(Format("%s lists %zu entries, not %zu", dir.c_str(), listed, want));
  }
  return st;
}

// Creates the metadata directory, or empties the one an interrupted run left behind.
Status PrepareMetadataDir(const std::string& dir, const std::vector<std::string>& paths) {
  if (::mkdir(dir.c_str(), 0755) == 0) return Status::Ok();
  if (errno != EEXIST) return ErrnoError("mkdir", dir);
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) return ErrnoError("stat", dir);
  if (!S_ISDIR(st.st_mode)) return Status::NotADirectory(dir + " exists and is not a directory");
  for (const std::string& path : paths) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return ErrnoError("unlink", path);
  }
  return Status::Ok();
}

Status MetadataRun(const std::string& dir, const std::vector<std::string>& paths,
                   const std::vector<uint32_t>& stat_order, MetadataRuns* runs,
                   const std::string& run_label) {
  Progress progress;
  const double files = static_cast<double>(paths.size());

  progress.Start(run_label + " create", paths.size());
  auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < paths.size(); ++i) {
    const int fd = ::open(paths[i].c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
      progress.Finish();
      return ErrnoError("create", paths[i]);
    }
    if (::close(fd) != 0) {
      progress.Finish();
      return ErrnoError("close", paths[i]);
    }
    progress.Update(i + 1);
  }
  runs->create.push_back(files / SecondsSince(start));

  progress.Start(run_label + " stat", paths.size());
  start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < stat_order.size(); ++i) {
    struct stat st;
    if (::stat(paths[stat_order[i]].c_str(), &st) != 0) {
      progress.Finish();
      return ErrnoError("stat", paths[stat_order[i]]);
    }
    progress.Update(i + 1);
  }
  runs->stat.push_back(files / SecondsSince(start));

  progress.Start(run_label + " list", paths.size());
  std::this_thread::sleep_for(kAttributeCacheExpiry);
  start = std::chrono::steady_clock::now();
  if (Status listed = ListWithAttributes(dir, paths.size()); !listed.ok()) {
    progress.Finish();
    return listed;
  }
  runs->list.push_back(files / SecondsSince(start));

  progress.Start(run_label + " unlink", paths.size());
  start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < paths.size(); ++i) {
    if (::unlink(paths[i].c_str()) != 0) {
      progress.Finish();
      return ErrnoError("unlink", paths[i]);
    }
    progress.Update(i + 1);
  }
  runs->unlink.push_back(files / SecondsSince(start));
  progress.Finish();
  return Status::Ok();
}

Status RunMetadataPhase(const BenchOptions& options, MetadataRuns* runs) {
  const std::string dir = MetadataDirPath(options);
  // Names made before the clock starts; only the system calls are timed.
  std::vector<std::string> paths;
  paths.reserve(options.metadata_files);
  for (uint32_t i = 0; i < options.metadata_files; ++i) {
    paths.push_back(dir + "/" + Format("file.%07u", i));
  }
  const std::vector<uint32_t> stat_order = ShuffledOrder(options.metadata_files, options.seed);
  ORTHOFS_RETURN_IF_ERROR(PrepareMetadataDir(dir, paths));
  Status st = Status::Ok();
  for (int run = 0; run < options.runs && st.ok(); ++run) {
    st = MetadataRun(dir, paths, stat_order, runs,
                     Format("metadata run %d/%d", run + 1, options.runs));
  }
  if (!st.ok()) {
    for (const std::string& path : paths) ::unlink(path.c_str());  // best effort
  }
  if (::rmdir(dir.c_str()) != 0 && st.ok()) st = ErrnoError("rmdir", dir);
  return st;
}

// ---- main flow ----

int Error(const std::string& message) {
  std::cerr << "orthofs-bench: " << message << "\n";
  return kExitError;
}

int RunBench(const BenchOptions& options) {
  struct stat st;
  if (::stat(options.dir.c_str(), &st) != 0)
    return Error(ErrnoError("stat", options.dir).message());
  if (!S_ISDIR(st.st_mode)) return Error(options.dir + " is not a directory");

  if (options.phase == "metadata") {
    MetadataRuns runs;
    Status metadata = RunMetadataPhase(options, &runs);
    if (!metadata.ok()) return Error(metadata.message());
    ReportMetadata(options, "create", runs.create);
    ReportMetadata(options, "stat", runs.stat);
    ReportMetadata(options, "list", runs.list);
    ReportMetadata(options, "unlink", runs.unlink);
    return kExitOk;
  }

  const bool write = options.phase == "write" || options.phase == "all";
  const bool read = options.phase == "read" || options.phase == "all";
  // The read plan first: a plan that cannot be made should fail before anything is written.
  Result<std::vector<BenchRequest>> read_plan = MakeReadPlan(
      {options.files, options.file_bytes, options.request_bytes, options.mode, options.seed});
  if (!read_plan.ok()) return Error(read_plan.status().message());
  // Only a run that writes the files removes them: --phase write leaves them for a later
  // --phase read, and --phase read found them there.
  const bool remove_files = options.phase == "all" && !options.keep;
  auto fail = [&](const Status& status) {
    if (remove_files) (void)RemoveDataFiles(options);
    return Error(status.message());
  };

  CacheDropper caches(options.drop_caches);
  if (write) {
    PhaseRuns runs;
    Status written = RunWritePhase(options, &runs);
    if (!written.ok()) return fail(written);
    ReportThroughput(options, "write", "seq", options.write_request_bytes, runs, std::nullopt);
  }
  if (read) {
    PhaseRuns runs;
    bool all_dropped = false;
    Status reading = RunReadPhase(options, *read_plan, caches, &runs, &all_dropped);
    if (!reading.ok()) return fail(reading);
    ReportThroughput(options, "read", AccessModeName(options.mode), options.request_bytes, runs,
                     all_dropped);
  }
  if (remove_files) {
    Status removed = RemoveDataFiles(options);
    if (!removed.ok()) return Error(removed.message());
  }
  return kExitOk;
}

// A CLI11 check that the text is a size ParseByteSize takes, at most `max` bytes.
CLI::Validator ByteSize(uint64_t max) {
  return CLI::Validator(
      [max](std::string& text) -> std::string {
        Result<uint64_t> size = ParseByteSize(text);
        if (!size.ok()) return size.status().message();
        if (*size > max) {
          return "size '" + text + "' is over the limit of " + std::to_string(max) + " bytes";
        }
        return "";
      },
      "SIZE");
}

// CLI11 2.1 would read "-1" into an unsigned option as 2^64-1.
CLI::Validator NotNegative() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        return text.starts_with('-') ? "must not be negative" : "";
      },
      "");
}

constexpr char kHelpFooter[] = R"(
Phases:
  write     create DIR/orthofs-bench.0 .. .<files-1> one after the other, each written
            sequentially with --write-request requests of pseudo-random bytes (seeded by
            --seed), then fsynced and closed; fsync and close are timed. Each run rewrites
            the files.
  read      read the files with --request preads: seq = block 0 of every file, then block 1
            of every file, ... (round-robin across the files); random = as many requests,
            the file still round-robin, each block (aligned to --request) drawn from a
            std::mt19937_64 seeded by --seed, so the same seed gives the same requests. The
            files must exist with at least --size bytes (made by --phase write).
  all       write, then read (the default).
  metadata  like bonnie++ -n: create --metadata-files empty files in
            DIR/orthofs-bench.meta/, stat them all in an order shuffled by --seed, list
            the directory with every entry's attributes as ls -l does (after 1.1 s, once a
            network file system's cached attributes have expired), unlink them all; reports
            files/s for each of create, stat, list and unlink.

Each phase is repeated --runs times. Before each read run, the page cache is dropped (sync;
echo 3 > /proc/sys/vm/drop_caches) so reads reach the file system; this needs root, and
without it a warning is printed once and reads may come from the page cache.

Files: --phase all removes the data files at the end unless --keep; --phase write keeps them
for a later --phase read, which leaves them in place; metadata removes its own files and
directory.

Sizes: 4096, 16K, 100M, 1G (1024-based; also KiB, MiB, GiB, any case).
Rates: MB/s is 10^6 bytes per second; ops/s is requests per second.
Output: one line per phase with MB/s mean, median, min, max and ops/s median over the runs;
with --json, one JSON object per phase per line on stdout and nothing else there. A
progress bar goes to stderr when it is a terminal.
Exit status: 0 success, 1 error (such as I/O, with the path and errno text), 2 bad usage.)";

}  // namespace
}  // namespace orthofs

int main(int argc, char** argv) {
  using namespace orthofs;
  CLI::App app{
      "orthofs-bench: a Bonnie-style benchmark of any directory (local, OrthoFS or GlusterFS "
      "mount): N files written with large requests, then read with small requests "
      "round-robin across the files."};
  app.footer(kHelpFooter);

  BenchOptions options;
  std::string size_text = "100M", request_text = "16K", write_request_text = "1M";
  std::string mode_text = "seq";
  app.add_option("DIR", options.dir, "directory to benchmark in")->required();
  app.add_option("--files", options.files, "number of data files")
      ->capture_default_str()
      ->check(CLI::Range(uint32_t{1}, uint32_t{1000}));
  app.add_option("--size", size_text, "size of each data file")
      ->capture_default_str()
      ->check(ByteSize(UINT64_MAX));
  app.add_option("--request", request_text, "size of each read request")
      ->capture_default_str()
      ->check(ByteSize(kMaxRequestBytes));
  app.add_option("--write-request", write_request_text, "size of each write request")
      ->capture_default_str()
      ->check(ByteSize(kMaxRequestBytes));
  app.add_option("--mode", mode_text, "read order: seq | random")
      ->capture_default_str()
      ->check(CLI::IsMember({"seq", "random"}));
  app.add_option("--runs", options.runs, "repetitions of each phase")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  app.add_option("--phase", options.phase, "write | read | all | metadata")
      ->capture_default_str()
      ->check(CLI::IsMember({"write", "read", "all", "metadata"}));
  app.add_option("--seed", options.seed, "seed of the data bytes, random reads and stat order")
      ->capture_default_str()
      ->check(NotNegative());
  app.add_flag("--json", options.json, "one JSON object per phase per line on stdout");
  app.add_option("--metadata-files", options.metadata_files, "files of the metadata phase")
      ->capture_default_str()
      ->check(CLI::Range(uint32_t{1}, uint32_t{10000000}));
  bool no_drop_caches = false;
  app.add_flag("--no-drop-caches", no_drop_caches, "do not drop the page cache before reads");
  app.add_flag("--keep", options.keep, "with --phase all, leave the data files in DIR");

  // An unknown flag is named as such, even when DIR is missing too (CLI11 reports the missing
  // DIR first).
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-' || arg == "-h" || arg == "--help") continue;
    if (std::isdigit(static_cast<unsigned char>(arg[1]))) continue;  // a negative value
    const std::string name = arg.substr(0, arg.find('='));
    if (app.get_option_no_throw(name) == nullptr) {
      std::cerr << "orthofs-bench: unknown flag '" << name << "' (see --help)\n";
      return kExitUsage;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::cerr << "orthofs-bench: " << e.what() << " (see --help)\n";
    return kExitUsage;
  }
  // The validators above have accepted these texts already.
  options.file_bytes = *ParseByteSize(size_text);
  options.request_bytes = *ParseByteSize(request_text);
  options.write_request_bytes = *ParseByteSize(write_request_text);
  options.mode = *ParseAccessMode(mode_text);
  options.drop_caches = !no_drop_caches;
  return RunBench(options);
}
