#include "common/disk_model.h"

namespace orthofs {

Result<std::optional<DiskModelParams>> ParseDiskModel(std::string_view name) {
  if (name == "none") return std::optional<DiskModelParams>();
  if (name == "hdd") return std::optional<DiskModelParams>(DiskModelParams{});
  return Status::InvalidArgument("disk model '" + std::string(name) + "' is not one of none, hdd");
}

bool DiskModel::Continues(const Oid& next) const {
  if (!head_) return false;
  const Oid& h = *head_;
  const bool same_copy =
      h.fnso == next.fnso && h.fno == next.fno && h.type == next.type && h.flag == next.flag;
  return same_copy && (next.offset == h.offset || next.offset == h.offset + 1);
}

std::chrono::microseconds DiskModel::ReadTime(const Oid& first, const Oid& last, uint64_t bytes) {
  ++reads_;
  std::chrono::microseconds t{0};
  if (!Continues(first)) {
    ++seeks_;
    t += params_.seek + params_.rotation;
  }
  t += std::chrono::microseconds(
      static_cast<int64_t>(static_cast<double>(bytes) / params_.transfer_mb_s));
  head_ = last;
  return t;
}

}  // namespace orthofs
