#include "common/kernel_dentries.h"

namespace orthofs {

KernelDentries::KernelDentries(size_t max_names) : max_names_(max_names) {}

std::string KernelDentries::Key(uint64_t parent, std::string_view name) {
  std::string key = std::to_string(parent);
  key += '/';
  key += name;
  return key;
}

void KernelDentries::Told(uint64_t parent, std::string_view name, uint64_t fno) {
  if (names_.size() >= max_names_) names_.clear();
  names_[Key(parent, name)] = fno;
}

void KernelDentries::Forget(uint64_t parent, std::string_view name) {
  names_.erase(Key(parent, name));
}

std::optional<uint64_t> KernelDentries::Held(uint64_t parent, std::string_view name) const {
  auto it = names_.find(Key(parent, name));
  if (it == names_.end()) return std::nullopt;
  return it->second;
}

}  // namespace orthofs
