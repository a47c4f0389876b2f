// The request plans of orthofs-bench, a Bonnie-style benchmark after the modified Bonnie of the
// paper: N files written one after the other with large requests, then read with small requests
// round-robin across the files. Pure logic, no I/O: the tool times the plans these produce.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace orthofs {

// "4096", "16K", "100M", "1G"; K, M and G are 1024-based and may also be written KiB, MiB, GiB,
// in any case ("16k", "16kib"). Zero, overflow, signs, spaces and other suffixes are errors.
Result<uint64_t> ParseByteSize(std::string_view text);

enum class AccessMode { kSequential, kRandom };

// "seq" | "random".
Result<AccessMode> ParseAccessMode(std::string_view name);
std::string_view AccessModeName(AccessMode mode);

// One request: `length` bytes at `offset` of file number `file`.
struct BenchRequest {
  uint32_t file = 0;
  uint64_t offset = 0;
  uint64_t length = 0;

  bool operator==(const BenchRequest&) const = default;
};

// The most requests a plan may hold (16 Mi requests, 384 MiB of plan): beyond it the tool
// would spend more time and memory on the plan than the benchmark is worth.
inline constexpr uint64_t kMaxPlanRequests = uint64_t{1} << 24;

// Requests needed to cover one file: ceil(file_bytes / request_bytes).
uint64_t RequestsPerFile(uint64_t file_bytes, uint64_t request_bytes);

struct ReadPlanOptions {
  uint32_t files = 5;
  uint64_t file_bytes = uint64_t{100} << 20;
  uint64_t request_bytes = uint64_t{16} << 10;
  AccessMode mode = AccessMode::kSequential;
  uint64_t seed = 1;
};

// The read phase: files * RequestsPerFile requests, the file index round-robin (0, 1, ..,
// files-1, 0, 1, ..).
//  - kSequential: the k-th round reads block k of every file (file0 req0, file1 req0, ..,
//    file0 req1, ..); the last block of a file is short when file_bytes is not a multiple of
//    request_bytes.
//  - kRandom: each request reads a block (offset a multiple of request_bytes, inside the file)
//    drawn from a std::mt19937_64 seeded with `seed`. The same options and seed give the same
//    plan on every platform: mt19937_64 is fully specified by the standard, and the draw is
//    reduced to a block number by our own multiply-shift, not by std::uniform_int_distribution
//    whose algorithm each standard library chooses.
// InvalidArgument if files, file_bytes or request_bytes is 0, or the plan would exceed
// kMaxPlanRequests.
Result<std::vector<BenchRequest>> MakeReadPlan(const ReadPlanOptions& options);

// The write phase: each file written sequentially from offset 0 with request_bytes requests
// (the last one short when needed), one file after the other. Same errors as MakeReadPlan.
Result<std::vector<BenchRequest>> MakeWritePlan(uint32_t files, uint64_t file_bytes,
                                                uint64_t request_bytes);

// A permutation of 0..count-1 (Fisher-Yates over a std::mt19937_64 seeded with `seed`),
// reproducible across platforms for the same reason as the random read plan.
std::vector<uint32_t> ShuffledOrder(uint32_t count, uint64_t seed);

}  // namespace orthofs
