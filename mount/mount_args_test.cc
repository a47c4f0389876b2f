#include "mount/mount_args.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace orthofs {
namespace {

MountArgs Parse(const std::vector<std::string>& argv) {
  Result<MountArgs> r = ParseMountArgs(argv);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : MountArgs{};
}

std::string ErrorOf(const std::vector<std::string>& argv) {
  Result<MountArgs> r = ParseMountArgs(argv);
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.status().Is(StatusCode::kInvalidArgument));
  return r.status().message();
}

TEST(MountArgsTest, ByHand) {
  MountArgs a = Parse({"--map", "m.yaml", "--fnso", "7", "/mnt/x", "-f"});
  EXPECT_EQ(a.map_path, "m.yaml");
  EXPECT_EQ(a.fnso, 7u);
  EXPECT_EQ(a.mountpoint, "/mnt/x");
  EXPECT_TRUE(a.foreground);
  EXPECT_TRUE(a.fuse_options.empty());
  MountArgs b = Parse({"--map=m.yaml", "--fnso=3", "/mnt/x"});
  EXPECT_EQ(b.map_path, "m.yaml");
  EXPECT_EQ(b.fnso, 3u);
  EXPECT_FALSE(b.foreground);
  EXPECT_EQ(Parse({"--map", "m", "/x"}).fnso, 1u);  // default namespace
}

TEST(MountArgsTest, MountHelperForm) {
  // What mount(8) runs for: /etc/orthofs/c.yaml /mnt/o fuse.orthofs defaults,fnso=2,_netdev
  MountArgs a = Parse({"/etc/orthofs/c.yaml", "/mnt/o", "-o", "rw,fnso=2,allow_other,_netdev"});
  EXPECT_EQ(a.map_path, "/etc/orthofs/c.yaml");
  EXPECT_EQ(a.mountpoint, "/mnt/o");
  EXPECT_EQ(a.fnso, 2u);
  EXPECT_EQ(a.fuse_options, (std::vector<std::string>{"rw", "allow_other"}));
  MountArgs b = Parse({"-odefaults,map=/m.yaml,log_level=debug", "/mnt/o"});
  EXPECT_EQ(b.map_path, "/m.yaml");
  EXPECT_EQ(b.log_level, "debug");
  EXPECT_TRUE(b.fuse_options.empty());
}

TEST(MountArgsTest, DebugFlagStaysInForegroundAndPassesThrough) {
  MountArgs a = Parse({"--map", "m", "/x", "-d"});
  EXPECT_TRUE(a.foreground);
  EXPECT_EQ(a.fuse_flags, (std::vector<std::string>{"-d"}));
}

