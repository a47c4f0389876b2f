// The largest size the kernel may hold for each file (its i_size), as the mount can know it:
// set by the attributes the mount answers with, raised by the kernel's own writes.
//
// Why the mount needs it: without libfuse's automatic invalidation Linux asks for a file's
// attributes only when a read reaches past the size it holds. When another client shrank the
// file, two of the kernel's read-ahead requests past the new end can come back short in either
// order, and whichever comes first sets the size; a later request's short answer arriving first
// leaves the kernel a size too large, with zeros beyond the real end. An open that finds the
// file shorter than the size the kernel may hold reads it without the page cache instead
// (requests in order, each short answer final).
//
// Bounded: past `max_files` files it starts over, forgetting what it knew (a shrink within the
// kernel's attribute timeout is then not seen, as before this existed). Pure logic, no locking.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>

namespace orthofs {

class KernelSizes {
 public:
  explicit KernelSizes(size_t max_files = size_t{1} << 20);

  // The mount answered the kernel with the file's attributes, carrying `size`.
  void Told(uint64_t fno, uint64_t size);
  // The kernel wrote the file up to `end` (it raises its size by itself).
  void Grew(uint64_t fno, uint64_t end);
  // True if the kernel may hold a size larger than `size` for the file.
  bool MayExceed(uint64_t fno, uint64_t size) const;

  size_t tracked_files() const { return sizes_.size(); }

 private:
  uint64_t& Entry(uint64_t fno);  // inserted at 0 if absent

  const size_t max_files_;
  std::unordered_map<uint64_t, uint64_t> sizes_;
};

}  // namespace orthofs
