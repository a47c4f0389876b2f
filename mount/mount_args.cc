#include "mount/mount_args.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <set>

namespace orthofs {
namespace {

Status ParseFnso(const std::string& text, uint32_t* out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
    return Status::InvalidArgument("fnso '" + text + "' is not a number in 0..4294967295");
  }
  return Status::Ok();
}

Status ParseCount(const std::string& name, const std::string& text, uint64_t min, uint64_t max,
                  uint64_t* out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || *out < min ||
      *out > max) {
    return Status::InvalidArgument(name + " '" + text + "' is not a number in " +
                                   std::to_string(min) + ".." + std::to_string(max));
  }
  return Status::Ok();
}

Status ParseCacheMb(const std::string& text, MountArgs* args) {
  return ParseCount("cache size", text, 1, 1 << 20, &args->cache_mb);
}

Status ParseFlushThreads(const std::string& text, MountArgs* args) {
  uint64_t n = 0;
  ORTHOFS_RETURN_IF_ERROR(ParseCount("flush thread count", text, 1, 64, &n));
  args->flush_threads = static_cast<uint32_t>(n);
  return Status::Ok();
}

Status ParseReadAhead(const std::string& text, MountArgs* args) {
  uint64_t n = 0;
  ORTHOFS_RETURN_IF_ERROR(ParseCount("read-ahead object count", text, 0, 256, &n));
  args->read_ahead = static_cast<uint32_t>(n);
  return Status::Ok();
}

// Seconds, decimals allowed, in [low, high].
Status ParseSeconds(const char* what, const std::string& text, double low, double high,
                    double* seconds) {
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || !(value >= low) ||
      value > high) {
    return Status::InvalidArgument(
        fmt::format("{} '{}' is not a number of seconds in {:g}..{:g}", what, text, low, high));
  }
  *seconds = value;
  return Status::Ok();
}

// At most an hour: a name another client creates stays unseen that long.
Status ParseNegativeTimeout(const std::string& text, MountArgs* args) {
  return ParseSeconds("negative timeout", text, 0, 3600, &args->negative_timeout);
}

// At least a second (five beats, each a write), at most an hour: a killed client's locks keep
// other clients waiting that long.
Status ParseLockLease(const std::string& text, MountArgs* args) {
  return ParseSeconds("lock lease", text, 1, 3600, &args->lock_lease);
}

const std::set<std::string>& FstabOnlyWords() {
  // mount(8) and fstab vocabulary that means nothing to a FUSE session.
  static const std::set<std::string> words = {"defaults", "auto",  "noauto",  "user",  "nouser",
                                              "users",    "owner", "_netdev", "nofail"};
  return words;
}

Status TakeOptions(const std::string& list, MountArgs* args) {
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    std::string opt =
        list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? list.size() + 1 : comma + 1;
    if (opt.empty() || FstabOnlyWords().count(opt)) continue;
    if (opt.rfind("map=", 0) == 0) {
      args->map_path = opt.substr(4);
    } else if (opt.rfind("fnso=", 0) == 0) {
      ORTHOFS_RETURN_IF_ERROR(ParseFnso(opt.substr(5), &args->fnso));
    } else if (opt.rfind("log_level=", 0) == 0) {
      args->log_level = opt.substr(10);
    } else if (opt.rfind("prefetch=", 0) == 0) {
      args->expected_prefetch = opt.substr(9);
    } else if (opt.rfind("cache_mb=", 0) == 0) {
      ORTHOFS_RETURN_IF_ERROR(ParseCacheMb(opt.substr(9), args));
    } else if (opt.rfind("flush_threads=", 0) == 0) {
      ORTHOFS_RETURN_IF_ERROR(ParseFlushThreads(opt.substr(14), args));
    } else if (opt.rfind("read_ahead=", 0) == 0) {
      ORTHOFS_RETURN_IF_ERROR(ParseReadAhead(opt.substr(11), args));
    } else if (opt.rfind("negative_timeout=", 0) == 0) {
      ORTHOFS_RETURN_IF_ERROR(ParseNegativeTimeout(opt.substr(17), args));
    } else if (opt.rfind("lock_lease=", 0) == 0) {
      ORTHOFS_RETURN_IF_ERROR(ParseLockLease(opt.substr(11), args));
    } else if (opt.rfind("metrics=", 0) == 0) {
      args->metrics = opt.substr(8);
    } else if (opt.rfind("tls_dir=", 0) == 0) {
      args->tls.dir = opt.substr(8);
    } else if (opt.rfind("tls_ca=", 0) == 0) {
      args->tls.ca = opt.substr(7);
    } else if (opt.rfind("tls_cert=", 0) == 0) {
      args->tls.cert = opt.substr(9);
    } else if (opt.rfind("tls_key=", 0) == 0) {
      args->tls.key = opt.substr(8);
    } else if (opt == "local_locks") {
      args->local_locks = true;
    } else if (opt == "private") {
      args->private_mount = true;
    } else if (opt == "insecure") {
      args->tls.insecure = true;
    } else {
      args->fuse_options.push_back(opt);
    }
  }
  return Status::Ok();
}

}  // namespace

