// Close-to-open for what a client and its kernel cached of files: the INODE version the cached
// bytes of each file belong to.
//
// An open compares the file's INODE version with the one recorded here. The same version means
// nobody changed the file since: the kernel may keep its pages. Another version means another
// client changed it: what is cached goes. A file this client never opened since it started has
// nothing cached anywhere, so there is nothing to drop (and an open need not race its own
// reader by invalidating pages the reader is filling).
//
// Forgetting entries only costs re-reads, so the table is simply cleared when it grows large;
// from then on, a file without an entry may have been cached before and counts as changed.
// Pure logic, no locking.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>

namespace orthofs {

class CachedVersions {
 public:
  enum class Cached {
    kNothing,  // never opened here: nothing of it is cached
    kValid,    // cached at this very version
    kStale,    // may be cached at another version: drop it
  };

  explicit CachedVersions(size_t capacity = 1 << 16) : capacity_(capacity) {}

  // At an open that found the file at `version`: what the caches hold of it. Records `version`
  // as what they hold from now on.
  Cached Open(uint64_t fno, uint64_t version);

  // This client changed the file itself, from `version - 1` to `version`: its caches stay
  // valid if they were at `version - 1`. Returns false when they were not (someone else changed
  // the file in between, or nothing was known): the caller drops them and calls Forget.
  bool OwnChange(uint64_t fno, uint64_t version);

  // The cached bytes of the file may be stale: the next open finds kStale.
  void Forget(uint64_t fno);

 private:
  void ClearIfFull();

  size_t capacity_;
  // No value: cached at an unknown version (forgotten).
  std::map<uint64_t, std::optional<uint64_t>> versions_;
  bool cleared_ = false;  // a file without an entry may have been cached before
};

}  // namespace orthofs
