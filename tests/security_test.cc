// Mutual TLS and the callers' roles, against real OSD processes: a cluster made the way
// deploy/make-certs.sh makes one (a CA, a certificate per OSD, "admin", "client"), and
// callers holding valid certificates, none, certificates of another CA, or certificates whose
// role does not allow the call.
#include <gtest/gtest.h>

#include <string>

#include "client/cluster_client.h"
#include "common/peer_role.h"
#include "rpc/tls.h"
#include "rpc/wire.h"
#include "tests/test_cluster.h"

namespace orthofs::testing {
namespace {

constexpr auto kShort = std::chrono::milliseconds(3000);

Oid SomeData(uint64_t fno) { return Oid{1, fno, 0, ObjectType::kData, CopyFlag::kOriginal}; }

wire::HealthRequest HealthAt(const TestCluster& cluster) {
  wire::HealthRequest r;
  r.set_epoch(cluster.map().epoch);
  return r;
}

// An identity from explicit files (the way an operator passes --tls-ca/--tls-cert/--tls-key).
std::shared_ptr<const TlsIdentity> Identity(const std::string& ca, const std::string& cert,
                                            const std::string& key) {
  TlsFlags flags;
  flags.ca = ca;
  flags.cert = cert;
  flags.key = key;
  Result<std::shared_ptr<const TlsIdentity>> id = LoadTlsIdentity(flags, "unused");
  EXPECT_TRUE(id.ok()) << id.status().ToString();
  return id.ok() ? *id : nullptr;
}

RpcOptions With(std::shared_ptr<const TlsIdentity> tls) {
  RpcOptions rpc;
  rpc.deadline = kShort;
  rpc.tls = std::move(tls);
  return rpc;
}

class SecurityTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { cluster_ = new TestCluster(TestClusterOptions{.osds = 3}); }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }
  static TestCluster* cluster_;
};
TestCluster* SecurityTest::cluster_ = nullptr;

// Clients with certificates of the cluster CA write and read both copies, whatever their name.
TEST_F(SecurityTest, ValidCertificatesAreAccepted) {
  cluster_->MakeCertificate("client.node7");
  for (const std::string name : {"client", "client.node7", "admin"}) {
    SCOPED_TRACE(name);
    ClusterClient client(cluster_->map(), cluster_->Rpc(name));
    const Oid oid = SomeData(100 + name.size());
    ASSERT_TRUE(client.WriteBothCopies(oid, "over TLS as " + name).ok());
    Result<wire::ReadResponse> read = client.Read(oid.OtherCopy());
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    EXPECT_EQ(read->data(), "over TLS as " + name);
  }
}

// `orthofs status --insecure` against a TLS cluster says why every OSD looks down.
TEST_F(SecurityTest, StatusInPlaintextAgainstTlsSaysSo) {
  CommandResult r = RunCommand({BinDir() + "/orthofs", "status", "--map", cluster_->map_path(),
                                "--insecure", "--timeout-ms", "2000"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("drop --insecure"), std::string::npos) << r.err;
}

// The handshake fails, so the call never reaches the service: plaintext, TLS without a client
// certificate, and a client certificate of another CA.
TEST_F(SecurityTest, CallersWithoutAValidCertificateAreRefused) {
  const OsdInfo osd = *cluster_->map().FindOsd(0);
  {
    OsdClient plaintext(osd, With(nullptr));
    Result<wire::HealthResponse> r = plaintext.Health(HealthAt(*cluster_));
    EXPECT_TRUE(r.status().Is(StatusCode::kUnavailable)) << r.status().ToString();
  }
  {
    // The CA is right (the client trusts the OSD), but the client shows no certificate.
    grpc::SslCredentialsOptions server_only;
    server_only.pem_root_certs = cluster_->Rpc("client").tls->ca_pem;
    grpc::ChannelArguments args = OrthoChannelArguments();
    args.SetSslTargetNameOverride(OsdCertificateName(0));
    auto channel = grpc::CreateCustomChannel(osd.address, grpc::SslCredentials(server_only), args);
    auto stub = wire::Osd::NewStub(channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kShort);
    wire::HealthResponse response;
    const grpc::Status st = stub->Health(&context, HealthAt(*cluster_), &response);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAVAILABLE) << st.error_message();
  }
  // Another cluster's CA and client certificate; trusting our CA does not help them.
  TempDir other;
  ASSERT_EQ(RunCommand({SourceDir() + "/deploy/make-certs.sh", "--dir", other.path(), "client"})
                .exit_code,
            0);
  // LoadTlsIdentity already refuses this combination: the certificate is not of this CA.
  EXPECT_FALSE(LoadTlsIdentity(TlsFlags{.ca = cluster_->tls_dir() + "/ca.crt",
                                        .cert = other.path() + "/client.crt",
                                        .key = other.path() + "/client.key"},
                               "client")
                   .ok());
  {
    // So build the credentials by hand, as a foreign program would.
    const auto theirs = Identity(other.path() + "/ca.crt", other.path() + "/client.crt",
                                 other.path() + "/client.key");
    ASSERT_NE(theirs, nullptr);
    grpc::SslCredentialsOptions foreign;
    foreign.pem_root_certs = cluster_->Rpc("client").tls->ca_pem;
    foreign.pem_cert_chain = theirs->cert_pem;
    foreign.pem_private_key = theirs->key_pem;
    grpc::ChannelArguments args = OrthoChannelArguments();
    args.SetSslTargetNameOverride(OsdCertificateName(0));
    auto stub = wire::Osd::NewStub(
        grpc::CreateCustomChannel(osd.address, grpc::SslCredentials(foreign), args));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kShort);
    wire::HealthResponse response;
    const grpc::Status st = stub->Health(&context, HealthAt(*cluster_), &response);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAVAILABLE) << st.error_message();
  }
  // And a client of the other cluster does not trust our OSDs.
  OsdClient other_cluster_client(
      osd, With(Identity(other.path() + "/ca.crt", other.path() + "/client.crt",
                         other.path() + "/client.key")));
  EXPECT_TRUE(
      other_cluster_client.Health(HealthAt(*cluster_)).status().Is(StatusCode::kUnavailable));
  // The cluster still serves its own clients.
  OsdClient ours(osd, cluster_->Rpc("client", kShort));
  EXPECT_TRUE(ours.Health(HealthAt(*cluster_)).ok());
}

