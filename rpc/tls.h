// The TLS identity of a program (OSD, mount, admin tool): the cluster CA, its own certificate
// and key, loaded and checked at start so that a wrong file gives a clear message instead of
// failing handshakes later. Channels and servers built from it speak mutual TLS; without one
// (--insecure) they speak plaintext.
#pragma once

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"

namespace orthofs {

// $ORTHOFS_TLS_DIR, else /etc/orthofs/tls.
std::string DefaultTlsDir();

// Where the files are. Empty ca/cert/key default to DIR/ca.crt, DIR/NAME.crt, DIR/NAME.key,
// NAME being the program's default identity (osd.<id>, client, admin).
struct TlsFlags {
  std::string dir = DefaultTlsDir();
  std::string ca;
  std::string cert;
  std::string key;
  bool insecure = false;
};

struct TlsIdentity {
  std::string ca_pem;
  std::string cert_pem;
  std::string key_pem;
  std::string name;       // the certificate's common name
  int64_t not_after = 0;  // when the certificate expires (Unix seconds)
};

// nullptr with flags.insecure. Otherwise the files, checked: readable PEM, the key belongs to
// the certificate, the certificate is signed by the CA and valid now.
Result<std::shared_ptr<const TlsIdentity>> LoadTlsIdentity(const TlsFlags& flags,
                                                           const std::string& default_name);

// Plaintext for nullptr. Clients additionally expect the server's certificate name to be
// `server_name` (an OSD's, see common/peer_role.h); set it with TlsChannelArguments.
std::shared_ptr<grpc::ChannelCredentials> ChannelCredentialsFor(const TlsIdentity* tls);
std::shared_ptr<grpc::ServerCredentials> ServerCredentialsFor(const TlsIdentity* tls);
void SetExpectedServerName(const TlsIdentity* tls, const std::string& server_name,
                           grpc::ChannelArguments* args);

// The caller's certificate name on a TLS connection, empty without one.
std::string PeerCertificateName(const grpc::ServerContext& context);

}  // namespace orthofs
