// Which version a change gives an object. Versions only grow: each change takes the stored
// version (or tombstone's) plus one, or more when the writer asks for a floor.
//
// The floor is a hybrid clock: the writing client's wall clock in microseconds. Without it the
// two copies of an object count their versions each on its own, and a double outage forks
// them: while copy B's OSD is down copy A takes a change (A: v5, with a repair record for B);
// then A's OSD goes down before the record is replayed, and B, still at v4, takes another
// change (B: v5, a record for A). Both copies hold v5 with different bytes, each replay finds
// "not newer" at the other copy, and the later change can be lost to the earlier one. With the
// floor the later change has the higher version, and the replays agree on it. Clocks of
// different hosts need only agree to within the time between the two outages.
#pragma once

#include <chrono>
#include <cstdint>

namespace orthofs {

// The version after a change of an object stored at `stored` (0: absent), at least `floor`.
uint64_t NextObjectVersion(uint64_t stored, uint64_t floor);

// The floor for a change made at `now`: microseconds since the Unix epoch (0 before it).
uint64_t VersionFloorAt(std::chrono::system_clock::time_point now);

// How far ahead of an OSD's clock a writer's floor may be.
inline constexpr std::chrono::hours kMaxVersionFloorLead{24};

// The floor an OSD applies for a writer's `asked` one, at its own clock `now`: cut to
// kMaxVersionFloorLead ahead of it. A writer's clock that far off (or a crafted request) must
// not push versions to the top, where they stop growing.
uint64_t BoundedVersionFloor(uint64_t asked, std::chrono::system_clock::time_point now);

}  // namespace orthofs