// A client checks that the server is the OSD the map names: OSD 1 cannot answer for OSD 0.
TEST_F(SecurityTest, AnOsdCannotAnswerForAnother) {
  OsdInfo impostor = *cluster_->map().FindOsd(0);
  impostor.address = cluster_->map().FindOsd(1)->address;  // osd.1's server, expected as osd.0
  OsdClient client(impostor, cluster_->Rpc("client", kShort));
  Result<wire::HealthResponse> r = client.Health(HealthAt(*cluster_));
  EXPECT_TRUE(r.status().Is(StatusCode::kUnavailable)) << r.status().ToString();
}

// Admin calls need the admin certificate, OSD-to-OSD calls an OSD's (or the admin's); a
// client's certificate gets PERMISSION_DENIED and the OSD changes nothing.
TEST_F(SecurityTest, RolesDecideWhoMayCallWhat) {
  const OsdInfo osd = *cluster_->map().FindOsd(0);
  OsdClient client(osd, cluster_->Rpc("client", kShort));
  OsdClient peer(osd, cluster_->Rpc(OsdCertificateName(1), kShort));
  OsdClient admin(osd, cluster_->Rpc("admin", kShort));

  wire::RepairRequest repair;
  repair.set_epoch(cluster_->map().epoch);
  wire::StatsRequest reset;
  reset.set_reset(true);
  wire::LogLevelRequest debug;
  debug.set_level("debug");
  wire::PrefetchNotifyRequest notify;
  notify.set_epoch(cluster_->map().epoch);

  auto denied = [](const Status& st) { return st.Is(StatusCode::kPermissionDenied); };
  Result<wire::RepairResponse> r = client.Repair(repair);
  EXPECT_TRUE(denied(r.status())) << r.status().ToString();
  EXPECT_NE(r.status().message().find("'client'"), std::string::npos) << r.status().ToString();
  EXPECT_TRUE(denied(client.Stats(reset).status()));
  EXPECT_TRUE(denied(client.SetLogLevel(debug).status()));
  EXPECT_TRUE(denied(client.DropCaches({}).status()));
  EXPECT_TRUE(denied(client.PrefetchNotify(notify).status()));
  // Plain status is for everyone.
  EXPECT_TRUE(client.Stats({}).ok());

  // An OSD may ask a peer to replay repair records and notify it, not administer it.
  EXPECT_TRUE(peer.Repair(repair).ok());
  EXPECT_FALSE(denied(peer.PrefetchNotify(notify).status()));  // refused for its content only
  EXPECT_TRUE(denied(peer.Stats(reset).status()));
  EXPECT_TRUE(denied(peer.SetLogLevel(debug).status()));
  EXPECT_TRUE(denied(peer.DropCaches({}).status()));

  // The admin may do all of it.
  EXPECT_TRUE(admin.Repair(repair).ok());
  EXPECT_TRUE(admin.DropCaches({}).ok());
  Result<wire::LogLevelResponse> level = admin.SetLogLevel(debug);
  ASSERT_TRUE(level.ok()) << level.status().ToString();
  EXPECT_EQ(level->previous(), "warning");  // TestCluster starts OSDs with --log-level warn
  debug.set_level("warn");
  EXPECT_TRUE(admin.SetLogLevel(debug).ok());
  debug.set_level("loud");
  EXPECT_TRUE(admin.SetLogLevel(debug).status().Is(StatusCode::kInvalidArgument));
}

