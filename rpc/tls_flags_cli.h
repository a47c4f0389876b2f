// The TLS flags every CLI11 program (orthofs-osd, orthofs) takes, worded once. orthofs-mount,
// which parses mount(8) syntax, takes the same names (mount/mount_args.h).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "rpc/tls.h"

namespace orthofs {

inline void AddTlsFlags(CLI::App* app, TlsFlags* flags, const std::string& identity) {
  app->add_option("--tls-dir", flags->dir,
                  "directory of ca.crt and " + identity +
                      ".crt/.key, made by deploy/make-certs.sh (default $ORTHOFS_TLS_DIR or "
                      "/etc/orthofs/tls)");
  app->add_option("--tls-ca", flags->ca, "cluster CA certificate (default TLS_DIR/ca.crt)");
  app->add_option("--tls-cert", flags->cert,
                  "this program's certificate (default TLS_DIR/" + identity + ".crt)");
  app->add_option("--tls-key", flags->key,
                  "this program's private key (default TLS_DIR/" + identity + ".key)");
  app->add_flag("--insecure", flags->insecure,
                "plaintext gRPC without authentication (only on a trusted network)");
}

}  // namespace orthofs