TEST(MountArgsTest, CacheOptions) {
  MountArgs defaults = Parse({"--map", "m", "/x"});
  EXPECT_EQ(defaults.cache_mb, 0u);  // sized by DefaultCacheMb at mount time
  EXPECT_EQ(defaults.flush_threads, 4u);
  MountArgs a = Parse({"--map", "m", "--cache-mb", "64", "--flush-threads", "2", "/x"});
  EXPECT_EQ(a.cache_mb, 64u);
  EXPECT_EQ(a.flush_threads, 2u);
  MountArgs b = Parse({"m", "/x", "-o", "cache_mb=1024,flush_threads=8,allow_other"});
  EXPECT_EQ(b.cache_mb, 1024u);
  EXPECT_EQ(b.flush_threads, 8u);
  EXPECT_EQ(b.fuse_options, (std::vector<std::string>{"allow_other"}));
  EXPECT_NE(ErrorOf({"--map", "m", "--cache-mb", "0", "/x"}).find("cache size '0'"),
            std::string::npos);
  EXPECT_NE(ErrorOf({"--map", "m", "-o", "cache_mb=lots", "/x"}).find("cache size 'lots'"),
            std::string::npos);
  EXPECT_NE(ErrorOf({"--map", "m", "--flush-threads", "65", "/x"}).find("1..64"),
            std::string::npos);
  EXPECT_EQ(defaults.read_ahead, 16u);
  EXPECT_EQ(Parse({"--map", "m", "--read-ahead", "0", "/x"}).read_ahead, 0u);
  EXPECT_EQ(Parse({"m", "/x", "-o", "read_ahead=40"}).read_ahead, 40u);
  EXPECT_NE(ErrorOf({"--map", "m", "--read-ahead", "257", "/x"}).find("0..256"), std::string::npos);
  EXPECT_NE(ErrorOf({"m", "/x", "-o", "read_ahead=-1"}).find("read-ahead object count '-1'"),
            std::string::npos);
  EXPECT_EQ(defaults.negative_timeout, 0.0);
  EXPECT_EQ(Parse({"--map", "m", "--negative-timeout", "2.5", "/x"}).negative_timeout, 2.5);
  EXPECT_EQ(Parse({"m", "/x", "-o", "negative_timeout=10,allow_other"}).negative_timeout, 10.0);
  EXPECT_EQ(Parse({"m", "/x", "-o", "negative_timeout=0"}).negative_timeout, 0.0);
  for (const char* bad : {"-1", "3601", "nan", "inf", "1s", ""}) {
    EXPECT_NE(ErrorOf({"m", "/x", "-o", std::string("negative_timeout=") + bad})
                  .find("negative timeout '" + std::string(bad) + "'"),
              std::string::npos)
        << bad;
  }
  EXPECT_EQ(defaults.lock_lease, 15.0);
  EXPECT_FALSE(defaults.local_locks);
  EXPECT_TRUE(Parse({"--map", "m", "--local-locks", "/x"}).local_locks);
  const MountArgs local = Parse({"m", "/x", "-o", "local_locks,allow_other"});
  EXPECT_TRUE(local.local_locks);
  EXPECT_EQ(local.fuse_options, std::vector<std::string>{"allow_other"});
  EXPECT_EQ(Parse({"--map", "m", "--lock-lease", "2.5", "/x"}).lock_lease, 2.5);
  EXPECT_EQ(Parse({"m", "/x", "-o", "lock_lease=60,allow_other"}).lock_lease, 60.0);
  for (const char* bad : {"0.5", "0", "3601", "-3", "nan", "15s", ""}) {
    EXPECT_NE(
        ErrorOf({"m", "/x", "-o", std::string("lock_lease=") + bad})
            .find("lock lease '" + std::string(bad) + "' is not a number of seconds in 1..3600"),
        std::string::npos)
        << bad;
  }
}

TEST(MountArgsTest, DefaultCacheFollowsTheMachinesMemory) {
  constexpr uint64_t kGiB = 1ull << 30;
  EXPECT_EQ(DefaultCacheMb(24 * kGiB), 1536u);  // 1/16
  EXPECT_EQ(DefaultCacheMb(8 * kGiB), 512u);
  EXPECT_EQ(DefaultCacheMb(4 * kGiB), 256u);
  EXPECT_EQ(DefaultCacheMb(2 * kGiB), 256u);     // the floor
  EXPECT_EQ(DefaultCacheMb(kGiB / 2), 128u);     // but not over a quarter of a small machine
  EXPECT_EQ(DefaultCacheMb(256 * kGiB), 4096u);  // the ceiling
  EXPECT_EQ(DefaultCacheMb(0), 1u);              // unknown memory: still a working cache
}

TEST(MountArgsTest, ExpectedPrefetchMode) {
  EXPECT_EQ(Parse({"--map", "m", "/x"}).expected_prefetch, "");
  EXPECT_EQ(Parse({"--map", "m", "--prefetch", "cor", "/x"}).expected_prefetch, "cor");
  EXPECT_EQ(Parse({"m", "/x", "-o", "prefetch=spa"}).expected_prefetch, "spa");
}

