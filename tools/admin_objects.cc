// orthofs subcommands on one object: put, get, stat, rm.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <vector>

#include "rpc/wire.h"
#include "tools/admin_commands.h"

namespace orthofs::admin {
namespace {

std::vector<Oid> SelectedCopies(Oid oid, Copies copies) {
  switch (copies) {
    case Copies::kOriginal:
      return {oid.WithFlag(CopyFlag::kOriginal)};
    case Copies::kReplica:
      return {oid.WithFlag(CopyFlag::kReplica)};
    case Copies::kBoth:
      break;
  }
  return {oid.WithFlag(CopyFlag::kOriginal), oid.WithFlag(CopyFlag::kReplica)};
}

}  // namespace

int RunPut(const CommonFlags& common, const std::string& oid_text, const std::string& file,
           uint64_t offset, Copies copies, bool sync) {
  Result<Oid> oid = ParseOid(oid_text);
  if (!oid.ok()) return Error(oid.status().message());
  std::string data;
  if (file.empty() || file == "-") {
    data.assign(std::istreambuf_iterator<char>(std::cin), {});
  } else {
    std::ifstream in(file, std::ios::binary);
    if (!in) return Error("cannot read " + file);
    data.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto cluster = Connect(common);
  if (!cluster.ok()) return Error(cluster.status().message());
  ObjectWrite how;
  how.offset = offset;
  how.replace = offset == 0;
  how.sync = sync;
  for (const Oid& copy : SelectedCopies(*oid, copies)) {
    Result<wire::ObjectMeta> meta = (*cluster)->Write(copy, data, how);
    if (!meta.ok()) return Error(copy.ToString() + ": " + meta.status().ToString());
    std::printf("%s on OSD %u: version %llu, %llu bytes\n", copy.ToString().c_str(),
                (*cluster)->placement().OsdFor(copy),
                static_cast<unsigned long long>(meta->version()),
                static_cast<unsigned long long>(meta->length()));
  }
  return kExitOk;
}

int RunGet(const CommonFlags& common, const std::string& oid_text, const std::string& out_path,
           uint64_t offset, uint64_t length) {
  Result<Oid> oid = ParseOid(oid_text);
  if (!oid.ok()) return Error(oid.status().message());
  auto cluster = Connect(common);
  if (!cluster.ok()) return Error(cluster.status().message());
  Result<wire::ReadResponse> read = (*cluster)->Read(*oid, offset, length);
  if (!read.ok()) return Error(oid->ToString() + ": " + read.status().ToString());
  if (out_path.empty() || out_path == "-") {
    std::fwrite(read->data().data(), 1, read->data().size(), stdout);
    std::fflush(stdout);
  } else {
    std::ofstream out(out_path, std::ios::binary);
    out.write(read->data().data(), static_cast<std::streamsize>(read->data().size()));
    if (!out) return Error("cannot write " + out_path);
  }
  return kExitOk;
}

int RunStat(const CommonFlags& common, const std::string& oid_text, Copies copies, bool json) {
  Result<Oid> oid = ParseOid(oid_text);
  if (!oid.ok()) return Error(oid.status().message());
  auto cluster = Connect(common);
  if (!cluster.ok()) return Error(cluster.status().message());
  int rc = kExitOk;
  for (const Oid& copy : SelectedCopies(*oid, copies)) {
    const uint32_t osd = (*cluster)->placement().OsdFor(copy);
    Result<wire::ObjectMeta> meta = (*cluster)->Stat(copy);
    if (json) {
      nlohmann::json row = {{"oid", copy.ToString()}, {"osd", osd}};
      if (meta.ok()) {
        row["version"] = meta->version();
        row["length"] = meta->length();
        row["checksum"] = meta->checksum();
      } else {
        row["error"] = meta.status().ToString();
      }
      std::cout << row.dump() << "\n";
    } else if (meta.ok()) {
      std::printf("%s on OSD %u: version %llu, %llu bytes, checksum %016llx\n",
                  copy.ToString().c_str(), osd, static_cast<unsigned long long>(meta->version()),
                  static_cast<unsigned long long>(meta->length()),
                  static_cast<unsigned long long>(meta->checksum()));
    } else {
      std::printf("%s on OSD %u: %s\n", copy.ToString().c_str(), osd,
                  meta.status().ToString().c_str());
    }
    if (!meta.ok()) rc = kExitError;
  }
  return rc;
}

int RunRm(const CommonFlags& common, const std::string& oid_text, Copies copies) {
  Result<Oid> oid = ParseOid(oid_text);
  if (!oid.ok()) return Error(oid.status().message());
  auto cluster = Connect(common);
  if (!cluster.ok()) return Error(cluster.status().message());
  for (const Oid& copy : SelectedCopies(*oid, copies)) {
    Result<bool> existed = (*cluster)->Delete(copy);
    if (!existed.ok()) return Error(copy.ToString() + ": " + existed.status().ToString());
    std::printf("%s on OSD %u: %s\n", copy.ToString().c_str(), (*cluster)->placement().OsdFor(copy),
                *existed ? "deleted" : "was absent");
  }
  return kExitOk;
}

}  // namespace orthofs::admin
