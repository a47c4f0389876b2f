#include "common/object_record.h"

#include "common/checksum.h"
#include "common/oid.h"

namespace orthofs {
namespace {

constexpr size_t kCheckedHeaderBytes = 1 + 8 + 8;

uint32_t HeaderCheck(std::string_view header) {
  return static_cast<uint32_t>(ObjectChecksum(header.substr(0, kCheckedHeaderBytes)));
}

std::string EncodeHeader(uint8_t format, uint64_t version, uint64_t checksum,
                         size_t reserve_for_data) {
  std::string r;
  r.reserve(kObjectRecordHeaderSize + reserve_for_data);
  r.push_back(static_cast<char>(format));
  AppendBigEndian64(&r, version);
  AppendBigEndian64(&r, checksum);
  AppendBigEndian32(&r, HeaderCheck(r));
  return r;
}

std::string EncodeRecord(uint8_t format, uint64_t version, uint64_t checksum,
                         std::string_view data) {
  std::string r = EncodeHeader(format, version, checksum, data.size());
  r.append(data);
  return r;
}

}  // namespace

std::string EncodeObjectRecordHeader(uint64_t version, uint64_t checksum) {
  return EncodeHeader(kObjectRecordFormat, version, checksum, 0);
}

std::string EncodeObjectRecord(uint64_t version, std::string_view data) {
  return EncodeObjectRecord(version, ObjectChecksum(data), data);
}

std::string EncodeObjectRecord(uint64_t version, uint64_t checksum, std::string_view data) {
  return EncodeRecord(kObjectRecordFormat, version, checksum, data);
}

std::string EncodeTombstoneRecord(uint64_t version) {
  return EncodeRecord(kTombstoneRecordFormat, version, 0, "");
}

Result<ObjectRecordView> DecodeObjectRecord(std::string_view record) {
  if (record.size() < kObjectRecordHeaderSize) {
    return Status::Corruption("object record of " + std::to_string(record.size()) +
                              " bytes is shorter than its header");
  }
  const uint8_t format = static_cast<uint8_t>(record[0]);
  if (format != kObjectRecordFormat && format != kTombstoneRecordFormat) {
    return Status::Corruption("object record has unknown format " +
                              std::to_string(static_cast<uint8_t>(record[0])));
  }
  if (ReadBigEndian32(record.data() + kCheckedHeaderBytes) != HeaderCheck(record)) {
    return Status::Corruption("object record header check mismatch");
  }
  ObjectRecordView view;
  view.version = ReadBigEndian64(record.data() + 1);
  view.checksum = ReadBigEndian64(record.data() + 9);
  view.data = record.substr(kObjectRecordHeaderSize);
  if (format == kTombstoneRecordFormat) {
    if (!view.data.empty() || view.checksum != 0) {
      return Status::Corruption("tombstone record carries data");
    }
    view.tombstone = true;
    return view;
  }
  if (ObjectChecksum(view.data) != view.checksum) {
    return Status::Corruption("object record checksum mismatch");
  }
  return view;
}

}  // namespace orthofs
