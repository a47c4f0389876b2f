// lseek(2)'s SEEK_DATA and SEEK_HOLE over a file stored as fixed-size objects. An object that
// was never written (or was punched out) is not stored and reads as zeros: it is a hole. A
// stored object counts as data whole, zeros and all, as lseek allows ("data" may hold zeros);
// the end of the file is a hole too.
#pragma once

#include <cstdint>
#include <optional>
#include <set>

namespace orthofs {

enum class SeekTarget { kData, kHole };

// The offset lseek(fd, offset, SEEK_DATA or SEEK_HOLE) answers for a file of `size` bytes whose
// stored objects have the indexes in `stored` (others may be listed too; those past the size
// are ignored). nullopt means ENXIO: the offset is at or past the size, or no data follows it.
std::optional<uint64_t> SeekInObjects(const std::set<uint64_t>& stored, uint64_t object_size,
                                      uint64_t size, uint64_t offset, SeekTarget target);

// Whether `stored`, the stored indexes from `first` up to its largest (all of them: a file's
// objects listed in ascending order, stopped early), already decides the answer at `first`:
// SEEK_DATA once it holds any index, SEEK_HOLE once it holds one past a gap. A listing stops
// there instead of reading the rest of a large file.
bool SeekDecided(const std::set<uint64_t>& stored, uint64_t first, SeekTarget target);

}  // namespace orthofs
