#include "common/peer_role.h"

#include <charconv>

namespace orthofs {

std::optional<uint32_t> OsdIdOfCertificateName(std::string_view name) {
  constexpr std::string_view kPrefix = "osd.";
  if (!name.starts_with(kPrefix)) return std::nullopt;
  const std::string_view digits = name.substr(kPrefix.size());
  if (digits.empty() || (digits.size() > 1 && digits[0] == '0')) return std::nullopt;
  uint32_t id = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return id;
}

std::string OsdCertificateName(uint32_t id) { return "osd." + std::to_string(id); }

PeerRole RoleOfCertificateName(std::string_view common_name) {
  if (common_name == kAdminCertificateName) return PeerRole::kAdmin;
  if (OsdIdOfCertificateName(common_name)) return PeerRole::kOsd;
  return PeerRole::kClient;
}

bool RoleMayMake(PeerRole role, CallClass call) {
  switch (call) {
    case CallClass::kData:
      return true;
    case CallClass::kPeer:
      return role == PeerRole::kOsd || role == PeerRole::kAdmin;
    case CallClass::kAdmin:
      return role == PeerRole::kAdmin;
  }
  return false;
}

const char* PeerRoleName(PeerRole role) {
  switch (role) {
    case PeerRole::kClient:
      return "client";
    case PeerRole::kOsd:
      return "osd";
    case PeerRole::kAdmin:
      return "admin";
  }
  return "unknown";
}

}  // namespace orthofs