// The map-change calls: anyone may read the map, only the admin may change it or move copies,
// and only OSDs (or the admin) may hand copies over or list what they no longer own.
TEST_F(SecurityTest, MapChangesNeedTheAdminAndHandOversAnOsd) {
  const OsdInfo osd = *cluster_->map().FindOsd(0);
  OsdClient client(osd, cluster_->Rpc("client", kShort));
  OsdClient peer(osd, cluster_->Rpc(OsdCertificateName(1), kShort));
  OsdClient admin(osd, cluster_->Rpc("admin", kShort));
  auto denied = [](const Status& st) { return st.Is(StatusCode::kPermissionDenied); };

  Result<wire::MapResponse> map = client.GetMap({});
  ASSERT_TRUE(map.ok()) << map.status().ToString();
  EXPECT_EQ(map->map(), FormatClusterMap(cluster_->map()));
  EXPECT_TRUE(map->previous_map().empty());

  wire::SetMapRequest set_map;
  set_map.set_map(map->map());  // what it runs: a no-op for the admin
  EXPECT_TRUE(denied(client.SetMap(set_map).status()));
  EXPECT_TRUE(denied(peer.SetMap(set_map).status()));
  Result<wire::SetMapResponse> same = admin.SetMap(set_map);
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_EQ(same->epoch(), cluster_->map().epoch);
  set_map.set_map("epoch: [");
  EXPECT_TRUE(admin.SetMap(set_map).status().Is(StatusCode::kInvalidArgument));

  wire::MigrateRequest migrate;
  migrate.set_epoch(cluster_->map().epoch);
  migrate.set_source(1);
  EXPECT_TRUE(denied(client.Migrate(migrate).status()));
  EXPECT_TRUE(denied(peer.Migrate(migrate).status()));
  EXPECT_TRUE(admin.Migrate(migrate).ok());  // nothing to move

  wire::FetchRequest fetch;
  fetch.set_epoch(cluster_->map().epoch);
  *fetch.mutable_oid() = ToWire(Oid{1, 5, 0, ObjectType::kData, CopyFlag::kOriginal});
  EXPECT_TRUE(denied(client.Fetch(fetch).status()));
  EXPECT_FALSE(denied(peer.Fetch(fetch).status()));
  wire::DiscardRequest discard;
  discard.set_epoch(cluster_->map().epoch);
  *discard.mutable_oid() = fetch.oid();
  EXPECT_TRUE(denied(client.Discard(discard).status()));
  wire::ListRequest unowned;
  unowned.set_epoch(cluster_->map().epoch);
  unowned.set_unowned(true);
  EXPECT_TRUE(denied(client.List(unowned).status()));
  Result<wire::ListResponse> listed = peer.List(unowned);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_EQ(listed->objects_size(), 0);  // outside a rebalance every copy is owned
}

// stats --reset: the counters restart from zero for `orthofs stats`, only for the admin.
TEST_F(SecurityTest, StatsResetNeedsTheAdminAndRestartsTheCounters) {
  const Oid oid = SomeData(300);
  ClusterClient& admin = cluster_->client();
  ASSERT_TRUE(admin.WriteBothCopies(oid, "before the reset").ok());
  OsdClient* holder = admin.Osd(admin.placement().OsdFor(oid));
  ASSERT_GT(holder->Stats({})->counters().at("write_calls"), 0u);

  // Through the CLI, as a client: refused, nothing reset.
  std::vector<std::string> as_client = {BinDir() + "/orthofs", "stats", "--reset", "--map",
                                        cluster_->map_path()};
  for (const std::string& f : cluster_->SecurityFlags("client")) as_client.push_back(f);
  CommandResult refused = RunCommand(as_client);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("needs the admin certificate"), std::string::npos) << refused.err;
  ASSERT_GT(holder->Stats({})->counters().at("write_calls"), 0u);

  CommandResult reset = cluster_->Orthofs("stats", {"--reset", "--json"});
  ASSERT_EQ(reset.exit_code, 0) << reset.err;
  EXPECT_EQ(holder->Stats({})->counters().at("write_calls"), 0u);
  ASSERT_TRUE(admin.WriteBothCopies(oid, "after the reset").ok());
  EXPECT_EQ(holder->Stats({})->counters().at("write_calls"), 1u);
  // Levels are not counters: the cache still holds what it held.
  EXPECT_GT(holder->Stats({})->counters().at("cache_capacity_bytes"), 0u);

  CommandResult level = cluster_->Orthofs("log-level", {"info", "--osd", "0"});
  EXPECT_EQ(level.exit_code, 0) << level.err;
  EXPECT_NE(level.out.find("osd 0   warning -> info"), std::string::npos) << level.out;
}

}  // namespace
}  // namespace orthofs::testing
