#include "rpc/tls.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

namespace orthofs {
namespace {

constexpr const char* kHint =
    " (make certificates with deploy/make-certs.sh, or pass --insecure for plaintext)";

Result<std::string> ReadPemFile(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::InvalidArgument("TLS " + what + " " + path + ": " + std::strerror(errno) +
                                   kHint);
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().empty()) return Status::InvalidArgument("TLS " + what + " " + path + " is empty");
  return text.str();
}

std::string OpensslError() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "not PEM";
  char text[256];
  ERR_error_string_n(code, text, sizeof text);
  return text;
}

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct StoreFree {
  void operator()(X509_STORE* s) const { X509_STORE_free(s); }
};
struct StoreCtxFree {
  void operator()(X509_STORE_CTX* c) const { X509_STORE_CTX_free(c); }
};
using Bio = std::unique_ptr<BIO, BioFree>;
using Cert = std::unique_ptr<X509, X509Free>;

Bio MemoryBio(const std::string& pem) {
  return Bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

// The certificate and key belong together, the CA signed the certificate, and it is valid now.
// Fills in the certificate's name and expiry.
Status CheckIdentity(TlsIdentity* id, const TlsFlags& files) {
  Bio ca_bio = MemoryBio(id->ca_pem);
  std::unique_ptr<X509_STORE, StoreFree> store(X509_STORE_new());
  int cas = 0;
  while (X509* ca = PEM_read_bio_X509(ca_bio.get(), nullptr, nullptr, nullptr)) {
    X509_STORE_add_cert(store.get(), ca);
    X509_free(ca);
    ++cas;
  }
  ERR_clear_error();  // the end of the file reads as an error
  if (cas == 0) return Status::InvalidArgument("TLS CA " + files.ca + " holds no certificate");

  Bio cert_bio = MemoryBio(id->cert_pem);
  Cert cert(PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr));
  if (!cert) {
    return Status::InvalidArgument("TLS certificate " + files.cert + ": " + OpensslError());
  }
  Bio key_bio = MemoryBio(id->key_pem);
  std::unique_ptr<EVP_PKEY, KeyFree> key(
      PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
  if (!key) return Status::InvalidArgument("TLS key " + files.key + ": " + OpensslError());
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    ERR_clear_error();
    return Status::InvalidArgument("TLS key " + files.key + " does not belong to certificate " +
                                   files.cert);
  }
  std::unique_ptr<X509_STORE_CTX, StoreCtxFree> ctx(X509_STORE_CTX_new());
  X509_STORE_CTX_init(ctx.get(), store.get(), cert.get(), nullptr);
  if (X509_verify_cert(ctx.get()) != 1) {
    const int error = X509_STORE_CTX_get_error(ctx.get());
    ERR_clear_error();
    return Status::InvalidArgument("TLS certificate " + files.cert + " is not valid for CA " +
                                   files.ca + ": " + X509_verify_cert_error_string(error));
  }
  char name[256] = {};
  if (X509_NAME_get_text_by_NID(X509_get_subject_name(cert.get()), NID_commonName, name,
                                sizeof name) <= 0) {
    return Status::InvalidArgument("TLS certificate " + files.cert + " has no common name");
  }
  id->name = name;
  struct tm expiry {};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(cert.get()), &expiry) == 1) {
    id->not_after = static_cast<int64_t>(timegm(&expiry));
  }
  return Status::Ok();
}

}  // namespace

std::string DefaultTlsDir() {
  const char* env = std::getenv("ORTHOFS_TLS_DIR");
  return env != nullptr && *env != '\0' ? env : "/etc/orthofs/tls";
}

Result<std::shared_ptr<const TlsIdentity>> LoadTlsIdentity(const TlsFlags& flags,
                                                           const std::string& default_name) {
  if (flags.insecure) return std::shared_ptr<const TlsIdentity>();
  TlsFlags files = flags;
  if (files.ca.empty()) files.ca = flags.dir + "/ca.crt";
  if (files.cert.empty()) files.cert = flags.dir + "/" + default_name + ".crt";
  if (files.key.empty()) files.key = flags.dir + "/" + default_name + ".key";
  auto id = std::make_shared<TlsIdentity>();
  Result<std::string> ca = ReadPemFile(files.ca, "CA");
  if (!ca.ok()) return ca.status();
  Result<std::string> cert = ReadPemFile(files.cert, "certificate");
  if (!cert.ok()) return cert.status();
  Result<std::string> key = ReadPemFile(files.key, "key");
  if (!key.ok()) return key.status();
  id->ca_pem = std::move(*ca);
  id->cert_pem = std::move(*cert);
  id->key_pem = std::move(*key);
  ORTHOFS_RETURN_IF_ERROR(CheckIdentity(id.get(), files));
  if (id->not_after - std::time(nullptr) < 30 * 24 * 3600) {
    spdlog::warn("TLS certificate {} expires in less than 30 days", files.cert);
  }
  return std::shared_ptr<const TlsIdentity>(std::move(id));
}

std::shared_ptr<grpc::ChannelCredentials> ChannelCredentialsFor(const TlsIdentity* tls) {
  if (tls == nullptr) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = tls->ca_pem;
  options.pem_private_key = tls->key_pem;
  options.pem_cert_chain = tls->cert_pem;
  return grpc::SslCredentials(options);
}

std::shared_ptr<grpc::ServerCredentials> ServerCredentialsFor(const TlsIdentity* tls) {
  if (tls == nullptr) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions options(
      GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = tls->ca_pem;
  options.pem_key_cert_pairs.push_back({tls->key_pem, tls->cert_pem});
  return grpc::SslServerCredentials(options);
}

void SetExpectedServerName(const TlsIdentity* tls, const std::string& server_name,
                           grpc::ChannelArguments* args) {
  // The map addresses OSDs by IP or host; their certificates name them by id instead.
  if (tls != nullptr) args->SetSslTargetNameOverride(server_name);
}

std::string PeerCertificateName(const grpc::ServerContext& context) {
  std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  if (auth == nullptr || !auth->IsPeerAuthenticated()) return "";
  for (const grpc::string_ref& value : auth->FindPropertyValues("x509_common_name")) {
    return std::string(value.data(), value.size());
  }
  return "";
}

}  // namespace orthofs
