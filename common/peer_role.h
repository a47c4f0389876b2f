// Who may call what on an OSD. With TLS every peer presents a certificate of the cluster CA;
// its common name is its identity: "admin" for operators' tools, "osd.<id>" for OSDs, any
// other name for clients (deploy/make-certs.sh names them "client" or "client.<host>"). An OSD
// checks each call against the caller's role; without TLS (--insecure) there is no identity
// and every call is allowed, which is why plaintext must be asked for explicitly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace orthofs {

enum class PeerRole {
  kClient,  // data and status calls
  kOsd,     // also the calls OSDs make to each other (repair pushes, prefetch)
  kAdmin,   // also operators' calls: stats reset, log level, repair on demand
};

// What a call needs. Ordered: a role may make the calls of the roles before it.
enum class CallClass { kData, kPeer, kAdmin };

PeerRole RoleOfCertificateName(std::string_view common_name);
bool RoleMayMake(PeerRole role, CallClass call);
const char* PeerRoleName(PeerRole role);

// The name in OSD `id`'s certificate (subject CN and DNS subjectAltName). Clients verify the
// server they reach presents exactly this name, so an OSD cannot answer for another.
std::string OsdCertificateName(uint32_t id);
// The OSD id of an "osd.<id>" name, if it is one.
std::optional<uint32_t> OsdIdOfCertificateName(std::string_view common_name);

inline constexpr std::string_view kAdminCertificateName = "admin";

}  // namespace orthofs
