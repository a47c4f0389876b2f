// How a client reserves file numbers: a batch at a time, by a conditional increment of the
// namespace's SUPER object (client/namespace.cc). No central server hands them out.
//
// A double outage can fork the SUPER object like any other: while copy B's OSD is down, a
// client increments copy A; A's OSD goes down before the repair record is replayed, and
// another client increments B, which still holds the old counter. Both would hand out the same
// numbers, and two files would share their objects. A batch reserved while either copy's OSD
// is believed down therefore starts a random distance ahead of the counter (up to 2^40
// numbers), so the two sides of a fork reserve different numbers. A batch reserved without the
// jump is used only when its increment committed on the original and the replica followed;
// an increment that committed on the replica alone, or that the replica could not follow,
// leaves its batch unused and the next batch jumps. A fork has a side that committed on the
// replica alone (the original's OSD unreachable), and every batch that side uses jumped; the
// original takes one conditional increment per version, so at most one side is unjumped
// (given durable increments: they are synced). With all OSDs up batches stay dense.
#pragma once

#include <cstdint>
#include <optional>

#include "common/status.h"

namespace orthofs {

// Numbers per batch.
inline constexpr uint64_t kFnoBatch = 1024;
// A jumped batch starts 1 to this many batches ahead of the counter.
inline constexpr uint64_t kMaxFnoJumpBatches = uint64_t{1} << 30;

struct FnoBatch {
  uint64_t first = 0;  // this client's numbers are [first, end)
  uint64_t end = 0;    // the counter's new value
};

// The batch reserved from the counter `next_fno`. With `random` (any 64-bit random number),
// the batch jumps ahead as described above; near the top of the number space, where the jump
// does not fit, it does not jump. NoSpace when no whole batch is left.
Result<FnoBatch> NextFnoBatch(uint64_t next_fno, std::optional<uint64_t> random);

}  // namespace orthofs
