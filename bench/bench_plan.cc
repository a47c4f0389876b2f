#include "bench/bench_plan.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <random>
#include <string>
#include <utility>

namespace orthofs {
namespace {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// The multiplier of a size suffix, 0 if the suffix is not one we accept.
uint64_t SuffixMultiplier(std::string_view suffix) {
  static constexpr std::pair<std::string_view, uint64_t> kSuffixes[] = {
      {"", 1},
      {"K", uint64_t{1} << 10},
      {"KiB", uint64_t{1} << 10},
      {"M", uint64_t{1} << 20},
      {"MiB", uint64_t{1} << 20},
      {"G", uint64_t{1} << 30},
      {"GiB", uint64_t{1} << 30},
  };
  for (const auto& [name, multiplier] : kSuffixes) {
    if (EqualsIgnoreCase(suffix, name)) return multiplier;
  }
  return 0;
}

// A uniform draw in [0, bound) from one 64-bit output (Lemire's multiply-shift): the same on
// every platform, unlike std::uniform_int_distribution. The bias, under bound / 2^64, is far
// below anything a benchmark can notice.
uint64_t DrawBelow(std::mt19937_64& rng, uint64_t bound) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(rng()) * bound) >> 64);
}

Status CheckPlanShape(uint32_t files, uint64_t file_bytes, uint64_t request_bytes) {
  if (files == 0) return Status::InvalidArgument("the number of files must be at least 1");
  if (file_bytes == 0) return Status::InvalidArgument("the file size must be at least 1 byte");
  if (request_bytes == 0) {
    return Status::InvalidArgument("the request size must be at least 1 byte");
  }
  const uint64_t per_file = RequestsPerFile(file_bytes, request_bytes);
  if (per_file > kMaxPlanRequests / files) {
    return Status::InvalidArgument(std::to_string(files) + " files x " + std::to_string(per_file) +
                                   " requests is over the limit of " +
                                   std::to_string(kMaxPlanRequests) +
                                   " requests; use larger requests or smaller files");
  }
  return Status::Ok();
}

BenchRequest Block(uint32_t file, uint64_t block, uint64_t file_bytes, uint64_t request_bytes) {
  const uint64_t offset = block * request_bytes;
  return BenchRequest{file, offset, std::min(request_bytes, file_bytes - offset)};
}

}  // namespace

Result<uint64_t> ParseByteSize(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return Status::InvalidArgument("bad size '" + std::string(text) + "': " + std::string(why));
  };
  uint64_t number = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  // from_chars on an unsigned type takes digits only: no sign, no spaces, no "0x".
  auto [digits_end, error] = std::from_chars(begin, end, number);
  if (error == std::errc::result_out_of_range) return bad("too large");
  if (error != std::errc()) return bad("expected a number such as 4096, 16K, 100M or 1G");
  const uint64_t multiplier = SuffixMultiplier(std::string_view(digits_end, end - digits_end));
  if (multiplier == 0) {
    return bad("the unit must be K, M or G (1024-based; also KiB, MiB, GiB) or none for bytes");
  }
  if (number == 0) return bad("must be more than 0");
  if (number > UINT64_MAX / multiplier) return bad("too large");
  return number * multiplier;
}

Result<AccessMode> ParseAccessMode(std::string_view name) {
  if (name == "seq") return AccessMode::kSequential;
  if (name == "random") return AccessMode::kRandom;
  return Status::InvalidArgument("unknown mode '" + std::string(name) +
                                 "': expected seq or random");
}

std::string_view AccessModeName(AccessMode mode) {
  return mode == AccessMode::kRandom ? "random" : "seq";
}

uint64_t RequestsPerFile(uint64_t file_bytes, uint64_t request_bytes) {
  if (request_bytes == 0) return 0;
  return file_bytes / request_bytes + (file_bytes % request_bytes != 0 ? 1 : 0);
}

Result<std::vector<BenchRequest>> MakeReadPlan(const ReadPlanOptions& options) {
  ORTHOFS_RETURN_IF_ERROR(CheckPlanShape(options.files, options.file_bytes, options.request_bytes));
  const uint64_t per_file = RequestsPerFile(options.file_bytes, options.request_bytes);
  std::vector<BenchRequest> plan;
  plan.reserve(per_file * options.files);
  std::mt19937_64 rng(options.seed);
  for (uint64_t round = 0; round < per_file; ++round) {
    for (uint32_t file = 0; file < options.files; ++file) {
      const uint64_t block = options.mode == AccessMode::kRandom ? DrawBelow(rng, per_file) : round;
      plan.push_back(Block(file, block, options.file_bytes, options.request_bytes));
    }
  }
  return plan;
}

Result<std::vector<BenchRequest>> MakeWritePlan(uint32_t files, uint64_t file_bytes,
                                                uint64_t request_bytes) {
  ORTHOFS_RETURN_IF_ERROR(CheckPlanShape(files, file_bytes, request_bytes));
  const uint64_t per_file = RequestsPerFile(file_bytes, request_bytes);
  std::vector<BenchRequest> plan;
  plan.reserve(per_file * files);
  for (uint32_t file = 0; file < files; ++file) {
    for (uint64_t block = 0; block < per_file; ++block) {
      plan.push_back(Block(file, block, file_bytes, request_bytes));
    }
  }
  return plan;
}

std::vector<uint32_t> ShuffledOrder(uint32_t count, uint64_t seed) {
  std::vector<uint32_t> order(count);
  for (uint32_t i = 0; i < count; ++i) order[i] = i;
  std::mt19937_64 rng(seed);
  for (uint32_t i = count; i > 1; --i) {
    std::swap(order[i - 1], order[DrawBelow(rng, i)]);
  }
  return order;
}

}  // namespace orthofs