uint64_t DefaultCacheMb(uint64_t physical_memory_bytes) {
  const uint64_t memory_mb = physical_memory_bytes >> 20;
  const uint64_t floor_mb = std::min<uint64_t>(256, std::max<uint64_t>(memory_mb / 4, 1));
  return std::clamp<uint64_t>(memory_mb / 16, floor_mb, 4096);
}

Result<MountArgs> ParseMountArgs(const std::vector<std::string>& argv) {
  MountArgs args;
  std::vector<std::string> positional;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    auto value = [&](const std::string& flag) -> Result<std::string> {
      if (i + 1 >= argv.size()) return Status::InvalidArgument(flag + " needs a value");
      return argv[++i];
    };
    if (a == "--map" || a == "--fnso" || a == "--log-level" || a == "--cache-mb" ||
        a == "--flush-threads" || a == "--read-ahead" || a == "--negative-timeout" ||
        a == "--lock-lease" || a == "--prefetch" || a == "--metrics" || a == "--tls-dir" ||
        a == "--tls-ca" || a == "--tls-cert" || a == "--tls-key" || a == "-o") {
      Result<std::string> v = value(a);
      if (!v.ok()) return v.status();
      if (a == "--map") {
        args.map_path = *v;
      } else if (a == "--fnso") {
        ORTHOFS_RETURN_IF_ERROR(ParseFnso(*v, &args.fnso));
      } else if (a == "--log-level") {
        args.log_level = *v;
      } else if (a == "--prefetch") {
        args.expected_prefetch = *v;
      } else if (a == "--metrics") {
        args.metrics = *v;
      } else if (a == "--tls-dir") {
        args.tls.dir = *v;
      } else if (a == "--tls-ca") {
        args.tls.ca = *v;
      } else if (a == "--tls-cert") {
        args.tls.cert = *v;
      } else if (a == "--tls-key") {
        args.tls.key = *v;
      } else if (a == "--cache-mb") {
        ORTHOFS_RETURN_IF_ERROR(ParseCacheMb(*v, &args));
      } else if (a == "--flush-threads") {
        ORTHOFS_RETURN_IF_ERROR(ParseFlushThreads(*v, &args));
      } else if (a == "--read-ahead") {
        ORTHOFS_RETURN_IF_ERROR(ParseReadAhead(*v, &args));
      } else if (a == "--negative-timeout") {
        ORTHOFS_RETURN_IF_ERROR(ParseNegativeTimeout(*v, &args));
      } else if (a == "--lock-lease") {
        ORTHOFS_RETURN_IF_ERROR(ParseLockLease(*v, &args));
      } else {
        ORTHOFS_RETURN_IF_ERROR(TakeOptions(*v, &args));
      }
    } else if (a.rfind("--map=", 0) == 0) {
      args.map_path = a.substr(6);
    } else if (a.rfind("--fnso=", 0) == 0) {
      ORTHOFS_RETURN_IF_ERROR(ParseFnso(a.substr(7), &args.fnso));
    } else if (a.rfind("-o", 0) == 0 && a.size() > 2) {
      ORTHOFS_RETURN_IF_ERROR(TakeOptions(a.substr(2), &args));
    } else if (a == "-h" || a == "--help") {
      args.help = true;
    } else if (a == "-f") {
      args.foreground = true;
    } else if (a == "--local-locks") {
      args.local_locks = true;
    } else if (a == "--private") {
      args.private_mount = true;
    } else if (a == "--insecure") {
      args.tls.insecure = true;
    } else if (a == "-d" || a == "-s") {
      args.fuse_flags.push_back(a);
      if (a == "-d") args.foreground = true;  // libfuse's debug mode stays in the foreground
    } else if (a.rfind("-", 0) == 0) {
      return Status::InvalidArgument("unknown flag " + a);
    } else {
      positional.push_back(a);
    }
  }
  if (args.help) return args;
  if (positional.size() == 2) {
    // mount(8) form: SOURCE MOUNTPOINT, the source being the cluster map.
    if (!args.map_path.empty() && args.map_path != positional[0]) {
      return Status::InvalidArgument("two cluster maps given: " + positional[0] + " and " +
                                     args.map_path);
    }
    args.map_path = positional[0];
    args.mountpoint = positional[1];
  } else if (positional.size() == 1) {
    args.mountpoint = positional[0];
  } else if (positional.empty()) {
    return Status::InvalidArgument("no mount point given");
  } else {
    return Status::InvalidArgument("too many arguments (want [MAP] MOUNTPOINT)");
  }
  if (args.map_path.empty()) {
    return Status::InvalidArgument("--map is required (or give the map as the mount source)");
  }
  return args;
}

std::string FuseMountOptions(const MountArgs& args, bool as_root) {
  std::string options = "default_permissions,fsname=orthofs,subtype=orthofs";
  const bool chosen =
      std::find_if(args.fuse_options.begin(), args.fuse_options.end(), [](const std::string& o) {
        return o == "allow_other" || o == "allow_root";
      }) != args.fuse_options.end();
  if (as_root && !args.private_mount && !chosen) options += ",allow_other";
  for (const auto& o : args.fuse_options) options += "," + o;
  return options;
}

}  // namespace orthofs
