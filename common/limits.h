// Protocol limits shared by OSDs (which enforce them) and clients (which stay inside them).
#pragma once

#include <cstdint>

namespace orthofs {

// Ops in one multi-object transaction.
inline constexpr int kMaxTxnOps = 64;
// Objects in one List page.
inline constexpr uint32_t kDefaultListLimit = 1000;
inline constexpr uint32_t kMaxListLimit = 10000;
// Bytes of object data in one List page with data.
inline constexpr uint64_t kMaxListPageBytes = 4 << 20;

// Reads in one ReadMany call, and the object bytes the reads of one call may cover together
// (reads x the map's object size; a single read of any object is always allowed): the reply
// stays well inside the message limits of both sides.
inline constexpr int kMaxReadManyReads = 64;
inline constexpr uint64_t kMaxReadManyBytes = 4 << 20;
// Deletes in one DeleteMany call: a reply of a few kilobytes.
inline constexpr int kMaxDeleteManyDeletes = 256;

}  // namespace orthofs
