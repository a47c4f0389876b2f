// Which directory the kernel holds under each (parent, name), as the mount told it: lookups,
// mkdirs and readdirplus answers name directories to the kernel, which caches those names
// (entry timeout) and acts on its cache.
//
// Why the mount needs it: an rmdir or rename reaches the mount as (parent, name) only. When
// another client renamed the directory the kernel has under that name and made a new one
// there, the mount would remove (or move) the new one and answer success; the kernel then
// marks the directory it holds removed, though it lives on under its new name: listings and
// lookups under it fail in this mount until the kernel drops it. Answering ESTALE instead
// makes the kernel look the name up again (its one retry of the call) and act on the
// directory the name names now.
//
// Bounded: past `max_names` names it starts over, forgetting what it knew (a stale name is
// then not caught, as before this existed). Pure logic, no locking.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace orthofs {

class KernelDentries {
 public:
  explicit KernelDentries(size_t max_names = size_t{1} << 18);

  // The mount told the kernel that `name` in `parent` is directory `fno`.
  void Told(uint64_t parent, std::string_view name, uint64_t fno);
  // The name is gone from the kernel's view (removed, or moved away by this mount).
  void Forget(uint64_t parent, std::string_view name);
  // The directory the kernel may hold under the name, if the mount told it one.
  std::optional<uint64_t> Held(uint64_t parent, std::string_view name) const;

  size_t tracked_names() const { return names_.size(); }

 private:
  static std::string Key(uint64_t parent, std::string_view name);

  const size_t max_names_;
  std::unordered_map<std::string, uint64_t> names_;
};

}  // namespace orthofs