TEST(MountArgsTest, TlsAndMetrics) {
  MountArgs defaults = Parse({"--map", "m", "/x"});
  EXPECT_FALSE(defaults.tls.insecure);  // TLS unless asked otherwise
  EXPECT_EQ(defaults.tls.dir, DefaultTlsDir());
  ::setenv("ORTHOFS_TLS_DIR", "/from/env", 1);
  EXPECT_EQ(Parse({"--map", "m", "/x"}).tls.dir, "/from/env");
  ::unsetenv("ORTHOFS_TLS_DIR");
  EXPECT_EQ(Parse({"--map", "m", "/x"}).tls.dir, "/etc/orthofs/tls");
  EXPECT_EQ(defaults.metrics, "");
  MountArgs a = Parse({"--map", "m", "--tls-dir", "/t", "--tls-cert", "/t/c.crt", "--tls-key",
                       "/t/c.key", "--tls-ca", "/t/ca.crt", "--metrics", "127.0.0.1:9300", "/x"});
  EXPECT_EQ(a.tls.dir, "/t");
  EXPECT_EQ(a.tls.cert, "/t/c.crt");
  EXPECT_EQ(a.tls.key, "/t/c.key");
  EXPECT_EQ(a.tls.ca, "/t/ca.crt");
  EXPECT_EQ(a.metrics, "127.0.0.1:9300");
  EXPECT_TRUE(Parse({"--map", "m", "--insecure", "/x"}).tls.insecure);
  // The fstab form.
  MountArgs b = Parse(
      {"m", "/x", "-o", "tls_dir=/d,tls_cert=/d/n.crt,tls_key=/d/n.key,metrics=:9301,allow_other"});
  EXPECT_EQ(b.tls.dir, "/d");
  EXPECT_EQ(b.tls.cert, "/d/n.crt");
  EXPECT_EQ(b.tls.key, "/d/n.key");
  EXPECT_EQ(b.metrics, ":9301");
  EXPECT_EQ(b.fuse_options, (std::vector<std::string>{"allow_other"}));
  EXPECT_TRUE(Parse({"m", "/x", "-o", "insecure"}).tls.insecure);
  EXPECT_NE(ErrorOf({"--map", "m", "/x", "--tls-dir"}).find("--tls-dir needs a value"),
            std::string::npos);
}

TEST(MountArgsTest, Help) { EXPECT_TRUE(Parse({"--help"}).help); }

TEST(MountArgsTest, Errors) {
  EXPECT_NE(ErrorOf({"/x"}).find("--map is required"), std::string::npos);
  EXPECT_NE(ErrorOf({"--map", "m"}).find("no mount point"), std::string::npos);
  EXPECT_NE(ErrorOf({"--map", "m", "a", "b", "c"}).find("too many"), std::string::npos);
  EXPECT_NE(ErrorOf({"--map", "m", "/x", "--bogus"}).find("unknown flag --bogus"),
            std::string::npos);
  EXPECT_NE(ErrorOf({"--map", "m", "--fnso", "x", "/x"}).find("fnso 'x'"), std::string::npos);
  EXPECT_NE(ErrorOf({"--map", "m", "--fnso", "4294967296", "/x"}).find("fnso"), std::string::npos);
  EXPECT_NE(ErrorOf({"--map", "m", "-o", "fnso=-1", "/x"}).find("fnso"), std::string::npos);
  EXPECT_NE(ErrorOf({"--map"}).find("needs a value"), std::string::npos);
  EXPECT_NE(ErrorOf({"--map", "a.yaml", "b.yaml", "/x"}).find("two cluster maps"),
            std::string::npos);
}

}  // namespace
TEST(MountArgsTest, ARootMountServesEveryUserUnlessPrivate) {
  const MountArgs plain = Parse({"--map", "m", "/x"});
  EXPECT_EQ(FuseMountOptions(plain, /*as_root=*/true),
            "default_permissions,fsname=orthofs,subtype=orthofs,allow_other");
  EXPECT_EQ(FuseMountOptions(plain, /*as_root=*/false),
            "default_permissions,fsname=orthofs,subtype=orthofs");
  EXPECT_TRUE(Parse({"--map", "m", "/x", "--private"}).private_mount);
  const MountArgs kept = Parse({"m", "/x", "-o", "private,ro"});
  EXPECT_TRUE(kept.private_mount);
  EXPECT_EQ(FuseMountOptions(kept, true), "default_permissions,fsname=orthofs,subtype=orthofs,ro");
  // The user's own choice stands, once.
  const MountArgs root_only = Parse({"m", "/x", "-o", "allow_root"});
  EXPECT_EQ(FuseMountOptions(root_only, true),
            "default_permissions,fsname=orthofs,subtype=orthofs,allow_root");
  const MountArgs given = Parse({"m", "/x", "-o", "allow_other"});
  EXPECT_EQ(FuseMountOptions(given, true),
            "default_permissions,fsname=orthofs,subtype=orthofs,allow_other");
}

}  // namespace orthofs
