// Process-wide settings for the daemons' data path (OSD and mount), applied once at start.
#pragma once

#include <cstdint>

namespace orthofs {

// Keeps glibc from mmap'ing and unmapping every object-sized buffer (each time paying page
// faults) and from spreading them over more arenas than there are cores, and turns off abseil's
// mutex deadlock detection, which Debian's build leaves on and which shows up in gRPC-heavy
// profiles. A malloc parameter the environment sets (MALLOC_ARENA_MAX, GLIBC_TUNABLES, ...)
// is left as set.
void TuneProcessForDataPath();

// Whether the user set a malloc parameter for this process, which glibc has read already: the
// variable itself (MALLOC_ARENA_MAX) or its tunable in GLIBC_TUNABLES ("glibc.malloc.arena_max").
bool SetByEnvironment(const char* variable, const char* tunable);

// Raises the soft limit of open files to the hard one and returns it: an OSD keeps every data
// log segment open (64 MiB each), and the usual soft limit of 1024 would end at 64 GiB.
uint64_t RaiseOpenFileLimit();

// The machine's physical memory (0 if unknown), for sizing caches by default.
uint64_t PhysicalMemoryBytes();

}  // namespace orthofs
