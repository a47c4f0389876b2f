#include "common/peer_role.h"

#include <gtest/gtest.h>

namespace orthofs {
namespace {

TEST(PeerRoleTest, NamesMapToRoles) {
  EXPECT_EQ(RoleOfCertificateName("admin"), PeerRole::kAdmin);
  EXPECT_EQ(RoleOfCertificateName("osd.0"), PeerRole::kOsd);
  EXPECT_EQ(RoleOfCertificateName("osd.4294967295"), PeerRole::kOsd);
  EXPECT_EQ(RoleOfCertificateName("client"), PeerRole::kClient);
  EXPECT_EQ(RoleOfCertificateName("client.node7"), PeerRole::kClient);
  // Near misses are clients, never more.
  for (const char* name : {"", "Admin", "admin ", "administrator", "osd.", "osd.x", "osd.01",
                           "osd.-1", "osd.4294967296", "osd.1.2", "xosd.1", "osd 1"}) {
    EXPECT_EQ(RoleOfCertificateName(name), PeerRole::kClient) << name;
  }
}

TEST(PeerRoleTest, OsdNamesRoundTrip) {
  for (uint32_t id : {0u, 1u, 9u, 10u, 123456u, 4294967295u}) {
    EXPECT_EQ(OsdIdOfCertificateName(OsdCertificateName(id)), id);
  }
  EXPECT_EQ(OsdCertificateName(3), "osd.3");
  EXPECT_FALSE(OsdIdOfCertificateName("client"));
}

TEST(PeerRoleTest, EachRoleMakesItsCallsAndTheLowerOnes) {
  EXPECT_TRUE(RoleMayMake(PeerRole::kClient, CallClass::kData));
  EXPECT_FALSE(RoleMayMake(PeerRole::kClient, CallClass::kPeer));
  EXPECT_FALSE(RoleMayMake(PeerRole::kClient, CallClass::kAdmin));
  EXPECT_TRUE(RoleMayMake(PeerRole::kOsd, CallClass::kData));
  EXPECT_TRUE(RoleMayMake(PeerRole::kOsd, CallClass::kPeer));
  EXPECT_FALSE(RoleMayMake(PeerRole::kOsd, CallClass::kAdmin));
  EXPECT_TRUE(RoleMayMake(PeerRole::kAdmin, CallClass::kData));
  EXPECT_TRUE(RoleMayMake(PeerRole::kAdmin, CallClass::kPeer));
  EXPECT_TRUE(RoleMayMake(PeerRole::kAdmin, CallClass::kAdmin));
  EXPECT_STREQ(PeerRoleName(PeerRole::kOsd), "osd");
}

}  // namespace
}  // namespace orthofs
